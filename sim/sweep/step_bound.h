// A lower bound of a point's simulated step time, known before its task graph is built: what lets
// `sweep --prune-to-top K` skip points that cannot enter the top K (sim/sweep/top_k.h).
//
// The bound is the compute stream of one pipeline rank. In the task graph (sim/program/
// step_program.cc) every forward and backward pass of a chunk is one or more tasks on its rank's
// compute stream, one task at a time, whose durations sum to the chunk's priced passes
// (StepCosts: PassTime::total() of each layer kind, the embedding and the head; a backward split
// into gradient buckets or into B and W sums to the same). A rank runs each of its chunks' passes
// once per micro-batch, so its stream is busy for
//   busy(r) = m · Σ over its chunks of (fwd + bwd)
// and the step (the makespan) lasts at least that. Before its first task can start, the first
// micro-batch's forward must have passed every layer before the rank's first chunk (and the
// embedding, when another rank holds it): head(r). After its last task (a whole backward, when
// the schedule does not split the backward into B and W passes), that micro-batch's backward must
// still pass those layers on the ranks before it: tail(r). Those layers sit on other ranks (the
// rank's chunks all begin after them), so
//   step >= head(r) + busy(r) + tail(r)   for every rank r,
// the pipeline bubble of Narayanan 2021 (arXiv 2104.04473 §2.2) for equal stages:
// (m + p - 1) · (F + B) under 1F1B. Communication outside the compute stream, waits and the
// optimizer step only add to it. DualPipe (two copies of the model, micro-batches fed from both
// ends) is not bounded (0). tests/sweep/step_bound_test.cc holds the bound below the simulated
// step on a space of layouts, schedules, recompute modes and ZeRO stages.
#ifndef SHARDSIM_SWEEP_STEP_BOUND_H_
#define SHARDSIM_SWEEP_STEP_BOUND_H_

#include <cstdint>

#include "sim/config/spec.h"
#include "sim/parallel/plan.h"
#include "sim/program/step_costs.h"

namespace shardsim {

struct StepBound {
  double seconds = 0.0;  // no simulated step of the point is shorter; 0: no bound
  int64_t stage = 0;     // the pipeline rank that gives it
};

// The bound of `plan` (of `scenario`; a Plan, or the Sharding it is made of: the layout is not
// read) priced as `costs` (PriceStep of the same plan). Slightly below the exact sum (a relative
// 1e-6 and a picosecond per task), since the engine rounds each task to whole picoseconds.
StepBound StepTimeLowerBound(const Scenario& scenario, const Sharding& plan,
                             const StepCosts& costs);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_STEP_BOUND_H_
