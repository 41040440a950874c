// Local attention (model.local_attention): the share of the score square a causal flash kernel
// computes on a sliding-window or chunked layer (AttendedFraction, by hand), the layer kinds the
// op graph gives gpt-oss's alternating layers, and the time the attention cost puts on them.
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "sim/hardware/op_cost.h"
#include "sim/memory/budget.h"
#include "sim/model/op_graph.h"

namespace shardsim {
namespace {

AttentionShape Causal(int64_t seq, int64_t window = 0, bool chunked = false) {
  AttentionShape s;
  s.batch_heads = 64;
  s.seq_q = s.seq_kv = seq;
  s.head_dim = s.v_head_dim = 64;
  s.window = window;
  s.chunked = chunked;
  return s;
}

TEST(LocalAttention, AttendedFractionByHand) {
  EXPECT_EQ(AttendedFraction(Causal(4096)), 0.5);
  // A band of width W: (W·s − W²/2)/s² = (1024·4096 − 512·1024)/4096² = 0.21875.
  EXPECT_DOUBLE_EQ(AttendedFraction(Causal(4096, 1024)), 0.21875);
  // Four triangles of side 1024: 4·1024²/(2·4096²) = 0.125.
  EXPECT_DOUBLE_EQ(AttendedFraction(Causal(4096, 1024, true)), 0.125);
  // One chunk of 3000 and a remainder of 1096: (3000² + 1096²)/(2·4096²).
  EXPECT_DOUBLE_EQ(AttendedFraction(Causal(4096, 3000, true)),
                   (3000.0 * 3000.0 + 1096.0 * 1096.0) / (2.0 * 4096.0 * 4096.0));
  // A window as wide as the sequence is full causal attention, from both sides.
  EXPECT_EQ(AttendedFraction(Causal(4096, 4096)), 0.5);
  EXPECT_EQ(AttendedFraction(Causal(4096, 8192, true)), 0.5);
  EXPECT_DOUBLE_EQ(AttendedFraction(Causal(4096, 4095)),
                   (4095.0 * 4096 - 0.5 * 4095.0 * 4095.0) / (4096.0 * 4096.0));
  AttentionShape full = Causal(4096, 1024);
  full.causal = false;
  EXPECT_EQ(AttendedFraction(full), 1.0);
}

TEST(LocalAttention, GptOssAlternatesSlidingAndFullLayers) {
  Result<ModelSpec> m = LoadModel("gpt-oss-120b", LoadOptions{});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  GraphOptions o;
  o.seq_len = 8192;
  Result<OpGraph> g = BuildOpGraph(*m, o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  // Layer 0 slides, layer 1 attends to everything, and so on: two MoE kinds of 18 layers.
  const LayerOps& sliding = g->layer(0);
  const LayerOps& full = g->layer(1);
  EXPECT_EQ(sliding.kind, "moe (sliding window)");
  EXPECT_EQ(full.kind, "moe");
  int n_sliding = 0;
  for (int64_t i = 0; i < g->num_layers(); ++i) n_sliding += &g->layer(i) == &sliding ? 1 : 0;
  EXPECT_EQ(n_sliding, 18);
  const auto core = [](const LayerOps& l) {
    for (const Op& op : l.ops) {
      if (op.kind == OpKind::kAttention) return op;
    }
    return Op{};
  };
  const Op a = core(sliding), b = core(full);
  EXPECT_EQ(a.attention.window, 128);
  EXPECT_EQ(b.attention.window, 0);
  // Model FLOPs count the full square on both; the kernel runs the band: (128·8192 − 128²/2)/8192²
  // of it, against half.
  EXPECT_EQ(a.model_fwd_flops.value(), b.model_fwd_flops.value());
  const double band = (128.0 * 8192 - 0.5 * 128 * 128) / (8192.0 * 8192.0);
  EXPECT_DOUBLE_EQ(a.fwd.flops.value(), b.model_fwd_flops.value() * band);
  EXPECT_DOUBLE_EQ(b.fwd.flops.value(), b.model_fwd_flops.value() * 0.5);
  EXPECT_EQ(a.saved.value(), b.saved.value());  // Q, K, V either way
  // Priced on the B200: the band takes far less time than the full causal square, not 1/32
  // of it (its rows are 128 keys long, where the kernel's per-block work weighs), and from the
  // curve, not the measured table of full causal sequences.
  Result<HardwareSpec> hw = LoadHardware("b200", LoadOptions{});
  ASSERT_TRUE(hw.ok());
  OpCostModel cost(*hw);
  const OpCost ta =
      cost.Attention(a.attention, Pass::kForward, DType::kBf16, Bytes(0.0), MemClass::kNorm);
  const OpCost tb =
      cost.Attention(b.attention, Pass::kForward, DType::kBf16, Bytes(0.0), MemClass::kNorm);
  EXPECT_EQ(ta.source, CostSource::kAttentionFused);
  EXPECT_LT(ta.time.value(), 0.5 * tb.time.value());
  EXPECT_GT(ta.time.value(), tb.time.value() * 2.0 * band);
  // At a sequence the window covers there is nothing local: the layers are full causal ones.
  o.seq_len = 128;
  Result<OpGraph> short_seq = BuildOpGraph(*m, o);
  ASSERT_TRUE(short_seq.ok());
  EXPECT_EQ(short_seq->layer(0).kind, "moe");
  EXPECT_EQ(&short_seq->layer(0), &short_seq->layer(1));
}

// Two MoE kinds (sliding and full) hold one MoE layer's dispatch and combine buffers at a time,
// as one kind does: the budget takes the larger kind's, not their sum.
TEST(LocalAttention, MoeBuffersAreOneLayersWithTwoMoeKinds) {
  Result<ModelSpec> local = LoadModel("gpt-oss-120b", LoadOptions{});
  ASSERT_TRUE(local.ok());
  ModelSpec wide = *local;
  wide.local_attention_size = 1 << 20;  // wider than the sequence: one MoE kind
  TrainingSpec t;
  t.seq_len = 4096;
  t.global_batch = 64;
  ParallelSpec p;
  p.dp = 8;
  p.ep = 8;
  HardwareSpec h;
  h.name = "test";
  h.memory_capacity = 1e12;
  auto a = EstimateMemory(*local, t, p, h);
  auto b = EstimateMemory(wide, t, p, h);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString();
  EXPECT_GT(a->worst_stage().moe_buffers.value(), 0.0);
  EXPECT_EQ(a->worst_stage().moe_buffers.value(), b->worst_stage().moe_buffers.value());
  EXPECT_EQ(a->worst_stage().activations.value(), b->worst_stage().activations.value());
}

}  // namespace
}  // namespace shardsim
