#include "sim/model/op_graph.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/config/loader.h"
#include "sim/model/flops.h"
#include "sim/model/recompute.h"
#include "tests/model/test_models.h"

namespace shardsim {
namespace {

using testing::Gpt;
using testing::Llama;

// Per-layer saved activation bytes under a recompute mode (what Korthikanti's formulas count).
double LayerActivationBytes(const LayerOps& layer, Recompute r) {
  if (r == Recompute::kFull) return layer.input_bytes.value();
  const OpTotals t = Sum(layer.ops);
  const Bytes scores = t.dropped_by[static_cast<size_t>(RecomputeModule::kCoreAttn)];
  return (r == Recompute::kSelective ? t.saved - scores : t.saved).value();
}

TEST(OpGraph, MatmulFlopsAre2mnkPerPass) {
  GraphOptions o;
  o.seq_len = 2048;
  o.micro_batch = 4;
  auto g = BuildOpGraph(Gpt(2, 1024, 16), o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const Op& fc1 = g->layer(0).ops[6];
  ASSERT_EQ(fc1.name, "mlp.fc1");
  const double expected = 2.0 * 8192 * 4096 * 1024;
  EXPECT_EQ(fc1.matmul.m, 8192);
  EXPECT_EQ(fc1.matmul.n, 4096);
  EXPECT_EQ(fc1.matmul.k, 1024);
  EXPECT_DOUBLE_EQ(fc1.fwd.flops.value(), expected);
  EXPECT_DOUBLE_EQ(fc1.bwd_input.flops.value(), expected);
  EXPECT_DOUBLE_EQ(fc1.bwd_weight.flops.value(), expected);
}

// docs/reference.md §5: model FLOPs per step = 72·B·s·L·h²·(1 + s/(6h) + V/(12·h·L)) (Korthikanti
// 2022) and with full recompute 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)) (Narayanan 2021), for
// GPT-style layers, to 1e-9 relative.
TEST(Flops, OpLevelEqualsMegatronClosedForms) {
  struct Case {
    int64_t layers, hidden, heads, seq, batch, vocab;
  };
  for (const Case& c :
       {Case{96, 12288, 96, 2048, 1536, 51200}, Case{24, 2048, 16, 2048, 512, 50257},
        Case{48, 6144, 48, 4096, 64, 51200}, Case{105, 20480, 128, 2048, 2304, 51200}}) {
    const ModelSpec m = Gpt(c.layers, c.hidden, c.heads, c.vocab, c.seq);
    TrainingSpec t;
    t.seq_len = c.seq;
    t.global_batch = c.batch;
    t.recompute = Recompute::kNone;
    auto f = SummarizeFlops(m, t);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    const double d = static_cast<double>(c.batch);
    const double closed =
        MegatronModelFlops(d, static_cast<double>(c.seq), static_cast<double>(c.layers),
                           static_cast<double>(c.hidden), static_cast<double>(c.vocab));
    EXPECT_NEAR(f->model_per_step / closed, 1.0, 1e-9) << c.hidden;
    t.recompute = Recompute::kFull;
    auto full = SummarizeFlops(m, t);
    ASSERT_TRUE(full.ok());
    const double closed_full =
        MegatronFullRecomputeFlops(d, static_cast<double>(c.seq), static_cast<double>(c.layers),
                                   static_cast<double>(c.hidden), static_cast<double>(c.vocab));
    EXPECT_NEAR(full->hardware_per_step / closed_full, 1.0, 1e-9) << c.hidden;
    EXPECT_DOUBLE_EQ(full->model_per_step, f->model_per_step);  // MFU excludes recompute
  }
}

// PaLM's per-token model FLOPs 6N + 12·L·H·Q·T counts the same attention term.
TEST(Flops, AttentionTermMatchesPalm) {
  const ModelSpec m = Gpt(32, 4096, 32, 50000, 2048);
  TrainingSpec t;
  t.seq_len = 2048;
  t.global_batch = 1;
  auto f = SummarizeFlops(m, t);
  ASSERT_TRUE(f.ok());
  const double attention_per_token = 3.0 * f->fwd_attention;  // fwd + bwd
  EXPECT_NEAR(attention_per_token, PalmFlopsPerToken(0, 32, 32, 128, 2048), 1e-6);
}

struct ActCase {
  int64_t tp;
  bool sp;
  Recompute recompute;
  bool flash;
};

// Korthikanti 2022 §4 (arXiv 2205.05198), bytes per layer with 16-bit activations and dropout:
// no parallelism s·b·h·(34 + 5·a·s/h); TP s·b·h·(10 + 24/t + 5·a·s/(h·t)); TP+SP
// s·b·h/t·(34 + 5·a·s/h); selective recompute drops the 5·a·s/h term; full recompute keeps
// 2·s·b·h (/t with SP). Flash attention removes the 5·a·s/h term (docs/reference.md §5).
double Korthikanti(double s, double b, double h, double a, const ActCase& c) {
  const double t = static_cast<double>(c.tp);
  const double sbh = s * b * h;
  const double score = (c.flash || c.recompute == Recompute::kSelective) ? 0.0 : 5.0 * a * s / h;
  if (c.recompute == Recompute::kFull) return 2.0 * sbh / (c.sp ? t : 1.0);
  if (c.sp) return sbh / t * (34.0 + score);
  return sbh * (10.0 + 24.0 / t + score / t);
}

TEST(Activations, ReproduceKorthikantiForEveryCombination) {
  const int64_t s = 2048, b = 4, h = 6144, a = 48;
  const ModelSpec m = Gpt(4, h, a, 51200, s);
  int checked = 0;
  for (int64_t tp : {1, 2, 4, 8}) {
    for (bool sp : {false, true}) {
      for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
        for (bool flash : {false, true}) {
          GraphOptions o;
          o.seq_len = s;
          o.micro_batch = b;
          o.tp = tp;
          o.sequence_parallel = sp;
          o.flash_attention = flash;
          auto g = BuildOpGraph(m, o);
          ASSERT_TRUE(g.ok()) << g.status().ToString();
          const ActCase c{tp, sp && tp > 1, r, flash};
          const double expected = Korthikanti(s, b, h, a, c);
          EXPECT_DOUBLE_EQ(LayerActivationBytes(g->layer(0), r), expected)
              << "tp=" << tp << " sp=" << sp << " recompute=" << Name(r) << " flash=" << flash;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 48);
}

// Without dropout there are no masks: 34 - 2 (two 1-byte hidden masks) and 5as/h -> 2as/h.
TEST(Activations, NoDropoutDropsTheMasks) {
  ModelSpec m = Gpt(2, 2048, 16);
  m.dropout = 0.0;
  GraphOptions o;
  o.seq_len = 2048;
  o.micro_batch = 1;
  o.flash_attention = false;
  auto g = BuildOpGraph(m, o);
  ASSERT_TRUE(g.ok());
  const double sbh = 2048.0 * 2048.0;
  EXPECT_DOUBLE_EQ(Sum(g->layer(0).ops).saved.value(), sbh * (32.0 + 2.0 * 16 * 2048 / 2048.0));
}

// Eager PyTorch without a fused attention kernel runs SDPA's math backend in fp32 (attention.cpp
// upcasts 16-bit inputs): the core keeps fp32 Q, K, V (4 B x 3 s·b·h) and, per score element,
// the fp32 softmax (4 B), the dropout mask (1 B) and the fp32 dropout output (4 B); without
// dropout only the softmax. Megatron's fused path (fused_kernels) keeps 2 + 1 + 2 and 2 B Q, K, V.
TEST(Activations, MathAttentionKeepsFp32Scores) {
  GraphOptions o;
  o.seq_len = 1024;
  o.micro_batch = 2;
  o.flash_attention = false;
  o.fused_kernels = false;
  auto core_saved = [&](const ModelSpec& m, const GraphOptions& opts) {
    auto g = BuildOpGraph(m, opts);
    EXPECT_TRUE(g.ok());
    for (const Op& op : g->layer(0).ops) {
      if (op.kind == OpKind::kAttention) return op.saved.value();
    }
    return 0.0;
  };
  ModelSpec m = Gpt(2, 1024, 8);
  m.dropout = 0.1;
  const double sbh = 1024.0 * 2.0 * 1024.0, scores = 8.0 * 1024.0 * 1024.0 * 2.0;
  EXPECT_DOUBLE_EQ(core_saved(m, o), 4.0 * 3.0 * sbh + 9.0 * scores);
  m.dropout = 0.0;
  EXPECT_DOUBLE_EQ(core_saved(m, o), 4.0 * 3.0 * sbh + 4.0 * scores);
  m.dropout = 0.1;
  o.fused_kernels = true;
  EXPECT_DOUBLE_EQ(core_saved(m, o), 2.0 * 3.0 * sbh + 5.0 * scores);
}

// The Llama 3 8B-shaped layer of the hand-derived tests below: 2 sequences of 4,096 tokens.
GraphOptions LlamaOptions() {
  GraphOptions o;
  o.seq_len = 4096;
  o.micro_batch = 2;
  return o;
}
ModelSpec LlamaByHand() { return Llama(2, 4096, 32, 8, 14336, 128256); }

// The saved tensors of a Llama layer with a fused SwiGLU, GQA and no dropout, derived by hand:
// ln1 in (2h) + qkv in (2h) + Q (2h) + K,V (2·2·h·kv/n) + context (2h) + ln2 in (2h) + fc1 in (2h)
// + gate/up (2·2f) + fc2 in (2f) bytes per token.
TEST(Activations, LlamaLayerByHand) {
  const ModelSpec m = LlamaByHand();
  GraphOptions o = LlamaOptions();
  auto g = BuildOpGraph(m, o);
  ASSERT_TRUE(g.ok());
  const double tokens = 8192, h = 4096, f = 14336;
  const double per_token =
      2 * h + 2 * h + 2 * h + 2 * 2 * h * 8 / 32 + 2 * h + 2 * h + 2 * h + 2 * 2 * f + 2 * f;
  EXPECT_DOUBLE_EQ(Sum(g->layer(0).ops).saved.value(), tokens * per_token);
  o.fused_kernels = false;  // eager SwiGLU keeps one more f-wide tensor
  auto eager = BuildOpGraph(m, o);
  ASSERT_TRUE(eager.ok());
  EXPECT_DOUBLE_EQ(Sum(eager->layer(0).ops).saved.value(), tokens * (per_token + 2 * f));
}

// Megatron-Core's recompute modules, by hand on the Llama layer above: `layernorm` re-runs the
// norms, so q/k/v and fc1 no longer keep the norm outputs (2h each per token).
TEST(Activations, LayernormRecomputeDropsTheNormOutputs) {
  auto g = BuildOpGraph(LlamaByHand(), LlamaOptions());
  ASSERT_TRUE(g.ok());
  TrainingSpec t;
  t.recompute = Recompute::kSelective;
  const double all = Sum(g->layer(0).ops).saved.value();
  EXPECT_DOUBLE_EQ(shardsim::LayerActivationBytes(g->layer(0), t).value(), all);  // flash: none
  t.recompute_modules |= ModuleBit(RecomputeModule::kLayernorm);
  EXPECT_DOUBLE_EQ(shardsim::LayerActivationBytes(g->layer(0), t).value(),
                   all - 8192.0 * (2 * 4096 + 2 * 4096));
  int norms = 0;
  for (const Op& op : g->layer(0).ops) {
    int64_t mm_calls = 0;
    if (RecomputedShare(t, op, &mm_calls) == 1.0 && op.kind == OpKind::kNorm) ++norms;
  }
  EXPECT_EQ(norms, 2);
}

// DeepSeek-V3 §3.3.3 under fp8 training: the fp8 matmuls keep 1-byte copies of their inputs
// (1.5 bytes, E5M6, for the attention output projection's); norms and the core stay bf16.
TEST(Activations, Fp8SavedLinearInputsByHand) {
  const ModelSpec m = LlamaByHand();
  GraphOptions o = LlamaOptions();
  o.precision = DType::kFp8;
  o.fp8_saved_activations = true;
  auto g = BuildOpGraph(m, o);
  ASSERT_TRUE(g.ok());
  const double tokens = 8192, h = 4096, f = 14336;
  // ln1 in (2h) + qkv in (1h) + Q (2h) + K,V (2·2·h/4) + context (1.5h) + ln2 in (2h) + fc1 in
  // (1h) + gate/up (2·2f, a dense SwiGLU) + fc2 in (1f).
  const double per_token =
      2 * h + h + 2 * h + 2 * 2 * h * 8 / 32 + 1.5 * h + 2 * h + h + 2 * 2 * f + f;
  EXPECT_DOUBLE_EQ(Sum(g->layer(0).ops).saved.value(), tokens * per_token);
}

// Transformer Engine's linears under a quantized precision (GraphOptions::te_linears, Megatron-
// Core and NeMo): each linear keeps its quantized columnwise input (1 byte per element for fp8,
// 1 + 1/32 for mxfp8), the output projection that copy beside the bf16 context the attention core
// keeps, and the output layer runs in bf16. Without them (torchtitan's torchao) the inputs stay
// bf16 and the output layer is quantized too. The Llama layer of LlamaLayerByHand.
TEST(Activations, TransformerEngineKeepsQuantizedInputsByHand) {
  const ModelSpec m = LlamaByHand();
  const double tokens = 8192, h = 4096, f = 14336;
  for (DType q : {DType::kFp8, DType::kMxfp8}) {
    GraphOptions o = LlamaOptions();
    o.precision = q;
    o.te_linears = true;
    auto g = BuildOpGraph(m, o);
    ASSERT_TRUE(g.ok());
    const double e = q == DType::kFp8 ? 1.0 : 1.0 + 1.0 / 32.0;
    // ln1 in (2h) + qkv in (e·h) + Q (2h) + K,V (2·2·h/4) + context (2h + e·h) + ln2 in (2h) +
    // fc1 in (e·h) + gate/up (2·2f) + fc2 in (e·f).
    const double per_token = 2 * h + e * h + 2 * h + 2 * 2 * h * 8 / 32 + (2 + e) * h + 2 * h +
                             e * h + 2 * 2 * f + e * f;
    EXPECT_DOUBLE_EQ(Sum(g->layer(0).ops).saved.value(), tokens * per_token) << Name(q);
    // Recomputing the core drops the bf16 context it kept; the projection's copy stays.
    for (const Op& op : g->layer(0).ops) {
      if (op.name != "attn.out") continue;
      EXPECT_DOUBLE_EQ(op.dropped_by[static_cast<size_t>(RecomputeModule::kCoreAttn)].value(),
                       tokens * 2 * h);
    }
    int heads = 0;
    for (const Op& op : g->head) {
      if (op.kind != OpKind::kMatmul) continue;
      EXPECT_EQ(op.dtype, DType::kBf16) << Name(q);
      ++heads;
    }
    EXPECT_EQ(heads, 1);
    o.te_linears = false;
    auto titan = BuildOpGraph(m, o);
    ASSERT_TRUE(titan.ok());
    const double bf16_inputs =
        2 * h + 2 * h + 2 * h + 2 * 2 * h * 8 / 32 + 2 * h + 2 * h + 2 * h + 2 * 2 * f + 2 * f;
    EXPECT_DOUBLE_EQ(Sum(titan->layer(0).ops).saved.value(), tokens * bf16_inputs) << Name(q);
    for (const Op& op : titan->head) {
      if (op.kind == OpKind::kMatmul) {
        EXPECT_EQ(op.dtype, q) << Name(q);
      }
    }
  }
}

// moe_probs_in_expert (Megatron-Core's weighted SwiGLU): the combine keeps the fp32 probability
// of each routed copy (T·k of them, 4 bytes) instead of the expert outputs (T·k x h in bf16);
// nothing else changes. DeepSeek-V3's MoE layer, 4096 tokens, top-8.
TEST(Activations, ProbabilitiesInTheExpertDropTheCombinesExpertOutputs) {
  Result<ModelSpec> m = ImportHfConfig("tests/data/hf/deepseek-v3.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  GraphOptions o;
  o.seq_len = 4096;
  o.micro_batch = 1;
  auto plain = BuildOpGraph(*m, o);
  o.moe_probs_in_expert = true;
  auto in_expert = BuildOpGraph(*m, o);
  ASSERT_TRUE(plain.ok() && in_expert.ok());
  const double rows = 4096.0 * 8, h = 7168;
  const auto combine = [](const OpGraph& g) {
    for (const Op& op : g.layer(g.num_layers() - 1).ops) {
      if (op.name == "moe.combine") return op.saved.value();
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(combine(*plain), rows * h * 2);
  EXPECT_DOUBLE_EQ(combine(*in_expert), rows * 4);
  const LayerOps& a = plain->layer(plain->num_layers() - 1);
  const LayerOps& b = in_expert->layer(in_expert->num_layers() - 1);
  EXPECT_DOUBLE_EQ(Sum(a.ops).saved.value() - Sum(b.ops).saved.value(), rows * (2 * h - 4));
  EXPECT_DOUBLE_EQ(Sum(a.ops).fwd_flops.value(), Sum(b.ops).fwd_flops.value());
}

// What a deferred W holds (WeightGradHeldBytes): every weighted matmul's input A[m x k] and
// output gradient dC[m x n]; both in fp8 under DeepSeek-V3's FP8 caching (its Wgrad GEMM reads
// both in FP8, Figure 6), else in bf16. The Llama layer by hand: q, k, v, o, gate/up, down.
TEST(Activations, WeightGradHeldBytesByHand) {
  auto g = BuildOpGraph(LlamaByHand(), LlamaOptions());
  ASSERT_TRUE(g.ok());
  const double tokens = 8192, h = 4096, f = 14336, kv = 4096.0 * 8 / 32;
  // (k + n) per token of each matmul: qkv (h, h + 2kv), o (h, h), fc1 (h, 2f), fc2 (f, h).
  const double elements = tokens * ((h + h + 2 * kv) + (h + h) + (h + 2 * f) + (f + h));
  TrainingSpec t;
  EXPECT_DOUBLE_EQ(WeightGradHeldBytes(g->layer(0).ops, t, 1).value(), 2 * elements);
  t.precision = DType::kFp8;
  t.fp8_saved_activations = true;
  EXPECT_DOUBLE_EQ(WeightGradHeldBytes(g->layer(0).ops, t, 1).value(), elements);
}

// DeepSeek-V3's own recompute (§3.2.3) on one of its MoE layers (ep 1, 4096 tokens): norms and
// MLA up-projections re-run, the routed experts' SwiGLU too; what each drops, by hand.
TEST(Activations, DeepSeekRecomputeModulesByHand) {
  Result<ModelSpec> m = ImportHfConfig("tests/data/hf/deepseek-v3.json");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  GraphOptions o;
  o.seq_len = 4096;
  o.micro_batch = 1;
  auto g = BuildOpGraph(*m, o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const LayerOps& moe = g->layer(g->num_layers() - 1);
  ASSERT_EQ(moe.kind, "moe");
  const double T = 4096, h = 7168, heads = 128;
  const double rows = T * 8;  // top-8, balanced
  TrainingSpec t;
  t.recompute = Recompute::kSelective;
  const double all = shardsim::LayerActivationBytes(moe, t).value();
  t.recompute_modules =
      ModuleBit(RecomputeModule::kCoreAttn) | ModuleBit(RecomputeModule::kLayernorm);
  // q_down's and the router's norm outputs; the latent query and latent kv the up-projections keep.
  const double norms = 2 * T * h + 2 * T * h + 2 * T * 1536 + 2 * T * 512;
  EXPECT_DOUBLE_EQ(shardsim::LayerActivationBytes(moe, t).value(), all - norms);
  t.recompute_modules |= ModuleBit(RecomputeModule::kMlaUpProj);
  const double qkv = 2 * T * heads * 192 + 2 * T * heads * (192 + 128);
  EXPECT_DOUBLE_EQ(shardsim::LayerActivationBytes(moe, t).value(), all - norms - qkv);
  t.recompute_modules |= ModuleBit(RecomputeModule::kMoeAct);
  const double act_out = 2 * rows * 2048;
  EXPECT_DOUBLE_EQ(shardsim::LayerActivationBytes(moe, t).value(), all - norms - qkv - act_out);
}

// Qwen2-MoE's shared-expert gate: one Linear h -> 1 per MoE layer, 2·T·h FLOPs forward (T tokens
// of the micro-batch), replicated like the router.
TEST(OpGraph, SharedExpertGateIsAnHByOneMatmul) {
  ModelSpec m = Llama(2, 4096, 32, 32, 11008, 151936);
  m.moe = MoeSpec{};
  m.moe->num_experts = 64;
  m.moe->top_k = 8;
  m.moe->expert_ffn_hidden_size = 1408;
  m.moe->num_shared_experts = 1;
  m.moe->shared_expert_ffn_hidden_size = 5632;
  m.moe->shared_expert_gate = true;
  GraphOptions o;
  o.seq_len = 4096;
  o.micro_batch = 2;
  auto g = BuildOpGraph(m, o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const LayerOps& moe = g->layer(1);
  ASSERT_EQ(moe.kind, "moe");
  const Op* gate = nullptr;
  for (const Op& op : moe.ops) {
    if (op.name == "moe.shared_gate") gate = &op;
  }
  ASSERT_NE(gate, nullptr);
  EXPECT_EQ(gate->params, 4096);
  EXPECT_EQ(gate->tp_split, TpSplit::kReplicated);
  EXPECT_DOUBLE_EQ(gate->fwd.flops.value(), 2.0 * 8192 * 4096);
  EXPECT_DOUBLE_EQ(gate->model_fwd_flops.value(), 2.0 * 8192 * 4096);
  m.moe->shared_expert_gate = false;
  auto ungated = BuildOpGraph(m, o);
  ASSERT_TRUE(ungated.ok());
  EXPECT_EQ(Sum(g->layer(1).ops).params - Sum(ungated->layer(1).ops).params, 4096);
}

// Property: tensor parallelism splits the matmul and attention work exactly; the sum over the
// TP group of per-device FLOPs equals the unsharded FLOPs.
TEST(OpGraph, ShardingConservesFlops) {
  const ModelSpec m = Llama(2, 8192, 64, 8, 28672, 128256);
  GraphOptions o;
  o.seq_len = 8192;
  o.micro_batch = 1;
  auto whole = BuildOpGraph(m, o);
  ASSERT_TRUE(whole.ok());
  for (int64_t tp : {2, 4, 8}) {
    for (int64_t cp : {1, 2, 4}) {
      GraphOptions s = o;
      s.tp = tp;
      s.cp = cp;
      s.sequence_parallel = true;
      auto part = BuildOpGraph(m, s);
      ASSERT_TRUE(part.ok());
      const double n = static_cast<double>(tp * cp);
      const OpTotals a = Sum(whole->layer(0).ops);
      const OpTotals b = Sum(part->layer(0).ops);
      EXPECT_NEAR(b.model_fwd_flops.value() * n / a.model_fwd_flops.value(), 1.0, 1e-12);
      const OpTotals ha = Sum(whole->head);
      const OpTotals hb = Sum(part->head);
      EXPECT_NEAR(hb.model_fwd_flops.value() * n / ha.model_fwd_flops.value(), 1.0, 1e-12);
    }
  }
}

TEST(OpGraph, RejectsSlicingThatDoesNotDivide) {
  GraphOptions o;
  o.seq_len = 2048;
  o.tp = 3;
  auto g = BuildOpGraph(Gpt(2, 1536, 16), o);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), "num_heads (16) is not divisible by 3");
}

}  // namespace
}  // namespace shardsim

namespace shardsim {
namespace {

// Transformer Engine's block-scaled recipes, by hand on the fc1 of a GPT layer (8192 tokens,
// h 1024, f 4096): its quantize op reads the bf16 input and writes the rowwise and columnwise
// copies with their scales (mxfp8: 2 x (1 + 1/32) bytes per element, one kernel; nvfp4: an amax
// pass reads it again, 2 x (0.5 + 1/16), two kernels); the GEMM reads quantized operands; the
// attention core stays bf16 (op_graph.cc AddQuantizeCasts, docs/hardware.md).
TEST(OpGraph, BlockScaledQuantizeKernelsByHand) {
  const double tokens = 8192, h = 1024, f = 4096;
  for (DType q : {DType::kMxfp8, DType::kNvfp4}) {
    GraphOptions o;
    o.seq_len = 2048;
    o.micro_batch = 4;
    o.precision = q;
    auto g = BuildOpGraph(testing::Gpt(2, 1024, 16), o);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    const double scaled = q == DType::kMxfp8 ? 1.0 + 1.0 / 32.0 : 0.5 + 1.0 / 16.0;
    const double read = q == DType::kMxfp8 ? 2.0 : 4.0;
    const Op* cast = nullptr;
    const Op* fc1 = nullptr;
    for (const Op& op : g->layer(0).ops) {
      if (op.name == std::string("mlp.fc1.") + Name(q) + "_quantize") cast = &op;
      if (op.name == "mlp.fc1") fc1 = &op;
      if (op.kind == OpKind::kAttention) {
        EXPECT_EQ(op.dtype, DType::kBf16) << Name(q);
      }
    }
    ASSERT_NE(cast, nullptr) << Name(q);
    ASSERT_NE(fc1, nullptr) << Name(q);
    EXPECT_EQ(fc1->dtype, q);
    EXPECT_EQ(cast->kernels, q == DType::kMxfp8 ? 1 : 2);
    EXPECT_DOUBLE_EQ(cast->fwd.bytes.value(), (read + 2.0 * scaled) * tokens * h) << Name(q);
    EXPECT_DOUBLE_EQ(cast->bwd_input.bytes.value(), (read + 2.0 * scaled) * tokens * f) << Name(q);
    // Forward GEMM: quantized input and weight, bf16 output.
    EXPECT_DOUBLE_EQ(fc1->fwd.bytes.value(),
                     scaled * tokens * h + scaled * h * f + 2.0 * tokens * f)
        << Name(q);
  }
}

}  // namespace
}  // namespace shardsim
