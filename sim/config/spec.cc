#include "sim/config/spec.h"

namespace shardsim {

const char* Name(DType v) {
  switch (v) {
    case DType::kFp32:
      return "fp32";
    case DType::kTf32:
      return "tf32";
    case DType::kBf16:
      return "bf16";
    case DType::kFp16:
      return "fp16";
    case DType::kFp8:
      return "fp8";
    case DType::kMxfp8:
      return "mxfp8";
    case DType::kNvfp4:
      return "nvfp4";
  }
  return "?";
}

const char* Name(Activation v) {
  switch (v) {
    case Activation::kGelu:
      return "gelu";
    case Activation::kRelu:
      return "relu";
    case Activation::kSwiglu:
      return "swiglu";
    case Activation::kGeglu:
      return "geglu";
  }
  return "?";
}

const char* Name(NormKind v) {
  switch (v) {
    case NormKind::kLayerNorm:
      return "layernorm";
    case NormKind::kRmsNorm:
      return "rmsnorm";
  }
  return "?";
}

const char* Name(PositionEmbedding v) {
  switch (v) {
    case PositionEmbedding::kRope:
      return "rope";
    case PositionEmbedding::kLearned:
      return "learned";
    case PositionEmbedding::kAlibi:
      return "alibi";
    case PositionEmbedding::kNone:
      return "none";
  }
  return "?";
}

const char* Name(Optimizer v) {
  switch (v) {
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kSgd:
      return "sgd";
  }
  return "?";
}

const char* Name(Recompute v) {
  switch (v) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kSelectiveOps:
      return "selective_ops";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

const char* Name(RecomputeModule v) {
  switch (v) {
    case RecomputeModule::kCoreAttn:
      return "core_attn";
    case RecomputeModule::kLayernorm:
      return "layernorm";
    case RecomputeModule::kMlaUpProj:
      return "mla_up_proj";
    case RecomputeModule::kMoeAct:
      return "moe_act";
  }
  return "?";
}

std::string RecomputeModulesText(unsigned modules) {
  std::string out;
  for (int i = 0; i < kNumRecomputeModules; ++i) {
    const auto m = static_cast<RecomputeModule>(i);
    if ((modules & ModuleBit(m)) == 0) continue;
    if (!out.empty()) out += ", ";
    out += Name(m);
  }
  return out;
}

std::string RecomputeText(const TrainingSpec& training) {
  std::string out = Name(training.recompute);
  if (training.recompute == Recompute::kSelective &&
      training.recompute_modules != ModuleBit(RecomputeModule::kCoreAttn)) {
    out += " (" + RecomputeModulesText(training.recompute_modules) + ")";
  }
  return out;
}

const char* Name(LocalAttention v) {
  switch (v) {
    case LocalAttention::kNone:
      return "none";
    case LocalAttention::kSliding:
      return "sliding";
    case LocalAttention::kChunked:
      return "chunked";
  }
  return "?";
}

const char* Name(CrossEntropyImpl v) {
  switch (v) {
    case CrossEntropyImpl::kNative:
      return "native";
    case CrossEntropyImpl::kTe:
      return "te";
  }
  return "?";
}

const char* Name(AttentionKernel v) {
  switch (v) {
    case AttentionKernel::kFused:
      return "fused";
    case AttentionKernel::kFlash2:
      return "flash2";
  }
  return "?";
}

const char* Name(PipelineSchedule v) {
  switch (v) {
    case PipelineSchedule::kGpipe:
      return "gpipe";
    case PipelineSchedule::k1F1B:
      return "1f1b";
    case PipelineSchedule::kInterleaved1F1B:
      return "interleaved_1f1b";
    case PipelineSchedule::kZbH1:
      return "zb_h1";
    case PipelineSchedule::kZbH2:
      return "zb_h2";
    case PipelineSchedule::kZbV:
      return "zb_v";
    case PipelineSchedule::kDualPipe:
      return "dualpipe";
    case PipelineSchedule::kDualPipeV:
      return "dualpipe_v";
  }
  return "?";
}

const char* Name(LinkKind v) {
  switch (v) {
    case LinkKind::kNvSwitch:
      return "nvswitch";
    case LinkKind::kNvLink:
      return "nvlink";
    case LinkKind::kPcie:
      return "pcie";
    case LinkKind::kInfiniBand:
      return "infiniband";
    case LinkKind::kRoce:
      return "roce";
    case LinkKind::kEthernet:
      return "ethernet";
    case LinkKind::kInfinityFabric:
      return "infinity_fabric";
  }
  return "?";
}

const char* Name(FabricKind v) {
  switch (v) {
    case FabricKind::kNone:
      return "none";
    case FabricKind::kFatTree:
      return "fat_tree";
    case FabricKind::kRailOptimized:
      return "rail_optimized";
    case FabricKind::kClos:
      return "clos";
  }
  return "?";
}

double BytesOf(DType v) {
  switch (v) {
    case DType::kFp32:
    case DType::kTf32:
      return 4.0;
    case DType::kBf16:
    case DType::kFp16:
      return 2.0;
    case DType::kFp8:
    case DType::kMxfp8:
      return 1.0;
    case DType::kNvfp4:
      return 0.5;
  }
  return 4.0;
}

KeyOrigin Origins::Get(const std::string& path) const {
  auto it = map_.find(path);
  if (it != map_.end()) return it->second;
  return KeyOrigin{SourceLoc{file_, 0, 0}, {}};
}

std::string TopologySpec::GpusProblem(int64_t gpus) const {
  const std::string topology = "topology '" + name + "'";
  const int64_t gpn = gpus_per_node;
  if (gpus < 1) return "gpus must be positive, got " + std::to_string(gpus);
  if (gpus > kMaxGpus) {
    return "gpus must be at most " + std::to_string(kMaxGpus) + " (2^24), got " +
           std::to_string(gpus);
  }
  if (gpn < 1) return "";  // the topology's own check reports it
  if (gpus > gpn && gpus % gpn != 0) {
    return std::to_string(gpus) + " GPUs do not fill whole nodes of " + topology + " (" +
           std::to_string(gpn) + " GPUs per node); use a multiple of " + std::to_string(gpn);
  }
  const int64_t nodes = (gpus + gpn - 1) / gpn;
  if (!has_inter_node && nodes > 1) {
    return topology + " is a single node of " + std::to_string(gpn) +
           " GPUs (no inter_node block); " + std::to_string(gpus) + " GPUs do not fit";
  }
  if (has_inter_node && max_nodes > 0 && nodes > max_nodes) {
    return topology + " has at most " + std::to_string(max_nodes) + " nodes (" +
           std::to_string(max_nodes * gpn) + " GPUs); " + std::to_string(gpus) + " GPUs do not fit";
  }
  return "";
}

}  // namespace shardsim
