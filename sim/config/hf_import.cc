#include "sim/config/hf_import.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>

#include "sim/base/strings.h"
#include "sim/config/hf_mapper.h"
#include "sim/config/spec.h"

namespace shardsim {
namespace {

// Gated MLPs (Llama-style gate/up/down): silu -> swiglu, gelu variants -> geglu.
void GatedActivation(HfMapper& hf, std::initializer_list<const char*> names,
                     const std::string& dflt) {
  const ConfigNode* at = hf.Find(names);
  const std::string act = hf.String(names, dflt);
  if (act == "silu" || act == "swish") {
    hf.Put("activation", "swiglu", at);
  } else if (act.rfind("gelu", 0) == 0) {
    hf.Put("activation", "geglu", at);
  } else {
    hf.Fail(at != nullptr ? *at : hf.arch(), std::string(*names.begin()) + ": \"" + act +
                                                 "\" is not supported for " + hf.arch_name() +
                                                 " (expected silu or gelu)");
  }
}

// Plain two-matrix MLPs: gelu variants -> gelu, relu -> relu.
void PlainActivation(HfMapper& hf, std::initializer_list<const char*> names,
                     const std::string& dflt) {
  const ConfigNode* at = hf.Find(names);
  const std::string act = hf.String(names, dflt);
  if (act.rfind("gelu", 0) == 0) {
    hf.Put("activation", "gelu", at);
  } else if (act == "relu") {
    hf.Put("activation", "relu", at);
  } else {
    hf.Fail(at != nullptr ? *at : hf.arch(), std::string(*names.begin()) + ": \"" + act +
                                                 "\" is not supported for " + hf.arch_name() +
                                                 " (expected gelu or relu)");
  }
}

// Fields shared by the Llama family (LlamaConfig and the configs derived from it).
void LlamaCore(HfMapper& hf, bool tied_default) {
  hf.Copy("hidden_size", {"hidden_size"}, true);
  hf.Copy("num_layers", {"num_hidden_layers"}, true);
  hf.Copy("num_heads", {"num_attention_heads"}, true);
  hf.Copy("num_kv_heads", {"num_key_value_heads"}, false);
  hf.Copy("head_dim", {"head_dim"}, false);
  hf.Copy("ffn_hidden_size", {"intermediate_size"}, true);
  hf.Copy("vocab_size", {"vocab_size"}, true);
  hf.Copy("max_seq_len", {"max_position_embeddings"}, false);
  hf.Put("norm", "rmsnorm");
  hf.Put("position_embedding", "rope");
  hf.PutBool("tied_embeddings", hf.Bool({"tie_word_embeddings"}, tied_default),
             hf.Find({"tie_word_embeddings"}));
}

// LlamaConfig: attention_bias puts biases on q, k, v and o (LlamaAttention); mlp_bias on gate,
// up and down (LlamaMLP).
void Llama(HfMapper& hf) {
  LlamaCore(hf, false);
  GatedActivation(hf, {"hidden_act"}, "silu");
  const bool attn_bias = hf.Bool({"attention_bias"}, false);
  const bool mlp_bias = hf.Bool({"mlp_bias"}, false);
  hf.PutBool("bias", attn_bias && mlp_bias, hf.Find({"attention_bias"}));
  hf.PutBool("qkv_bias", attn_bias, hf.Find({"attention_bias"}));
  hf.PutBool("attn_out_bias", attn_bias, hf.Find({"attention_bias"}));
  hf.PutBool("mlp_bias", mlp_bias, hf.Find({"mlp_bias"}));
}

void Mixtral(HfMapper& hf) {
  Llama(hf);
  hf.Copy("moe.num_experts", {"num_local_experts"}, true);
  hf.Copy("moe.top_k", {"num_experts_per_tok"}, true);
}

// Qwen2: biases on q, k, v only (Qwen2Attention: o_proj has none), none elsewhere.
void Qwen2(HfMapper& hf) {
  LlamaCore(hf, false);
  GatedActivation(hf, {"hidden_act"}, "silu");
  hf.PutBool("bias", false);
  hf.PutBool("qkv_bias", true);
  hf.PutBool("attn_out_bias", false);
}

// Qwen2-MoE / Qwen3-MoE (decoder_sparse_step) and Llama 4 (interleave_moe_layer_step): layer i
// is sparse when (i + 1) % step == 0, i.e. layers step-1, 2*step-1, ...: first_dense_layers =
// step - 1, then every step-th layer (Qwen2MoeDecoderLayer; Llama4TextConfig.moe_layers).
void SparseStep(HfMapper& hf, const char* key) {
  if (std::optional<int64_t> step = hf.Int({key}, false, kMaxModelLayers); step && *step > 1) {
    hf.Put("moe.layer_freq", std::to_string(*step), hf.Find({key}));
    hf.Put("moe.first_dense_layers", std::to_string(*step - 1), hf.Find({key}));
  }
}

void RefuseMlpOnlyLayers(HfMapper& hf) {
  if (const ConfigNode* only = hf.Find({"mlp_only_layers"});
      only != nullptr && only->is_sequence() && !only->items().empty()) {
    hf.Fail(*only, "mlp_only_layers: dense layers at arbitrary positions are not supported");
  }
}

void Qwen2Moe(HfMapper& hf) {
  Qwen2(hf);
  hf.Copy("moe.num_experts", {"num_experts"}, true);
  hf.Copy("moe.top_k", {"num_experts_per_tok"}, true);
  hf.Copy("moe.expert_ffn_hidden_size", {"moe_intermediate_size"}, true);
  SparseStep(hf, "decoder_sparse_step");
  if (std::optional<int64_t> shared = hf.Int({"shared_expert_intermediate_size"}, false);
      shared && *shared > 0) {
    hf.Put("moe.num_shared_experts", "1", hf.Find({"shared_expert_intermediate_size"}));
    hf.Copy("moe.shared_expert_ffn_hidden_size", {"shared_expert_intermediate_size"}, true);
    // Qwen2MoeSparseMoeBlock always has shared_expert_gate (Linear(hidden_size, 1), no bias).
    hf.PutBool("moe.shared_expert_gate", true, hf.Find({"shared_expert_intermediate_size"}));
  }
  RefuseMlpOnlyLayers(hf);
}

// model.local_attention from the config's `size_key` (its window or chunk), where it gives one:
// every layer local (full_every 0) or all but every `full_every`-th.
void LocalAttentionFrom(HfMapper& hf, const char* kind, const char* size_key,
                        const std::string& full_every) {
  const ConfigNode* n = hf.Find({size_key});
  if (n == nullptr) return;
  hf.Put("local_attention.kind", kind, n);
  hf.Copy("local_attention.size", {size_key}, true);
  if (full_every != "0") hf.Put("local_attention.full_every", full_every, n);
}

// Gemma: Llama layout, head_dim 256 by default, gated GELU, tied head; Gemma2 adds a norm after
// attention and after the MLP (4 per layer).
void Gemma(HfMapper& hf, int norms_per_layer) {
  LlamaCore(hf, true);
  if (hf.Find({"head_dim"}) == nullptr) hf.Put("head_dim", "256");
  GatedActivation(hf, {"hidden_activation", "hidden_act"}, "gelu_pytorch_tanh");
  const bool attn_bias = hf.Bool({"attention_bias"}, false);
  hf.PutBool("bias", false);
  hf.PutBool("qkv_bias", attn_bias, hf.Find({"attention_bias"}));
  if (norms_per_layer != 2) hf.Put("norms_per_layer", std::to_string(norms_per_layer));
  // Gemma 2 (Gemma2DecoderLayer.is_sliding = not bool(layer_idx % 2)): even layers slide.
  if (norms_per_layer == 4) LocalAttentionFrom(hf, "sliding", "sliding_window", "2");
}

// Qwen3: Llama's layout (attention_bias, default false, on q/k/v/o) plus an RMSNorm over each
// query and key head (Qwen3Attention.q_norm / k_norm).
void Qwen3(HfMapper& hf) {
  Llama(hf);
  hf.PutBool("qk_norm", true);
}

// Qwen3-MoE: Qwen3's attention, routed experts without a shared one (Qwen3MoeSparseMoeBlock).
void Qwen3Moe(HfMapper& hf) {
  Qwen3(hf);
  hf.Copy("moe.num_experts", {"num_experts"}, true);
  hf.Copy("moe.top_k", {"num_experts_per_tok"}, true);
  hf.Copy("moe.expert_ffn_hidden_size", {"moe_intermediate_size"}, true);
  SparseStep(hf, "decoder_sparse_step");
  RefuseMlpOnlyLayers(hf);
}

// Copies an HF key, or writes the transformers Config default when the config leaves it out
// (Gemma 3's text_config often does).
void CopyOr(HfMapper& hf, const std::string& key, std::initializer_list<const char*> names,
            const std::string& dflt) {
  if (!hf.Copy(key, names, false)) hf.Put(key, dflt);
}

// Gemma 3 (Gemma3TextConfig; the text decoder of Gemma3ForConditionalGeneration): Gemma 2's four
// norms per layer and tied head, plus q/k norms (Gemma3Attention). Defaults are
// Gemma3TextConfig's. Sliding-window layers (all but every sliding_window_pattern-th, 6) attend
// to `sliding_window` tokens (model.local_attention).
void Gemma3(HfMapper& hf) {
  CopyOr(hf, "hidden_size", {"hidden_size"}, "2304");
  CopyOr(hf, "num_layers", {"num_hidden_layers"}, "26");
  CopyOr(hf, "num_heads", {"num_attention_heads"}, "8");
  CopyOr(hf, "num_kv_heads", {"num_key_value_heads"}, "4");
  CopyOr(hf, "head_dim", {"head_dim"}, "256");
  CopyOr(hf, "ffn_hidden_size", {"intermediate_size"}, "9216");
  CopyOr(hf, "vocab_size", {"vocab_size"}, "262208");
  CopyOr(hf, "max_seq_len", {"max_position_embeddings"}, "131072");
  hf.Put("norm", "rmsnorm");
  hf.Put("position_embedding", "rope");
  hf.PutBool("tied_embeddings", hf.Bool({"tie_word_embeddings"}, true),
             hf.Find({"tie_word_embeddings"}));
  GatedActivation(hf, {"hidden_activation", "hidden_act"}, "gelu_pytorch_tanh");
  hf.PutBool("bias", false);
  hf.PutBool("qkv_bias", hf.Bool({"attention_bias"}, false), hf.Find({"attention_bias"}));
  hf.Put("norms_per_layer", "4");
  hf.PutBool("qk_norm", true);
  const ConfigNode* pattern = hf.Find({"sliding_window_pattern"});
  LocalAttentionFrom(hf, "sliding", "sliding_window",
                     pattern != nullptr && pattern->is_scalar() ? pattern->text() : "6");
}

// Llama 4 (Llama4TextConfig; the text decoder of Llama4ForConditionalGeneration): routed experts
// of intermediate_size plus one shared expert of the same width, on every
// interleave_moe_layer_step-th layer; dense layers use intermediate_size_mlp. The router has no
// bias; use_qk_norm is a weightless L2 norm (no parameters). Chunked attention
// (attention_chunk_size) on all but every no_rope_layer_interval-th layer (4; those are the NoPE
// layers, attending to the whole sequence): model.local_attention.
void Llama4(HfMapper& hf) {
  hf.Copy("hidden_size", {"hidden_size"}, true);
  hf.Copy("num_layers", {"num_hidden_layers"}, true);
  hf.Copy("num_heads", {"num_attention_heads"}, true);
  hf.Copy("num_kv_heads", {"num_key_value_heads"}, false);
  hf.Copy("head_dim", {"head_dim"}, false);
  hf.Copy("ffn_hidden_size", {"intermediate_size_mlp"}, true);
  hf.Copy("vocab_size", {"vocab_size"}, true);
  hf.Copy("max_seq_len", {"max_position_embeddings"}, false);
  hf.Put("norm", "rmsnorm");
  hf.Put("position_embedding", "rope");
  hf.PutBool("tied_embeddings", hf.Bool({"tie_word_embeddings"}, false),
             hf.Find({"tie_word_embeddings"}));
  GatedActivation(hf, {"hidden_act"}, "silu");
  const bool attn_bias = hf.Bool({"attention_bias"}, false);
  hf.PutBool("bias", false);
  hf.PutBool("qkv_bias", attn_bias, hf.Find({"attention_bias"}));
  hf.PutBool("attn_out_bias", attn_bias, hf.Find({"attention_bias"}));
  hf.Copy("moe.num_experts", {"num_local_experts"}, true);
  hf.Copy("moe.top_k", {"num_experts_per_tok"}, true);
  hf.Copy("moe.expert_ffn_hidden_size", {"intermediate_size"}, true);
  hf.Put("moe.num_shared_experts", "1", hf.Find({"intermediate_size"}));
  hf.Copy("moe.shared_expert_ffn_hidden_size", {"intermediate_size"}, true);
  SparseStep(hf, "interleave_moe_layer_step");
  const ConfigNode* interval = hf.Find({"no_rope_layer_interval"});
  LocalAttentionFrom(hf, "chunked", "attention_chunk_size",
                     interval != nullptr && interval->is_scalar() ? interval->text() : "4");
}

// gpt-oss (GptOssConfig): every layer MoE with biases on the router and the experts, q/k/v/o
// biases, one attention sink per head, a 128-token sliding window on every other layer
// (layer_types: sliding first; model.local_attention). The SwiGLU clamp (swiglu_limit) is not
// modeled.
void GptOss(HfMapper& hf) {
  LlamaCore(hf, false);
  GatedActivation(hf, {"hidden_act"}, "silu");
  const bool attn_bias = hf.Bool({"attention_bias"}, true);
  hf.PutBool("bias", false);
  hf.PutBool("qkv_bias", attn_bias, hf.Find({"attention_bias"}));
  hf.PutBool("attn_out_bias", attn_bias, hf.Find({"attention_bias"}));
  hf.PutBool("attention_sinks", true);
  hf.Copy("moe.num_experts", {"num_local_experts"}, true);
  hf.Copy("moe.top_k", {"num_experts_per_tok"}, true);
  hf.Copy("moe.expert_ffn_hidden_size", {"intermediate_size"}, true);
  hf.PutBool("moe.expert_bias", true);
  LocalAttentionFrom(hf, "sliding", "sliding_window", "2");
}

// GPT-2: learned positions (n_positions rows), LayerNorm, biases everywhere, tied head.
void Gpt2(HfMapper& hf) {
  hf.Copy("hidden_size", {"n_embd", "hidden_size"}, true);
  hf.Copy("num_layers", {"n_layer", "num_hidden_layers"}, true);
  hf.Copy("num_heads", {"n_head", "num_attention_heads"}, true);
  hf.Copy("ffn_hidden_size", {"n_inner"}, false);
  hf.Copy("vocab_size", {"vocab_size"}, true);
  if (!hf.Copy("max_seq_len", {"n_positions", "n_ctx"}, false)) hf.Put("max_seq_len", "1024");
  PlainActivation(hf, {"activation_function"}, "gelu_new");
  hf.Put("norm", "layernorm");
  hf.PutBool("bias", true);
  hf.PutBool("tied_embeddings", hf.Bool({"tie_word_embeddings"}, true));
  hf.Put("position_embedding", "learned");
  if (!hf.Copy("dropout", {"resid_pdrop"}, false)) hf.Put("dropout", "0.1");
}

// GPT-NeoX (Pythia): parallel residual with two LayerNorms, biases, rotary, untied head.
void GptNeox(HfMapper& hf) {
  hf.Copy("hidden_size", {"hidden_size"}, true);
  hf.Copy("num_layers", {"num_hidden_layers"}, true);
  hf.Copy("num_heads", {"num_attention_heads"}, true);
  hf.Copy("ffn_hidden_size", {"intermediate_size"}, true);
  hf.Copy("vocab_size", {"vocab_size"}, true);
  hf.Copy("max_seq_len", {"max_position_embeddings"}, false);
  PlainActivation(hf, {"hidden_act"}, "gelu");
  hf.Put("norm", "layernorm");
  hf.PutBool("bias", hf.Bool({"attention_bias"}, true), hf.Find({"attention_bias"}));
  hf.PutBool("parallel_attention", hf.Bool({"use_parallel_residual"}, true),
             hf.Find({"use_parallel_residual"}));
  hf.PutBool("tied_embeddings", hf.Bool({"tie_word_embeddings"}, false),
             hf.Find({"tie_word_embeddings"}));
  hf.Put("position_embedding", "rope");
  hf.Copy("dropout", {"hidden_dropout"}, false);
}

// OPT: learned positions with 2 extra rows (OPTLearnedPositionalEmbedding's offset), pre-LN.
void Opt(HfMapper& hf) {
  hf.Copy("hidden_size", {"hidden_size"}, true);
  hf.Copy("num_layers", {"num_hidden_layers"}, true);
  hf.Copy("num_heads", {"num_attention_heads"}, true);
  hf.Copy("ffn_hidden_size", {"ffn_dim"}, true);
  hf.Copy("vocab_size", {"vocab_size"}, true);
  const std::optional<int64_t> hidden = hf.Int({"hidden_size"}, false);
  if (std::optional<int64_t> proj = hf.Int({"word_embed_proj_dim"}, false);
      proj && hidden && *proj != *hidden) {
    hf.Fail(*hf.Find({"word_embed_proj_dim"}),
            "word_embed_proj_dim: an embedding width different from hidden_size (OPT-350m's "
            "project_in/out) is not supported");
  }
  if (!hf.Bool({"do_layer_norm_before"}, true)) {
    hf.Fail(*hf.Find({"do_layer_norm_before"}),
            "do_layer_norm_before: post-LayerNorm OPT (OPT-350m) is not supported");
  }
  const std::optional<int64_t> positions = hf.Int({"max_position_embeddings"}, true, kMaxModelRows);
  if (positions) {
    hf.Put("max_seq_len", std::to_string(*positions), hf.Find({"max_position_embeddings"}));
    hf.Put("position_table_rows", std::to_string(*positions + 2),
           hf.Find({"max_position_embeddings"}));
  }
  PlainActivation(hf, {"activation_function"}, "relu");
  hf.Put("norm", "layernorm");
  hf.PutBool("bias", hf.Bool({"enable_bias"}, true), hf.Find({"enable_bias"}));
  hf.PutBool("tied_embeddings", hf.Bool({"tie_word_embeddings"}, true));
  hf.Put("position_embedding", "learned");
  if (!hf.Copy("dropout", {"dropout"}, false)) hf.Put("dropout", "0.1");
}

// Falcon: FalconConfig defaults multi_query and parallel_attn to true. 7B: one LayerNorm per
// parallel block, one kv head; 40B (new_decoder_architecture): two LayerNorms, num_kv_heads.
void Falcon(HfMapper& hf) {
  hf.Copy("hidden_size", {"hidden_size", "n_embed"}, true);
  hf.Copy("num_layers", {"num_hidden_layers", "n_layer"}, true);
  hf.Copy("num_heads", {"num_attention_heads", "n_head"}, true);
  hf.Copy("vocab_size", {"vocab_size"}, true);
  hf.Copy("ffn_hidden_size", {"ffn_hidden_size"}, false);
  if (!hf.Copy("max_seq_len", {"max_position_embeddings"}, false)) hf.Put("max_seq_len", "2048");
  const bool new_arch = hf.Bool({"new_decoder_architecture"}, false);
  const bool parallel = hf.Bool({"parallel_attn"}, true);
  if (new_arch) {
    hf.Copy("num_kv_heads", {"num_kv_heads", "n_head_kv"}, false);
    hf.PutBool("parallel_attention", true, hf.Find({"new_decoder_architecture"}));
  } else {
    if (hf.Bool({"multi_query"}, true)) hf.Put("num_kv_heads", "1", hf.Find({"multi_query"}));
    hf.PutBool("parallel_attention", parallel, hf.Find({"parallel_attn"}));
    if (parallel) hf.Put("norms_per_layer", "1", hf.Find({"parallel_attn"}));
  }
  PlainActivation(hf, {"activation"}, "gelu");
  hf.Put("norm", "layernorm");
  hf.PutBool("bias", hf.Bool({"bias"}, false), hf.Find({"bias"}));
  hf.PutBool("tied_embeddings", hf.Bool({"tie_word_embeddings"}, true));
  hf.Put("position_embedding", hf.Bool({"alibi"}, false) ? "alibi" : "rope", hf.Find({"alibi"}));
}

// BLOOM: ALiBi (no position table), a LayerNorm after the embedding, biases, tied head.
void Bloom(HfMapper& hf) {
  hf.Copy("hidden_size", {"hidden_size", "n_embed"}, true);
  hf.Copy("num_layers", {"n_layer", "num_hidden_layers"}, true);
  hf.Copy("num_heads", {"n_head", "num_attention_heads"}, true);
  hf.Copy("vocab_size", {"vocab_size"}, true);
  hf.Put("activation", "gelu");
  hf.Put("norm", "layernorm");
  hf.PutBool("bias", true);
  hf.PutBool("embedding_norm", true);
  hf.PutBool("tied_embeddings", hf.Bool({"tie_word_embeddings"}, true));
  hf.Put("position_embedding", "alibi");
  hf.Copy("dropout", {"hidden_dropout"}, false);
}

// DeepSeek-V2/V3: multi-head latent attention, DeepSeekMoE (shared + routed experts after
// first_k_dense_replace dense layers), multi-token prediction modules.
void Deepseek(HfMapper& hf) {
  LlamaCore(hf, false);
  GatedActivation(hf, {"hidden_act"}, "silu");
  hf.PutBool("bias", hf.Bool({"attention_bias"}, false), hf.Find({"attention_bias"}));
  const std::optional<int64_t> nope = hf.Int({"qk_nope_head_dim"}, true, kMaxModelWidth);
  const std::optional<int64_t> rope = hf.Int({"qk_rope_head_dim"}, true, kMaxModelWidth);
  if (nope && rope) {  // the q/k head width of the attention scores
    hf.Put("head_dim", std::to_string(*nope + *rope), hf.Find({"qk_nope_head_dim"}));
  }
  if (!hf.Copy("mla.q_lora_rank", {"q_lora_rank"}, false)) hf.Put("mla.q_lora_rank", "0");
  hf.Copy("mla.kv_lora_rank", {"kv_lora_rank"}, true);
  hf.Copy("mla.qk_nope_head_dim", {"qk_nope_head_dim"}, true);
  hf.Copy("mla.qk_rope_head_dim", {"qk_rope_head_dim"}, true);
  hf.Copy("mla.v_head_dim", {"v_head_dim"}, true);
  if (hf.Find({"n_routed_experts"}) != nullptr) {
    hf.Copy("moe.num_experts", {"n_routed_experts"}, true);
    hf.Copy("moe.top_k", {"num_experts_per_tok"}, true);
    hf.Copy("moe.expert_ffn_hidden_size", {"moe_intermediate_size"}, true);
    hf.Copy("moe.num_shared_experts", {"n_shared_experts"}, false);
    hf.Copy("moe.first_dense_layers", {"first_k_dense_replace"}, false);
    hf.Copy("moe.layer_freq", {"moe_layer_freq"}, false);
  }
  hf.Copy("mtp_depth", {"num_nextn_predict_layers"}, false);
}

using Family = std::function<void(HfMapper&)>;

const std::map<std::string, Family>& Families() {
  static const std::map<std::string, Family> kFamilies = {
      {"BloomForCausalLM", Bloom},
      {"DeepseekV2ForCausalLM", Deepseek},
      {"DeepseekV3ForCausalLM", Deepseek},
      {"FalconForCausalLM", Falcon},
      {"GPT2LMHeadModel", Gpt2},
      {"GPTNeoXForCausalLM", GptNeox},
      {"Gemma2ForCausalLM", [](HfMapper& hf) { Gemma(hf, 4); }},
      {"Gemma3ForCausalLM", Gemma3},
      {"Gemma3ForConditionalGeneration", Gemma3},
      {"GemmaForCausalLM", [](HfMapper& hf) { Gemma(hf, 2); }},
      {"GptOssForCausalLM", GptOss},
      {"Llama4ForCausalLM", Llama4},
      {"Llama4ForConditionalGeneration", Llama4},
      {"LlamaForCausalLM", Llama},
      {"MistralForCausalLM",  // Mistral 7B v0.1: a sliding window on every layer (null later)
       [](HfMapper& hf) {
         Llama(hf);
         LocalAttentionFrom(hf, "sliding", "sliding_window", "0");
       }},
      {"MixtralForCausalLM", Mixtral},
      {"OPTForCausalLM", Opt},
      {"Phi3ForCausalLM", Llama},  // Phi3Config: fused qkv and gate_up, Llama's shapes, no biases
      {"Qwen2ForCausalLM", Qwen2},
      {"Qwen2MoeForCausalLM", Qwen2Moe},
      {"Qwen3ForCausalLM", Qwen3},
      {"Qwen3MoeForCausalLM", Qwen3Moe},
      {"RWForCausalLM", Falcon},
  };
  return kFamilies;
}

// model_type -> architecture, for configs without `architectures`.
const std::map<std::string, std::string>& ModelTypes() {
  static const std::map<std::string, std::string> kTypes = {
      {"bloom", "BloomForCausalLM"},
      {"deepseek_v2", "DeepseekV2ForCausalLM"},
      {"deepseek_v3", "DeepseekV3ForCausalLM"},
      {"falcon", "FalconForCausalLM"},
      {"RefinedWeb", "FalconForCausalLM"},
      {"RefinedWebModel", "FalconForCausalLM"},
      {"gemma", "GemmaForCausalLM"},
      {"gemma2", "Gemma2ForCausalLM"},
      {"gemma3", "Gemma3ForConditionalGeneration"},
      {"gemma3_text", "Gemma3ForCausalLM"},
      {"gpt_oss", "GptOssForCausalLM"},
      {"llama4", "Llama4ForConditionalGeneration"},
      {"llama4_text", "Llama4ForCausalLM"},
      {"phi3", "Phi3ForCausalLM"},
      {"qwen3", "Qwen3ForCausalLM"},
      {"qwen3_moe", "Qwen3MoeForCausalLM"},
      {"gpt2", "GPT2LMHeadModel"},
      {"gpt_neox", "GPTNeoXForCausalLM"},
      {"llama", "LlamaForCausalLM"},
      {"mistral", "MistralForCausalLM"},
      {"mixtral", "MixtralForCausalLM"},
      {"opt", "OPTForCausalLM"},
      {"qwen2", "Qwen2ForCausalLM"},
      {"qwen2_moe", "Qwen2MoeForCausalLM"},
  };
  return kTypes;
}

}  // namespace

std::vector<std::string> SupportedHfArchitectures() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : Families()) names.push_back(name);
  return names;
}

Result<ConfigNode> HfConfigToModelTree(const ConfigNode& json) {
  if (!json.is_map()) {
    return Status::Invalid("expected a Hugging Face config.json mapping, got " + json.Describe(),
                           json.loc(), json.origin().source_line);
  }
  const ConfigNode* archs = json.Find("architectures");
  const ConfigNode* arch = nullptr;
  std::string name;
  if (archs != nullptr && archs->is_sequence() && !archs->items().empty() &&
      archs->items()[0].is_scalar()) {
    arch = &archs->items()[0];
    name = arch->text();
  } else if (const ConfigNode* type = json.Find("model_type");
             type != nullptr && type->is_scalar()) {
    auto it = ModelTypes().find(type->text());
    if (it == ModelTypes().end()) {
      return Status::Invalid("model_type: unsupported '" + type->text() +
                                 "'; supported: " + Join(SupportedHfArchitectures()),
                             type->loc(), type->origin().source_line);
    }
    arch = type;
    name = it->second;
  } else {
    const ConfigNode& at = archs != nullptr ? *archs : json;
    return Status::Invalid("architectures: missing or empty; cannot tell the model family",
                           at.loc(), at.origin().source_line);
  }
  auto family = Families().find(name);
  if (family == Families().end()) {
    return Status::Invalid(
        "architectures: unsupported '" + name + "'; supported: " + Join(SupportedHfArchitectures()),
        arch->loc(), arch->origin().source_line);
  }
  // Multimodal checkpoints (Gemma 3, Llama 4) keep the decoder's keys under text_config; only
  // the text decoder is imported (the vision tower and projector are not counted).
  const ConfigNode* fields = &json;
  const bool multimodal =
      name.size() > 24 && name.compare(name.size() - 24, 24, "ForConditionalGeneration") == 0;
  if (multimodal) {
    const ConfigNode* text = json.Find("text_config");
    if (text == nullptr || !text->is_map()) {
      return Status::Invalid(name + ": text_config: missing; the decoder's keys are read from it",
                             arch->loc(), arch->origin().source_line);
    }
    fields = text;
  }
  HfMapper hf(*fields, *arch, name);
  if (const ConfigNode* path = json.Find("_name_or_path"); path != nullptr && path->is_scalar()) {
    hf.Put("name", path->text(), path);
  } else {
    // Named from the file: ".../Qwen3-8B/config.json" -> "Qwen3-8B", "qwen3-8b.json" ->
    // "qwen3-8b" (not "inline" when a scenario names it with overrides).
    const std::filesystem::path file(json.loc().file);
    std::string stem = file.stem().string();
    if (stem == "config" && file.has_parent_path()) {
      stem = file.parent_path().filename().string();
    }
    if (!stem.empty()) hf.Put("name", stem);
  }
  family->second(hf);
  hf.Put("source",
         "Hugging Face config.json (" + name + (multimodal ? ", text decoder" : "") + ")");
  return hf.Finish();
}

}  // namespace shardsim
