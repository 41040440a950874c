// DeepSpeed ZeRO-3's parameter coordinator and gradient buckets, replayed on one pass's trace of
// submodule uses (framework.gather_unit: submodule; sim/framework/framework.h). Pure functions
// of the trace and DeepSpeed's element counts: step_zero3.cc turns the plan into all-gathers
// and reduce-scatters on the step's links (tests/program/zero3_fetch_test.cc).
//
// The replay follows deepspeed/runtime/zero/partitioned_param_coordinator.py:
//   fetch_sub_module(use i): all-gather the submodule's parameters if they are not available
//     (on demand), then prefetch along the trace: while the elements being prefetched are fewer
//     than min(stage3_max_live_parameters - available elements, stage3_prefetch_bucket_size),
//     take the next use of the trace and all-gather its submodule if it is not available (the
//     one that crosses the bound is still taken);
//   release_sub_module(use i), after its pass: release the submodule's parameters unless a later
//     use was already taken by a prefetch, or it is used again within
//     stage3_max_reuse_distance elements of the trace after it (__params_to_release).
// One assumption: the coordinator's host thread runs in step with the GPU, so a gather issued at
// use i's fetch starts when use i - 1's compute has ended (DeepSpeed's fetch waits on the
// gathered parameters before the module runs, and releases follow each module).
#ifndef SHARDSIM_PROGRAM_ZERO3_FETCH_H_
#define SHARDSIM_PROGRAM_ZERO3_FETCH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardsim {

// One use of a submodule in a pass: which submodule and the elements an all-gather fetches for
// it (0: its parameters persist, below stage3_param_persistence_threshold).
struct FetchUse {
  int64_t unit = 0;
  int64_t numel = 0;
};

struct FetchLimits {
  int64_t prefetch_bucket = 0;  // stage3_prefetch_bucket_size (0: no prefetch)
  int64_t max_live = 0;         // stage3_max_live_parameters
  int64_t max_reuse = 0;        // stage3_max_reuse_distance
};

// Per use i of `trace`: the uses whose all-gathers are issued at i's fetch, in issue order (i
// itself first when fetched on demand). A use fetched by nobody finds its submodule available.
std::vector<std::vector<size_t>> PlanFetches(const std::vector<FetchUse>& trace,
                                             const FetchLimits& limits);

// Gradient buckets of a backward pass (deepspeed/runtime/zero/stage3.py
// reduce_independent_p_g_buckets_and_remove_grads): `grads[i]` elements become ready after use
// i; before adding them, a non-empty bucket that would exceed `bucket` elements is
// reduce-scattered; the epilogue reduces what is left after the last use. Returns (use after
// which the bucket is reduced, elements) in order.
struct ReduceBucket {
  size_t after = 0;
  int64_t numel = 0;
};
std::vector<ReduceBucket> PlanReduceBuckets(const std::vector<int64_t>& grads, int64_t bucket);

}  // namespace shardsim

#endif  // SHARDSIM_PROGRAM_ZERO3_FETCH_H_
