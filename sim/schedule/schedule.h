// The order in which each pipeline rank runs the forward and backward passes of its model
// chunks over the micro-batches of a step — exactly Megatron-LM's schedules
// (megatron/core/pipeline_parallel/schedules.py): GPipe (all forwards, then all backwards),
// 1F1B (forward_backward_pipelining_without_interleaving: p − r − 1 warm-up forwards, then one
// forward / one backward, then the cool-down backwards) and interleaved 1F1B
// (forward_backward_pipelining_with_interleaving: (p − r − 1)·2 + (v − 1)·p warm-up chunk
// forwards, micro-batches taken in groups of p per chunk; Narayanan 2021 §2.2).
#ifndef SHARDSIM_SCHEDULE_SCHEDULE_H_
#define SHARDSIM_SCHEDULE_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/spec.h"

namespace shardsim {

enum class Phase : uint8_t { kForward, kBackward };

struct ScheduleItem {
  Phase phase = Phase::kForward;
  int32_t chunk = 0;       // model chunk (virtual stage) on this rank, 0..v-1
  int32_t microbatch = 0;  // 0..m-1
  bool operator==(const ScheduleItem&) const = default;
};

struct ScheduleShape {
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  int64_t pp = 1;
  int64_t virtual_stages = 1;  // chunks per rank (interleaved only; 1 otherwise)
  int64_t microbatches = 1;
};

// The run order of `rank` (0..pp-1): 2·m·v items. Fails if the interleaved schedule's
// micro-batches are not a multiple of pp (Megatron-LM requires it).
Result<std::vector<ScheduleItem>> PipelineOrder(const ScheduleShape& shape, int64_t rank);

// Number of warm-up forwards before the first backward on `rank` (Megatron's
// num_warmup_microbatches, in chunk units for the interleaved schedule).
int64_t WarmupCount(const ScheduleShape& shape, int64_t rank);

}  // namespace shardsim

#endif  // SHARDSIM_SCHEDULE_SCHEDULE_H_
