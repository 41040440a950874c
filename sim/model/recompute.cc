#include "sim/model/recompute.h"

#include <algorithm>

namespace shardsim {

bool Recomputes(const TrainingSpec& training, const Op& op, int matmul_ordinal) {
  switch (training.recompute) {
    case Recompute::kNone:
      return false;
    case Recompute::kSelective:
      return (op.rerun_by & training.recompute_modules) != 0;
    case Recompute::kSelectiveOps:
      if (op.kind == OpKind::kAttention || op.kind == OpKind::kPermute) return false;
      if (op.kind == OpKind::kMatmul) return matmul_ordinal % 2 == 1;  // see LayerActivationBytes
      return true;  // pointwise ops, norms, casts
    case Recompute::kFull:
      return true;
  }
  return false;
}

Bytes SelectiveDrops(const std::array<Bytes, kNumRecomputeModules>& dropped_by,
                     const TrainingSpec& training) {
  Bytes dropped;
  if (training.recompute != Recompute::kSelective) return dropped;
  for (int m = 0; m < kNumRecomputeModules; ++m) {
    if ((training.recompute_modules & ModuleBit(static_cast<RecomputeModule>(m))) != 0) {
      dropped += dropped_by[static_cast<size_t>(m)];
    }
  }
  return dropped;
}

Bytes LayerActivationBytes(const LayerOps& layer, const TrainingSpec& training) {
  switch (training.recompute) {
    case Recompute::kNone: {
      return Sum(layer.ops).saved;
    }
    case Recompute::kSelective: {
      const OpTotals t = Sum(layer.ops);
      return t.saved - SelectiveDrops(t.dropped_by, training);
    }
    case Recompute::kSelectiveOps: {
      // The layer input, the attention output, and every other matmul output. Frameworks run
      // q, k, v and gate, up as separate matmuls where this graph fuses them, so "every other"
      // is taken as half of the matmul output bytes (and half their forward time recomputed,
      // see Recomputes); the attention's own inputs are rebuilt by the recompute.
      Bytes kept = layer.input_bytes;
      for (const Op& op : layer.ops) {
        if (op.kind == OpKind::kAttention) kept += op.output;
        if (op.kind == OpKind::kMatmul) kept += op.output * 0.5;
      }
      return kept;
    }
    case Recompute::kFull:
      return layer.input_bytes;
  }
  return Bytes(0);
}

Bytes WeightGradHeldBytes(const std::vector<Op>& ops, const TrainingSpec& training,
                          int64_t sp_shards) {
  const double act = ActivationBytes(training.precision);
  // DeepSeek-V3's FP8 Wgrad (arXiv 2412.19437 §3.3, Figure 6) takes both operands in FP8: with
  // its FP8 caching on, a deferred W keeps the fp8 input and the fp8 output gradient.
  const bool fp8 = training.fp8_saved_activations && training.precision == DType::kFp8;
  const double input = fp8 ? 1.0 : act;
  const double grad = fp8 ? 1.0 : act;
  double bytes = 0.0;
  for (const Op& op : ops) {
    if (op.kind != OpKind::kMatmul || op.params == 0) continue;
    const MatmulShape& s = op.matmul;
    const double batch = static_cast<double>(s.batch);
    const double shards = op.tp_split == TpSplit::kColumn
                              ? static_cast<double>(std::max<int64_t>(1, sp_shards))
                              : 1.0;
    bytes += batch * static_cast<double>(s.m) *
             (static_cast<double>(s.k) * input / shards + static_cast<double>(s.n) * grad);
  }
  return Bytes(bytes);
}

}  // namespace shardsim
