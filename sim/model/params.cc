#include "sim/model/params.h"

#include "sim/model/op_graph.h"

namespace shardsim {
namespace {

void AddRows(const std::string& kind, int64_t layers, const std::vector<Op>& ops, ParamCount& out) {
  for (const Op& op : ops) {
    if (op.params > 0) out.rows.push_back(ParamRow{kind, layers, op.name, op.params});
  }
}

// Parameters of the routed experts a token does not visit (E - top_k of E), per layer.
int64_t InactiveExpertParams(const ModelSpec& model, const LayerOps& layer) {
  if (!model.moe) return 0;
  int64_t inactive = 0;
  for (const Op& op : layer.ops) {
    if (op.tp_split == TpSplit::kExperts && op.kind == OpKind::kMatmul) {
      const int64_t per_expert = op.params / model.moe->num_experts;
      inactive += per_expert * (model.moe->num_experts - model.moe->top_k);
    }
  }
  return inactive;
}

}  // namespace

Result<ParamCount> CountParams(const ModelSpec& model) {
  GraphOptions o;  // one token, no sharding: the whole model
  o.seq_len = 1;
  o.micro_batch = 1;
  Result<OpGraph> g = BuildOpGraph(model, o);
  if (!g.ok()) return g.status();
  ParamCount c;
  std::vector<int64_t> layers_of_kind(g->layer_kinds.size(), 0);
  for (int k : g->layer_kind_of) ++layers_of_kind[static_cast<size_t>(k)];

  int64_t outside_layers = 0;  // embedding, final norm, head
  int64_t lookup = 0;          // token and learned-position tables
  for (const std::vector<Op>* ops : {&g->embedding, &g->head}) {
    for (const Op& op : *ops) {
      outside_layers += op.params;
      // A tied token table still multiplies, as the output head; a position table never does.
      if (op.kind == OpKind::kEmbedding) {
        const bool learned = model.position_embedding == PositionEmbedding::kLearned;
        const int64_t positions = learned ? model.position_table_rows * model.hidden_size : 0;
        lookup += model.tied_embeddings ? positions : op.params;
      }
      // Embedding parameters: token and position tables, and an untied output head.
      if (op.kind == OpKind::kEmbedding || op.kind == OpKind::kMatmul) c.embedding += op.params;
    }
  }
  AddRows("embedding", 1, g->embedding, c);
  int64_t layers_total = 0;
  int64_t layers_active = 0;
  for (size_t k = 0; k < g->layer_kinds.size(); ++k) {
    const int64_t n = layers_of_kind[k];
    if (n == 0) continue;
    const LayerOps& layer = g->layer_kinds[k];
    AddRows(layer.kind, n, layer.ops, c);
    const int64_t per_layer = Sum(layer.ops).params;
    layers_total += n * per_layer;
    layers_active += n * (per_layer - InactiveExpertParams(model, layer));
  }
  AddRows("head", 1, g->head, c);
  AddRows("mtp", 1, g->mtp, c);
  c.total = outside_layers + layers_total;
  c.active = outside_layers + layers_active;
  c.active_compute = c.active - lookup;
  c.non_embedding = c.total - c.embedding;
  c.mtp = Sum(g->mtp).params;
  return c;
}

}  // namespace shardsim
