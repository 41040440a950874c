#include "sim/parallel/plan.h"

#include <algorithm>
#include <utility>

namespace shardsim {

ShardRules DeriveRules(const ModelSpec& model, const TrainingSpec& training,
                       const ParallelSpec& parallel) {
  const GraphOptions options = GraphOptionsFor(training, parallel);
  // Degrees below 1 (input not yet validated) divide as 1: never a division by zero.
  const auto one = [](int64_t v) { return std::max<int64_t>(1, v); };
  const int64_t tp = one(parallel.tp);
  ShardRules r;
  r.sequence_parallel = SequenceParallelOn(options);
  r.sp_shards = r.sequence_parallel ? parallel.tp : 1;
  r.heads_per_rank = model.num_heads / tp;
  r.kv_heads_per_rank = KvHeadsPerRank(model, tp);
  r.kv_replicated = !model.mla && tp > model.num_kv_heads;
  r.vocab_rows_per_rank = VocabRowsPerRank(model, tp);
  r.microbatches = one(training.global_batch / one(parallel.dp * training.micro_batch));
  r.zero_shards = parallel.dp * parallel.cp;
  r.expert_zero_shards = one(r.zero_shards / one(parallel.ep));
  return r;
}

const char* Name(CommPass p) { return p == CommPass::kForward ? "forward" : "backward"; }

namespace {

// The layer's collectives, in the order LayerCollectives documents.
LayerCollectives Collectives(const ModelSpec& model, const TrainingSpec& training,
                             const ParallelSpec& parallel, const ShardRules& rules,
                             const LayerOps& layer, Bytes act) {
  LayerCollectives out;
  auto add = [&](CommGroup g, CollectiveOp op, Bytes size, Region region, CommPass pass,
                 bool regather = false, int64_t times = 1) {
    out.collectives.push_back(InLayerCollective{g, op, size, region, pass, regather, times});
  };
  if (parallel.tp > 1) {
    for (Region region : {Region::kAttention, Region::kMlp}) {
      for (CommPass pass : {CommPass::kForward, CommPass::kBackward}) {
        if (rules.sequence_parallel) {
          add(CommGroup::kTp, CollectiveOp::kAllGather, act, region, pass);
          add(CommGroup::kTp, CollectiveOp::kReduceScatter, act, region, pass);
        } else {
          add(CommGroup::kTp, CollectiveOp::kAllReduce, act, region, pass);
        }
      }
      if (rules.sequence_parallel) {
        add(CommGroup::kTp, CollectiveOp::kAllGather, act, region, CommPass::kBackward, true);
      }
    }
  }
  if (parallel.cp > 1) {
    for (const Op& op : layer.ops) {
      if (op.kind != OpKind::kAttention) continue;
      const AttentionShape& a = op.attention;
      const double bytes_per = act.value() / static_cast<double>(model.hidden_size);  // channel
      const Bytes kv(bytes_per *
                     static_cast<double>(rules.kv_heads_per_rank * (a.head_dim + a.v_head_dim)));
      add(CommGroup::kCp, CollectiveOp::kSendRecv, kv, op.region, CommPass::kForward, false,
          parallel.cp - 1);
      add(CommGroup::kCp, CollectiveOp::kSendRecv, kv * 2.0, op.region, CommPass::kBackward, false,
          parallel.cp - 1);
    }
  }
  const bool moe = std::any_of(layer.ops.begin(), layer.ops.end(), [](const Op& op) {
    return op.tp_split == TpSplit::kExperts && op.kind == OpKind::kMatmul;
  });
  if (moe && parallel.ep > 1 && model.moe) {
    const double copies = static_cast<double>(model.moe->top_k) * MoeLoadFactor(*model.moe);
    const Bytes combine = act * copies;
    const double act_bytes = ActivationBytes(training.precision);
    const bool fp8 = training.fp8_dispatch && training.precision == DType::kFp8;
    const Bytes dispatch = fp8 ? act * (1.0 / act_bytes) * copies : combine;
    for (CommPass pass : {CommPass::kForward, CommPass::kBackward}) {
      add(CommGroup::kEp, CollectiveOp::kAllToAll, dispatch, Region::kMlp, pass);
      add(CommGroup::kEp, CollectiveOp::kAllToAll, combine, Region::kMlp, pass);
    }
  }
  return out;
}

}  // namespace

Result<Sharding> ShardModel(const ModelSpec& model, const TrainingSpec& training,
                            const ParallelSpec& parallel) {
  Result<OpGraph> graph = BuildOpGraph(model, GraphOptionsFor(training, parallel));
  if (!graph.ok()) return graph.status();
  Result<std::vector<PipelineRank>> stages = SplitLayers(model.num_layers, parallel);
  if (!stages.ok()) return stages.status();
  Sharding s;
  s.rules = DeriveRules(model, training, parallel);
  s.graph = std::move(*graph);
  s.stages = std::move(*stages);
  s.activation = Bytes(ActivationBytes(training.precision) *
                       static_cast<double>(s.graph.tokens_per_microbatch) *
                       static_cast<double>(model.hidden_size));
  for (const LayerOps& layer : s.graph.layer_kinds) {
    s.layer_collectives.push_back(
        Collectives(model, training, parallel, s.rules, layer, s.activation));
  }
  if (parallel.tp > 1) {
    const bool sp = s.rules.sequence_parallel;
    const Bytes act = s.activation;
    auto add = [](LayerCollectives& to, CollectiveOp op, Bytes size, CommPass pass,
                  int64_t times = 1) {
      to.collectives.push_back(
          InLayerCollective{CommGroup::kTp, op, size, Region::kNone, pass, false, times});
    };
    add(s.embedding_collectives, sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, act,
        CommPass::kForward);
    if (sp) add(s.embedding_collectives, CollectiveOp::kAllGather, act, CommPass::kBackward);
    if (sp) add(s.head_collectives, CollectiveOp::kAllGather, act, CommPass::kForward);
    const Bytes stats(4.0 * static_cast<double>(s.graph.tokens_per_microbatch));
    add(s.head_collectives, CollectiveOp::kAllReduce, stats, CommPass::kForward, 3);
    add(s.head_collectives, sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce, act,
        CommPass::kBackward);
  }
  return s;
}

Result<Plan> MakePlan(const Scenario& scenario) {
  Result<Sharding> sharding = ShardModel(scenario.model, scenario.training, scenario.parallel);
  if (!sharding.ok()) return sharding.status();
  return MakePlan(scenario, std::move(*sharding));
}

Result<Plan> MakePlan(const Scenario& scenario, Sharding sharding) {
  Result<Layout> layout = Layout::Make(scenario);
  if (!layout.ok()) return layout.status();
  return Plan{std::move(sharding), std::move(*layout)};
}

}  // namespace shardsim
