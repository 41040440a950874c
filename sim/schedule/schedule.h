// The order in which each pipeline rank runs the forward and backward passes of its model
// chunks over the micro-batches of a step — exactly Megatron-LM's schedules
// (megatron/core/pipeline_parallel/schedules.py): GPipe (all forwards, then all backwards),
// 1F1B (forward_backward_pipelining_without_interleaving: p − r − 1 warm-up forwards, then one
// forward / one backward, then the cool-down backwards) and interleaved 1F1B
// (forward_backward_pipelining_with_interleaving: (p − r − 1)·2 + (v − 1)·N warm-up chunk
// forwards, micro-batches taken in groups of N per chunk, N = microbatch_group_size_per_vp_stage,
// p by default; Narayanan 2021 §2.2, Llama 3 §3.3.2's tunable N) — and the
// zero-bubble schedules of Qi et al. 2024 (arXiv 2401.10241), which split each backward into
// B (the input gradient, which the previous stage waits for) and W (the weight gradient, which
// nothing downstream waits for and which can be deferred into what would be bubble):
//  - ZB-H1 (§3.1, "1x memory"): 1F1B's warm-up and steady state, stage r deferring its first r
//    W passes to the end, as the authors' handcrafted schedule (sail-sg/zero-bubble-pipeline-
//    parallelism, zbpp_light auto_schedule.py) does: every stage peaks at p micro-batches not
//    yet through W, 1F1B's first stage. Bubble (p - 1)(T_F + T_B - T_W) with free transfers.
//  - ZB-H2 (§3.1, "2x memory"): the paper's heuristic scheduler (§3.2: as many F as the memory
//    limit allows in warm-up, then B first, F next, W only when nothing else can start) with
//    the limit at 2p micro-batches, run on unit costs so the order depends on the shape alone.
//    With the optimizer step synchronized, as in shardsim's step, its bubble is the
//    (p - 1)·T_F that no schedule avoids (stage p-1 cannot start earlier); the paper's zero
//    needs its post-update validation, which overlaps consecutive steps.
//  - ZB-V (§6): two chunks per rank in a V (chunk 0 of rank r is stage r, chunk 1 stage
//    2p - 1 - r), the authors' handcrafted order (handcrafted_zb_v; PyTorch's
//    ScheduleZBVZeroBubble): 1F1B's peak activation memory, and with T_F = T_B = T_W and
//    m >= 2p - 1 micro-batches only the (p - 1) chunk-forwards before stage p - 1 can start idle.
// DeepSeek's bidirectional schedules, in the order of their public implementation
// (github.com/deepseek-ai/DualPipe, dualpipe.py / dualpipev.py step(): eight steps, nF0 ... nW):
//  - DualPipe (DeepSeek-V3 §3.2.1): half the micro-batches enter at rank 0 and run on each
//    rank's chunk 0, the other half enter at rank p-1 and run on chunk 1 (the model's stages
//    mirrored: two copies of the parameters per rank); forward and backward chunks of the two
//    streams are paired in the steady state; some backwards split into B and a W deferred FIFO.
//    Needs an even pp and an even number of micro-batches, at least 2·pp.
//  - DualPipeV (the "cut-in-half" DualPipe): one stream through a V — chunk 0 of ranks 0..p-1,
//    then chunk 1 of ranks p-1..0 (rank r holds stages r and 2p-1-r: one copy). Needs at least
//    2·pp micro-batches.
#ifndef SHARDSIM_SCHEDULE_SCHEDULE_H_
#define SHARDSIM_SCHEDULE_SCHEDULE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/spec.h"

namespace shardsim {

// kBackward is a whole backward; a schedule that splits it (SplitsBackward) runs its
// input-gradient half B (kInput) and its weight-gradient half W (kWeight) apart.
enum class Phase : uint8_t { kForward, kBackward, kInput, kWeight };

// Whether `schedule` runs the backward as separate B and W passes.
bool SplitsBackward(PipelineSchedule schedule);

struct ScheduleItem {
  Phase phase = Phase::kForward;
  int32_t chunk = 0;       // model chunk (virtual stage) on this rank, 0..v-1
  int32_t microbatch = 0;  // 0..m-1
  // DualPipe / DualPipeV's paired chunk (_forward_backward_chunk): this backward and the forward
  // just before it run as one unit, started once both inputs are in (the implementation posts
  // both receives and waits for them in one batch before computing either). Set on the backward.
  bool paired = false;
  bool operator==(const ScheduleItem&) const = default;
};

struct ScheduleShape {
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  int64_t pp = 1;
  int64_t virtual_stages = 1;  // chunks per rank (interleaved only; 1 otherwise)
  int64_t microbatches = 1;
  // Interleaved only: Megatron-Core's microbatch_group_size_per_vp_stage, the micro-batches a
  // rank runs on one chunk before the next (get_schedule_table); 0 means pp, its default.
  int64_t microbatch_group = 0;
};

// The shape `parallel` runs with `microbatches` per step.
ScheduleShape ShapeOf(const ParallelSpec& parallel, int64_t microbatches);
// The interleaved schedule's micro-batch group (ScheduleShape::microbatch_group, pp when 0).
int64_t MicrobatchGroup(const ScheduleShape& shape);

// The run order of `rank` (0..pp-1): 2·m·v items, 3·m·v when the backward is split. Fails where
// Megatron-LM refuses the interleaved schedule (micro-batches not a multiple of pp; with a group
// size N set: N outside [pp, m], or m mod N neither 0 nor at least pp), or for a V-shaped
// schedule with pp < 2.
Result<std::vector<ScheduleItem>> PipelineOrder(const ScheduleShape& shape, int64_t rank);
// The run orders of every rank, [rank]: what PipelineOrder gives each, built once (ZB-H2's
// scheduler places every rank's passes together).
Result<std::vector<std::vector<ScheduleItem>>> PipelineOrders(const ScheduleShape& shape);

// Every rank's run order (PipelineOrders) kept per shape for the calls that meet the same shape
// again: a sweep's points of one (schedule, pp, chunks, micro-batches) with different tp, cp or
// recompute (sim/sweep/evaluate.cc passes one to EstimateMemory). Thread-safe; the orders are
// PipelineOrders' whichever call stores them first. Holds at most kMaxItems items (16 bytes each);
// past that, orders are built and returned without being kept.
class OrderCache {
 public:
  using Orders = std::vector<std::vector<ScheduleItem>>;
  static constexpr int64_t kMaxItems = 2'000'000;
  Result<std::shared_ptr<const Orders>> Get(const ScheduleShape& shape);
  // One rank's order (PipelineOrder), kept per shape and rank: for the callers that walk a few
  // ranks' only (an interleaved pipeline's first and last ranks, whose chunks save different
  // bytes).
  Result<std::shared_ptr<const std::vector<ScheduleItem>>> GetRank(const ScheduleShape& shape,
                                                                   int64_t rank);

 private:
  using Key = std::tuple<PipelineSchedule, int64_t, int64_t, int64_t, int64_t>;
  using RankKey = std::tuple<PipelineSchedule, int64_t, int64_t, int64_t, int64_t, int64_t>;
  std::mutex mu_;
  std::map<Key, std::shared_ptr<const Orders>> orders_;
  std::map<RankKey, std::shared_ptr<const std::vector<ScheduleItem>>> rank_orders_;
  int64_t items_ = 0;
};

// Where a pass's result goes: a forward's activations to the next stage of its stream, a
// backward's (or B's) input gradient to the previous one.
struct StageHop {
  bool exists = false;  // false: the stream ends here (the loss; the first stage's backward)
  int64_t rank = 0;
  int32_t chunk = 0;
  // Sent on the stream to the next rank (else the previous one; the interleaved schedule's wrap
  // from the last rank to the first is "next"); a hop to the same rank (the V's turn) sends
  // nothing.
  bool via_next = true;
};
StageHop NextHop(const ScheduleShape& shape, int64_t rank, int32_t chunk, bool forward);

// Number of warm-up forwards before the first backward on `rank` (Megatron's
// num_warmup_microbatches, in chunk units for the interleaved schedule; the forwards before the
// first B of the order for the zero-bubble ones, in closed form: no order is built).
int64_t WarmupCount(const ScheduleShape& shape, int64_t rank);

}  // namespace shardsim

#endif  // SHARDSIM_SCHEDULE_SCHEDULE_H_
