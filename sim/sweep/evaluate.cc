#include "sim/sweep/evaluate.h"

#include <memory>
#include <optional>

#include "sim/hardware/op_cost.h"
#include "sim/memory/budget.h"
#include "sim/program/step_costs.h"
#include "sim/report/flops_note.h"
#include "sim/report/simulate.h"
#include "sim/schedule/schedule.h"
#include "sim/sweep/point_space.h"
#include "sim/sweep/price_cache.h"

namespace shardsim {
namespace {

// The goodput columns (sim/goodput); an MTBF or interval that does not exist stays absent.
void FillGoodput(const Goodput& g, double ideal_s, Row* row) {
  (*row)[Metric::kTimeToTrainIdeal] = ideal_s;
  (*row)[Metric::kGoodput] = g.fraction;
  (*row)[Metric::kInterruptionsPerDay] = g.interruptions_per_day;
  if (g.job_mtbf_s) (*row)[Metric::kJobMtbf] = *g.job_mtbf_s;
  (*row)[Metric::kCheckpointWrite] = g.checkpoint_write_s;
  if (g.checkpoint_interval_s) (*row)[Metric::kCheckpointInterval] = *g.checkpoint_interval_s;
  (*row)[Metric::kLostPerDay] = g.lost_s_per_day;
  (*row)[Metric::kStragglerFactor] = g.straggler_factor;
}

void FillOutputs(const Scenario& sc, const SimResult& r, Row* row) {
  (*row)[Metric::kGpus] = static_cast<double>(sc.gpus);
  (*row)[Metric::kStepTime] = r.step_time.value();
  (*row)[Metric::kTokensPerS] = r.tokens_per_s;
  (*row)[Metric::kTokensPerSPerGpu] = r.tokens_per_s_per_gpu;
  (*row)[Metric::kTflopsPerGpu] = r.tflops_per_gpu;
  (*row)[Metric::kMfu] = r.mfu;
  (*row)[Metric::kHfu] = r.hfu;
  (*row)[Metric::kPeakFlopsPerGpu] = r.peak_flops_per_gpu;
  (*row)[Metric::kBubbleFraction] = r.bubble_fraction;
  if (r.program) {
    (*row)[Metric::kMicrobatchesPerStep] = static_cast<double>(r.program->microbatches);
  }
  const double capacity = sc.hardware.memory_capacity;
  (*row)[Metric::kPeakMemory] = r.peak_memory.value();
  (*row)[Metric::kMemoryCapacity] = capacity;
  (*row)[Metric::kMemoryHeadroom] = capacity - r.peak_memory.value();
  if (!r.devices.empty()) {
    const DeviceStats& d = r.devices[static_cast<size_t>(r.worst_device)];
    const StageMemory& s = r.memory.stages[static_cast<size_t>(d.coords.pp)];
    (*row)[Metric::kWeights] = s.weights.value();
    (*row)[Metric::kGradients] = s.gradients.value();
    (*row)[Metric::kOptimizer] = s.optimizer.value();
    (*row)[Metric::kActivations] = d.peak_activations.value();
  }
  const Breakdown& b = r.breakdown;
  (*row)[Metric::kCompute] = b.compute.value();
  (*row)[Metric::kRecompute] = b.recompute.value();
  (*row)[Metric::kTpComm] = b.tp.value();
  (*row)[Metric::kCpComm] = b.cp.value();
  (*row)[Metric::kEpComm] = b.ep.value();
  (*row)[Metric::kPpComm] = b.pp.value();
  (*row)[Metric::kPipelineBubble] = b.bubble.value();
  (*row)[Metric::kDpComm] = b.dp.value();
  (*row)[Metric::kParamGather] = b.gather.value();
  (*row)[Metric::kOptimizerStep] = b.optimizer.value();
  (*row)[Metric::kModelFlops] = r.flops.model_per_step;
  (*row)[Metric::kHardwareFlops] = r.flops.hardware_per_step;
  (*row)[Metric::kSixNd] = r.flops.six_nd;
  (*row)[Metric::kTokensPerStep] = static_cast<double>(r.flops.tokens_per_step);
  if (r.time_to_train_s) (*row)[Metric::kTimeToTrain] = *r.time_to_train_s;
  if (r.gpu_hours) (*row)[Metric::kGpuHours] = *r.gpu_hours;
  if (r.goodput) FillGoodput(*r.goodput, *r.time_to_train_ideal_s, row);
  (*row)[Metric::kSimulatedTasks] = static_cast<double>(r.tasks);
  (*row)[Metric::kExecutedTflopsPerGpu] = r.executed_tflops_per_gpu;
  (*row)[Metric::kExecutedFractionOfPeak] = r.executed_fraction;
  (*row)[Metric::kFlopsConventionOverExecuted] =
      ConventionOverExecuted(r.flops.hardware_per_step, r.flops.executed_per_step);
  if (!r.bottlenecks.empty()) {
    const Bottleneck& top = r.bottlenecks.front();
    row->bottleneck = top.collective.empty() ? top.kind : top.collective;
    (*row)[Metric::kBottleneckShare] = top.share;
  }
}

// "<what> over capacity (activations largest): 95.1 GiB of 80.0 GiB on pipeline stage 3; ..."
std::string MemoryReason(const std::string& what, Bytes total, Bytes states, Bytes acts,
                         int64_t stage, double capacity) {
  const Bytes other = total - states - acts;
  const char* largest = acts > states ? (acts > other ? "activations" : "buffers and reserve")
                                      : (states > other ? "model states" : "buffers and reserve");
  return what + " over capacity (" + largest + " largest): " + FormatBytes(total) + " of " +
         FormatBytes(Bytes(capacity)) + " on pipeline stage " + std::to_string(stage) +
         "; model states " + FormatBytes(states) + ", activations " + FormatBytes(acts) +
         ", buffers and reserve " + FormatBytes(other);
}

}  // namespace

MemoryBound MemoryLowerBound(const MemoryBudget& budget, const HardwareSpec& hw) {
  MemoryBound out;
  for (const StageMemory& s : budget.stages) {
    const Bytes allocated =
        s.model_states() + s.zero3_buffers + s.recompute_buffer + s.loss_buffers + s.moe_buffers;
    const Bytes bound =
        allocated + s.cuda_context + s.comm_buffers + allocated * hw.reserve_fragmentation;
    if (bound > out.bytes) out = MemoryBound{bound, s.stage};
  }
  return out;
}

namespace {

// A point up to its simulation: its scenario built and checked against the memory bound. `done`
// when that already settles its row (invalid, pruned on memory).
struct Prepared {
  Row row;
  bool done = false;
  std::optional<Scenario> sc;
  std::optional<Result<Sharding>> sharding;
  std::optional<Result<MemoryBudget>> budget;
};

Prepared Prepare(const PointSpace& space, int64_t point, const LoadOptions& options,
                 OrderCache* orders) {
  Prepared p;
  Row& row = p.row;
  row.point = point;
  row.inputs = space.Inputs(point);
  p.done = true;
  if (space.Gpus(point) > 0) row[Metric::kGpus] = static_cast<double>(space.Gpus(point));
  if (!space.Problem(point).empty()) {
    row.status = PointStatus::kInvalid;
    row.reason = space.Problem(point);
    return p;
  }
  Result<ScenarioDocument> doc = space.Document(point);
  Result<Scenario> sc = doc.ok() ? doc->Build(options) : Result<Scenario>(doc.status());
  if (!sc.ok()) {
    row.status = PointStatus::kInvalid;
    row.reason = StatusReason(sc.status());
    return p;
  }
  row[Metric::kGpus] = static_cast<double>(sc->gpus);
  // The plan's layout-free part first: a point whose model states alone overflow is pruned
  // before its cluster is built.
  Result<Sharding> sharding = ShardModel(sc->model, sc->training, sc->parallel);
  Result<MemoryBudget> budget =
      sharding.ok() ? EstimateMemory(*sharding, sc->model, sc->training, sc->parallel, sc->hardware,
                                     sc->framework, orders)
                    : Result<MemoryBudget>(sharding.status());
  if (budget.ok()) {
    const MemoryBound bound = MemoryLowerBound(*budget, sc->hardware);
    if (bound.bytes.value() > sc->hardware.memory_capacity) {
      const StageMemory& s = budget->stages[static_cast<size_t>(bound.stage)];
      row.status = PointStatus::kPruned;
      row[Metric::kMemoryCapacity] = sc->hardware.memory_capacity;
      row.reason = "memory before activations over capacity: " + FormatBytes(bound.bytes) + " of " +
                   FormatBytes(Bytes(sc->hardware.memory_capacity)) + " on pipeline stage " +
                   std::to_string(bound.stage) + "; model states " + FormatBytes(s.model_states()) +
                   " (weights " + FormatBytes(s.weights) + ", gradients " +
                   FormatBytes(s.gradients) + ", optimizer " + FormatBytes(s.optimizer) + ")";
      return p;
    }
  }
  p.done = false;
  p.sc.emplace(std::move(*sc));
  p.sharding.emplace(std::move(sharding));
  p.budget.emplace(std::move(budget));
  return p;
}

}  // namespace

Row EvaluatePoint(const PointSpace& space, int64_t point, const LoadOptions& options,
                  OrderCache* orders) {
  Prepared p = Prepare(space, point, options, orders);
  Row row = std::move(p.row);
  if (p.done) return row;
  const Scenario& sc = *p.sc;
  Result<Sharding>& sharding = *p.sharding;
  Result<MemoryBudget>& budget = *p.budget;
  Result<SimResult> r = [&]() -> Result<SimResult> {
    if (!sharding.ok()) return sharding.status();
    Result<Plan> plan = MakePlan(sc, std::move(*sharding));
    if (!plan.ok()) return plan.status();
    auto shared = std::make_shared<const Plan>(std::move(*plan));
    // The budget above is the plan's (the same sharding and specs): passed on, not estimated
    // twice. A failed one is left to Simulate, which reports it as before.
    SimOptions so;
    so.straggler_expected_max = space.StragglerExpectedMax(sc.gpus);
    if (budget.ok()) return Simulate(sc, std::move(shared), std::move(*budget), so);
    return Simulate(sc, std::move(shared), so);
  }();
  if (!r.ok()) {
    row.status = PointStatus::kError;
    row.reason = "simulation failed: " + StatusReason(r.status());
    return row;
  }
  FillOutputs(sc, *r, &row);
  row.status = r->fits ? PointStatus::kOk : PointStatus::kNoFit;
  // Fits, but the run cannot finish (Goodput::feasible): simulate reports the step and exits 1;
  // the row keeps the step's outputs and says why ("goodput: the run cannot finish: ...").
  if (r->fits && r->goodput && !r->goodput->feasible) {
    row.status = PointStatus::kCannotFinish;
    row.reason = r->goodput->infeasible_reason;
  }
  if (!r->fits) {
    const DeviceStats& d = r->devices[static_cast<size_t>(r->worst_device)];
    const StageMemory& s = r->memory.stages[static_cast<size_t>(d.coords.pp)];
    row.reason = MemoryReason("simulated peak memory", r->peak_memory, s.model_states(),
                              d.peak_activations, d.coords.pp, sc.hardware.memory_capacity);
  }
  return row;
}

PointBound BoundPoint(const PointSpace& space, int64_t point, const LoadOptions& options,
                      PriceCache* cache, OrderCache* orders) {
  Prepared p = Prepare(space, point, options, orders);
  PointBound out;
  if (p.done) {
    out.settled = std::move(p.row);
    return out;
  }
  if (!p.sharding->ok()) return out;
  const Scenario& sc = *p.sc;
  const Sharding& sharding = **p.sharding;
  // The layout (MakePlan) is needed by the pricing only: the bound reads the sharding.
  const auto price = [&]() -> std::shared_ptr<const StepCosts> {
    Result<Plan> plan = MakePlan(sc, sharding);
    if (!plan.ok()) return nullptr;
    const OpCostModel hw(sc.hardware);
    Result<StepCosts> costs = PriceStep(sc, *plan, hw);
    if (!costs.ok()) return nullptr;
    return std::make_shared<const StepCosts>(std::move(*costs));
  };
  const std::shared_ptr<const StepCosts> costs =
      cache != nullptr ? cache->Get(PriceCache::Key(space, point), price) : price();
  if (!costs) return out;
  out.step = StepTimeLowerBound(sc, sharding, *costs);
  out.tokens_per_step =
      static_cast<double>(sc.training.global_batch) * static_cast<double>(sc.training.seq_len);
  if (sc.training.tokens) out.tokens = *sc.training.tokens;
  return out;
}

std::map<int64_t, double> HardwarePrices(const PointSpace& space, const std::vector<Row>& rows,
                                         const LoadOptions& options) {
  std::vector<size_t> hardware_columns;
  const std::vector<std::string>& columns = space.input_columns();
  for (size_t c = 0; c < columns.size(); ++c) {
    if (columns[c] == "hardware" || columns[c].rfind("hardware.", 0) == 0) {
      hardware_columns.push_back(c);
    }
  }
  std::map<std::string, double> by_hardware;  // the hardware columns' values -> price
  std::map<int64_t, double> out;
  for (const Row& r : rows) {
    std::string key;
    for (size_t c : hardware_columns) key += (c < r.inputs.size() ? r.inputs[c] : "") + '\n';
    auto it = by_hardware.find(key);
    if (it == by_hardware.end()) {
      double price = 0.0;
      Result<ScenarioDocument> doc = space.Document(r.point);
      Result<Scenario> sc = doc.ok() ? doc->Build(options) : Result<Scenario>(doc.status());
      if (sc.ok()) price = sc->hardware.price_per_gpu_hour;
      it = by_hardware.emplace(key, price).first;
    }
    if (it->second > 0.0) out[r.point] = it->second;
  }
  return out;
}

}  // namespace shardsim
