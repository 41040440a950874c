// The attention and MLP blocks of a decoder layer, per device, as Megatron-LM shards them:
// q/k/v and fc1 column-parallel, the output projection and fc2 row-parallel (Shoeybi et al. 2019
// §3, Figure 3), experts spread over the expert-parallel group (Megatron-Core MoE), and
// DeepSeek's multi-head latent attention (DeepSeek-V2, arXiv 2405.04434 §2.1).
#include <algorithm>
#include <utility>

#include "sim/model/op_builders.h"

namespace shardsim::model_internal {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The row-parallel output projection over `width` local context columns. It saves its input
// (the attention context), which the attention core's backward reads too; DeepSeek-V3 caches it
// once in a 1.5-byte E5M6 format under fp8_saved_activations (arXiv 2412.19437 §3.3.3). With
// Transformer Engine's linears (KeepsQuantizedInput) the core keeps the bf16 context for its
// backward (TE's fused attention saves its output) and the projection its own quantized copy:
// both. Selective recompute of the core (core_attn) re-runs it from its inputs, so the bf16
// context is not kept then, only the projection's copy.
void AppendOutputProjection(const Ctx& c, int64_t width, bool bias, std::vector<Op>& ops) {
  const Bytes context = ActBytes(c, D(c.tokens) * D(width));
  ops.push_back(MatmulOp(c, "attn.out", TpSplit::kRow, c.tokens, c.model.hidden_size, width, 1,
                         bias, context,
                         "row-parallel output projection; saves its input (the context)"));
  Op& out = ops.back();
  if (KeepsQuantizedInput(c, out.dtype)) {
    out.saved = context + LinearSaved(c, out.dtype, context);
    out.dropped_by[static_cast<size_t>(RecomputeModule::kCoreAttn)] = context;
    out.note =
        "row-parallel output projection; saves its input quantized (Transformer Engine), beside "
        "the bf16 context the attention core keeps";
  } else {
    out.saved = Fp8Saved(c, out.dtype, context, 1.5);
  }
}

void AppendMha(const Ctx& c, std::vector<Op>& ops) {
  const ModelSpec& m = c.model;
  const int64_t t = c.tp;
  const int64_t q_heads = m.num_heads / t;
  // With fewer kv heads than TP ranks each rank keeps one (replicated) kv head.
  const int64_t kv_heads = KvHeadsPerRank(m, t);
  const int64_t d = m.head_dim;
  const int64_t h = m.hidden_size;
  ops.push_back(MatmulOp(c, "attn.qkv", TpSplit::kColumn, c.tokens, (q_heads + 2 * kv_heads) * d, h,
                         1, m.qkv_bias, ActBytes(c, D(c.norm_tokens) * D(h)),
                         "column-parallel q/k/v; saves its input (the norm output)"));
  DropWithModule(RecomputeModule::kLayernorm, ops.back());
  {
    // torchtitan's Attention (and Hugging Face's) project with three Linear modules, wq, wk and
    // wv: q is q_heads x d of the output, k and v split the rest.
    const double q = D(q_heads * d) / D((q_heads + 2 * kv_heads) * d);
    ops.back().framework_calls = {q, (1.0 - q) / 2.0, (1.0 - q) / 2.0};
  }
  if (m.qk_norm) {
    // Qwen3Attention / Gemma3Attention: RMSNorm(head_dim) over each query head and each key head
    // before RoPE, one weight vector per projection shared by its heads: 2·d parameters per
    // layer, replicated on the TP ranks (tested in tests/config/hf_families_test.cc).
    for (const auto& [name, heads] :
         {std::pair<const char*, int64_t>{"attn.q_norm", q_heads}, {"attn.k_norm", kv_heads}}) {
      ops.push_back(NormOp(c, name, c.tokens * heads, d, true, false));
      ops.back().tp_split = TpSplit::kReplicated;
    }
  }
  if (m.position_embedding == PositionEmbedding::kRope) {
    ops.push_back(RopeOp(c, "attn.rope", q_heads + kv_heads, d));
  }
  ops.push_back(AttentionOp(c, "attn.core", q_heads, kv_heads, d, d));
  // gpt-oss's attention sinks: one learned logit per query head joins each softmax row
  // (GptOssAttention.sinks): num_heads parameters per layer; the extra softmax column is not
  // timed.
  if (m.attention_sinks) ops.back().params = q_heads;
  AppendOutputProjection(c, q_heads * d, m.attn_out_bias, ops);
}

// Multi-head latent attention: low-rank query and key/value projections with a decoupled RoPE
// key shared by all heads. Down-projections are duplicated on every TP rank, up-projections
// column-parallel (Megatron-Core MLA).
void AppendMla(const Ctx& c, std::vector<Op>& ops) {
  const ModelSpec& m = c.model;
  const MlaSpec& a = *m.mla;
  const int64_t t = c.tp;
  const int64_t heads = m.num_heads / t;
  const int64_t h = m.hidden_size;
  const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  const Bytes norm_out = ActBytes(c, D(c.norm_tokens) * D(h));
  // With the layernorm module recomputed, the norm outputs the projections keep are dropped;
  // with mla_up_proj, the up-projections (and the rope on their outputs) run again in backward
  // and the core's Q, K, V are dropped (DeepSeek-V3 §3.2.3).
  const unsigned up_proj = ModuleBit(RecomputeModule::kMlaUpProj);
  if (a.q_lora_rank > 0) {
    ops.push_back(MatmulOp(c, "attn.q_down", TpSplit::kReplicated, c.tokens, a.q_lora_rank, h, 1,
                           false, norm_out, "query down-projection; saves the norm output"));
    DropWithModule(RecomputeModule::kLayernorm, ops.back());
    ops.push_back(NormOp(c, "attn.q_norm", c.tokens, a.q_lora_rank, true, false));
    ops.back().tp_split = TpSplit::kReplicated;
    ops.push_back(MatmulOp(c, "attn.q_up", TpSplit::kColumn, c.tokens, heads * qk, a.q_lora_rank, 1,
                           false, ActBytes(c, D(c.tokens) * D(a.q_lora_rank)),
                           "query up-projection; saves the latent query"));
    DropWithModule(RecomputeModule::kLayernorm, ops.back());
    ops.back().rerun_by |= up_proj;
  } else {
    ops.push_back(MatmulOp(c, "attn.q", TpSplit::kColumn, c.tokens, heads * qk, h, 1, false,
                           norm_out, "query projection; saves the norm output"));
    DropWithModule(RecomputeModule::kLayernorm, ops.back());
  }
  ops.push_back(MatmulOp(c, "attn.kv_down", TpSplit::kReplicated, c.tokens,
                         a.kv_lora_rank + a.qk_rope_head_dim, h, 1, false, Bytes(0),
                         "latent kv + decoupled rope key; input saved by the query projection"));
  ops.push_back(NormOp(c, "attn.kv_norm", c.tokens, a.kv_lora_rank, true, false));
  ops.back().tp_split = TpSplit::kReplicated;
  ops.push_back(MatmulOp(c, "attn.kv_up", TpSplit::kColumn, c.tokens,
                         heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank, 1, false,
                         ActBytes(c, D(c.tokens) * D(a.kv_lora_rank)),
                         "key/value up-projection; saves the latent kv"));
  DropWithModule(RecomputeModule::kLayernorm, ops.back());
  ops.back().rerun_by |= up_proj;
  // Decoupled RoPE: the rope dims of every query head and of the one shared key.
  ops.push_back(RopeOp(c, "attn.rope", heads + 1, a.qk_rope_head_dim));
  ops.back().rerun_by |= up_proj;
  ops.push_back(AttentionOp(c, "attn.core", heads, heads, qk, a.v_head_dim));
  Op& core = ops.back();
  core.dropped_by[static_cast<size_t>(RecomputeModule::kMlaUpProj)] =
      core.saved - core.dropped_by[static_cast<size_t>(RecomputeModule::kCoreAttn)];
  AppendOutputProjection(c, heads * a.v_head_dim, false, ops);
}

bool Gated(const ModelSpec& m) {
  return m.activation == Activation::kSwiglu || m.activation == Activation::kGeglu;
}

// fc1 -> activation -> fc2 over `tokens` rows with local width `f_local` (fc1 is 2·f_local wide
// when gated). `prefix` names the ops; `fc1_saved` is what fc1 keeps of its input.
void AppendFfn(const Ctx& c, const std::string& prefix, TpSplit fc1_split, TpSplit fc2_split,
               int64_t tokens, int64_t f_local, int64_t batch, bool bias, Bytes fc1_saved,
               std::vector<Op>& ops) {
  const int64_t h = c.model.hidden_size;
  const int64_t rows = tokens / batch;  // rows per copy (per local expert)
  const int64_t fc1_width = Gated(c.model) ? 2 * f_local : f_local;
  ops.push_back(MatmulOp(c, prefix + ".fc1", fc1_split, rows, fc1_width, h, batch, bias, fc1_saved,
                         "column-parallel up projection (gate and up when gated)"));
  // Gated: two Linear modules in PyTorch, w1 (gate) then w3 (up) in torchtitan's FeedForward.
  if (Gated(c.model)) ops.back().framework_calls = {0.5, 0.5};
  ops.push_back(ActivationOp(c, prefix + ".act", tokens, f_local, fc1_split));
  ops.push_back(MatmulOp(c, prefix + ".fc2", fc2_split, rows, h, f_local, batch, bias,
                         ActBytes(c, D(tokens) * D(f_local)),
                         "row-parallel down projection; saves its input"));
}

// `element` bytes per element of the tokens it moves (1 for an fp8 dispatch).
Op PermuteOp(const Ctx& c, std::string name, int64_t rows, double element, Bytes saved,
             std::string note) {
  Op op;
  op.name = std::move(name);
  op.kind = OpKind::kPermute;
  op.mem_class = MemClass::kGather;
  op.tp_split = TpSplit::kExperts;
  op.dtype = c.options.precision;
  const double e = D(rows) * D(c.model.hidden_size);
  op.fwd.bytes = Bytes(2.0 * element * e);
  op.bwd_input.bytes = Bytes(2.0 * element * e);
  op.fwd.flops = Flops(e);
  op.saved = saved;
  op.output = Bytes(element * e);
  op.note = std::move(note);
  return op;
}

void AppendMoe(const Ctx& c, bool input_saved, std::vector<Op>& ops) {
  const ModelSpec& m = c.model;
  const MoeSpec& e = *m.moe;
  const int64_t h = m.hidden_size;
  const int64_t local_experts = e.num_experts / c.options.ep;
  // Token copies routed to this device: on average T·top_k (each of the ep ranks sends T·k
  // copies spread over the group); the busiest rank sees `load` times that.
  const double load = MoeLoadFactor(e);
  const int64_t routed = c.tokens * e.top_k;
  const int64_t per_expert = CeilDiv(static_cast<int64_t>(D(routed) * load), local_experts);
  const int64_t rows = per_expert * local_experts;
  const Bytes norm_out = ActBytes(c, D(c.norm_tokens) * D(h));

  Op router = MatmulOp(c, "moe.router", TpSplit::kReplicated, c.norm_tokens, e.num_experts, h, 1,
                       e.expert_bias, input_saved ? norm_out : Bytes(0),
                       "router logits; saves the norm output and fp32 routing probabilities");
  if (IsQuantizedGemm(router.dtype)) router.dtype = DType::kBf16;  // routers stay in high precision
  router.saved = input_saved ? norm_out : Bytes(0);  // kept in bf16, as the router runs
  DropWithModule(RecomputeModule::kLayernorm, router);
  router.saved += Bytes(4.0 * D(c.norm_tokens) * D(e.num_experts));
  ops.push_back(router);
  // An fp8 dispatch (DeepSeek-V3 §3.3.3) moves and buffers the tokens already quantized for the
  // experts' fp8 up-projection: 1 byte per element.
  const bool fp8_dispatch = c.options.fp8_dispatch && c.matmul_dtype == DType::kFp8;
  ops.push_back(
      PermuteOp(c, "moe.dispatch", rows, fp8_dispatch ? 1.0 : c.act_bytes, Bytes(0),
                fp8_dispatch ? "permute fp8 tokens to local experts (after the dispatch all-to-all)"
                             : "permute tokens to local experts (after the dispatch all-to-all)"));
  const int64_t f_expert = e.expert_ffn_hidden_size / c.tp;
  const size_t first_expert_op = ops.size();
  AppendFfn(c, "moe.experts", TpSplit::kExperts, TpSplit::kExperts, rows, f_expert, local_experts,
            e.expert_bias, ActBytes(c, D(rows) * D(h)), ops);
  // moe_act recompute re-runs the SwiGLU in backward: fc2 no longer keeps its input.
  DropWithModule(RecomputeModule::kMoeAct, ops.back());
  // Model FLOPs count the routed tokens, not the padding or imbalance of the busiest rank. Below
  // a capacity factor of 1 the copies over capacity are dropped (they skip the expert through the
  // residual; Switch Transformer, arXiv 2101.03961 §2.2), so only the rows computed count.
  const double active = std::min(1.0, D(routed) / D(rows));
  for (size_t i = first_expert_op; i < ops.size(); ++i) {
    if (ops[i].kind == OpKind::kMatmul) ops[i].model_fwd_flops = ops[i].fwd.flops * active;
  }
  // The combine's backward needs the expert outputs for the probabilities' gradient, unless the
  // probabilities were applied inside the experts (moe_probs_in_expert: Megatron-Core's
  // weighted SwiGLU keeps the fp32 probability of each routed copy and takes the gradient from
  // the SwiGLU output, recomputed in its fused backward from the input it already saves).
  if (c.options.moe_probs_in_expert) {
    ops.push_back(PermuteOp(c, "moe.combine", rows, c.act_bytes, Bytes(4.0 * D(rows)),
                            "unpermute (probabilities applied in the experts' SwiGLU); saves the "
                            "fp32 routing probabilities"));
  } else {
    ops.push_back(PermuteOp(c, "moe.combine", rows, c.act_bytes, ActBytes(c, D(rows) * D(h)),
                            "unpermute and weight by routing probabilities; saves expert outputs"));
  }
  if (e.num_shared_experts > 0) {
    const int64_t f_shared = e.num_shared_experts * e.shared_expert_ffn_hidden_size / c.tp;
    AppendFfn(c, "moe.shared", TpSplit::kColumn, TpSplit::kRow, c.tokens, f_shared, 1, false,
              Bytes(0), ops);
    if (e.shared_expert_gate) {
      // Qwen2MoeSparseMoeBlock: sigmoid(shared_expert_gate(x)) * shared_expert(x), the gate a
      // Linear h -> 1 without bias: h parameters, 2·T·h FLOPs forward. Replicated like the
      // router, which already saved its input; the sigmoid and the product are not counted.
      Op gate = MatmulOp(c, "moe.shared_gate", TpSplit::kReplicated, c.norm_tokens, 1, h, 1, false,
                         Bytes(0), "shared-expert gate logit; input saved by the router");
      if (IsQuantizedGemm(gate.dtype)) gate.dtype = DType::kBf16;  // as the router: high precision
      ops.push_back(gate);
    }
  }
}

}  // namespace

void AppendAttention(const Ctx& c, std::vector<Op>& ops) {
  if (c.model.mla.has_value()) {
    AppendMla(c, ops);
  } else {
    AppendMha(c, ops);
  }
}

void AppendMlp(const Ctx& c, bool moe, bool input_saved, std::vector<Op>& ops) {
  if (moe) {
    AppendMoe(c, input_saved, ops);
    return;
  }
  const Bytes saved =
      input_saved ? ActBytes(c, D(c.norm_tokens) * D(c.model.hidden_size)) : Bytes(0);
  const size_t fc1 = ops.size();
  AppendFfn(c, "mlp", TpSplit::kColumn, TpSplit::kRow, c.tokens, c.model.ffn_hidden_size / c.tp, 1,
            c.model.mlp_bias, saved, ops);
  DropWithModule(RecomputeModule::kLayernorm, ops[fc1]);
}

}  // namespace shardsim::model_internal
