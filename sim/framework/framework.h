// Training frameworks' runtime semantics: the scenario's `framework:` key (docs/reference.md §3.6).
//
// A profile names the framework a run used (Megatron-Core, NeMo, torchtitan, PyTorch FSDP1 under
// Composer / llm-foundry, DeepSpeed, Megatron-DeepSpeed) and sets *mechanisms*, each taken from
// that framework's code (cited at ProfileOf in framework.cc), each overridable key by key:
//   - kernels: the defaults of training.fused_kernels, fused_loss and attention_kernel (a
//     training key the scenario writes wins);
//   - FSDP / ZeRO-3: when gathered parameters are freed (reshard_after_forward), when gradients
//     are reduced under gradient accumulation (grad_sync), the group parameters are sharded over
//     (shard_group: HSDP), how many layers are gathered ahead (prefetch_layers);
//   - the memory figure the framework's own logs print (memory_figure).
// sim/memory and sim/program read the mechanisms through the functions below; none is a fitted
// factor. This module sits below sim/config (it knows no spec) so the scenario reader can apply a
// profile while it reads.
#ifndef SHARDSIM_FRAMEWORK_FRAMEWORK_H_
#define SHARDSIM_FRAMEWORK_FRAMEWORK_H_

#include <cstdint>
#include <string>
#include <vector>

namespace shardsim {

enum class Framework { kMegatron, kNemo, kTorchtitan, kFsdp, kDeepspeed, kMegatronDeepspeed };
inline constexpr int kNumFrameworks = 6;

// When FSDP frees a layer's gathered (unsharded) parameters after its forward.
//   kAlways     reshard_after_forward: true  (FSDP FULL_SHARD; gathered again for backward)
//   kNever      reshard_after_forward: false (kept until after the layer's backward)
//   kWhenNoPp   torchtitan's "default" policy: true without pipeline parallelism, false with it
//   kToGroup    reshard_after_forward: N     (FSDP2: resharded to N ranks after forward, the
//               backward gathers from them)
enum class Reshard { kAlways, kNever, kWhenNoPp, kToGroup };
// When data-parallel gradients are reduced under gradient accumulation (m micro-batches).
//   kEveryMicrobatch  reduce-scatter after each micro-batch's backward (shards accumulate)
//   kLastMicrobatch   only after the last (no_sync / set_requires_gradient_sync(False)):
//                     unsharded gradients are held until then
//   kLastUnderPp      torch.distributed.pipelining's rule: the last micro-batch under PP, every
//                     micro-batch without it
enum class GradSync { kEveryMicrobatch, kLastMicrobatch, kLastUnderPp };
// How ZeRO-3 / FSDP collectives are issued in backward (framework.backward_prefetch).
//   kPre   gathers and reduce-scatters on streams of their own: the next layer's all-gather runs
//          beside the current layer's reduce-scatter (Megatron-Core, FSDP2, DeepSpeed)
//   kPost  PyTorch FSDP1 BackwardPrefetch.BACKWARD_POST: every collective of the process group
//          runs on the one per-device NCCL stream, in issue order; the post-backward hook of a
//          layer issues the next layer's all-gather, then the layer's reduce-scatter
//          (torch/distributed/fsdp/_runtime_utils.py _post_backward_hook: _post_backward_reshard
//          prefetches before the reduce-scatter), so an all-gather waits for the reduce-scatter
//          issued before it
enum class BackwardPrefetch { kPre, kPost };
// What one ZeRO-3 all-gather fetches (framework.gather_unit).
//   kLayer      a layer (FSDP's unit: torchtitan and llm-foundry wrap each block; Megatron-Core)
//   kSubmodule  each submodule holding parameters, prefetched by DeepSpeed's coordinator
enum class GatherUnit { kLayer, kSubmodule };
// The memory figure a framework's logs print (sim/memory/allocator.h has the three).
enum class MemoryFigure { kAllocated, kReserved, kDevice };

// "megatron", "nemo", "torchtitan", "fsdp", "deepspeed", "megatron-deepspeed".
const char* Name(Framework v);
// "true", "false", "when_no_pp", "group" (kToGroup is written as the group size).
const char* Name(Reshard v);
const char* Name(GradSync v);          // "every_microbatch", "last_microbatch", "last_under_pp"
const char* Name(BackwardPrefetch v);  // "pre", "post"
const char* Name(MemoryFigure v);      // "allocated", "reserved", "device"
const char* Name(GatherUnit v);        // "layer", "submodule"

// The mechanisms of one run: a profile (ProfileOf) with the scenario's overrides applied.
struct FrameworkSpec {
  Framework name = Framework::kMegatron;  // framework / framework.name
  // Kernel defaults (training.fused_kernels, training.fused_loss, training.attention_kernel
  // flash2 when true, else fused): applied to the keys the scenario's training block leaves out.
  bool fused_kernels = true;
  bool fused_loss = true;
  bool flash2_attention = false;
  // FSDP / ZeRO-3 (parallel.zero_stage 3).
  Reshard reshard_after_forward = Reshard::kAlways;  // framework.reshard_after_forward
  int64_t reshard_group = 0;                         // its N under kToGroup
  GradSync grad_sync = GradSync::kEveryMicrobatch;   // framework.grad_sync
  // framework.shard_group: ranks ZeRO / FSDP shards model states over (HSDP: shard inside groups
  // of this size, replicate across them); 0 = the whole dp x cp group.
  int64_t shard_group = 0;
  // framework.prefetch_layers: layers gathered ahead of the one computing (ZeRO-3 / FSDP).
  int64_t prefetch_layers = 1;
  BackwardPrefetch backward_prefetch = BackwardPrefetch::kPre;  // framework.backward_prefetch
  MemoryFigure memory_figure = MemoryFigure::kAllocated;        // framework.memory_figure
  // The DeepSpeed engine's communication defaults (deepspeed, megatron-deepspeed): gradients
  // reduced during backward only under ZeRO-3 and never under the PipelineEngine, parameters
  // gathered after the optimizer step (OverlapsGradReduce, OverlapsParamGather).
  bool deepspeed_engine = false;
  // FSDP2 (torch.distributed.fsdp.fully_shard, torchtitan): the root module's parameter group
  // (what no block holds: embedding, final norm, head) stays unsharded from forward to backward,
  // and all-gather outputs and reduce-scatter inputs live on streams of their own, whose
  // caching-allocator segments the compute stream cannot reuse (sim/memory/budget.h).
  bool fully_shard = false;
  // framework.expandable_segments: the caching allocator runs with PYTORCH_CUDA_ALLOC_CONF
  // expandable_segments:True, as torchtitan's launcher sets it (run_llama_train.sh, later
  // run_train.sh): one segment per stream and pool that grows by 20 MiB pages (2 MiB for the
  // small pool), every block split at 512 B (c10/cuda/CUDACachingAllocator.cpp should_split);
  // the reserved figure follows (sim/memory/allocator.h).
  bool expandable_segments = false;
  // DeepSpeed's ZeRO-3 parameter coordinator (deepspeed/runtime/zero/
  // partitioned_param_coordinator.py fetch_sub_module / release_sub_module), under
  // gather_unit kSubmodule (the deepspeed profiles): each submodule's parameters are
  // all-gathered on their own; after a submodule's fetch the next ones in the trace are prefetched
  // while fewer than stage3_prefetch_bucket_size elements are being prefetched and the live ones
  // stay under stage3_max_live_parameters; a submodule's parameters are released after its pass
  // unless used again within stage3_max_reuse_distance elements of the trace; parameters under
  // stage3_param_persistence_threshold elements are never partitioned; gradients are
  // reduce-scattered in buckets of reduce_bucket_size elements. Elements, the defaults of
  // deepspeed/runtime/zero/config.py DeepSpeedZeroConfig.
  GatherUnit gather_unit = GatherUnit::kLayer;    // framework.gather_unit
  int64_t prefetch_bucket_size = 50'000'000;      // framework.stage3_prefetch_bucket_size
  int64_t max_live_parameters = 1'000'000'000;    // framework.stage3_max_live_parameters
  int64_t max_reuse_distance = 1'000'000'000;     // framework.stage3_max_reuse_distance
  int64_t param_persistence_threshold = 100'000;  // framework.stage3_param_persistence_threshold
  int64_t reduce_bucket_size = 500'000'000;       // framework.reduce_bucket_size
  // framework.te_linears: the layers' linears are Transformer Engine modules (Megatron-Core,
  // NeMo). Under a quantized precision (fp8, mxfp8, nvfp4) two things follow. Each linear keeps
  // for backward the quantized copy of its input it cast for the GEMM, columnwise only, instead
  // of the bf16 input (transformer_engine/pytorch/module/linear.py, _Linear.forward: "Discard
  // row-wise data since it is not needed in backward pass", saved_inputmat = inputmat). And the
  // output layer, Megatron-Core's own tensor_parallel.ColumnParallelLinear
  // (megatron/core/models/gpt/gpt_model.py) and no TE module, runs in bf16 (TE's fp8_autocast
  // quantizes TE modules only). Without it (torchtitan's torchao Float8Linear, which keeps the
  // high-precision input, and converts the output layer too unless filter_fqns names it) the
  // inputs are kept in bf16 and every linear of the model runs quantized.
  bool te_linears = false;
  // framework.blocking_p2p: a pipeline send blocks the sender's compute stream until it completes
  // (DeepSpeed's PipelineEngine: deepspeed/runtime/pipe/p2p.py send asserts async_op False and
  // calls dist.send).
  bool blocking_p2p = false;
  // The framework.* keys the scenario wrote (a sub-key of a mapping), in the order read.
  std::vector<std::string> overridden;
};

// The profile of framework `f`, before any override.
FrameworkSpec ProfileOf(Framework f);

// Derived rules for a run with `pp` pipeline stages and `microbatches` per step, under ZeRO-3.
// The stage's parameters stay unsharded for the whole step (reshard false, or torchtitan's rule
// under PP: each layer's gather in the first micro-batch's forward serves every later forward and
// backward).
bool KeepsParamsUnsharded(const FrameworkSpec& f, int64_t pp);
// Gradients are held unsharded until the last micro-batch's backward (and there are several).
bool HoldsUnshardedGrads(const FrameworkSpec& f, int64_t pp, int64_t microbatches);
// Layers whose gathered parameters are live at once: the computing one and those prefetched.
int64_t GatheredLayers(const FrameworkSpec& f);
// ZeRO-3 all-gathers and reduce-scatters share one stream, in FSDP1's issue order (kPost).
bool SharesCollectiveStream(const FrameworkSpec& f);
// The defaults of parallel.overlap_grad_reduce and parallel.overlap_param_gather (a scenario that
// writes them wins): true, but under the DeepSpeed engine, where zero_optimization.overlap_comm
// defaults to stage == 3 (deepspeed/runtime/zero/config.py), the PipelineEngine's TrainSchedule
// runs ReduceGrads after the last BackwardPass (deepspeed/runtime/pipe/schedule.py), and ZeRO-1/2
// all-gather the updated partitions at the end of step() (stage_1_and_2.py, bf16_optimizer.py).
bool OverlapsGradReduce(const FrameworkSpec& f, int zero_stage, int64_t pp);
bool OverlapsParamGather(const FrameworkSpec& f, int zero_stage);

// One line per mechanism the profile (or an override) sets, for `budget`'s assumptions and
// `--explain`: "torchtitan: reshard_after_forward when_no_pp (torchtitan apply_fsdp ...)".
std::vector<std::string> MechanismLines(const FrameworkSpec& f);

}  // namespace shardsim

#endif  // SHARDSIM_FRAMEWORK_FRAMEWORK_H_
