#include "sim/model/recompute.h"

#include <algorithm>
#include <string>
#include <vector>

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

namespace {

// The separate aten.mm calls PyTorch modules make for one op of this graph, as fractions of its
// output in forward order: q, k, v for the fused attn.qkv (torchtitan Attention: wq, wk, wv; q
// is the attention core's q_heads x qk_dim, k and v split the rest), gate and up for a gated
// fc1 (FeedForward: w1, then w3; fc1 is twice fc2's input wide), one call otherwise.
std::vector<double> MmCalls(const LayerOps& layer, size_t i) {
  const Op& op = layer.ops[i];
  const double out = static_cast<double>(op.matmul.m) * static_cast<double>(op.matmul.n) *
                     static_cast<double>(op.matmul.batch);
  auto ends_with = [&](const std::string& tail) {
    return op.name.size() >= tail.size() &&
           op.name.compare(op.name.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (ends_with("attn.qkv")) {  // MTP layers carry a prefix
    for (const Op& core : layer.ops) {
      if (core.kind != OpKind::kAttention) continue;
      const AttentionShape& a = core.attention;
      const double q = static_cast<double>(a.batch_heads) * static_cast<double>(a.seq_q) *
                       static_cast<double>(a.head_dim);
      if (out > 0.0 && q < out) {
        const double kv = (1.0 - q / out) / 2.0;
        return {q / out, kv, kv};
      }
    }
  }
  if (ends_with(".fc1")) {
    for (size_t j = i + 1; j < layer.ops.size(); ++j) {  // fc2: the next matmul (past casts)
      if (layer.ops[j].kind != OpKind::kMatmul) continue;
      if (op.matmul.n == 2 * layer.ops[j].matmul.k) return {0.5, 0.5};
      break;
    }
  }
  return {1.0};
}

}  // namespace

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
    for (const double part : MmCalls(layer, i)) {
      ++count;
      if (count % 2 == 1 && (!compiled || read_by_backward)) kept += op.output * part;
    }
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
