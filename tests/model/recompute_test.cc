// recompute selective_ops (torchtitan's op-level SAC), eager and compiled, against what the policy
// keeps of a Llama 3 8B layer derived by hand from torchtitan's modules.
#include "sim/model/recompute.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/model/op_graph.h"
#include "test_models.h"

namespace shardsim {
namespace {

using testing::Llama;

// Llama 3 8B's layer (h 4096, 32 q heads, 8 kv heads of 128, f 14336), 2 x 4,096 tokens.
// torchtitan's block runs seven aten.mm calls in forward order: wq (h wide), wk (kv = 1024),
// wv (kv), wo (h), w1 (f), w3 (f), w2 (h). The policy saves the outputs of the 1st, 3rd, 5th and
// 7th (wq, wv, w1, w2) with SDPA's output and the block input, 2 bytes per element:
//   eager    (h + kv + f + h) + h + h per token;
//   compiled w2's output feeds only the residual add, so it is not saved: (h + kv + f) + h + h.
TEST(OpSac, LlamaLayerByHand) {
  GraphOptions o;
  o.seq_len = 4096;
  o.micro_batch = 2;
  const ModelSpec m = Llama(2, 4096, 32, 8, 14336, 128256);
  auto g = BuildOpGraph(m, o);
  ASSERT_TRUE(g.ok());
  const double tokens = 8192, h = 4096, kv = 1024, f = 14336;
  EXPECT_DOUBLE_EQ(OpSacKeptBytes(g->layer(0), false).value(),
                   2.0 * tokens * ((h + kv + f + h) + h + h));
  EXPECT_DOUBLE_EQ(OpSacKeptBytes(g->layer(0), true).value(),
                   2.0 * tokens * ((h + kv + f) + h + h));
  // The difference is the block's last mm output (h wide), one per layer.
  EXPECT_DOUBLE_EQ((OpSacKeptBytes(g->layer(0), false) - OpSacKeptBytes(g->layer(0), true)).value(),
                   2.0 * tokens * h);
  // fp8 GEMMs add a cast before each matmul (AddQuantizeCasts); the mm calls and what they keep
  // stay the same.
  GraphOptions fp8 = o;
  fp8.precision = DType::kFp8;
  auto g8 = BuildOpGraph(m, fp8);
  ASSERT_TRUE(g8.ok());
  EXPECT_DOUBLE_EQ(OpSacKeptBytes(g8->layer(0), true).value(),
                   OpSacKeptBytes(g->layer(0), true).value());
  EXPECT_DOUBLE_EQ(OpSacKeptBytes(g8->layer(0), false).value(),
                   OpSacKeptBytes(g->layer(0), false).value());
  // LayerActivationBytes reads the compile state from training.fused_kernels.
  TrainingSpec t;
  t.recompute = Recompute::kSelectiveOps;
  t.fused_kernels = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(g->layer(0), t).value(),
                   OpSacKeptBytes(g->layer(0), true).value());
  t.fused_kernels = false;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(g->layer(0), t).value(),
                   OpSacKeptBytes(g->layer(0), false).value());
}

// What the backward re-runs under the same policy is the complement: of the seven calls, wk, wo
// and w3 (the 2nd, 4th and 6th). On shardsim's fused ops that is kv / (h + 2 kv) of qkv, all of
// attn.out, half of the gated fc1 and none of fc2; norms and pointwise ops re-run whole, SDPA
// does not. Under the other modes a matmul re-runs whole or not at all.
TEST(OpSac, RecomputedSharesByHand) {
  GraphOptions o;
  o.seq_len = 4096;
  o.micro_batch = 2;
  auto g = BuildOpGraph(Llama(2, 4096, 32, 8, 14336, 128256), o);
  ASSERT_TRUE(g.ok());
  TrainingSpec t;
  t.recompute = Recompute::kSelectiveOps;
  std::vector<double> matmuls;
  int64_t calls = 0;
  for (const Op& op : g->layer(0).ops) {
    const double share = RecomputedShare(t, op, &calls);
    if (op.kind == OpKind::kMatmul) {
      matmuls.push_back(share);
    } else if (op.kind == OpKind::kAttention) {
      EXPECT_EQ(share, 0.0);
    } else if (op.kind == OpKind::kNorm) {
      EXPECT_EQ(share, 1.0);
    }
  }
  EXPECT_EQ(calls, 7);
  ASSERT_EQ(matmuls.size(), 4u);  // qkv, out, fc1, fc2
  EXPECT_DOUBLE_EQ(matmuls[0], 1024.0 / 6144.0);
  EXPECT_DOUBLE_EQ(matmuls[1], 1.0);
  EXPECT_DOUBLE_EQ(matmuls[2], 0.5);
  EXPECT_DOUBLE_EQ(matmuls[3], 0.0);
  for (const Recompute mode : {Recompute::kNone, Recompute::kFull}) {
    t.recompute = mode;
    int64_t unused = 0;
    for (const Op& op : g->layer(0).ops) {
      EXPECT_EQ(RecomputedShare(t, op, &unused), mode == Recompute::kFull ? 1.0 : 0.0);
    }
  }
}

// Without gating (GELU MLP: fc1, fc2) and with MHA the block runs six mm calls: q, k, v, out, fc1,
// fc2; the 1st, 3rd and 5th are q, v and fc1 (4h wide). None of them feeds a residual add, so
// eager and compiled keep the same.
TEST(OpSac, UngatedMhaLayer) {
  GraphOptions o;
  o.seq_len = 2048;
  o.micro_batch = 1;
  ModelSpec m = Llama(2, 2048, 16, 16, 8192, 32000);
  m.activation = Activation::kGelu;
  auto g = BuildOpGraph(m, o);
  ASSERT_TRUE(g.ok());
  const double tokens = 2048, h = 2048, f = 8192;
  const double expected = 2.0 * tokens * ((h + h + f) + h + h);
  EXPECT_DOUBLE_EQ(OpSacKeptBytes(g->layer(0), false).value(), expected);
  EXPECT_DOUBLE_EQ(OpSacKeptBytes(g->layer(0), true).value(), expected);
}

// The separate framework calls are a field of the op, set where the layer is built
// (Op::framework_calls): q/k/v as q_heads : kv : kv of its output (Llama 3 8B: 4096 : 1024 : 1024
// of 6144), a gated fc1 as gate and up (half each); the other matmuls are one call each.
TEST(OpSac, FrameworkCallsAreSetWhereTheOpsAreBuilt) {
  GraphOptions o;
  o.seq_len = 1024;
  const ModelSpec m = Llama(2, 4096, 32, 8, 14336, 128256);
  auto g = BuildOpGraph(m, o);
  ASSERT_TRUE(g.ok());
  int listed = 0;
  for (const Op& op : g->layer(0).ops) {
    if (op.name == "attn.qkv") {
      ASSERT_EQ(op.framework_calls.size(), 3u);
      EXPECT_DOUBLE_EQ(op.framework_calls[0], 4096.0 / 6144.0);
      EXPECT_DOUBLE_EQ(op.framework_calls[1], 1024.0 / 6144.0);
      EXPECT_DOUBLE_EQ(op.framework_calls[2], 1024.0 / 6144.0);
      ++listed;
    } else if (op.name == "mlp.fc1") {
      EXPECT_EQ(op.framework_calls, (std::vector<double>{0.5, 0.5}));
      ++listed;
    } else {
      EXPECT_TRUE(op.framework_calls.empty()) << op.name;
    }
  }
  EXPECT_EQ(listed, 2);
  // The policy counts the field, not the names: an op renamed keeps its calls, and a layer whose
  // q/k/v is one call (the field cleared) shifts the odd calls: q/k/v (6144 wide), out, w1, w3,
  // w2 -> the 1st, 3rd and 5th are q/k/v, w1 and w2 (eager).
  LayerOps layer = g->layer(0);
  for (Op& op : layer.ops) op.name = "renamed";
  EXPECT_DOUBLE_EQ(OpSacKeptBytes(layer, false).value(),
                   OpSacKeptBytes(g->layer(0), false).value());
  for (Op& op : layer.ops) {
    if (op.framework_calls.size() == 3) op.framework_calls.clear();
  }
  const double tokens = 1024, h = 4096, f = 14336;
  EXPECT_DOUBLE_EQ(OpSacKeptBytes(layer, false).value(), 2.0 * tokens * ((6144.0 + f + h) + h + h));
}

}  // namespace
}  // namespace shardsim
