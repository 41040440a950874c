// Reading a model document (models/<name>.yaml, inline, or converted from an HF config).
#include <algorithm>
#include <cstdio>
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
  moe.Int("num_experts", &s.num_experts, Need::kRequired, 1, kMaxModelExperts);
  moe.Int("top_k", &s.top_k, Need::kRequired, 1, kMaxModelExperts);
  moe.Int("expert_ffn_hidden_size", &s.expert_ffn_hidden_size, Need::kOptional, 1, kMaxModelWidth);
  moe.Int("num_shared_experts", &s.num_shared_experts, Need::kOptional, 0, kMaxModelExperts);
  moe.Int("shared_expert_ffn_hidden_size", &s.shared_expert_ffn_hidden_size, Need::kOptional, 1,
          kMaxModelWidth);
  if (moe.Bool("shared_expert_gate", &s.shared_expert_gate) && s.shared_expert_gate &&
      s.num_shared_experts == 0) {
    moe.Error(*moe.node()->Find("shared_expert_gate"), "shared_expert_gate",
              "gates the shared experts, but " + moe.MsgPath("num_shared_experts") + " is 0");
  }
  moe.Int("first_dense_layers", &s.first_dense_layers, Need::kOptional, 0, kMaxModelLayers);
  moe.Int("layer_freq", &s.layer_freq, Need::kOptional, 1, kMaxModelLayers);
  moe.Int("max_nodes_per_token", &s.max_nodes_per_token, Need::kOptional, 0, kMaxModelExperts);
  moe.Bool("expert_bias", &s.expert_bias);
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

const std::vector<LocalAttention> kLocalAttentions = {LocalAttention::kSliding,
                                                      LocalAttention::kChunked};

void ReadLocalAttention(MapReader& r, ModelSpec* m) {
  MapReader la = r.Sub("local_attention");
  if (!la.present()) return;
  la.Enum("kind", &m->local_attention, kLocalAttentions, Need::kRequired);
  la.Int("size", &m->local_attention_size, Need::kRequired, 1, kMaxModelRows);
  la.Int("full_every", &m->local_attention_full_every, Need::kOptional, 0, kMaxModelLayers);
  la.Finish();
}

void ReadMla(MapReader& r, ModelSpec* m) {
  MapReader mla = r.Sub("mla");
  if (!mla.present()) return;
  MlaSpec s;
  mla.Int("q_lora_rank", &s.q_lora_rank, Need::kOptional, 0, kMaxModelWidth);
  mla.Int("kv_lora_rank", &s.kv_lora_rank, Need::kRequired, 1, kMaxModelWidth);
  mla.Int("qk_nope_head_dim", &s.qk_nope_head_dim, Need::kRequired, 1, kMaxModelWidth);
  mla.Int("qk_rope_head_dim", &s.qk_rope_head_dim, Need::kRequired, 1, kMaxModelWidth);
  mla.Int("v_head_dim", &s.v_head_dim, Need::kRequired, 1, kMaxModelWidth);
  mla.Finish();
  m->mla = s;
}

// An upper bound of the parameter count, in doubles so that it cannot overflow: every linear
// layer with a bias, every layer (and MTP module) the larger of the dense and the MoE block,
// four norms with biases per layer. Within kMaxModelParams it keeps the op graph's int64 sums
// (sim/model/params.cc) exact; over it the model is reported at num_layers, or at vocab_size
// when the embedding and head are the larger part.
void CheckParamBound(const ModelSpec& m, MapReader& r) {
  auto d = [](int64_t v) { return static_cast<double>(v); };
  auto linear = [](double in, double out) { return in * out + out; };
  const double h = d(m.hidden_size), n = d(m.num_heads);
  double attn =
      linear(h, (n + 2.0 * d(m.num_kv_heads)) * d(m.head_dim)) + linear(n * d(m.head_dim), h);
  if (m.mla) {
    const MlaSpec& a = *m.mla;
    const double q = d(a.q_lora_rank), kv = d(a.kv_lora_rank);
    const double qk = d(a.qk_nope_head_dim) + d(a.qk_rope_head_dim);
    attn = linear(h, q) + q + linear(q, n * qk) + linear(h, n * qk) +
           linear(h, kv + d(a.qk_rope_head_dim)) + kv +
           linear(kv, n * (d(a.qk_nope_head_dim) + d(a.v_head_dim))) +
           linear(n * d(a.v_head_dim), h);
  }
  auto mlp = [&](double f) { return linear(h, 2.0 * f) + linear(f, h); };  // gated fc1: 2f
  double ffn = mlp(d(m.ffn_hidden_size));
  if (m.moe) {
    const MoeSpec& e = *m.moe;
    const double experts = d(e.num_experts);
    const double moe = linear(h, experts) + experts * mlp(d(e.expert_ffn_hidden_size)) +
                       mlp(d(e.num_shared_experts) * d(e.shared_expert_ffn_hidden_size)) + h;
    ffn = std::max(ffn, moe);
  }
  const double norm = 2.0 * h;
  const double layer = attn + ffn + 4.0 * norm + 2.0 * d(m.head_dim) + n;  // + qk norms, sinks
  const double layers =
      d(m.num_layers + m.mtp_depth) * layer + d(m.mtp_depth) * (linear(2.0 * h, h) + 3.0 * norm);
  const double outside = (2.0 * d(m.vocab_size) + d(m.position_table_rows)) * h + 3.0 * norm;
  const double total = layers + outside;
  if (total <= d(kMaxModelParams)) return;
  char about[32];
  std::snprintf(about, sizeof(about), "%.3g", total);
  r.ErrorAtKey(layers >= outside ? "num_layers" : "vocab_size",
               std::string("the model would hold about ") + about +
                   " parameters, more than shardsim counts exactly (at most 2^53 = " +
                   std::to_string(kMaxModelParams) + ")");
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
  const bool have_h = r.Int("hidden_size", &m.hidden_size, Need::kRequired, 1, kMaxModelWidth);
  r.Int("num_layers", &m.num_layers, Need::kRequired, 1, kMaxModelLayers);
  const bool have_n = r.Int("num_heads", &m.num_heads, Need::kRequired, 1, kMaxModelHeads);
  const bool have_kv = r.Int("num_kv_heads", &m.num_kv_heads, Need::kOptional, 1, kMaxModelHeads);
  const bool have_d = r.Int("head_dim", &m.head_dim, Need::kOptional, 1, kMaxModelWidth);
  const bool have_f =
      r.Int("ffn_hidden_size", &m.ffn_hidden_size, Need::kOptional, 1, kMaxModelWidth);
  r.Int("vocab_size", &m.vocab_size, Need::kRequired, 1, kMaxModelRows);
  const bool have_seq = r.Int("max_seq_len", &m.max_seq_len, Need::kOptional, 1, kMaxModelRows);
  r.Enum("activation", &m.activation, kActivations, Need::kRequired);
  r.Enum("norm", &m.norm, kNorms, Need::kRequired);
  r.Bool("bias", &m.bias, Need::kRequired);
  const bool have_qkv_bias = r.Bool("qkv_bias", &m.qkv_bias);
  const bool have_out_bias = r.Bool("attn_out_bias", &m.attn_out_bias);
  const bool have_mlp_bias = r.Bool("mlp_bias", &m.mlp_bias);
  r.Bool("norm_bias", &m.norm_bias);
  r.Bool("tied_embeddings", &m.tied_embeddings, Need::kRequired);
  r.Enum("position_embedding", &m.position_embedding, kPositions, Need::kRequired);
  const bool have_rows =
      r.Int("position_table_rows", &m.position_table_rows, Need::kOptional, 1, kMaxModelRows);
  r.Bool("parallel_attention", &m.parallel_attention);
  r.Int("norms_per_layer", &m.norms_per_layer, Need::kOptional, 1, 4);
  r.Bool("embedding_norm", &m.embedding_norm);
  if (r.Number("dropout", &m.dropout) && !(m.dropout >= 0.0 && m.dropout < 1.0)) {
    r.Error(*doc.tree.Find("dropout"), "dropout",
            "must be in [0, 1), got " + doc.tree.Find("dropout")->text());
  }
  r.Int("mtp_depth", &m.mtp_depth, Need::kOptional, 0, kMaxModelLayers);
  r.Bool("qk_norm", &m.qk_norm);
  r.Bool("attention_sinks", &m.attention_sinks);
  ReadLocalAttention(r, &m);
  ReadMoe(r, &m);
  ReadMla(r, &m);
  r.AcceptFreeText(&m.source);
  r.Finish();

  // Defaults (docs/reference.md §3, spec.h).
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
  if (!have_f) m.ffn_hidden_size = 4 * m.hidden_size;  // at most 2^26 (kMaxModelWidth)
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
  if (sink.empty()) CheckParamBound(m, r);
  if (!sink.empty()) return sink.ToStatus();
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace shardsim
