// A small parameter counter for the config tests: checks that a ModelSpec means the shapes its
// source states, by summing the matrix shapes (docs/reference.md §5 "Parameters"). The real counter
// lives in sim/model; this one only has to be right for the families the importer maps.
#ifndef SHARDSIM_TESTS_CONFIG_PARAM_COUNT_H_
#define SHARDSIM_TESTS_CONFIG_PARAM_COUNT_H_

#include <cstdint>

#include "sim/config/spec.h"

namespace shardsim::testing_util {

struct ParamCount {
  int64_t total = 0;
  int64_t active = 0;  // per token (routed experts: top_k of them)
};

inline ParamCount CountParams(const ModelSpec& m) {
  const int64_t h = m.hidden_size, n = m.num_heads, k = m.num_kv_heads, d = m.head_dim;
  const int64_t norm = m.norm == NormKind::kLayerNorm && m.norm_bias ? 2 * h : h;
  const bool gated = m.activation == Activation::kSwiglu || m.activation == Activation::kGeglu;
  // Experts and shared experts have no biases (the op graph's MoE block).
  auto mlp = [&](int64_t f, bool bias) {
    return (gated ? 3 : 2) * h * f + (bias ? (gated ? 2 * f : f) + h : 0);
  };
  int64_t attn = 0;
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    const int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
    attn = (a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * n * qk
                              : h * n * qk) +
           h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank +
           a.kv_lora_rank * n * (a.qk_nope_head_dim + a.v_head_dim) + n * a.v_head_dim * h;
  } else {
    attn = h * n * d + 2 * h * k * d + n * d * h;
    if (m.qkv_bias) attn += n * d + 2 * k * d;
    if (m.attn_out_bias) attn += h;
  }
  const int64_t norms = m.norms_per_layer * norm;
  ParamCount c;
  auto add_layer = [&](int64_t index) {
    int64_t total = attn + norms, active = attn + norms;
    const bool is_moe = m.moe && index >= m.moe->first_dense_layers &&
                        (index - m.moe->first_dense_layers) % m.moe->layer_freq == 0;
    if (is_moe) {
      const MoeSpec& e = *m.moe;
      const int64_t router = h * e.num_experts;
      const int64_t shared = e.num_shared_experts * mlp(e.shared_expert_ffn_hidden_size, false) +
                             (e.shared_expert_gate ? h : 0);
      total += router + shared + e.num_experts * mlp(e.expert_ffn_hidden_size, false);
      active += router + shared + e.top_k * mlp(e.expert_ffn_hidden_size, false);
    } else {
      total += mlp(m.ffn_hidden_size, m.mlp_bias);
      active += mlp(m.ffn_hidden_size, m.mlp_bias);
    }
    c.total += total;
    c.active += active;
  };
  for (int64_t i = 0; i < m.num_layers; ++i) add_layer(i);
  // DeepSeek-V3 multi-token prediction: per module two norms, a 2h -> h projection, one more
  // (MoE) layer and a norm before the shared output head.
  for (int64_t i = 0; i < m.mtp_depth; ++i) {
    add_layer(m.num_layers);
    c.total += 3 * norm + 2 * h * h;
    c.active += 3 * norm + 2 * h * h;
  }
  int64_t outside = m.vocab_size * h + norm;  // embedding + final norm
  if (m.position_embedding == PositionEmbedding::kLearned) outside += m.position_table_rows * h;
  if (m.embedding_norm) outside += norm;
  if (!m.tied_embeddings) outside += m.vocab_size * h;
  c.total += outside;
  c.active += outside;
  return c;
}

}  // namespace shardsim::testing_util

#endif  // SHARDSIM_TESTS_CONFIG_PARAM_COUNT_H_
