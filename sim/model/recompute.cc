#include "sim/model/recompute.h"

#include <algorithm>
#include <vector>

namespace shardsim {

namespace {

// The separate calls `op` stands for (Op::framework_calls; one when none are listed), each as
// its share of the op's output, passed in forward order to `each(share, saved)`: torchtitan's
// policy saves the 1st, 3rd, 5th, ... aten.mm call of a block (see OpSacKeptBytes).
template <class Each>
void ForEachMmCall(const Op& op, int64_t* mm_calls, Each each) {
  if (op.framework_calls.empty()) {
    each(1.0, ++*mm_calls % 2 == 1);
    return;
  }
  for (const double part : op.framework_calls) each(part, ++*mm_calls % 2 == 1);
}

}  // namespace

double RecomputedShare(const TrainingSpec& training, const Op& op, int64_t* mm_calls) {
  switch (training.recompute) {
    case Recompute::kNone:
      return 0.0;
    case Recompute::kSelective:
      return (op.rerun_by & training.recompute_modules) != 0 ? 1.0 : 0.0;
    case Recompute::kSelectiveOps: {
      if (op.kind == OpKind::kAttention || op.kind == OpKind::kPermute) return 0.0;
      if (op.kind != OpKind::kMatmul) return 1.0;  // pointwise ops, norms, casts
      double share = 0.0;
      ForEachMmCall(op, mm_calls, [&](double part, bool saved) {
        if (!saved) share += part;
      });
      return share;
    }
    case Recompute::kFull:
      return 1.0;
  }
  return 0.0;
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

Bytes OpSacKeptBytes(const LayerOps& layer, bool compiled) {
  // torchtitan's op-level SAC (torchtitan/models/llama3/infra/parallelize.py, _save_list and
  // _custom_policy): each block counts its aten.mm calls in forward order and marks the 1st,
  // 3rd, 5th, ... MUST_SAVE (every second mm PREFER_RECOMPUTE), with SDPA's outputs; the block
  // input is what the checkpoint keeps; every pointwise op is recomputed.
  //   eager    torch.utils.checkpoint's _CachingTorchDispatchMode stores the output of every
  //            MUST_SAVE op as the forward runs, read by backward or not;
  //   compiled AOTAutograd's min-cut partitioner (torch/_functorch/partitioners.py) saves only
  //            what the backward graph reads: an mm output that only a residual add consumes
  //            (attn.out, fc2: the add's backward reads no input) is not saved.
  Bytes kept = layer.input_bytes;
  int64_t count = 0;
  for (size_t i = 0; i < layer.ops.size(); ++i) {
    const Op& op = layer.ops[i];
    if (op.kind == OpKind::kAttention) kept += op.output;
    if (op.kind != OpKind::kMatmul) continue;
    const bool next_is_add =
        i + 1 < layer.ops.size() &&
        (layer.ops[i + 1].kind == OpKind::kResidual || layer.ops[i + 1].kind == OpKind::kDropout);
    const bool read_by_backward = !next_is_add;
    ForEachMmCall(op, &count, [&](double part, bool saved) {
      if (saved && (!compiled || read_by_backward)) kept += op.output * part;
    });
  }
  return kept;
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
    case Recompute::kSelectiveOps:
      return OpSacKeptBytes(layer, training.fused_kernels);
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
