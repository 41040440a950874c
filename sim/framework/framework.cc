#include "sim/framework/framework.h"

namespace shardsim {

const char* Name(Framework v) {
  switch (v) {
    case Framework::kMegatron:
      return "megatron";
    case Framework::kNemo:
      return "nemo";
    case Framework::kTorchtitan:
      return "torchtitan";
    case Framework::kFsdp:
      return "fsdp";
    case Framework::kDeepspeed:
      return "deepspeed";
    case Framework::kMegatronDeepspeed:
      return "megatron-deepspeed";
  }
  return "?";
}

const char* Name(Reshard v) {
  switch (v) {
    case Reshard::kAlways:
      return "true";
    case Reshard::kNever:
      return "false";
    case Reshard::kWhenNoPp:
      return "when_no_pp";
    case Reshard::kToGroup:
      return "group";
  }
  return "?";
}

const char* Name(GradSync v) {
  switch (v) {
    case GradSync::kEveryMicrobatch:
      return "every_microbatch";
    case GradSync::kLastMicrobatch:
      return "last_microbatch";
    case GradSync::kLastUnderPp:
      return "last_under_pp";
  }
  return "?";
}

const char* Name(BackwardPrefetch v) {
  switch (v) {
    case BackwardPrefetch::kPre:
      return "pre";
    case BackwardPrefetch::kPost:
      return "post";
  }
  return "?";
}

const char* Name(MemoryFigure v) {
  switch (v) {
    case MemoryFigure::kAllocated:
      return "allocated";
    case MemoryFigure::kReserved:
      return "reserved";
    case MemoryFigure::kDevice:
      return "device";
  }
  return "?";
}

const char* Name(GatherUnit v) {
  switch (v) {
    case GatherUnit::kLayer:
      return "layer";
    case GatherUnit::kSubmodule:
      return "submodule";
  }
  return "?";
}

FrameworkSpec ProfileOf(Framework f) {
  FrameworkSpec s;  // Megatron-Core: what shardsim modeled before profiles existed
  s.name = f;
  switch (f) {
    case Framework::kMegatron:
    case Framework::kNemo:
      // Megatron-Core: Transformer Engine fused kernels and cuDNN attention, the fused
      // vocab-parallel cross-entropy (megatron/core/tensor_parallel/cross_entropy.py). Its
      // report_memory (megatron/training/utils.py) prints "max allocated" first
      // (torch.cuda.max_memory_allocated). NeMo 2 runs Megatron-Core's model and engine; its
      // recipes' layout and overlap defaults are written in the scenario (parallel.*). The
      // transformer layers' linears are Transformer Engine modules
      // (TELayerNormColumnParallelLinear, TERowParallelLinear:
      // megatron/core/extensions/transformer_engine.py), the output layer Megatron-Core's own
      // (FrameworkSpec::te_linears).
      s.te_linears = true;
      break;
    case Framework::kTorchtitan:
      // torchtitan (torchtitan/models/llama3/model/model.py): PyTorch eager modules (w1, w3, silu
      // and the product saved apart), F.scaled_dot_product_attention (its FlashAttention-2
      // backend in bf16 on Hopper), nn.functional.cross_entropy on fp32 logits
      // (torchtitan/components/loss.py); torch.compile fuses them (set training.fused_kernels).
      s.fused_kernels = false;
      s.fused_loss = false;
      s.flash2_attention = true;
      // apply_fsdp (torchtitan/models/llama3/infra/parallelize.py): fsdp_reshard_after_forward
      // "default" = not parallel_dims.pp_enabled ("to avoid per-microbatch all-gathers").
      s.reshard_after_forward = Reshard::kWhenNoPp;
      // torch/distributed/pipelining/stage.py, backward_maybe_with_nosync: an FSDP stage runs
      // set_requires_gradient_sync(last_backward) and set_reshard_after_backward(last_backward),
      // so gradients stay unsharded (FSDPParam.to_accumulated_grad_if_needed upcasts them to the
      // reduce dtype, torch/distributed/fsdp/_fully_shard/_fsdp_param.py) until the last
      // micro-batch. Without PP the trainer reduce-scatters every micro-batch.
      s.grad_sync = GradSync::kLastUnderPp;
      // FSDP2 prefetches one module ahead (implicit prefetch on its all-gather stream,
      // _fsdp_param_group.py); torchtitan's tables print the caching allocator's max reserved
      // (torchtitan/components/metrics.py, DeviceMemoryMonitor.get_peak_stats max_reserved_gib).
      s.memory_figure = MemoryFigure::kReserved;
      // torchtitan's apply_fsdp calls fully_shard on each block, then on the whole model: the
      // root group holds the embedding, final norm and head (sim/memory/budget.h, FSDP2).
      s.fully_shard = true;
      // The repository's launcher, run_llama_train.sh in 2024 (run_train.sh since), starts
      // PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True" torchrun ...; the benchmark tables do
      // not name their launcher, so that they ran under it is an assumption (README, Memory).
      s.expandable_segments = true;
      break;
    case Framework::kFsdp:
      // PyTorch FSDP1 under Composer / llm-foundry: eager PyTorch blocks and cross-entropy
      // (llmfoundry/models/mpt/modeling_mpt.py), attention through its flash / triton kernels
      // (training.attention_kernel stays fused). FULL_SHARD reshards after forward;
      // limit_all_gathers (Composer's default) caps in-flight all-gathers at two
      // (torch/distributed/fsdp/_limiter_utils.py _FreeEventQueue, _max_num_inflight_all_gathers
      // = 2): one layer prefetched. Composer's ddp_sync_context
      // (composer/distributed/dist_strategy.py) returns early for a model that is not DDP, so FSDP
      // reduce-scatters every micro-batch. Composer's memory monitor logs the allocator's peak
      // reserved among its figures (composer/callbacks/memory_monitor.py).
      // Composer's FSDPConfig (composer/utils/parallelism.py) defaults backward_prefetch to
      // 'BACKWARD_POST' and forward_prefetch to False; llm-foundry's yamls keep both. FSDP1's
      // BackwardPrefetch docstring (torch/distributed/fsdp/api.py): "any collectives, even if
      // issued in different streams, contend for the same per-device NCCL stream".
      s.backward_prefetch = BackwardPrefetch::kPost;
      s.fused_kernels = false;
      s.fused_loss = false;
      s.memory_figure = MemoryFigure::kReserved;
      break;
    case Framework::kDeepspeed:
      // DeepSpeed runs the user's model (Hugging Face Transformers' eager modules in most runs);
      // see_memory_usage (deepspeed/runtime/utils.py) prints "Max_MA"
      // (torch.cuda.max_memory_allocated).
      s.fused_kernels = false;
      s.fused_loss = false;
      s.flash2_attention = true;
      s.deepspeed_engine = true;
      s.gather_unit = GatherUnit::kSubmodule;
      s.blocking_p2p = true;
      break;
    case Framework::kMegatronDeepspeed:
      // Megatron-DeepSpeed keeps Megatron-LM's fused kernels and vocab-parallel cross-entropy
      // (megatron/model/fused_softmax.py, megatron/core/tensor_parallel/cross_entropy.py) and
      // DeepSpeed's see_memory_usage; its engine and PipelineEngine run the steps.
      s.deepspeed_engine = true;
      s.gather_unit = GatherUnit::kSubmodule;
      s.blocking_p2p = true;
      break;
  }
  return s;
}

bool KeepsParamsUnsharded(const FrameworkSpec& f, int64_t pp) {
  return f.reshard_after_forward == Reshard::kNever ||
         (f.reshard_after_forward == Reshard::kWhenNoPp && pp > 1);
}

bool HoldsUnshardedGrads(const FrameworkSpec& f, int64_t pp, int64_t microbatches) {
  if (microbatches <= 1) return false;
  return f.grad_sync == GradSync::kLastMicrobatch ||
         (f.grad_sync == GradSync::kLastUnderPp && pp > 1);
}

int64_t GatheredLayers(const FrameworkSpec& f) { return 1 + f.prefetch_layers; }

bool SharesCollectiveStream(const FrameworkSpec& f) {
  return f.backward_prefetch == BackwardPrefetch::kPost;
}

bool OverlapsGradReduce(const FrameworkSpec& f, int zero_stage, int64_t pp) {
  return !f.deepspeed_engine || (zero_stage == 3 && pp == 1);
}

bool OverlapsParamGather(const FrameworkSpec& f, int zero_stage) {
  return !f.deepspeed_engine || zero_stage == 3;
}

std::vector<std::string> MechanismLines(const FrameworkSpec& f) {
  std::vector<std::string> lines;
  const std::string who = std::string("framework ") + Name(f.name) + ": ";
  const std::string reshard = f.reshard_after_forward == Reshard::kToGroup
                                  ? std::to_string(f.reshard_group) + " ranks"
                                  : std::string(Name(f.reshard_after_forward));
  lines.push_back(who + "kernels " + (f.fused_kernels ? "fused" : "eager") + ", loss " +
                  (f.fused_loss ? "fused" : "PyTorch cross-entropy") + ", attention " +
                  (f.flash2_attention ? "FlashAttention-2" : "fused (cuDNN / TE)") +
                  " (defaults of training.*)");
  lines.push_back(who + "FSDP/ZeRO-3 reshard_after_forward " + reshard + ", grad_sync " +
                  Name(f.grad_sync) + ", prefetch_layers " + std::to_string(f.prefetch_layers) +
                  ", backward_prefetch " + Name(f.backward_prefetch) + ", shard_group " +
                  (f.shard_group > 0 ? std::to_string(f.shard_group) : std::string("dp x cp")));
  if (f.gather_unit == GatherUnit::kSubmodule) {
    lines.push_back(who + "ZeRO-3 gathers per submodule: stage3_prefetch_bucket_size " +
                    std::to_string(f.prefetch_bucket_size) + ", stage3_max_live_parameters " +
                    std::to_string(f.max_live_parameters) + ", stage3_max_reuse_distance " +
                    std::to_string(f.max_reuse_distance) + ", stage3_param_persistence_threshold " +
                    std::to_string(f.param_persistence_threshold) + ", reduce_bucket_size " +
                    std::to_string(f.reduce_bucket_size) + " elements");
  }
  if (f.blocking_p2p) {
    lines.push_back(who + "pipeline sends block the sender's compute (PipelineEngine p2p.send)");
  }
  if (f.deepspeed_engine) {
    lines.push_back(who +
                    "DeepSpeed engine: gradients reduced during backward only under ZeRO-3 "
                    "without PP, parameters gathered after the step (defaults of parallel.*)");
  }
  if (f.fully_shard) {
    lines.push_back(who +
                    "FSDP2 fully_shard: the root group (embedding, final norm, head) unsharded "
                    "from forward to backward; all-gather and reduce-scatter buffers cached on "
                    "their own streams (in reserved)");
  }
  if (f.expandable_segments) {
    lines.push_back(who +
                    "caching allocator with expandable segments (PYTORCH_CUDA_ALLOC_CONF "
                    "expandable_segments:True): blocks split at 512 B, segments grow in 20 MiB "
                    "pages");
  }
  lines.push_back(who + "logs report the " + Name(f.memory_figure) + " memory figure");
  if (!f.overridden.empty()) {
    std::string keys;
    for (const std::string& k : f.overridden) keys += (keys.empty() ? "" : ", ") + k;
    lines.push_back(who + "set by the scenario: " + keys);
  }
  return lines;
}

}  // namespace shardsim
