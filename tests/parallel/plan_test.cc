// The plan (sim/parallel/plan.h): the derived sharding rules in closed form, the block each op
// belongs to (Op::region), and the in-layer collectives each layer kind issues.
#include "sim/parallel/plan.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/config/loader.h"
#include "sim/program/step_costs.h"
#include "tests/model/test_models.h"
#include "tests/topology/test_specs.h"

namespace shardsim {
namespace {

// Llama-3-70B's shapes (models/llama3-70b.yaml): h 8192, 80 layers, 64 heads, 8 kv heads,
// ffn 28672, vocab 128256.
ModelSpec Llama70b() { return testing::Llama(80, 8192, 64, 8, 28672, 128256); }

TrainingSpec Training(int64_t seq, int64_t micro_batch, int64_t global_batch) {
  TrainingSpec t;
  t.seq_len = seq;
  t.micro_batch = micro_batch;
  t.global_batch = global_batch;
  t.precision = DType::kBf16;
  return t;
}

ParallelSpec Parallel(int64_t dp, int64_t tp, int64_t pp, int64_t cp = 1, bool sp = true) {
  ParallelSpec p;
  p.dp = dp;
  p.tp = tp;
  p.pp = pp;
  p.cp = cp;
  p.sequence_parallel = sp;
  return p;
}

TEST(ShardRules, Llama70bTp8) {
  // 64 / 8 = 8 query heads and 8 / 8 = 1 kv head per rank; ceil(128256 / 8) = 16032 rows;
  // 1024 / (16 x 1) = 64 micro-batches; ZeRO over dp x cp = 16 x 2 = 32.
  const ShardRules r = DeriveRules(Llama70b(), Training(8192, 1, 1024), Parallel(16, 8, 4, 2));
  EXPECT_TRUE(r.sequence_parallel);
  EXPECT_EQ(r.sp_shards, 8);
  EXPECT_EQ(r.heads_per_rank, 8);
  EXPECT_EQ(r.kv_heads_per_rank, 1);
  EXPECT_FALSE(r.kv_replicated);
  EXPECT_EQ(r.vocab_rows_per_rank, 16032);
  EXPECT_EQ(r.microbatches, 64);
  EXPECT_EQ(r.zero_shards, 32);
  EXPECT_EQ(r.expert_zero_shards, 32);
}

TEST(ShardRules, GqaKvHeadsReplicateBeyondTheirCount) {
  // 8 kv heads over TP 16: each rank keeps one kv head, every head on 16 / 8 = 2 ranks.
  ModelSpec m = Llama70b();
  m.num_heads = 128;
  const ShardRules r = DeriveRules(m, Training(8192, 1, 64), Parallel(4, 16, 1));
  EXPECT_EQ(r.heads_per_rank, 8);
  EXPECT_EQ(r.kv_heads_per_rank, 1);
  EXPECT_TRUE(r.kv_replicated);
}

TEST(ShardRules, SequenceParallelNeedsATensorParallelGroup) {
  // Asked for at tp 1, SP has no group to split over: off, one shard.
  const ShardRules r = DeriveRules(Llama70b(), Training(8192, 1, 64), Parallel(8, 1, 8));
  EXPECT_FALSE(r.sequence_parallel);
  EXPECT_EQ(r.sp_shards, 1);
  const ShardRules off =
      DeriveRules(Llama70b(), Training(8192, 1, 64), Parallel(8, 8, 1, 1, false));
  EXPECT_FALSE(off.sequence_parallel);
  EXPECT_EQ(off.sp_shards, 1);
}

TEST(ShardRules, VocabRowsPadUpAndExpertShards) {
  // ceil(50257 / 8) = 6283 (6282.125 rounded up); 64 experts over ep 4 of dp 8: ZeRO shards the
  // dense parameters over 8 ranks and the experts over 8 / 4 = 2. Micro-batches at least 1.
  ModelSpec m = testing::Gpt(4, 1024, 16, 50257);
  ParallelSpec p = Parallel(8, 8, 1);
  p.ep = 4;
  const ShardRules r = DeriveRules(m, Training(2048, 4, 16), p);
  EXPECT_EQ(r.vocab_rows_per_rank, 6283);
  EXPECT_EQ(r.zero_shards, 8);
  EXPECT_EQ(r.expert_zero_shards, 2);
  EXPECT_EQ(r.microbatches, 1);  // 16 / (8 x 4) = 0.5 -> 1
}

TEST(ShardRules, MlaKeepsOneLatentKvPerHead) {
  ModelSpec m = Llama70b();
  m.mla = MlaSpec{};
  const ShardRules r = DeriveRules(m, Training(4096, 1, 64), Parallel(4, 16, 1));
  EXPECT_EQ(r.kv_heads_per_rank, 4);  // 64 heads / 16
  EXPECT_FALSE(r.kv_replicated);
}

TEST(Region, EveryLayerOpIsInItsBlock) {
  Result<Sharding> s = ShardModel(Llama70b(), Training(8192, 1, 64), Parallel(8, 8, 1));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const std::vector<Op>& ops = s->graph.layer_kinds[0].ops;
  int attention = 0, mlp = 0;
  for (const Op& op : ops) {
    const bool attn = op.name.rfind("attn.", 0) == 0 || op.name == "ln1";
    const bool in_mlp = op.name.rfind("mlp.", 0) == 0 || op.name == "ln2";
    ASSERT_TRUE(attn || in_mlp) << op.name;
    EXPECT_EQ(op.region, attn ? Region::kAttention : Region::kMlp) << op.name;
    (attn ? attention : mlp) += 1;
  }
  // ln1, qkv, rope, core, out, residual; ln2, fc1, act, fc2, residual.
  EXPECT_EQ(attention, 6);
  EXPECT_EQ(mlp, 5);
  for (const Op& op : s->graph.embedding) EXPECT_EQ(op.region, Region::kNone) << op.name;
  for (const Op& op : s->graph.head) EXPECT_EQ(op.region, Region::kNone) << op.name;
  EXPECT_STREQ(Name(Region::kAttention), "attention");
  EXPECT_STREQ(Name(Region::kMlp), "mlp");
}

TEST(Region, MoeAndMtpBlocksAndQuantizeCasts) {
  // A MoE layer's router, permutes and experts are its MLP block; an MTP module's transformer
  // block keeps its regions under the "mtp1." prefix; an fp8 cast sits in its GEMM's block.
  ModelSpec m = testing::Llama(2, 1024, 8, 8, 4096, 32000);
  m.moe = MoeSpec{};
  m.moe->num_experts = 8;
  m.moe->top_k = 2;
  m.moe->expert_ffn_hidden_size = 512;
  m.mtp_depth = 1;
  TrainingSpec t = Training(2048, 1, 8);
  t.precision = DType::kFp8;
  Result<Sharding> s = ShardModel(m, t, Parallel(8, 1, 1));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->graph.layer_kinds.size(), 2u);
  int casts = 0;
  for (const Op& op : s->graph.layer_kinds[1].ops) {
    if (op.name.rfind("moe.", 0) == 0) {
      EXPECT_EQ(op.region, Region::kMlp) << op.name;
    }
    if (op.kind == OpKind::kCast) {
      ++casts;
      EXPECT_EQ(op.region, op.name.rfind("attn.", 0) == 0 ? Region::kAttention : Region::kMlp)
          << op.name;
    }
  }
  EXPECT_GT(casts, 0);
  int mtp_attention = 0;
  for (const Op& op : s->graph.mtp) {
    if (op.name.rfind("mtp1.attn.", 0) == 0) {
      EXPECT_EQ(op.region, Region::kAttention) << op.name;
      ++mtp_attention;
    }
    if (op.name == "mtp1.eh_proj" || op.name == "mtp1.head") {
      EXPECT_EQ(op.region, Region::kNone) << op.name;
    }
  }
  EXPECT_GT(mtp_attention, 0);
}

TEST(LayerCollectives, TensorParallelPerBlock) {
  // T = 8192 tokens x h 8192 x 2 bytes = 128 MiB per collective. Without SP: an all-reduce per
  // block and pass; with SP an all-gather + reduce-scatter each, and the backward re-gather.
  const double act = 8192.0 * 8192 * 2;
  Result<Sharding> sp = ShardModel(Llama70b(), Training(8192, 1, 64), Parallel(8, 8, 1));
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  EXPECT_DOUBLE_EQ(sp->activation.value(), act);
  const std::vector<InLayerCollective>& c = sp->layer_collectives[0].collectives;
  ASSERT_EQ(c.size(), 10u);  // 2 blocks x (2 passes x 2 + 1 re-gather)
  int regathers = 0;
  for (const InLayerCollective& x : c) {
    EXPECT_EQ(x.group, CommGroup::kTp);
    EXPECT_DOUBLE_EQ(x.size.value(), act);
    EXPECT_TRUE(x.op == CollectiveOp::kAllGather || x.op == CollectiveOp::kReduceScatter);
    if (x.regather) {
      ++regathers;
      EXPECT_EQ(x.op, CollectiveOp::kAllGather);
      EXPECT_EQ(x.pass, CommPass::kBackward);
    }
  }
  EXPECT_EQ(regathers, 2);
  EXPECT_EQ(c.front().region, Region::kAttention);
  EXPECT_EQ(c.back().region, Region::kMlp);

  Result<Sharding> ar =
      ShardModel(Llama70b(), Training(8192, 1, 64), Parallel(8, 8, 1, 1, /*sp=*/false));
  ASSERT_TRUE(ar.ok()) << ar.status().ToString();
  const std::vector<InLayerCollective>& a = ar->layer_collectives[0].collectives;
  ASSERT_EQ(a.size(), 4u);  // 2 blocks x 2 passes
  for (const InLayerCollective& x : a) EXPECT_EQ(x.op, CollectiveOp::kAllReduce);

  Result<Sharding> none = ShardModel(Llama70b(), Training(8192, 1, 64), Parallel(64, 1, 1));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->layer_collectives[0].collectives.empty());
}

TEST(LayerCollectives, EmbeddingAndHead) {
  // Vocab-parallel embedding and head at TP 8, T = 8192: with SP the embedding reduce-scatters
  // forward and all-gathers backward (128 MiB each); the head all-gathers its input forward,
  // all-reduces 3 x 4 bytes x 8192 of fp32 statistics, and reduce-scatters backward.
  const double act = 8192.0 * 8192 * 2;
  Result<Sharding> sp = ShardModel(Llama70b(), Training(8192, 1, 64), Parallel(8, 8, 1));
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  const std::vector<InLayerCollective>& e = sp->embedding_collectives.collectives;
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].op, CollectiveOp::kReduceScatter);
  EXPECT_EQ(e[0].pass, CommPass::kForward);
  EXPECT_EQ(e[1].op, CollectiveOp::kAllGather);
  EXPECT_EQ(e[1].pass, CommPass::kBackward);
  EXPECT_DOUBLE_EQ(e[1].size.value(), act);
  const std::vector<InLayerCollective>& h = sp->head_collectives.collectives;
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].op, CollectiveOp::kAllGather);
  EXPECT_EQ(h[1].op, CollectiveOp::kAllReduce);
  EXPECT_DOUBLE_EQ(h[1].size.value(), 4.0 * 8192);
  EXPECT_EQ(h[1].times, 3);
  EXPECT_EQ(h[2].op, CollectiveOp::kReduceScatter);
  EXPECT_EQ(h[2].pass, CommPass::kBackward);

  Result<Sharding> ar =
      ShardModel(Llama70b(), Training(8192, 1, 64), Parallel(8, 8, 1, 1, /*sp=*/false));
  ASSERT_TRUE(ar.ok()) << ar.status().ToString();
  ASSERT_EQ(ar->embedding_collectives.collectives.size(), 1u);
  EXPECT_EQ(ar->embedding_collectives.collectives[0].op, CollectiveOp::kAllReduce);
  ASSERT_EQ(ar->head_collectives.collectives.size(), 2u);
  EXPECT_EQ(ar->head_collectives.collectives[1].op, CollectiveOp::kAllReduce);
  EXPECT_DOUBLE_EQ(ar->head_collectives.collectives[1].size.value(), act);

  Result<Sharding> none = ShardModel(Llama70b(), Training(8192, 1, 64), Parallel(64, 1, 1));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->embedding_collectives.collectives.empty());
  EXPECT_TRUE(none->head_collectives.collectives.empty());
}

TEST(LayerCollectives, RingAttentionHop) {
  // CP 2 of seq 8192 at TP 8: T = 4096 tokens; K and V of 1 kv head x (128 + 128) per token,
  // 2 bytes: 4096 x 256 x 2 = 2 MiB forward, twice that backward, cp - 1 = 1 round each.
  Result<Sharding> s = ShardModel(Llama70b(), Training(8192, 1, 64), Parallel(4, 8, 1, 2));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  int hops = 0;
  for (const InLayerCollective& x : s->layer_collectives[0].collectives) {
    if (x.group != CommGroup::kCp) continue;
    ++hops;
    EXPECT_EQ(x.op, CollectiveOp::kSendRecv);
    EXPECT_EQ(x.region, Region::kAttention);
    EXPECT_EQ(x.times, 1);
    const double fwd = 4096.0 * 256 * 2;
    EXPECT_DOUBLE_EQ(x.size.value(), x.pass == CommPass::kForward ? fwd : 2 * fwd);
  }
  EXPECT_EQ(hops, 2);
}

TEST(LayerCollectives, ExpertAllToAlls) {
  // Top-2 of 8 experts, balanced: T x 2 x h x 2 bytes = 2048 x 2 x 1024 x 2 per all-to-all, a
  // dispatch and a combine per pass, on the MoE layer kind only.
  ModelSpec m = testing::Llama(2, 1024, 8, 8, 4096, 32000);
  m.moe = MoeSpec{};
  m.moe->num_experts = 8;
  m.moe->top_k = 2;
  m.moe->expert_ffn_hidden_size = 512;
  ParallelSpec p = Parallel(8, 1, 1);
  p.ep = 4;
  Result<Sharding> s = ShardModel(m, Training(2048, 1, 8), p);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->layer_collectives.size(), 2u);
  EXPECT_TRUE(s->layer_collectives[0].collectives.empty());  // the dense kind
  const std::vector<InLayerCollective>& c = s->layer_collectives[1].collectives;
  ASSERT_EQ(c.size(), 4u);
  for (const InLayerCollective& x : c) {
    EXPECT_EQ(x.group, CommGroup::kEp);
    EXPECT_EQ(x.op, CollectiveOp::kAllToAll);
    EXPECT_EQ(x.region, Region::kMlp);
    EXPECT_DOUBLE_EQ(x.size.value(), 2048.0 * 2 * 1024 * 2);
  }
}

// The plan's EP sizes are the ones the pricing uses (PriceEpAllToAll), and its ZeRO shard
// groups are the layout's gradient groups.
TEST(Plan, AgreesWithThePricingAndTheLayout) {
  Scenario sc;
  sc.name = "plan-moe";
  sc.model = testing::Llama(4, 4096, 32, 8, 14336, 32000);
  sc.model.moe = MoeSpec{};
  sc.model.moe->num_experts = 64;
  sc.model.moe->top_k = 8;
  sc.model.moe->expert_ffn_hidden_size = 1024;
  sc.model.moe->imbalance = 1.25;
  Result<HardwareSpec> hw = LoadHardware("h100-sxm", LoadOptions{});
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  sc.hardware = *hw;
  sc.topology = testing::DgxH100();
  sc.gpus = 32;
  sc.training = Training(4096, 1, 64);
  sc.parallel = Parallel(16, 2, 1);
  sc.parallel.ep = 8;
  Result<Plan> plan = MakePlan(sc);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  Result<EpAllToAll> ep = PriceEpAllToAll(sc, plan->layout, plan->activation);
  ASSERT_TRUE(ep.ok()) << ep.status().ToString();
  int all_to_alls = 0;
  for (const InLayerCollective& c : plan->layer_collectives.back().collectives) {
    if (c.group != CommGroup::kEp) continue;
    ++all_to_alls;
    EXPECT_DOUBLE_EQ(c.size.value(), ep->size.value());
  }
  EXPECT_EQ(all_to_alls, 4);
  // T = 4096 x h 4096 x 2 bytes x top-8 x 1.25.
  EXPECT_DOUBLE_EQ(ep->size.value(), 4096.0 * 4096 * 2 * 8 * 1.25);
  EXPECT_EQ(plan->rules.zero_shards, plan->layout.GroupSize(CommGroup::kGrad));
  EXPECT_EQ(plan->rules.expert_zero_shards, plan->layout.GroupSize(CommGroup::kExpertGrad));
}

TEST(Plan, MakePlanJoinsTheLayout) {
  Scenario sc;
  sc.name = "plan";
  sc.model = Llama70b();
  Result<HardwareSpec> hw = LoadHardware("h100-sxm", LoadOptions{});
  ASSERT_TRUE(hw.ok()) << hw.status().ToString();
  sc.hardware = *hw;
  sc.topology = testing::DgxH100();
  sc.gpus = 64;
  sc.training = Training(8192, 1, 64);
  sc.parallel = Parallel(2, 8, 4);
  Result<Plan> plan = MakePlan(sc);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->layout.GroupSize(CommGroup::kTp), 8);
  ASSERT_EQ(plan->stages.size(), 4u);
  EXPECT_EQ(plan->stages[0].layers(), 20);
  EXPECT_EQ(plan->rules.microbatches, 32);

  sc.parallel = Parallel(2, 8, 3);  // 80 layers do not split over 3 ranks
  sc.gpus = 48;
  Result<Plan> bad = MakePlan(sc);
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace shardsim
