#include "sim/memory/budget.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/model/flops.h"
#include "tests/memory/h200_rows.h"
#include "tests/model/test_models.h"

namespace shardsim {
namespace {

// ZeRO paper Figure 1 (arXiv 1910.02054): Ψ = 7.5B, Nd = 64, K = 12, fp16 weights and
// gradients: 120 / 31.4 / 16.6 / 1.9 GB for stages 0-3 (tests/reference/memory.yaml).
TEST(ZeroModelStates, ZeroPaperFigure1) {
  const double gb = 1e9;
  const double expected[4] = {120.0, 31.4, 16.6, 1.875};
  for (int stage = 0; stage <= 3; ++stage) {
    const ModelStateBytes s = ZeroModelStates(7.5e9, 2, 2, 12, stage, 64);
    const double total = (s.weights + s.gradients + s.optimizer).value() / gb;
    EXPECT_NEAR(total, expected[stage], 0.05) << "stage " << stage;
  }
}

// ZeRO paper Table 1 cells (tests/reference/memory.yaml table1_bold_cells).
TEST(ZeroModelStates, ZeroPaperTable1) {
  auto total = [](double psi, double nd, int stage) {
    const ModelStateBytes s = ZeroModelStates(psi, 2, 2, 12, stage, nd);
    return (s.weights + s.gradients + s.optimizer).value() / 1e9;
  };
  EXPECT_NEAR(total(7.5e9, 16, 2), 21.6, 0.05);
  EXPECT_NEAR(total(7.5e9, 4, 3), 30.0, 0.05);
  EXPECT_NEAR(total(128e9, 64, 3), 32.0, 0.05);
  EXPECT_NEAR(total(1e12, 1024, 3), 15.6, 0.05);
}

// Megatron-LM (docs/source/api-guide/distrib_optimizer.md): 18 bytes per parameter with bf16
// weights, fp32 gradients and Adam; the distributed optimizer brings it to 6 + 12/d.
TEST(ZeroModelStates, MegatronBytesPerParameter) {
  const ModelStateBytes plain = ZeroModelStates(1.0, 2, 4, 12, 0, 8);
  EXPECT_DOUBLE_EQ((plain.weights + plain.gradients + plain.optimizer).value(), 18.0);
  for (double d : {2.0, 8.0, 64.0}) {
    const ModelStateBytes s = ZeroModelStates(1.0, 2, 4, 12, 1, d);
    EXPECT_DOUBLE_EQ((s.weights + s.gradients + s.optimizer).value(), 6.0 + 12.0 / d);
  }
}

// DeepSeek-V3 §3.3.3 keeps Adam's m and v in bf16: 2 + 2 bytes plus the fp32 master copy = 8
// bytes per parameter instead of 12.
TEST(ZeroModelStates, Bf16OptimizerMoments) {
  const ModelSpec m = testing::Llama(2, 1024, 8, 8, 4096, 32000);
  TrainingSpec t;
  t.seq_len = 1024;
  t.global_batch = 1;
  ParallelSpec p;
  HardwareSpec hw;
  hw.memory_capacity = 80e9;
  auto fp32 = EstimateMemory(m, t, p, hw);
  ASSERT_TRUE(fp32.ok()) << fp32.status().ToString();
  EXPECT_DOUBLE_EQ(fp32->optimizer_bytes_per_param, 12.0);
  t.optimizer_state_dtype = DType::kBf16;
  auto bf16 = EstimateMemory(m, t, p, hw);
  ASSERT_TRUE(bf16.ok()) << bf16.status().ToString();
  EXPECT_DOUBLE_EQ(bf16->optimizer_bytes_per_param, 8.0);
  EXPECT_DOUBLE_EQ(bf16->worst_stage().optimizer.value() * 12.0,
                   fp32->worst_stage().optimizer.value() * 8.0);
}

TEST(InFlight, SchedulesHoldTheRightMicrobatches) {
  // GPipe holds all m; 1F1B holds min(p - i, m) on stage i.
  EXPECT_DOUBLE_EQ(InFlightMicrobatches(PipelineSchedule::kGpipe, 4, 1, 16, 0), 16.0);
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_DOUBLE_EQ(InFlightMicrobatches(PipelineSchedule::k1F1B, 8, 1, 32, i),
                     8.0 - static_cast<double>(i));
  }
  EXPECT_DOUBLE_EQ(InFlightMicrobatches(PipelineSchedule::k1F1B, 8, 1, 3, 0), 3.0);
  // Interleaved: the first stage holds p·(1 + (p−1)/(p·v)) (Korthikanti 2022 §4.2.3).
  for (int64_t p : {2, 4, 8, 16}) {
    for (int64_t v : {2, 3, 4}) {
      const double pd = static_cast<double>(p), vd = static_cast<double>(v);
      EXPECT_DOUBLE_EQ(InFlightMicrobatches(PipelineSchedule::kInterleaved1F1B, p, v, 64, 0),
                       pd * (1.0 + (pd - 1.0) / (pd * vd)));
      // Groups of N micro-batches per chunk (Megatron's microbatch_group_size_per_vp_stage):
      // rank r warms up (p - r - 1)·2 + (v - 1)·N chunk-forwards, and holds one more.
      for (int64_t n : {p, 2 * p, int64_t{32}}) {
        for (int64_t r : {int64_t{0}, p - 1}) {
          const double warm =
              2.0 * static_cast<double>(p - r - 1) + (vd - 1.0) * static_cast<double>(n);
          EXPECT_DOUBLE_EQ(InFlightMicrobatches(PipelineSchedule::kInterleaved1F1B, p, v, 64, r, n),
                           std::min(warm + 1.0, 64.0 * vd) / vd)
              << p << " " << v << " " << n << " " << r;
        }
      }
    }
  }
}

// Transformer Engine's parallel cross-entropy (training.cross_entropy_fusion_impl: te) against
// the native one, by hand: the native keeps the fp32 softmax (4 bytes a logit) and allocates the
// fp32 gradient and its 16-bit copy in backward (6 bytes); TE keeps the 16-bit logits with their
// gradient written in (2 bytes) and allocates nothing.
TEST(Budget, TransformerEngineCrossEntropyByHand) {
  const ModelSpec m = testing::Gpt(2, 1024, 8, 50000, 2048);
  TrainingSpec t;
  t.seq_len = 2048;
  t.global_batch = 8;
  t.micro_batch = 2;
  t.precision = DType::kBf16;
  ParallelSpec p;
  HardwareSpec h;
  h.name = "test";
  h.memory_capacity = 1e12;
  auto native = EstimateMemory(m, t, p, h);
  t.cross_entropy_impl = CrossEntropyImpl::kTe;
  auto te = EstimateMemory(m, t, p, h);
  ASSERT_TRUE(native.ok() && te.ok());
  const double logits = 2.0 * 2048 * 50000;  // micro-batch x sequence x vocabulary
  EXPECT_DOUBLE_EQ(native->worst_stage().loss_buffers.value(), 6.0 * logits);
  EXPECT_DOUBLE_EQ(te->worst_stage().loss_buffers.value(), 0.0);
  EXPECT_DOUBLE_EQ(
      native->worst_stage().activations.value() - te->worst_stage().activations.value(),
      (4.0 - 2.0) * logits);
  // Without the fused loss there is no TE kernel: PyTorch's cross-entropy, as before.
  t.fused_loss = false;
  auto eager_te = EstimateMemory(m, t, p, h);
  t.cross_entropy_impl = CrossEntropyImpl::kNative;
  auto eager = EstimateMemory(m, t, p, h);
  ASSERT_TRUE(eager_te.ok() && eager.ok());
  EXPECT_DOUBLE_EQ(eager_te->worst_stage().activations.value(),
                   eager->worst_stage().activations.value());
}

HardwareSpec H200() {
  HardwareSpec h;
  h.name = "h200-test";
  h.memory_capacity = 141e9;
  h.reserve_cuda_context = 0.0;
  h.reserve_comm_buffers = 0.0;
  h.reserve_fragmentation = 0.0;
  return h;
}

// Held against a profiler: training steps of a 1B GPT and a 0.85B Llama measured on an NVIDIA
// H200 with PyTorch 2.11 (bench/h200/calibrate_h200.py, results in bench/h200/results/train.json):
// static model states, activation bytes after the forward pass (saved tensors incl. the fp32
// log-softmax) and torch.cuda.max_memory_allocated, predicted with the script's setup (bf16
// weights and gradients, fp32 master + Adam, eager PyTorch kernels, no reserve).
TEST(Budget, AgreesWithH200Measurements) {
  std::ifstream in(std::string(SHARDSIM_SOURCE_DIR) + "/bench/h200/results/train.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json runs = nlohmann::json::parse(in);
  std::printf("%-12s %5s %3s %-5s | %9s %9s %6s | %9s %9s %6s | %9s %9s %6s\n", "model", "seq",
              "mb", "recomp", "act pred", "act meas", "err", "peak pred", "peak meas", "err",
              "FLOPs pred", "counted", "err");
  int checked = 0;
  for (const auto& r : runs) {
    const std::string name = r["name"];
    const auto [m, t] = testing::H200RowSpecs(r);
    ParallelSpec p;
    auto b = EstimateMemory(m, t, p, H200());
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    const StageMemory& s = b->worst_stage();
    const double gib = 1073741824.0;
    const double static_meas = r["static_bytes"];
    const double act_meas = r["activation_bytes"];
    const double peak_meas = r["peak_allocated_bytes"];
    const double act_pred = s.activations.value();
    const double peak_pred =
        (s.model_states() + s.activations + s.loss_buffers + s.recompute_buffer).value();
    const double act_err = act_pred / act_meas - 1.0;
    const double peak_err = peak_pred / peak_meas - 1.0;
    // FLOPs against torch.utils.flop_counter: it counts matmuls (2mnk per pass) and SDPA as the
    // full square forward and 2.5x that backward for flash (the scores are recomputed), so
    // budget's hardware FLOPs plus half a forward of the attention term.
    auto f = SummarizeFlops(m, t);
    ASSERT_TRUE(f.ok());
    const double flops_pred =
        f->hardware_per_step +
        (t.flash_attention ? 0.5 * f->fwd_attention * static_cast<double>(f->tokens_per_step)
                           : 0.0);
    const double counted = r["counted_flops"].is_null() ? NAN : r["counted_flops"].get<double>();
    const double flops_err = flops_pred / counted - 1.0;
    std::printf(
        "%-12s %5d %3d %-5s | %8.2fG %8.2fG %+5.1f%% | %8.2fG %8.2fG %+5.1f%% | %9.3g %9.3g "
        "%+5.1f%%\n",
        name.c_str(), static_cast<int>(t.seq_len), static_cast<int>(t.micro_batch),
        Name(t.recompute), act_pred / gib, act_meas / gib, act_err * 100, peak_pred / gib,
        peak_meas / gib, peak_err * 100, flops_pred, counted, flops_err * 100);
    if (!std::isnan(counted)) {
      EXPECT_NEAR(flops_err, 0.0, 0.01) << name;
    }
    EXPECT_NEAR(s.model_states().value() / static_meas, 1.0, 0.01) << name;
    EXPECT_NEAR(act_err, 0.0, 0.03) << name << " seq " << t.seq_len;
    EXPECT_NEAR(peak_err, 0.0, 0.05) << name << " seq " << t.seq_len;
    ++checked;
  }
  // The unfused run (gpt-noflash) uses SDPA's math backend, which upcasts to fp32: its fp32
  // Q, K, V and 9 bytes per score (fp32 softmax, mask, fp32 dropout output), held with the rest
  // (sim/model/op_builders.cc AttentionOp).
  EXPECT_GE(checked, 12);
}

}  // namespace
}  // namespace shardsim
