#include "sim/sweep/step_bound.h"

#include <algorithm>

#include "sim/program/step_program.h"
#include "sim/schedule/schedule.h"

namespace shardsim {

StepBound StepTimeLowerBound(const Scenario& sc, const Sharding& plan, const StepCosts& costs) {
  if (sc.parallel.schedule == PipelineSchedule::kDualPipe) return StepBound{};
  const OpGraph& g = plan.graph;
  const auto layer = [&](int64_t l) -> const BlockCost& {
    return costs.layer_kinds[static_cast<size_t>(g.layer_kind_of[static_cast<size_t>(l)])];
  };
  const auto pass = [](const BlockCost& b) { return b.fwd.total() + b.bwd.total(); };
  const double m = static_cast<double>(plan.rules.microbatches);
  const bool tail_follows = !SplitsBackward(sc.parallel.schedule);
  StepBound out;
  for (size_t r = 0; r < plan.stages.size(); ++r) {
    const PipelineRank& rank = plan.stages[r];
    Seconds per_microbatch;
    int64_t first = g.num_layers();
    int64_t tasks = 0;
    for (size_t c = 0; c < rank.chunks.size(); ++c) {
      const LayerRange& range = rank.chunks[c];
      for (int64_t l = range.begin; l < range.end; ++l) per_microbatch += pass(layer(l));
      if (rank.has_embedding && static_cast<int64_t>(c) == rank.embedding_chunk) {
        per_microbatch += pass(costs.embedding);
      }
      if (rank.has_head && static_cast<int64_t>(c) == rank.head_chunk) {
        per_microbatch += pass(costs.head);
      }
      first = std::min(first, range.begin);
      tasks += range.size() + 2;
    }
    // The layers before the rank's first chunk, on the ranks before it.
    Seconds head, tail;
    for (int64_t l = 0; l < first; ++l) {
      head += layer(l).fwd.total();
      tail += layer(l).bwd.total();
    }
    if (!rank.has_embedding) {
      head += costs.embedding.fwd.total();
      tail += costs.embedding.bwd.total();
    }
    if (!tail_follows) tail = Seconds(0);
    const double exact = head.value() + m * per_microbatch.value() + tail.value();
    // Each task rounds to a whole picosecond (SimTime::FromSeconds); per micro-batch a chunk's
    // pass is at most one task per layer, per gradient bucket (the builder splits a backward into
    // at most kMaxGradBuckets) and per edge.
    const double rounding = 1e-12 * 2.0 * (m + 1.0) * static_cast<double>(kMaxGradBuckets * tasks);
    const double bound = std::max(0.0, exact * (1.0 - 1e-6) - rounding);
    if (bound > out.seconds) out = StepBound{bound, rank.rank};
  }
  return out;
}

}  // namespace shardsim
