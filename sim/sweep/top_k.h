// `sweep --prune-to-top K`: evaluating only the points that can enter the top K of the ranking.
//
// Every point first gets a bound of its ranking figure without being simulated (BoundPoint:
// the step-time lower bound of sim/sweep/step_bound.h turned into at most tokens_per_step / bound
// tokens/s, or at least training.tokens over that of ideal time to train; the booked time to
// train is at least the ideal one, its goodput being at most 1). Points are then simulated best
// bound first, keeping the K best figures among the feasible rows; as soon as the next point's
// bound is strictly worse than the K-th best, it and every point after it cannot enter the top K
// (K simulated rows already beat them), and they become `outranked` rows, not simulated. Points
// settled without simulation (invalid, pruned on memory) keep the row found while bounding them;
// points the bound does not cover (no plan, DualPipe) are simulated first. The ranking's top K is
// then the unpruned run's, row for row; what counts all feasible rows (their number, the ties with
// the best, the Pareto front, --ranking's later rows) covers the simulated ones only.
//
// Deterministic at any thread count: which points are simulated is decided in bound order by one
// serial stage, from the rows before it in that order; a point simulated ahead of that decision
// by another thread and then found outranked is written as outranked all the same.
#ifndef SHARDSIM_SWEEP_TOP_K_H_
#define SHARDSIM_SWEEP_TOP_K_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/loader.h"
#include "sim/sweep/ranking.h"
#include "sim/sweep/rows.h"

namespace shardsim {

class PointSpace;

struct TopKOptions {
  int64_t k = 0;  // > 0
  RankBy by = RankBy::kTokensPerS;
  MemoryLimit memory_limit;  // applied to each simulated row, as in RunSweep
  int jobs = 1;
};

struct TopKStats {
  int64_t bounded = 0;    // points with a bound
  int64_t simulated = 0;  // rows EvaluatePoint gave (settled or simulated), in the end
  int64_t outranked = 0;
};

// Whether --prune-to-top can rank by `by` (tokens/s and the times to train; not cost or goodput,
// which no step-time bound bounds).
bool TopKSupports(RankBy by);

// The rows of `points` (parallel to it). `done(n)` is called from one thread at a time as rows
// are decided.
std::vector<Row> EvaluateTopK(const PointSpace& space, const std::vector<int64_t>& points,
                              const TopKOptions& options, const LoadOptions& load,
                              const std::function<void(int64_t)>& done, TopKStats* stats);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_TOP_K_H_
