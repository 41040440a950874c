// Reading a model document (models/<name>.yaml, inline, or converted from an HF config).
#include <filesystem>
#include <vector>

#include "sim/config/readers.h"
#include "sim/config/value_reader.h"

namespace shardsim {
namespace {

const std::vector<Activation> kActivations = {Activation::kGelu, Activation::kRelu,
                                              Activation::kSwiglu, Activation::kGeglu};
const std::vector<NormKind> kNorms = {NormKind::kLayerNorm, NormKind::kRmsNorm};
const std::vector<PositionEmbedding> kPositions = {
    PositionEmbedding::kRope, PositionEmbedding::kLearned, PositionEmbedding::kAlibi,
    PositionEmbedding::kNone};

void ReadMoe(MapReader& r, ModelSpec* m) {
  MapReader moe = r.Sub("moe");
  if (!moe.present()) return;
  MoeSpec s;
  moe.PositiveInt("num_experts", &s.num_experts, Need::kRequired);
  moe.PositiveInt("top_k", &s.top_k, Need::kRequired);
  moe.PositiveInt("expert_ffn_hidden_size", &s.expert_ffn_hidden_size);
  moe.NonNegativeInt("num_shared_experts", &s.num_shared_experts);
  moe.PositiveInt("shared_expert_ffn_hidden_size", &s.shared_expert_ffn_hidden_size);
  if (moe.Bool("shared_expert_gate", &s.shared_expert_gate) && s.shared_expert_gate &&
      s.num_shared_experts == 0) {
    moe.Error(*moe.node()->Find("shared_expert_gate"), "shared_expert_gate",
              "gates the shared experts, but " + moe.MsgPath("num_shared_experts") + " is 0");
  }
  moe.NonNegativeInt("first_dense_layers", &s.first_dense_layers);
  moe.PositiveInt("layer_freq", &s.layer_freq);
  moe.NonNegativeInt("max_nodes_per_token", &s.max_nodes_per_token);
  if (moe.Has("capacity_factor")) {
    double cf = 0.0;
    if (moe.Number("capacity_factor", &cf)) {
      if (cf < 0.0) {
        moe.Error(*moe.node()->Find("capacity_factor"), "capacity_factor",
                  "must not be negative (0 = dropless), got " +
                      moe.node()->Find("capacity_factor")->text());
      } else {
        s.capacity_factor = cf;
      }
    }
  }
  if (moe.Has("imbalance")) {
    double im = 0.0;
    if (moe.Number("imbalance", &im)) {
      if (im < 1.0) {
        moe.Error(*moe.node()->Find("imbalance"), "imbalance",
                  "must be at least 1 (busiest rank's load / mean load), got " +
                      moe.node()->Find("imbalance")->text());
      } else {
        s.imbalance = im;
      }
    }
  }
  moe.Finish();
  m->moe = s;
}

void ReadMla(MapReader& r, ModelSpec* m) {
  MapReader mla = r.Sub("mla");
  if (!mla.present()) return;
  MlaSpec s;
  mla.NonNegativeInt("q_lora_rank", &s.q_lora_rank);
  mla.PositiveInt("kv_lora_rank", &s.kv_lora_rank, Need::kRequired);
  mla.PositiveInt("qk_nope_head_dim", &s.qk_nope_head_dim, Need::kRequired);
  mla.PositiveInt("qk_rope_head_dim", &s.qk_rope_head_dim, Need::kRequired);
  mla.PositiveInt("v_head_dim", &s.v_head_dim, Need::kRequired);
  mla.Finish();
  m->mla = s;
}

}  // namespace

KeyOrigin DocWhere(const ResolvedDoc& doc, const KeyOrigin* holder_key) {
  if (doc.is_inline && holder_key != nullptr) return *holder_key;
  return KeyOrigin{SourceLoc{doc.file, 0, 0}, {}};
}

Status ReadModel(const ResolvedDoc& doc, const KeyOrigin& where, const std::string& msg_prefix,
                 ModelSpec* out) {
  DiagnosticSink sink;
  ModelSpec m;
  m.origins.set_file(doc.file);
  MapReader r(&doc.tree, where, msg_prefix, "", &sink, &m.origins);
  if (!r.String("name", &m.name)) {
    m.name = doc.is_inline ? "inline" : std::filesystem::path(doc.file).stem().string();
  }
  const bool have_h = r.PositiveInt("hidden_size", &m.hidden_size, Need::kRequired);
  r.PositiveInt("num_layers", &m.num_layers, Need::kRequired);
  const bool have_n = r.PositiveInt("num_heads", &m.num_heads, Need::kRequired);
  const bool have_kv = r.PositiveInt("num_kv_heads", &m.num_kv_heads);
  const bool have_d = r.PositiveInt("head_dim", &m.head_dim);
  const bool have_f = r.PositiveInt("ffn_hidden_size", &m.ffn_hidden_size);
  r.PositiveInt("vocab_size", &m.vocab_size, Need::kRequired);
  const bool have_seq = r.PositiveInt("max_seq_len", &m.max_seq_len);
  r.Enum("activation", &m.activation, kActivations, Need::kRequired);
  r.Enum("norm", &m.norm, kNorms, Need::kRequired);
  r.Bool("bias", &m.bias, Need::kRequired);
  const bool have_qkv_bias = r.Bool("qkv_bias", &m.qkv_bias);
  const bool have_out_bias = r.Bool("attn_out_bias", &m.attn_out_bias);
  const bool have_mlp_bias = r.Bool("mlp_bias", &m.mlp_bias);
  r.Bool("norm_bias", &m.norm_bias);
  r.Bool("tied_embeddings", &m.tied_embeddings, Need::kRequired);
  r.Enum("position_embedding", &m.position_embedding, kPositions, Need::kRequired);
  const bool have_rows = r.PositiveInt("position_table_rows", &m.position_table_rows);
  r.Bool("parallel_attention", &m.parallel_attention);
  r.Int("norms_per_layer", &m.norms_per_layer, Need::kOptional, 1, 4);
  r.Bool("embedding_norm", &m.embedding_norm);
  if (r.Number("dropout", &m.dropout) && !(m.dropout >= 0.0 && m.dropout < 1.0)) {
    r.Error(*doc.tree.Find("dropout"), "dropout",
            "must be in [0, 1), got " + doc.tree.Find("dropout")->text());
  }
  r.NonNegativeInt("mtp_depth", &m.mtp_depth);
  ReadMoe(r, &m);
  ReadMla(r, &m);
  r.AcceptFreeText(&m.source);
  r.Finish();

  // Defaults (DESIGN.md §3, spec.h).
  if (!have_kv) m.num_kv_heads = m.num_heads;
  if (!have_d && have_h && have_n) {
    if (m.hidden_size % m.num_heads != 0) {
      r.ErrorAtKey("num_heads", "hidden_size (" + std::to_string(m.hidden_size) +
                                    ") is not divisible by num_heads (" +
                                    std::to_string(m.num_heads) + "); give head_dim");
    } else {
      m.head_dim = m.hidden_size / m.num_heads;
    }
  }
  if (!have_f && __builtin_mul_overflow(m.hidden_size, int64_t{4}, &m.ffn_hidden_size)) {
    r.ErrorAtKey("hidden_size", "too large for the default ffn_hidden_size (4 * hidden_size)");
  }
  if (!have_qkv_bias) m.qkv_bias = m.bias;
  if (!have_out_bias) m.attn_out_bias = m.bias;
  if (!have_mlp_bias) m.mlp_bias = m.bias;
  if (m.position_embedding == PositionEmbedding::kLearned && !have_rows) {
    if (have_seq) {
      m.position_table_rows = m.max_seq_len;
    } else if (doc.tree.Find("position_embedding") != nullptr) {
      r.ErrorAtKey("position_embedding",
                   "learned positions need max_seq_len (or position_table_rows)");
    }
  }
  if (m.moe) {
    if (m.moe->expert_ffn_hidden_size == 0) m.moe->expert_ffn_hidden_size = m.ffn_hidden_size;
    if (m.moe->shared_expert_ffn_hidden_size == 0) {
      m.moe->shared_expert_ffn_hidden_size = m.moe->expert_ffn_hidden_size;
    }
  }
  if (!sink.empty()) return sink.ToStatus();
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace shardsim
