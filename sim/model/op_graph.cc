#include "sim/model/op_graph.h"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/model/op_builders.h"

namespace shardsim {

using model_internal::ActBytes;
using model_internal::Ctx;
using model_internal::D;

double ActivationBytes(DType precision) {
  return precision == DType::kFp32 || precision == DType::kTf32 ? 4.0 : 2.0;
}

bool SequenceParallelOn(const GraphOptions& options) {
  return options.sequence_parallel && options.tp > 1;
}

int64_t KvHeadsPerRank(const ModelSpec& model, int64_t tp) {
  if (model.mla) return model.num_heads / tp;
  return model.num_kv_heads >= tp ? model.num_kv_heads / tp : 1;
}

int64_t VocabRowsPerRank(const ModelSpec& model, int64_t tp) {
  return (model.vocab_size + tp - 1) / tp;
}

GraphOptions GraphOptionsFor(const TrainingSpec& training, const ParallelSpec& parallel) {
  GraphOptions o;
  o.seq_len = training.seq_len;
  o.micro_batch = training.micro_batch;
  o.precision = training.precision;
  o.flash_attention = training.flash_attention;
  o.fused_kernels = training.fused_kernels;
  o.attention_kernel = training.attention_kernel;
  o.fused_loss = training.fused_loss;
  o.te_cross_entropy = training.fused_loss && training.cross_entropy_impl == CrossEntropyImpl::kTe;
  o.tp = parallel.tp;
  o.cp = parallel.cp;
  o.ep = parallel.ep;
  o.sequence_parallel = parallel.sequence_parallel;
  o.fp8_saved_activations = training.fp8_saved_activations;
  o.te_linears = training.te_linears;
  o.fp8_dispatch = training.fp8_dispatch;
  o.moe_probs_in_expert = training.moe_probs_in_expert;
  return o;
}

namespace {

Status CheckSlicing(const ModelSpec& m, const GraphOptions& o) {
  DiagnosticSink sink;
  auto bad = [&](const std::string& msg) { sink.Add(SourceLoc{}, msg); };
  if (o.seq_len <= 0) bad("seq_len must be positive");
  if (o.micro_batch <= 0) bad("micro_batch must be positive");
  if (o.tp <= 0 || o.cp <= 0 || o.ep <= 0) bad("parallel degrees must be positive");
  if (!sink.empty()) return sink.ToStatus();
  if (m.hidden_size <= 0 || m.num_layers <= 0 || m.num_heads <= 0 || m.vocab_size <= 0 ||
      m.head_dim <= 0 || m.ffn_hidden_size <= 0 || m.num_kv_heads <= 0) {
    bad("model " + m.name + ": sizes must be positive");
    return sink.ToStatus();
  }
  const auto divides = [&](int64_t d, int64_t v, const std::string& what) {
    if (v % d != 0) {
      bad(what + " (" + std::to_string(v) + ") is not divisible by " + std::to_string(d));
    }
  };
  divides(o.tp, m.num_heads, "num_heads");
  if (m.num_kv_heads % o.tp != 0 && o.tp % m.num_kv_heads != 0) {
    bad("num_kv_heads (" + std::to_string(m.num_kv_heads) + ") and tp (" + std::to_string(o.tp) +
        ") must divide one another");
  }
  divides(o.tp, m.ffn_hidden_size, "ffn_hidden_size");
  divides(o.cp, o.seq_len, "seq_len");
  if (SequenceParallelOn(o))
    divides(o.tp, o.micro_batch * o.seq_len / o.cp, "tokens per micro-batch");
  if (m.moe) {
    divides(o.ep, m.moe->num_experts, "moe.num_experts");
    divides(o.tp, m.moe->expert_ffn_hidden_size, "moe.expert_ffn_hidden_size");
    if (m.moe->top_k <= 0 || m.moe->top_k > m.moe->num_experts) {
      bad("moe.top_k must be between 1 and moe.num_experts");
    }
  }
  return sink.ToStatus();
}

bool IsLocalAttentionLayer(const ModelSpec& m, int64_t i) {
  if (m.local_attention == LocalAttention::kNone) return false;
  const int64_t every = m.local_attention_full_every;
  return every <= 0 || (i + 1) % every != 0;
}

bool IsMoeLayer(const ModelSpec& m, int64_t i) {
  if (!m.moe) return false;
  const MoeSpec& e = *m.moe;
  if (i < e.first_dense_layers) return false;
  // DeepSeek (moe_layer_freq) convention; sim/config maps Qwen2-MoE's decoder_sparse_step onto it.
  const int64_t freq = e.layer_freq > 0 ? e.layer_freq : 1;
  return (i - e.first_dense_layers) % freq == 0;
}

// FP8 training (Transformer Engine, Micikevicius et al. 2022, arXiv 2209.05433): each GEMM of a
// layer quantizes its input to fp8 with a transposed copy for the weight gradient (read 2 bytes,
// write 1 + 1) and, in backward, the incoming gradient likewise; weights are cast once per step
// (TE's is_first_microbatch caching) and not counted. One memory-bound kernel each.
// MXFP8 (TE's MXFP8BlockScaling; nvidia.github.io/TransformerEngine .../mxfp8): 1x32 blocks along
// the contraction dimension, so the rowwise copy and the columnwise one for the weight gradient
// are quantized apart, each with its E8M0 scales (write 2 x (1 + 1/32)), in one fused kernel.
// NVFP4 (TE's NVFP4BlockScaling; NVIDIA, arXiv 2509.25149; pytorch/ao#3293): a per-tensor fp32
// scale needs the tensor's amax first (one kernel reading it), then 1x16 blocks with E4M3 scales,
// rowwise and, for the weight gradient, columnwise after a 16x16 random Hadamard transform
// (write 2 x (0.5 + 1/16)), a second kernel. All three GEMMs of a layer (forward, dgrad, wgrad)
// run quantized, as TE's recipes do.
void AddQuantizeCasts(const Ctx& c, std::vector<Op>& ops) {
  const DType q = c.matmul_dtype;
  const double written = q == DType::kFp8 ? 2.0 : 2.0 * model_internal::QuantizedBytes(q);
  const double read = q == DType::kNvfp4 ? 2.0 * c.act_bytes : c.act_bytes;  // + the amax pass
  const int kernels = q == DType::kNvfp4 ? 2 : 1;
  const std::string name =
      q == DType::kFp8 ? ".fp8_cast" : std::string(".") + Name(q) + "_quantize";
  std::vector<Op> out;
  out.reserve(ops.size() * 2);
  for (Op& op : ops) {
    if (op.kind == OpKind::kMatmul && op.dtype == q) {
      Op cast;
      cast.name = op.name + name;
      cast.kind = OpKind::kCast;
      cast.mem_class = MemClass::kElementwise;
      cast.tp_split = op.tp_split;
      cast.region = op.region;
      cast.dtype = DType::kBf16;
      cast.kernels = kernels;
      const double b = D(op.matmul.batch);
      const double in = D(op.matmul.m) * D(op.matmul.k) * b;
      const double grad = D(op.matmul.m) * D(op.matmul.n) * b;
      cast.fwd.bytes = Bytes((read + written) * in);
      cast.fwd.flops = Flops(in);
      cast.bwd_input.bytes = Bytes((read + written) * grad);
      cast.bwd_input.flops = Flops(grad);
      cast.note = q == DType::kFp8
                      ? "fp8 cast + transpose of the GEMM input (forward) and gradient (backward)"
                      : std::string(Name(q)) +
                            " quantize (rowwise + columnwise, block scales) of the GEMM input "
                            "(forward) and gradient (backward)";
      out.push_back(std::move(cast));
    }
    out.push_back(std::move(op));
  }
  ops = std::move(out);
}

LayerOps BuildLayer(const Ctx& c, bool moe, const std::string& prefix) {
  const ModelSpec& m = c.model;
  const int64_t h = m.hidden_size;
  LayerOps layer;
  layer.kind = moe ? "moe" : "dense";
  std::vector<Op>& ops = layer.ops;
  // Each op appended after `from` belongs to `region` (Op::region).
  size_t from = 0;
  const auto block = [&](Region region) {
    for (size_t i = from; i < ops.size(); ++i) ops[i].region = region;
    from = ops.size();
  };
  ops.push_back(model_internal::NormOp(c, "ln1", c.norm_tokens, h, true, m.norm_bias));
  model_internal::AppendAttention(c, ops);
  block(Region::kAttention);
  bool mlp_input_saved = true;
  if (m.parallel_attention) {
    // Parallel block (GPT-J, GPT-NeoX, Falcon, PaLM): the MLP reads the same x as attention;
    // with one shared norm its input is the tensor the q/k/v projection already saved.
    if (m.norms_per_layer >= 2) {
      ops.push_back(model_internal::NormOp(c, "ln2", c.norm_tokens, h, false, m.norm_bias));
    } else {
      mlp_input_saved = false;
    }
    model_internal::AppendMlp(c, moe, mlp_input_saved, ops);
    block(Region::kMlp);
    ops.push_back(model_internal::ResidualOp(c, "attn.residual", c.norm_tokens, h));
    block(Region::kAttention);
    ops.push_back(model_internal::ResidualOp(c, "mlp.residual", c.norm_tokens, h));
    block(Region::kMlp);
  } else {
    // norms_per_layer 3-4 (Gemma 2): a norm after the attention (and after the MLP) output too.
    if (m.norms_per_layer >= 3) {
      ops.push_back(
          model_internal::NormOp(c, "post_attn_norm", c.norm_tokens, h, true, m.norm_bias));
    }
    ops.push_back(model_internal::ResidualOp(c, "attn.residual", c.norm_tokens, h));
    block(Region::kAttention);
    ops.push_back(model_internal::NormOp(c, "ln2", c.norm_tokens, h, true, m.norm_bias));
    model_internal::AppendMlp(c, moe, true, ops);
    if (m.norms_per_layer >= 4) {
      ops.push_back(
          model_internal::NormOp(c, "post_mlp_norm", c.norm_tokens, h, true, m.norm_bias));
    }
    ops.push_back(model_internal::ResidualOp(c, "mlp.residual", c.norm_tokens, h));
    block(Region::kMlp);
  }
  if (IsQuantizedGemm(c.matmul_dtype)) AddQuantizeCasts(c, ops);
  if (!prefix.empty()) {
    for (Op& op : ops) op.name = prefix + op.name;
  }
  layer.input_bytes = ActBytes(c, D(c.norm_tokens) * D(h));
  return layer;
}

std::vector<Op> BuildEmbedding(const Ctx& c) {
  const ModelSpec& m = c.model;
  const int64_t h = m.hidden_size;
  std::vector<Op> ops;
  Op emb;
  emb.name = "embedding";
  emb.kind = OpKind::kEmbedding;
  emb.mem_class = MemClass::kGather;
  emb.tp_split = TpSplit::kVocab;
  emb.dtype = c.options.precision;
  // Vocab-parallel embedding (Megatron-LM): each TP rank holds V/t rows (padded up), and the
  // partial outputs are all-reduced (reduce-scattered with SP) across the group.
  const int64_t rows = VocabRowsPerRank(m, c.tp);
  const bool learned = m.position_embedding == PositionEmbedding::kLearned;
  emb.params = rows * h + (learned ? m.position_table_rows * h : 0);
  const double e = D(c.tokens) * D(h);
  emb.fwd.bytes = Bytes(c.act_bytes * e * (learned ? 4.0 : 2.0));
  emb.fwd.flops = Flops(learned ? e : 0.0);
  emb.bwd_weight.bytes = Bytes(c.act_bytes * e * 2.0 + 4.0 * e);  // scatter-add into fp32 grads
  emb.output = Bytes(c.act_bytes * e);
  emb.note = learned ? "token + learned position lookup (vocab-parallel token table)"
                     : "token lookup (vocab-parallel table)";
  ops.push_back(emb);
  if (m.dropout > 0.0) {
    Op drop = model_internal::ResidualOp(c, "embedding.dropout", c.norm_tokens, h);
    drop.note = "embedding dropout; saves a 1-byte mask";
    ops.push_back(drop);
  }
  if (m.embedding_norm) {
    ops.push_back(model_internal::NormOp(c, "embedding.norm", c.norm_tokens, h, true, m.norm_bias));
  }
  return ops;
}

// Final norm, vocab-parallel output head and softmax cross-entropy (`prefix` for MTP heads).
void AppendHead(const Ctx& c, const std::string& prefix, bool head_params, std::vector<Op>& ops) {
  const ModelSpec& m = c.model;
  const int64_t h = m.hidden_size;
  const int64_t v_local = VocabRowsPerRank(m, c.tp);
  ops.push_back(
      model_internal::NormOp(c, prefix + "final_norm", c.norm_tokens, h, true, m.norm_bias));
  // With Transformer Engine's linears the output layer is Megatron-Core's own
  // ColumnParallelLinear, no TE module: it runs in bf16 under a quantized precision
  // (FrameworkSpec::te_linears).
  const bool bf16_head = c.options.te_linears && IsQuantizedGemm(c.matmul_dtype);
  model_internal::Ctx hc = c;
  if (bf16_head) {
    hc.matmul_dtype = DType::kBf16;
    hc.weight_bytes = c.act_bytes;  // bf16 weights, as the activations
  }
  Op head = model_internal::MatmulOp(
      hc, prefix + "head", TpSplit::kVocab, c.tokens, v_local, h, 1, false,
      ActBytes(c, D(c.norm_tokens) * D(h)),
      bf16_head ? "vocab-parallel output projection in bf16 (Megatron-Core's output layer is no "
                  "Transformer Engine module); saves its input"
                : "vocab-parallel output projection; saves its input");
  if (!head_params) {
    head.params = 0;
    head.note += m.tied_embeddings ? " (weights tied to the embedding)"
                                   : " (weights shared with the main head)";
  }
  ops.push_back(head);
  Op loss;
  loss.name = prefix + "loss";
  loss.kind = OpKind::kLoss;
  loss.mem_class = MemClass::kSoftmax;
  loss.tp_split = TpSplit::kVocab;
  loss.dtype = DType::kFp32;
  const double e = D(c.tokens) * D(v_local);
  // Vocab-parallel cross-entropy works in fp32 (Megatron-LM vocab_parallel_cross_entropy):
  // it keeps the fp32 softmax (s·b·V/t·4 bytes, docs/reference.md §5) for backward.
  loss.fwd.flops = Flops(5.0 * e);
  loss.bwd_input.flops = Flops(2.0 * e);
  loss.fwd.bytes = Bytes((c.act_bytes + 4.0) * e);
  loss.bwd_input.bytes = Bytes((c.act_bytes + 4.0) * e);
  loss.saved = Bytes(4.0 * e);
  // Transient in backward: the fp32 gradient of the logits and its 16-bit copy for the head's
  // backward (fused); PyTorch's holds two fp32 gradients (of the log-softmax output and of its
  // input) — 8 bytes per logit, as measured on the H200 (bench/h200/results/train.json).
  loss.output = Bytes((c.options.fused_loss ? 4.0 + c.act_bytes : 8.0) * e);
  loss.note = "fp32 softmax cross-entropy; saves the fp32 softmax";
  loss.kernels = 3;
  if (c.options.te_cross_entropy) {
    // Transformer Engine's parallel_cross_entropy (Megatron-Core cross_entropy_fusion_impl "te";
    // transformer_engine/pytorch/cross_entropy.py CrossEntropyFunction): one kernel reads each
    // row of the 16-bit logits twice (max and sum, then the gradient) in fp32 registers and
    // writes the gradient into the logits in place; forward saves that tensor, backward scales
    // it in place by the loss's gradient. Nothing of fp32 is kept or allocated.
    loss.fwd.bytes = Bytes(3.0 * c.act_bytes * e);
    loss.bwd_input.bytes = Bytes(2.0 * c.act_bytes * e);
    loss.saved = Bytes(c.act_bytes * e);
    loss.output = Bytes(0.0);
    loss.note =
        "Transformer Engine parallel cross-entropy: the logits keep their gradient in place";
    loss.kernels = 2;
  }
  ops.push_back(loss);
}

}  // namespace

Result<OpGraph> BuildOpGraph(const ModelSpec& model, const GraphOptions& options) {
  SHARDSIM_RETURN_IF_ERROR(CheckSlicing(model, options));
  const Ctx c = model_internal::MakeCtx(model, options);
  OpGraph g;
  g.options = options;
  g.tokens_per_microbatch = c.tokens;
  g.embedding = BuildEmbedding(c);
  g.layer_kinds.push_back(BuildLayer(c, false, ""));
  int moe_kind = -1;
  // Local-attention layers are kinds of their own (dense and MoE), where the window is narrower
  // than the sequence; wider, they attend as full causal layers and share those kinds.
  model_internal::Ctx local = c;
  if (model.local_attention != LocalAttention::kNone &&
      model.local_attention_size < options.seq_len) {
    local.attention_window = model.local_attention_size;
    local.attention_chunked = model.local_attention == LocalAttention::kChunked;
  }
  int local_kind[2] = {-1, -1};  // dense, MoE
  g.layer_kind_of.reserve(static_cast<size_t>(model.num_layers));
  for (int64_t i = 0; i < model.num_layers; ++i) {
    const bool moe = IsMoeLayer(model, i);
    if (local.attention_window > 0 && IsLocalAttentionLayer(model, i)) {
      int& kind = local_kind[moe ? 1 : 0];
      if (kind < 0) {
        kind = static_cast<int>(g.layer_kinds.size());
        g.layer_kinds.push_back(BuildLayer(local, moe, ""));
        g.layer_kinds.back().kind +=
            local.attention_chunked ? " (chunked attention)" : " (sliding window)";
      }
      g.layer_kind_of.push_back(kind);
    } else if (moe) {
      if (moe_kind < 0) {
        moe_kind = static_cast<int>(g.layer_kinds.size());
        g.layer_kinds.push_back(BuildLayer(c, true, ""));
      }
      g.layer_kind_of.push_back(moe_kind);
    } else {
      g.layer_kind_of.push_back(0);
    }
  }
  AppendHead(c, "", !model.tied_embeddings, g.head);
  // DeepSeek-V3 multi-token prediction (arXiv 2412.19437 §2.2): per depth, two norms, a
  // projection of [h; h] to h, one transformer block, and a head and loss sharing the main
  // model's embedding and output weights.
  for (int64_t d = 1; d <= model.mtp_depth; ++d) {
    const std::string p = "mtp" + std::to_string(d) + ".";
    const int64_t h = model.hidden_size;
    g.mtp.push_back(
        model_internal::NormOp(c, p + "enorm", c.norm_tokens, h, true, model.norm_bias));
    g.mtp.push_back(
        model_internal::NormOp(c, p + "hnorm", c.norm_tokens, h, true, model.norm_bias));
    g.mtp.push_back(model_internal::MatmulOp(
        c, p + "eh_proj", TpSplit::kReplicated, c.tokens, h, 2 * h, 1, false,
        ActBytes(c, 2.0 * D(c.norm_tokens) * D(h)), "projection of [embedding; hidden] to hidden"));
    LayerOps block = BuildLayer(c, moe_kind >= 0 || local_kind[1] >= 0, p);
    for (Op& op : block.ops) g.mtp.push_back(std::move(op));
    AppendHead(c, p, false, g.mtp);
  }
  return g;
}

int64_t TiedHeadCopyParams(const ModelSpec& model, const ParallelSpec& parallel) {
  if (!model.tied_embeddings || parallel.pp <= 1) return 0;
  return VocabRowsPerRank(model, parallel.tp) * model.hidden_size;
}

double MoeLoadFactor(const MoeSpec& moe) {
  return moe.capacity_factor > 0.0 ? moe.capacity_factor : std::max(1.0, moe.imbalance);
}

OpTotals Sum(const std::vector<Op>& ops) {
  OpTotals t;
  for (const Op& op : ops) {
    t.fwd_flops += op.fwd.flops;
    t.bwd_flops += op.bwd_input.flops + op.bwd_weight.flops;
    t.model_fwd_flops += op.model_fwd_flops;
    t.saved += op.saved;
    for (size_t m = 0; m < t.dropped_by.size(); ++m) t.dropped_by[m] += op.dropped_by[m];
    t.params += op.params;
  }
  return t;
}

}  // namespace shardsim
