#include "sim/model/op.h"

namespace shardsim {

const char* Name(OpKind v) {
  switch (v) {
    case OpKind::kEmbedding:
      return "embedding";
    case OpKind::kNorm:
      return "norm";
    case OpKind::kMatmul:
      return "matmul";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kActivation:
      return "activation";
    case OpKind::kDropout:
      return "dropout";
    case OpKind::kResidual:
      return "residual";
    case OpKind::kRouter:
      return "router";
    case OpKind::kPermute:
      return "permute";
    case OpKind::kLoss:
      return "loss";
    case OpKind::kCast:
      return "cast";
  }
  return "?";
}

const char* Name(TpSplit v) {
  switch (v) {
    case TpSplit::kReplicated:
      return "replicated";
    case TpSplit::kColumn:
      return "column";
    case TpSplit::kRow:
      return "row";
    case TpSplit::kHeads:
      return "heads";
    case TpSplit::kSequence:
      return "sequence";
    case TpSplit::kVocab:
      return "vocab";
    case TpSplit::kExperts:
      return "experts";
  }
  return "?";
}

const char* Name(Region v) {
  switch (v) {
    case Region::kNone:
      return "none";
    case Region::kAttention:
      return "attention";
    case Region::kMlp:
      return "mlp";
  }
  return "?";
}

const char* Name(Pass v) {
  switch (v) {
    case Pass::kForward:
      return "fwd";
    case Pass::kBackwardInput:
      return "bwd_input";
    case Pass::kBackwardWeight:
      return "bwd_weight";
  }
  return "?";
}

}  // namespace shardsim
