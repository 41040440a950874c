// Evaluating one sweep point: build its scenario, prune it when it cannot fit, simulate it, and
// turn the outcome into a result row (sim/sweep/rows.h).
//
// The memory check runs before the simulation and prunes only what the simulation would also
// reject. The simulated peak of a device is its stage's closed-form budget (EstimateMemory) with
// the activations replaced by the live activations at their peak on the simulated timeline
// (sim/report/step_metrics.cc); the same sum without any activation is therefore a lower bound of
// it, and a point whose bound exceeds the capacity on some stage cannot fit. The whole estimate
// (with activations) is not a bound: under ZeRO-3 the simulated activations come out below the
// closed form (tests/sweep/prune_test.cc shows both).
#ifndef SHARDSIM_SWEEP_EVALUATE_H_
#define SHARDSIM_SWEEP_EVALUATE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/units.h"
#include "sim/config/loader.h"
#include "sim/sweep/rows.h"
#include "sim/sweep/step_bound.h"

namespace shardsim {

class PointSpace;
class OrderCache;
class PriceCache;
struct MemoryBudget;
struct HardwareSpec;

// Lower bound of the simulated peak memory of the worst device, and its stage: every stage's
// model states, ZeRO-3 and recompute buffers, loss and MoE buffers, allocator fragmentation on
// those, the CUDA context and the communication buffers.
struct MemoryBound {
  Bytes bytes;
  int64_t stage = 0;
};
MemoryBound MemoryLowerBound(const MemoryBudget& budget, const HardwareSpec& hardware);

// The row of point `point`. Never fails: an infeasible or failed point is a row saying why. With
// `orders` (a sweep's), the memory estimate takes its run orders from it: the same row.
Row EvaluatePoint(const PointSpace& space, int64_t point, const LoadOptions& options,
                  OrderCache* orders = nullptr);

// What a point can reach at best, from its plan and priced passes but no task graph
// (sim/sweep/step_bound.h): the lower bound of its step time, with what turns it into a bound of
// tokens/s (tokens per step) and of the time to train (training.tokens, 0 when not set). A point
// settled without simulation (invalid, pruned on memory) comes with its row instead, the one
// EvaluatePoint gives; no bound (step.seconds 0) either when its plan or prices fail. With a
// `cache`, the prices are those of the first point of its key (sim/sweep/price_cache.h): the same.
struct PointBound {
  StepBound step;
  double tokens_per_step = 0.0;
  double tokens = 0.0;
  std::optional<Row> settled;
};
PointBound BoundPoint(const PointSpace& space, int64_t point, const LoadOptions& options,
                      PriceCache* cache = nullptr, OrderCache* orders = nullptr);

// Per point of `rows`, the price per GPU-hour of its hardware (hardware.price_per_gpu_hour, from
// the hardware file or a sweep axis); points whose hardware gives none are left out. The
// hardware is read once per distinct value of the hardware columns of the sweep.
std::map<int64_t, double> HardwarePrices(const PointSpace& space, const std::vector<Row>& rows,
                                         const LoadOptions& options);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_EVALUATE_H_
