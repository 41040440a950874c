#include "sim/model/op.h"

#include <cmath>

namespace shardsim {

double AttendedFraction(const AttentionShape& s) {
  if (!s.causal) return 1.0;
  const double n = static_cast<double>(s.seq_kv);
  const double w = static_cast<double>(s.window);
  if (s.window <= 0 || s.window >= s.seq_kv || n <= 0.0) return 0.5;
  if (!s.chunked) return (w * n - 0.5 * w * w) / (n * n);
  const double full = std::floor(n / w);
  const double rest = n - full * w;
  return (full * w * w + rest * rest) / (2.0 * n * n);
}

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
