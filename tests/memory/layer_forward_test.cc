// One decoder layer's forward tensor by tensor (sim/memory/layer_forward.h) on a Llama layer
// small enough to count by hand: 128 tokens, hidden 256, 4 query heads and 2 kv heads of 64
// (repeat_kv's n_rep = 2), SwiGLU width 512, bf16. Per tensor: the input x = T·h·2 = 64 KiB;
// q = 64 KiB, k = v = 32 KiB; SDPA's output 64 KiB and its fp32 logsumexp 4·4·128 = 2 KiB; w1,
// w3 and their product 128 KiB each; w2 64 KiB.
#include "sim/memory/layer_forward.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "sim/model/op_graph.h"
#include "sim/model/recompute.h"
#include "tests/model/test_models.h"

namespace shardsim {
namespace {

constexpr double kX = 128.0 * 256.0 * 2.0;  // 65,536
constexpr double kLse = 4.0 * 4.0 * 128.0;  // 2,048

LayerOps Layer(bool compiled) {
  GraphOptions o;
  o.seq_len = 128;
  o.micro_batch = 1;
  o.fused_kernels = compiled;
  auto g = BuildOpGraph(testing::Llama(2, 256, 4, 2, 512, 1000), o);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g->layer(0);
}

TrainingSpec Training(Recompute r, bool compiled) {
  TrainingSpec t;
  t.recompute = r;
  t.fused_kernels = compiled;
  return t;
}

struct Walk {
  double peak = 0.0;  // the most bytes alive at once besides the input
  double end = 0.0;   // alive after the layer besides the input
  double kept = 0.0;  // of `end`, what the checkpoint keeps (the input not counted)
};

Walk WalkOf(const LayerForward& f) {
  std::map<int, double> size;
  Walk w;
  double live = 0.0;
  for (const TensorEvent& e : f.events) {
    if (e.bytes > 0.0) {
      size[e.tensor] = e.bytes;
      live += e.bytes;
    } else {
      live -= size[e.tensor];
    }
    w.peak = std::max(w.peak, live);
  }
  w.end = live;
  for (const int t : f.kept) w.kept += size[t];
  return w;
}

// Eager op-level SAC keeps the 1st, 3rd, 5th, 7th mm (wq, wv, w1, w2) and SDPA's outputs; the
// peak is at the SwiGLU product: q, v, SDPA's two outputs, h (the first residual), w1, silu(w1),
// w3 and the product = 1 + 0.5 + 1 + 1 + 2 + 2 + 2 + 2 = 11.5 x + the logsumexp = 755,712 B.
TEST(LayerForward, EagerSelectiveOpsByHand) {
  const LayerOps layer = Layer(false);
  const LayerForward f =
      LayerForwardEvents(layer, Training(Recompute::kSelectiveOps, false), NormKind::kRmsNorm);
  const Walk w = WalkOf(f);
  const double kept = kX /*q*/ + kX / 2 /*v*/ + kX + kLse /*SDPA*/ + 2 * kX /*w1*/ + kX /*w2*/;
  EXPECT_DOUBLE_EQ(w.kept, kept);
  EXPECT_DOUBLE_EQ(w.end, kept + kX);  // and the layer output (the next layer's input)
  EXPECT_DOUBLE_EQ(w.peak, 11.5 * kX + kLse);
  EXPECT_DOUBLE_EQ(w.peak, 755712.0);
  // The kept tensors are the bytes OpSacKeptBytes counts (the input included there) + the
  // logsumexp it leaves out.
  EXPECT_DOUBLE_EQ(w.kept + kX, OpSacKeptBytes(layer, false).value() + kLse);
  EXPECT_EQ(f.kept.front(), 0);
}

// Compiled: no norm, RoPE or SwiGLU intermediates, and no w2 output kept (only the residual add
// reads it). The peak is still at the SwiGLU product, without silu's output: 9.5 x + lse.
TEST(LayerForward, CompiledSelectiveOpsByHand) {
  const LayerOps layer = Layer(true);
  const Walk w = WalkOf(
      LayerForwardEvents(layer, Training(Recompute::kSelectiveOps, true), NormKind::kRmsNorm));
  const double kept = kX + kX / 2 + kX + kLse + 2 * kX;
  EXPECT_DOUBLE_EQ(w.kept, kept);
  EXPECT_DOUBLE_EQ(w.end, kept + kX);
  EXPECT_DOUBLE_EQ(w.peak, 9.5 * kX + kLse);
  EXPECT_DOUBLE_EQ(w.kept + kX, OpSacKeptBytes(layer, true).value() + kLse);
}

// Full recompute keeps the input only; eager, the peak is RoPE's: q, k, v, four fp32 copies
// (2q + 2k + 2q + 2k) and the 16-bit rotations of q and k = 9.5 x, above the input. Without
// RoPE's and the norms' intermediates (compiled) the SwiGLU's w1, w3 and product are the peak.
TEST(LayerForward, FullRecomputeByHand) {
  const Walk eager = WalkOf(
      LayerForwardEvents(Layer(false), Training(Recompute::kFull, false), NormKind::kRmsNorm));
  EXPECT_DOUBLE_EQ(eager.kept, 0.0);
  EXPECT_DOUBLE_EQ(eager.end, kX);
  // SwiGLU: h, w1, silu, w3, product = 1 + 2 + 2 + 2 + 2 = 9 x; RoPE: q, k, v, 2q, 2k, 2q, 2k,
  // q, k = 1 + 0.5 + 0.5 + 2 + 1 + 2 + 1 + 1 + 0.5 = 9.5 x.
  EXPECT_DOUBLE_EQ(eager.peak, 9.5 * kX);
  const Walk compiled =
      WalkOf(LayerForwardEvents(Layer(true), Training(Recompute::kFull, true), NormKind::kRmsNorm));
  EXPECT_DOUBLE_EQ(compiled.end, kX);
  EXPECT_DOUBLE_EQ(compiled.peak, 7.0 * kX);  // h, w1, w3, product
}

// An eager RMSNorm holds x.float() with pow(2) or the fp32 product (4 x above its input) at its
// peak; LayerNorm is one kernel and holds only its output.
TEST(LayerForward, RmsNormIntermediates) {
  const LayerOps layer = Layer(false);
  const TrainingSpec t = Training(Recompute::kFull, false);
  const LayerForward rms = LayerForwardEvents(layer, t, NormKind::kRmsNorm);
  const LayerForward ln = LayerForwardEvents(layer, t, NormKind::kLayerNorm);
  // The norm's events come first: 2x, 2x, free, 2x, free, x, free, x (output), free.
  ASSERT_GE(rms.events.size(), 9u);
  EXPECT_DOUBLE_EQ(rms.events[0].bytes, 2.0 * kX);
  EXPECT_DOUBLE_EQ(rms.events[1].bytes, 2.0 * kX);
  EXPECT_DOUBLE_EQ(rms.events[2].bytes, 0.0);
  EXPECT_DOUBLE_EQ(ln.events[0].bytes, kX);  // the output, then wq's
  EXPECT_DOUBLE_EQ(ln.events[1].bytes, kX);
  EXPECT_EQ(rms.events.size(), ln.events.size() + 2 * 8);  // 8 more events per norm, two norms
  EXPECT_FALSE(CheckpointedForward(Training(Recompute::kNone, false)));
  EXPECT_TRUE(CheckpointedForward(t));
}

}  // namespace
}  // namespace shardsim
