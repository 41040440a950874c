// ModelSpecs written in code for the model tests (independent of the YAML loader).
#ifndef SHARDSIM_TESTS_MODEL_TEST_MODELS_H_
#define SHARDSIM_TESTS_MODEL_TEST_MODELS_H_

#include "sim/config/spec.h"

namespace shardsim::testing {

// A GPT-3 / Megatron-style model: learned positions, layernorm with bias, GELU, 4h MLP, biases,
// tied embeddings, dropout 0.1.
inline ModelSpec Gpt(int64_t layers, int64_t hidden, int64_t heads, int64_t vocab = 51200,
                     int64_t positions = 2048) {
  ModelSpec m;
  m.name = "gpt";
  m.hidden_size = hidden;
  m.num_layers = layers;
  m.num_heads = heads;
  m.num_kv_heads = heads;
  m.head_dim = hidden / heads;
  m.ffn_hidden_size = 4 * hidden;
  m.vocab_size = vocab;
  m.max_seq_len = positions;
  m.position_table_rows = positions;
  m.activation = Activation::kGelu;
  m.norm = NormKind::kLayerNorm;
  m.bias = true;
  m.qkv_bias = true;
  m.attn_out_bias = true;
  m.mlp_bias = true;
  m.tied_embeddings = true;
  m.position_embedding = PositionEmbedding::kLearned;
  m.dropout = 0.1;
  return m;
}

// A Llama-style model: RoPE, RMSNorm, SwiGLU, no biases, untied head, no dropout.
inline ModelSpec Llama(int64_t layers, int64_t hidden, int64_t heads, int64_t kv_heads, int64_t ffn,
                       int64_t vocab) {
  ModelSpec m;
  m.name = "llama";
  m.hidden_size = hidden;
  m.num_layers = layers;
  m.num_heads = heads;
  m.num_kv_heads = kv_heads;
  m.head_dim = hidden / heads;
  m.ffn_hidden_size = ffn;
  m.vocab_size = vocab;
  m.max_seq_len = 8192;
  m.position_table_rows = 8192;
  m.activation = Activation::kSwiglu;
  m.norm = NormKind::kRmsNorm;
  m.norm_bias = false;
  m.position_embedding = PositionEmbedding::kRope;
  return m;
}

}  // namespace shardsim::testing

#endif  // SHARDSIM_TESTS_MODEL_TEST_MODELS_H_
