// Training memory per device: model states under ZeRO, activations held under the pipeline
// schedule, loss buffers, and the runtime reserve — per pipeline stage, with the worst device.
//
// Model states (ZeRO, Rajbhandari et al. 2019, arXiv 1910.02054 §5): weights, gradients and
// optimizer state in bytes per parameter that follow precision, grad dtype and optimizer (mixed-
// precision Adam: 2 + 2 + 12); stage 1 shards the optimizer state over the data-parallel group
// (dp × cp), stage 2 also the gradients, stage 3 also the weights. Activations come from the
// saved bytes of each op (sim/model/op_graph.h) times the micro-batches in flight: GPipe holds m,
// 1F1B holds min(p − i, m) on stage i (Narayanan 2021 §2.2.1), interleaving holds
// min(2(p − i − 1) + (v − 1)p + 1, m·v) chunks (Megatron-LM schedules.py warm-up), which for the
// first stage is p·(1 + (p − 1)/(p·v)) micro-batches (Korthikanti 2022 §4.2.3).
#ifndef SHARDSIM_MEMORY_BUDGET_H_
#define SHARDSIM_MEMORY_BUDGET_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/status.h"
#include "sim/base/units.h"
#include "sim/config/spec.h"
#include "sim/parallel/plan.h"

namespace shardsim {

class OrderCache;

// Allocator requests by size (bytes -> how many), sorted by bytes, each size once: e.g. every
// parameter tensor of a stage (sim/memory/allocator.h packs them).
using BlockSizes = std::vector<std::pair<double, double>>;
// Sorts requests listed in any order by size and sums the counts of each size (BlockSizes'
// form). Whole-number counts sum exactly in any order.
void MergeBlocks(BlockSizes& blocks);
// `count` more requests of `bytes` in `blocks` (in BlockSizes' form, kept so).
void AddBlocks(BlockSizes& blocks, double bytes, double count);

struct StageMemory {
  int64_t stage = 0;
  int64_t layers = 0;
  int64_t params = 0;         // parameters held by this device (TP/PP/EP shards, before ZeRO)
  int64_t expert_params = 0;  // of which routed-expert parameters
  Bytes weights;
  Bytes gradients;
  Bytes optimizer;
  Bytes zero3_buffers;  // ZeRO-3: all-gathered layer weights in flight (1 + prefetch_layers
                        // layers), or the stage's whole weights when the framework keeps them
                        // unsharded (MemoryBudget::gathered_how says which)
  // Of `gradients`: those held unsharded until the last micro-batch's backward (FSDP under a
  // framework whose grad_sync is last_microbatch, e.g. torchtitan under PP): params x the
  // reduce dtype's bytes (training.grad_dtype).
  Bytes unsharded_grads;
  // FSDP2 (FrameworkSpec::fully_shard): of zero3_buffers, the root group's parameters (what no
  // block holds), unsharded from the root's forward to its post-backward; and the segments the
  // caching allocator keeps for the all-gather and reduce-scatter streams (c10/cuda/
  // CUDACachingAllocator.cpp serves a free block only to requests of the stream it was
  // allocated on): reserved, not allocated.
  Bytes root_gathered;
  Bytes stream_pools;
  Bytes activations_per_microbatch;  // saved by this stage for one micro-batch
  double in_flight = 0.0;            // micro-batches held at the peak
  bool in_flight_walked = false;     // in_flight: the order's walked peak / one micro-batch's
  Bytes activations;                 // held at the peak
  Bytes recompute_buffer;            // full recompute: one layer rebuilt in backward
  Bytes loss_buffers;                // last stage: logits and their fp32 gradient (transient)
  Bytes moe_buffers;                 // all-to-all dispatch/combine buffers of one MoE layer
  Bytes cuda_context;
  Bytes comm_buffers;
  Bytes fragmentation;
  // The requests the caching allocator serves (bytes -> count; sim/memory/allocator.h): one per
  // model-state tensor of each op (weight, gradient, each optimizer state, as ZeRO shards them),
  // and one micro-batch's saved activations (one per op's saved tensors; one per layer when
  // recompute keeps other bytes than the ops save).
  BlockSizes state_blocks;
  BlockSizes activation_blocks;
  // The caching allocator runs with expandable segments (FrameworkSpec::expandable_segments):
  // how DeviceMemoryFigures rounds the blocks and packs them into segments.
  bool expandable_segments = false;

  Bytes model_states() const { return weights + gradients + optimizer; }
  // What the allocator hands out with `live_activations` held: all but the runtime reserve.
  Bytes Allocated(Bytes live_activations) const {
    return model_states() + zero3_buffers + live_activations + recompute_buffer + loss_buffers +
           moe_buffers;
  }
  // Device memory with `live_activations` held, the runtime reserve included; the allocator's
  // fragmentation is `fragmentation_fraction` (HardwareSpec::reserve_fragmentation) of what is
  // allocated.
  Bytes DeviceTotal(Bytes live_activations, double fragmentation_fraction) const {
    const Bytes allocated = Allocated(live_activations);
    return allocated + cuda_context + comm_buffers + allocated * fragmentation_fraction +
           stream_pools;
  }
  Bytes total() const {
    return model_states() + zero3_buffers + activations + recompute_buffer + loss_buffers +
           moe_buffers + cuda_context + comm_buffers + fragmentation + stream_pools;
  }
};

struct MemoryBudget {
  std::vector<StageMemory> stages;  // one per pipeline rank
  size_t worst = 0;                 // index of the stage with the largest total
  double weight_bytes_per_param = 0;
  double grad_bytes_per_param = 0;
  double optimizer_bytes_per_param = 0;  // before ZeRO sharding
  // FSDP2 under a 16-bit param_dtype: the shards are the fp32 master (in optimizer state), so
  // `weights` holds no sharded 16-bit copy; weight_bytes_per_param is the gathered dtype's.
  bool fp32_sharded_params = false;
  int64_t zero_shards = 1;               // dp × cp: the group ZeRO shards over
  int64_t expert_zero_shards = 1;        // dp × cp / ep for routed-expert parameters
  std::vector<std::string> assumptions;  // one line each, printed by `budget`
  // How zero3_buffers is made up, for the budget's row ("2 layers in flight").
  std::string gathered_how = "2 layers in flight";

  const StageMemory& worst_stage() const { return stages[worst]; }
};

// Micro-batches whose activations stage `stage` (0-based) of `pp` holds at its peak under the
// schedule, with `microbatches` per step and `virtual_stages` chunks per rank (and, interleaved,
// `microbatch_group` micro-batches per chunk group: 0 is pp). In units of the stage's full set
// of layers (an interleaved chunk counts 1/v).
double InFlightMicrobatches(PipelineSchedule schedule, int64_t pp, int64_t virtual_stages,
                            int64_t microbatches, int64_t stage, int64_t microbatch_group = 0);

// Model-state bytes per device for Ψ parameters sharded over `shards` ranks at `zero_stage`
// (weights, gradients, optimizer), with the per-parameter byte counts given.
struct ModelStateBytes {
  Bytes weights, gradients, optimizer;
};
ModelStateBytes ZeroModelStates(double params, double weight_bytes, double grad_bytes,
                                double optimizer_bytes, int zero_stage, double shards);

// Under the framework `framework`'s FSDP / ZeRO-3 mechanisms (sim/framework/framework.h), with
// parallel.zero_stage 3 (Scenario::framework; Megatron-Core's profile when none is given):
//   - prefetch_layers k: zero3_buffers = (1 + k) x the largest layer's parameters x weight bytes;
//   - parameters kept unsharded (reshard_after_forward false, or torchtitan's rule under PP):
//     zero3_buffers = P x weight bytes, P the stage's parameters (TP/PP/EP shards);
//   - reshard_after_forward N: the window above plus P x weight bytes / N (each layer's
//     post-forward shard, held from its forward to its backward);
//   - gradients unsharded until the last micro-batch: gradients += P x grad bytes
//     (unsharded_grads), the reduce dtype's accumulator;
//   - shard_group g (HSDP): model states shard over g ranks instead of dp x cp;
//   - fully_shard (FSDP2): zero3_buffers += R x weight bytes, R the root group's parameters
//     (the stage's parameters outside its layers: FSDP2's lazy_init sets the root's
//     post_forward_mesh_info to None, torch/distributed/fsdp/_fully_shard/_fsdp_state.py);
//     stream_pools = the all-gather stream's peak, the largest two consecutive groups' gathers
//     (forward frees a group's all-gather output after the next group's copy-out,
//     _fsdp_param_group.py), + the reduce-scatter stream's segments: one layer's reduce-scatter
//     input in the reduce dtype (post_backward frees the previous one before foreach_reduce
//     allocates the next) and the root's when larger (a new segment; the layer's stays cached);
//     under expandable segments each stream's one segment in 20 MiB pages, the root's input
//     growing it from the freed layer input (the larger of the two);
//   - fully_shard with a 16-bit param_dtype: no sharded 16-bit weights (the fp32 shards are the
//     optimizer's parameters, counted as the master in optimizer state; fp32_sharded_params).
// Closed forms in tests/memory/framework_memory_test.cc.
//
// The budget of the plan's sharded op graph over its layer split (sim/parallel/plan.h), for
// `model` trained as `training` under `parallel` (the specs the plan was sharded from); without
// a framework, Megatron-Core's profile.
Result<MemoryBudget> EstimateMemory(
    const Sharding& plan, const ModelSpec& model, const TrainingSpec& training,
    const ParallelSpec& parallel, const HardwareSpec& hardware,
    const FrameworkSpec& framework = ProfileOf(Framework::kMegatron));
// The same, the run orders it walks (the split schedules', and an interleaved rank's whose chunks
// save different bytes) taken from `orders` (sim/schedule/schedule.h; nullptr: built here): the
// same budget, byte for byte.
Result<MemoryBudget> EstimateMemory(const Sharding& plan, const ModelSpec& model,
                                    const TrainingSpec& training, const ParallelSpec& parallel,
                                    const HardwareSpec& hardware, const FrameworkSpec& framework,
                                    OrderCache* orders);
// The same, sharding the model first (ShardModel).
Result<MemoryBudget> EstimateMemory(
    const ModelSpec& model, const TrainingSpec& training, const ParallelSpec& parallel,
    const HardwareSpec& hardware, const FrameworkSpec& framework = ProfileOf(Framework::kMegatron));

// The caching allocator (sim/memory/caching_allocator.h, expandable segments) replayed over two
// training steps of one FSDP2 rank without pipelining, for the reserved memory the holes between
// live blocks leave (torch.cuda.max_memory_reserved). Three streams (torch/distributed/fsdp/
// _fully_shard/_fsdp_collectives.py): compute; all-gather copy-in (foreach_all_gather
// allocates the cast shards and the flat output there); reduce-scatter (foreach_reduce
// allocates the sharded output there and, since pytorch#129721, the input on the compute
// stream). The requests, in the order the framework issues them, sizes from the plan's op graph:
//   - start-up: each parameter's fp32 shard (numel x 4 / shards) and the cuBLAS workspace;
//   - zero_grad(set_to_none): the previous step's sharded gradients freed;
//   - forward: the root group's unshard (the shards cast to the param dtype and the flat output on
//     the copy-in stream, each parameter's unsharded copy on the compute stream; a group's flat
//     output freed after the next group's copy-out), the embedding's saved tensors; per layer its
//     unshard, then, under activation checkpointing (selective_ops, full), its forward tensor by
//     tensor as torchtitan's eager or compiled block runs it (sim/memory/layer_forward.h: the
//     embedding's output is the first block's input, each block's output the next one's; the
//     eager norm, RoPE, repeat_kv and SwiGLU intermediates; what the checkpoint keeps stays to
//     the backward), otherwise its saved activations (one block per op's saved tensors, or the
//     kept bytes as one block) and each op's output (freed after the next op's); its parameters
//     freed after forward but the last block's (torchtitan apply_fsdp: reshard_after_forward is
//     False for the last block); the final norm (checkpointed: eager RMSNorm under autograd,
//     keeping x.float() and the 16-bit normalized copy) and the head's saved input, the logits,
//     and PyTorch's cross-entropy: pred.float() (fp32 logits), log_softmax (saved), the fp32 copy
//     and the 16-bit logits freed (torchtitan `del pred`);
//   - backward: nll_loss's fp32 gradient, log_softmax's fp32 input gradient (the first freed),
//     the 16-bit gradient of the logits (ToCopyBackward; the fp32 one and log_softmax's output
//     freed), the root's unsharded weight gradients (param dtype) and the hidden-state gradient
//     (a layer input's bytes, replaced per op); per layer in reverse its unshard, the
//     recompute's rebuild (full: the layer's saved tensors; selective_ops: those SAC did not
//     store), its unsharded weight gradients and the next hidden-state
//     gradient, the rebuild and its saved activations freed, its parameters resharded, then
//     foreach_reduce: the previous reduce-scatter input freed, this one allocated (numel x
//     reduce bytes), the unsharded gradients freed, the sharded output allocated (kept as the
//     gradient; later micro-batches' outputs accumulate into it and are freed); the embedding's
//     weight gradient, the root's reduce-scatter and reshard;
//   - optimizer step: the first step allocates the optimizer states (numel x state bytes /
//     shards, per parameter and state), reused by the second.
// Not replayed: the backward's per-op temporaries (each op's input gradients while the next
// runs), the optimizer's temporaries, frees deferred by stream events (record_stream), context
// parallelism's ring buffers, and the fp8 casts' copies. Invalid for any other layout (pp > 1, MoE,
// MTP, parameters kept unsharded, default segments). Against torchtitan's logs in
// tests/validation/memory_validation_test.cc; not yet the reported reserved figure (README,
// Memory).
struct StepReplay {
  Bytes reserved;            // peak over all streams (max_memory_reserved)
  Bytes allocated;           // peak over all streams (max_memory_allocated)
  Bytes collective_streams;  // of reserved: the copy-in and reduce-scatter streams' segments
};
Result<StepReplay> ReplayFsdp2Step(const Sharding& plan, const ModelSpec& model,
                                   const TrainingSpec& training, const ParallelSpec& parallel,
                                   const FrameworkSpec& framework, const MemoryBudget& budget);

}  // namespace shardsim

#endif  // SHARDSIM_MEMORY_BUDGET_H_
