// The layouts `parallel: auto` stands for: every (dp, tp, pp, cp, schedule, virtual stages, ep) of
// a GPU count that ValidateScenario accepts for a scenario's model and training settings.
//
// Candidates are the divisor chains tp | gpus, pp | gpus/tp, cp | gpus/(tp*pp), dp the rest;
// for a mixture-of-experts model every ep | dp*cp (ValidateScenario also wants ep | num_experts),
// for a dense model the scenario's ep (1);
// pp = 1 runs 1F1B only (GPipe and 1F1B are the same single stage, GPipe holding more
// activations), pp >= 2 runs GPipe, 1F1B and interleaved 1F1B with every virtual-stage count
// >= 2. Validity is not re-derived here: each candidate is put into the scenario and
// ValidateScenario decides, so the sweep and `shardsim simulate` can never disagree about a
// layout. Pipeline splits are even (first/last_stage_layers 0), or, for a pp that does not
// divide the layers when the base gives neither account_for_* key, count the embedding and the
// loss as layers (LayoutChoice::edges_in_split); keys the base gives (true or false) are kept.
#ifndef SHARDSIM_SWEEP_LAYOUT_SPACE_H_
#define SHARDSIM_SWEEP_LAYOUT_SPACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/spec.h"

namespace shardsim {

struct LayoutAuto;

struct LayoutChoice {
  int64_t dp = 1, tp = 1, pp = 1, cp = 1;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  int64_t virtual_stages = 1;
  int64_t ep = 1;
  // The layers do not divide over pp but the layers + 2 do over pp x virtual stages: the split
  // counts the embedding and the loss as layers (Megatron-Core's account_for_embedding/loss_in_
  // pipeline_split, as NeMo runs Llama 3.1 405B's 126 layers over pp 8 x v 8). Only for a pp
  // that has no even split, so (pp, virtual stages) still names one split.
  bool edges_in_split = false;
};

// Positive divisors of n (n >= 1), ascending.
std::vector<int64_t> Divisors(int64_t n);

// Whether the scenario gives either account_for_*_in_pipeline_split key itself (true or false):
// then the search keeps them and counts no edges of its own.
bool SplitKeysGiven(const Scenario& scenario);

// The search's rule, for a scenario that gives no split key: a pp > 1 that does not divide the
// layers counts the embedding and the loss as layers (LayoutChoice::edges_in_split).
bool SearchCountsEdges(int64_t layers, int64_t pp);

// `scenario` with the layout's degrees, schedule and an even pipeline split.
void ApplyLayout(const LayoutChoice& layout, Scenario* scenario);

// Every valid layout of `gpus` GPUs for `scenario` (its model, training and the other parallel
// settings are kept) within `restrict`, ordered by tp, pp, cp, schedule (GPipe, 1F1B,
// interleaved), virtual stages, ep. With `micro_batch_auto` the check uses micro-batch 1 (the sizes
// are enumerated afterwards as divisors of global_batch / dp); otherwise the scenario's. The
// scenario's micro-batch group (parallel.microbatch_group_size_per_vp_stage) is not searched on.
std::vector<LayoutChoice> ValidLayouts(const Scenario& scenario, int64_t gpus,
                                       const LayoutAuto& restrict, bool micro_batch_auto);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_LAYOUT_SPACE_H_
