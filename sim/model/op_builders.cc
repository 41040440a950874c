#include "sim/model/op_builders.h"

#include <algorithm>
#include <utility>

namespace shardsim::model_internal {

double QuantizedBytes(DType dtype) {
  switch (dtype) {
    case DType::kMxfp8:
      return 1.0 + 1.0 / 32.0;  // E4M3 + one E8M0 scale per 32 elements (TE MXFP8 docs)
    case DType::kNvfp4:
      return 0.5 + 1.0 / 16.0;  // E2M1 + one E4M3 scale per 16 elements (per-tensor scale: 4 B)
    default:
      return 1.0;  // fp8 with a per-tensor scale
  }
}

Ctx MakeCtx(const ModelSpec& model, const GraphOptions& options) {
  const bool fp32 = options.precision == DType::kFp32 || options.precision == DType::kTf32;
  const bool quantized = IsQuantizedGemm(options.precision);
  const int64_t tokens = options.micro_batch * options.seq_len / options.cp;
  const bool sp = SequenceParallelOn(options);
  return Ctx{model,
             options,
             ActivationBytes(options.precision),
             fp32 ? 4.0 : (quantized ? QuantizedBytes(options.precision) : 2.0),
             options.precision,
             tokens,
             sp ? tokens / options.tp : tokens,
             options.tp};
}

Bytes Fp8Saved(const Ctx& c, DType consumer, Bytes saved, double bytes_per_element) {
  if (!c.options.fp8_saved_activations || consumer != DType::kFp8) return saved;
  return saved * (bytes_per_element / c.act_bytes);
}

bool KeepsQuantizedInput(const Ctx& c, DType consumer) {
  return c.options.te_linears && IsQuantizedGemm(consumer) && !c.options.fp8_saved_activations;
}

Bytes LinearSaved(const Ctx& c, DType consumer, Bytes saved) {
  if (KeepsQuantizedInput(c, consumer)) return saved * (QuantizedBytes(consumer) / c.act_bytes);
  return Fp8Saved(c, consumer, saved, 1.0);
}

void DropWithModule(RecomputeModule m, Op& op) { op.dropped_by[static_cast<size_t>(m)] = op.saved; }

Op MatmulOp(const Ctx& c, std::string name, TpSplit split, int64_t m, int64_t n, int64_t k,
            int64_t batch, bool bias, Bytes saved_input, std::string note) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kMatmul;
  op.tp_split = split;
  op.dtype = c.matmul_dtype;
  op.matmul = MatmulShape{m, n, k, batch};
  const double b = D(batch);
  // 2mnk per pass (docs/reference.md §5): forward, backward-input (dX = dY.W^T), backward-weight
  // (dW = X^T.dY); tested in tests/model/op_graph_test.cc.
  const Flops f(2.0 * D(m) * D(n) * D(k) * b);
  op.fwd.flops = f;
  op.model_fwd_flops = f;
  op.bwd_input.flops = f;
  op.bwd_weight.flops = f;
  // fp8 GEMMs read 1-byte operands (Transformer Engine casts inputs and caches fp8 weights)
  // and write bf16 outputs; mxfp8 and nvfp4 read their data and block scales.
  const double in = IsQuantizedGemm(c.matmul_dtype) ? QuantizedBytes(c.matmul_dtype) : c.act_bytes;
  const double out = c.act_bytes;
  op.fwd.bytes = Bytes(b * (in * D(m) * D(k) + c.weight_bytes * D(k) * D(n) + out * D(m) * D(n)));
  op.bwd_input.bytes =
      Bytes(b * (out * D(m) * D(n) + c.weight_bytes * D(k) * D(n) + out * D(m) * D(k)));
  // The weight gradient is accumulated into an fp32 main-grad buffer (Megatron-LM
  // --accumulate-allreduce-grads-in-fp32): read and written once per micro-batch.
  op.bwd_weight.bytes = Bytes(b * (in * D(m) * D(k) + out * D(m) * D(n) + 8.0 * D(k) * D(n)));
  op.params = batch * (k * n + (bias ? n : 0));
  op.saved = LinearSaved(c, op.dtype, saved_input);
  op.output = Bytes(out * D(m) * D(n) * b);
  op.kernels = 1;  // bias add fused into the GEMM epilogue
  op.note = std::move(note);
  return op;
}

Op NormOp(const Ctx& c, std::string name, int64_t tokens, int64_t width, bool saves_input,
          bool with_bias) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kNorm;
  op.mem_class = MemClass::kNorm;
  op.tp_split = c.norm_tokens != c.tokens ? TpSplit::kSequence : TpSplit::kReplicated;
  op.dtype = c.options.precision;
  const bool layernorm = c.model.norm == NormKind::kLayerNorm;
  const double e = D(tokens) * D(width);
  // Elementwise work is not model FLOPs; ~5 (layernorm) or ~4 (rmsnorm) FLOPs per element is
  // only used to decide compute- vs memory-bound (always memory-bound in practice).
  op.fwd.flops = Flops((layernorm ? 5.0 : 4.0) * e);
  op.bwd_input.flops = Flops((layernorm ? 8.0 : 6.0) * e);
  op.fwd.bytes = Bytes(2.0 * c.act_bytes * e);        // read x, write y
  op.bwd_input.bytes = Bytes(3.0 * c.act_bytes * e);  // read x and dy, write dx (dgamma fused)
  if (!layernorm && !c.options.fused_kernels) {
    // RMSNorm written as PyTorch ops (x.float(), pow, mean, x * rsqrt, type_as, * weight: six
    // kernels) moves 4 act + 28 bytes per element forward instead of 2 act; its autograd
    // backward about twice that. F.layer_norm is one kernel even in eager mode.
    op.fwd.bytes = Bytes((4.0 * c.act_bytes + 28.0) * e);
    op.bwd_input.bytes = op.fwd.bytes * 2.0;
    op.kernels = 6;
  }
  op.params = width * (layernorm && with_bias ? 2 : 1);
  // The per-row fp32 statistics (mean, rstd) are under 0.1% of the layer and not counted.
  op.saved = saves_input ? Bytes(c.act_bytes * e) : Bytes(0);
  op.output = Bytes(c.act_bytes * e);
  op.rerun_by = ModuleBit(RecomputeModule::kLayernorm);
  op.note = saves_input ? "saves its input (Korthikanti 2022 §4.1)"
                        : "same input as an earlier norm: saved once";
  return op;
}

Op ResidualOp(const Ctx& c, std::string name, int64_t tokens, int64_t width) {
  Op op;
  op.name = std::move(name);
  const bool dropout = c.model.dropout > 0.0;
  op.kind = dropout ? OpKind::kDropout : OpKind::kResidual;
  op.mem_class = MemClass::kElementwise;
  op.tp_split = c.norm_tokens != c.tokens ? TpSplit::kSequence : TpSplit::kReplicated;
  op.dtype = c.options.precision;
  const double e = D(tokens) * D(width);
  op.fwd.flops = Flops((dropout ? 2.0 : 1.0) * e);
  op.fwd.bytes = Bytes(3.0 * c.act_bytes * e + (dropout ? e : 0.0));  // x, branch -> sum (+mask)
  op.bwd_input.bytes = Bytes(3.0 * c.act_bytes * e + (dropout ? e : 0.0));
  // Dropout keeps a 1-byte mask per element (Korthikanti 2022 §4.1: "sbh" per dropout).
  op.saved = Bytes(dropout ? e : 0.0);
  op.output = Bytes(c.act_bytes * e);
  op.note = dropout ? "dropout + residual add; saves a 1-byte mask" : "residual add; saves nothing";
  return op;
}

Op ActivationOp(const Ctx& c, std::string name, int64_t tokens, int64_t width, TpSplit split) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kActivation;
  op.mem_class = MemClass::kElementwise;
  op.tp_split = split;
  op.dtype = c.options.precision;
  const double e = D(tokens) * D(width);
  const Activation a = c.model.activation;
  const bool gated = a == Activation::kSwiglu || a == Activation::kGeglu;
  if (gated) {
    op.fwd.flops = Flops(6.0 * e);
    op.bwd_input.flops = Flops(10.0 * e);
    op.fwd.bytes = Bytes(3.0 * c.act_bytes * e);        // gate, up -> product
    op.bwd_input.bytes = Bytes(5.0 * c.act_bytes * e);  // gate, up, dy -> dgate, dup
    if (!c.options.fused_kernels) {
      // Eager: silu(gate) is written and read back by the product (5 instead of 3 passes).
      op.fwd.bytes = Bytes(5.0 * c.act_bytes * e);
      op.bwd_input.bytes = Bytes(8.0 * c.act_bytes * e);
    }
    // A fused SwiGLU/GeGLU (Megatron-LM bias_swiglu, Transformer Engine) saves its 2w-wide
    // input and recomputes the rest; PyTorch eager keeps gate, up and act(gate) (3w).
    op.saved = Bytes((c.options.fused_kernels ? 2.0 : 3.0) * c.act_bytes * e);
    if (split == TpSplit::kExperts) {
      // DeepSeek-V3 §3.3.3: the routed experts' SwiGLU inputs are cached in fp8.
      op.saved = Fp8Saved(c, c.matmul_dtype, op.saved, 1.0);
    }
    op.kernels = c.options.fused_kernels ? 1 : 2;
    op.note = c.options.fused_kernels ? "fused gated activation: saves gate and up (2f)"
                                      : "eager gated activation: saves gate, up, act(gate) (3f)";
  } else {
    op.fwd.flops = Flops((a == Activation::kGelu ? 8.0 : 1.0) * e);
    op.bwd_input.flops = Flops((a == Activation::kGelu ? 12.0 : 1.0) * e);
    op.fwd.bytes = Bytes(2.0 * c.act_bytes * e);
    op.bwd_input.bytes = Bytes(3.0 * c.act_bytes * e);
    op.saved = Bytes(c.act_bytes * e);  // its input: Korthikanti's "GeLU input 8sbh"
    op.note = "saves its input (Korthikanti 2022 §4.1)";
  }
  op.output = Bytes(c.act_bytes * e);
  if (split == TpSplit::kExperts) op.rerun_by = ModuleBit(RecomputeModule::kMoeAct);
  return op;
}

Op RopeOp(const Ctx& c, std::string name, int64_t heads, int64_t rope_dim) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kActivation;
  op.mem_class = MemClass::kElementwise;
  op.tp_split = TpSplit::kHeads;
  op.dtype = c.options.precision;
  const double e = D(c.tokens) * D(heads) * D(rope_dim);
  // Rotary embedding of q and k (Su et al. 2021): fused, one read and one write; PyTorch eager
  // (complex multiply in fp32: float(), mul, type_as) moves 2 act + 16 bytes per element.
  const double per = c.options.fused_kernels ? 2.0 * c.act_bytes : 2.0 * c.act_bytes + 16.0;
  op.fwd.bytes = Bytes(per * e);
  op.bwd_input.bytes = Bytes(per * e);
  op.fwd.flops = Flops(3.0 * e);
  op.bwd_input.flops = Flops(3.0 * e);
  op.kernels = c.options.fused_kernels ? 1 : 3;
  op.note =
      "rotary position embedding of q and k; saves nothing (its outputs are saved by the core)";
  return op;
}

Op AttentionOp(const Ctx& c, std::string name, int64_t q_heads, int64_t kv_heads, int64_t qk_dim,
               int64_t v_dim) {
  const GraphOptions& o = c.options;
  const bool flash = o.flash_attention;
  const bool dropout = c.model.dropout > 0.0;
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kAttention;
  // Unfused attention's softmax: Megatron-LM's fused scale-mask-softmax is one pass over each
  // row, like a norm kernel; a framework's generic softmax is slower (bench/h200: 27% of HBM
  // bandwidth for PyTorch's, against 56-63% for norms).
  op.mem_class = o.fused_kernels ? MemClass::kNorm : MemClass::kSoftmax;
  op.tp_split = TpSplit::kHeads;
  // Attention stays bf16 under fp8 / mxfp8 / nvfp4 (Transformer Engine quantizes the Linear
  // layers' GEMMs; its dot-product attention runs in bf16 unless fp8_dpa is set).
  op.dtype = IsQuantizedGemm(o.precision) ? DType::kBf16 : o.precision;
  const int64_t b = o.micro_batch;
  const int64_t s_q = o.seq_len / o.cp;  // local queries; with CP each device attends over all
  const int64_t s_kv = o.seq_len;        // keys, passed around the ring (Liu et al. 2023)
  op.attention = AttentionShape{
      b * q_heads, s_q,  s_kv,  qk_dim,
      v_dim,       true, flash, flash && o.attention_kernel == AttentionKernel::kFlash2};
  op.attention.window = c.attention_window;
  op.attention.chunked = c.attention_chunked;
  const double s2 = D(b) * D(q_heads) * D(s_q) * D(s_kv);  // score elements
  // Scores QK^T (2·s_q·s_kv·d) and context PV (2·s_q·s_kv·d_v) per head: 4·s²·d per head for
  // MHA, i.e. 4·s²·h per layer per sequence (Narayanan 2021 eq. 3). Model FLOPs count the full
  // square; a causal flash kernel skips the masked half of the blocks (Dao 2023, FA2 §3.1).
  // A local (sliding or chunked) layer's flash kernel computes only the band or chunk
  // triangles (AttendedFraction); model FLOPs still count the full square, the convention MFU
  // is published in. Unfused attention computes the whole square and masks it.
  const Flops full(2.0 * s2 * D(qk_dim + v_dim));
  op.model_fwd_flops = full;
  op.fwd.flops = flash ? full * AttendedFraction(op.attention) : full;
  // Flash backward recomputes the scores: 5 GEMMs against the forward's 2 (Dao 2023 §3.2);
  // the unfused backward runs 4 GEMMs.
  op.bwd_input.flops = op.fwd.flops * (flash ? 2.5 : 2.0);
  const double q = c.act_bytes * D(c.tokens) * D(q_heads) * D(qk_dim);
  const double kv_local = c.act_bytes * D(c.tokens) * D(kv_heads) * D(qk_dim + v_dim);
  const double kv_all = kv_local * D(o.cp);
  const double out = c.act_bytes * D(c.tokens) * D(q_heads) * D(v_dim);
  // Unfused: scores written, softmax read+write, context reads P; dropout adds a mask and a
  // second copy of P.
  const double score_traffic =
      flash ? 0.0 : s2 * (4.0 * c.act_bytes + (dropout ? 2.0 * c.act_bytes + 1.0 : 0.0));
  op.fwd.bytes = Bytes(q + kv_all + out + score_traffic);
  op.bwd_input.bytes = Bytes(2.0 * (q + kv_all + out) + out + 1.5 * score_traffic);
  // Saved: Q, K and V (Korthikanti's 4sbh + 2sbh); unfused attention also keeps the softmax
  // output (2as²b) and, with dropout, its mask (as²b) and output (2as²b): the 5as²b term.
  // The context output is counted by the output projection, which saves it as its input.
  // Eager PyTorch without a fused kernel runs SDPA's math backend, which upcasts 16-bit inputs
  // to fp32 (aten/src/ATen/native/transformers/attention.cpp, _scaled_dot_product_attention_math:
  // query_.to(at::kFloat) unless allowFP16BF16ReductionMathSDP): its matmuls keep the fp32 Q, K
  // and V, and the softmax output and dropout output are fp32: 4 + 1 + 4 bytes per score
  // (bench/h200 gpt-noflash: 9.07 measured). Memory only; the traffic above stays 16-bit.
  const double score_bytes = !flash && !o.fused_kernels ? std::max(4.0, c.act_bytes) : c.act_bytes;
  const double qkv_scale = score_bytes / c.act_bytes;
  const double scores = flash ? 0.0 : s2 * (score_bytes + (dropout ? 1.0 + score_bytes : 0.0));
  op.saved = Bytes((q + kv_local) * qkv_scale + scores);
  op.dropped_by[static_cast<size_t>(RecomputeModule::kCoreAttn)] = Bytes(scores);
  op.rerun_by = ModuleBit(RecomputeModule::kCoreAttn);
  op.output = Bytes(out);
  op.kernels = flash ? 1 : 4;
  op.note = flash ? "flash attention: saves Q, K, V (+ per-row logsumexp, not counted)"
                  : "unfused attention: saves Q, K, V, softmax (+ dropout mask and output)";
  if (flash && c.attention_window > 0) {
    op.note += std::string(c.attention_chunked ? "; chunked attention, chunks of "
                                               : "; sliding window of ") +
               std::to_string(c.attention_window) + " tokens";
  }
  return op;
}

}  // namespace shardsim::model_internal
