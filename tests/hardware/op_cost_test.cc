// OpCost of whole ops: memory-bound kernels, the attention core, matmul passes, the optimizer
// step, and the --explain line.
#include "sim/hardware/op_cost.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/hardware/hw_test_util.h"

namespace shardsim {
namespace {

using testing::LibraryHardware;
using testing::RoundGpu;

Op MemoryOp(Bytes bytes, MemClass cls, int kernels) {
  Op op;
  op.kind = OpKind::kNorm;
  op.mem_class = cls;
  op.fwd.bytes = bytes;
  op.fwd.flops = Flops(1e6);
  op.kernels = kernels;
  return op;
}

TEST(OpCost, MemoryBoundOpTakesBytesOverBandwidthPlusLaunches) {
  HardwareSpec hw = RoundGpu();
  hw.kernel_launch_overhead = 2e-6;
  const OpCost c = CostOf(MemoryOp(Bytes(1e9), MemClass::kNorm, 2), Pass::kForward, hw);
  EXPECT_EQ(c.source, CostSource::kMemoryBound);
  EXPECT_TRUE(c.memory_bound);
  // 1 GB at 50% of 4 TB/s, plus two launches.
  EXPECT_NEAR(c.time.value(), 1e9 / (4e12 * 0.5) + 2 * 2e-6, 1e-15);
  EXPECT_NEAR(MemoryBoundCost(Bytes(1e9), MemClass::kSoftmax, hw).time.value(),
              1e9 / (4e12 * 0.25) + 2e-6, 1e-15);
  EXPECT_NEAR(MemoryBoundCost(Bytes(1e9), MemClass::kGather, hw).memory.value(), 1e9 / 3.2e12,
              1e-15);
}

TEST(OpCost, APassWithoutWorkCostsNothing) {
  const HardwareSpec hw = RoundGpu();
  const Op op = MemoryOp(Bytes(1e9), MemClass::kNorm, 1);
  const OpCost c = CostOf(op, Pass::kBackwardWeight, hw);
  EXPECT_EQ(c.source, CostSource::kNone);
  EXPECT_EQ(c.time.value(), 0.0);
  EXPECT_EQ(ExplainCost(c), "no work");
}

TEST(OpCost, MatmulPassesUseTheirOwnShapes) {
  const HardwareSpec hw = LibraryHardware("h100-sxm");
  Op op;
  op.kind = OpKind::kMatmul;
  op.dtype = DType::kBf16;
  op.matmul = MatmulShape{8192, 1024, 4096, 1};
  const double f = 2.0 * 8192 * 1024 * 4096;
  op.fwd = {Flops(f), Bytes(2.0 * (8192.0 * 4096 + 4096.0 * 1024 + 8192.0 * 1024))};
  op.bwd_input = {Flops(f), Bytes(2.0 * (8192.0 * 1024 + 4096.0 * 1024 + 8192.0 * 4096))};
  op.bwd_weight = {Flops(f), Bytes(2.0 * (8192.0 * 4096 + 8192.0 * 1024) + 8.0 * 4096 * 1024)};
  const OpCostModel model(hw);
  // op.h: forward (m, n, k), backward-input (m, k, n), backward-weight (k, n, m).
  EXPECT_DOUBLE_EQ(model.Cost(op, Pass::kForward).time.value(),
                   model.Matmul(8192, 1024, 4096, 1, DType::kBf16, op.fwd.bytes).time.value());
  EXPECT_DOUBLE_EQ(
      model.Cost(op, Pass::kBackwardInput).time.value(),
      model.Matmul(8192, 4096, 1024, 1, DType::kBf16, op.bwd_input.bytes).time.value());
  EXPECT_DOUBLE_EQ(
      model.Cost(op, Pass::kBackwardWeight).time.value(),
      model.Matmul(4096, 1024, 8192, 1, DType::kBf16, op.bwd_weight.bytes).time.value());
  EXPECT_EQ(model.Cost(op, Pass::kBackwardInput).curve.tiles, 64 * 16);  // 8192/128 x 4096/256
}

AttentionShape Shape(bool causal, bool flash, int64_t s = 8192) {
  return AttentionShape{16, s, s, 128, 128, causal, flash};
}

TEST(OpCost, CausalFusedAttentionDoesHalfTheFlops) {
  HardwareSpec hw = RoundGpu();
  hw.attention_seq_half = 229;
  hw.attention_seq_half_causal = 727;
  const OpCost full = AttentionCost(Shape(false, true), Pass::kForward, DType::kBf16, hw);
  const OpCost causal = AttentionCost(Shape(true, true), Pass::kForward, DType::kBf16, hw);
  // 4 s^2 d per head forward (FlashAttention-2 §3.1), half when causal.
  EXPECT_DOUBLE_EQ(full.flops.value(), 4.0 * 16 * 8192.0 * 8192.0 * 128);
  EXPECT_DOUBLE_EQ(causal.flops.value(), 0.5 * full.flops.value());
  // The time halves too, up to the causal kernel's diagonal/tail inefficiency (seq_half_causal).
  const double sf_full = 8192.0 / (8192.0 + 229.0), sf_causal = 8192.0 / (8192.0 + 727.0);
  EXPECT_NEAR(causal.compute.value() / full.compute.value(), 0.5 * sf_full / sf_causal, 1e-12);
  EXPECT_GT(causal.compute.value() / full.compute.value(), 0.5);
  EXPECT_LT(causal.compute.value() / full.compute.value(), 0.55);
}

TEST(OpCost, FusedAttentionEfficiencyClosedForm) {
  HardwareSpec hw = RoundGpu();
  hw.attention_fwd_efficiency = 0.7;
  hw.attention_bwd_efficiency = 0.5;
  hw.attention_seq_half = 200;
  hw.attention_head_dim_half = 64;
  hw.sustained_compute_fraction = 0.9;
  const AttentionShape s{8, 4096, 4096, 64, 64, false, true};
  const OpCost fwd = AttentionCost(s, Pass::kForward, DType::kBf16, hw);
  const double hd = (64.0 / 128.0) / (128.0 / 192.0);  // [d/(d+64)] / [128/(128+64)]
  const double eff = 0.7 * (4096.0 / 4296.0) * hd * 0.9;
  EXPECT_NEAR(fwd.efficiency, eff, 1e-12);
  EXPECT_NEAR(fwd.compute.value(), fwd.flops.value() / (1000e12 * eff), 1e-15);
  const OpCost bwd = AttentionCost(s, Pass::kBackwardInput, DType::kBf16, hw);
  EXPECT_DOUBLE_EQ(bwd.flops.value(), 2.5 * fwd.flops.value());  // FlashAttention-2 §3.2
  EXPECT_NEAR(bwd.efficiency, eff * 0.5 / 0.7, 1e-12);
  EXPECT_EQ(AttentionCost(s, Pass::kBackwardWeight, DType::kBf16, hw).source, CostSource::kNone);
  // Head dims above 128 are held at the d = 128 factor (no measurements there).
  const AttentionShape wide{8, 4096, 4096, 256, 256, false, true};
  EXPECT_DOUBLE_EQ(AttentionCost(wide, Pass::kForward, DType::kBf16, hw).attention_head_dim_factor,
                   1.0);
}

TEST(OpCost, UnfusedAttentionIsItsGemmsPlusASoftmax) {
  HardwareSpec hw = RoundGpu();
  hw.kernel_launch_overhead = 1e-6;
  const AttentionShape s = Shape(true, false, 2048);
  const OpCost fwd = AttentionCost(s, Pass::kForward, DType::kBf16, hw);
  EXPECT_EQ(fwd.source, CostSource::kAttentionUnfused);
  EXPECT_DOUBLE_EQ(fwd.flops.value(), 4.0 * 16 * 2048.0 * 2048.0 * 128);  // the full square
  const OpCostModel model(hw);
  const OpCost qk = model.Matmul(2048, 2048, 128, 16, DType::kBf16);
  const OpCost pv = model.Matmul(2048, 128, 2048, 16, DType::kBf16);
  const double gemms =
      std::max(qk.compute, qk.memory).value() + std::max(pv.compute, pv.memory).value();
  EXPECT_NEAR(fwd.compute.value(), gemms, 1e-15);
  // Default traffic: Q, K, V, O once and the scores 4 times (write, softmax read+write, read);
  // the GEMMs move Q, K, V, O and the scores twice, the softmax the other two passes.
  const double scores = 16.0 * 2048 * 2048;
  EXPECT_NEAR(fwd.memory.value(), 2.0 * 2.0 * scores / (4e12 * 0.25), 1e-12);
  EXPECT_NEAR(fwd.time.value(), fwd.compute.value() + fwd.memory.value() + 3e-6, 1e-12);
  const OpCost bwd = AttentionCost(s, Pass::kBackwardInput, DType::kBf16, hw);
  EXPECT_DOUBLE_EQ(bwd.flops.value(), 2.0 * fwd.flops.value());  // four GEMMs against two
}

TEST(OpCost, OptimizerStepStreamsItsStateOnce) {
  HardwareSpec hw = RoundGpu();
  hw.kernel_launch_overhead = 5e-6;
  EXPECT_NEAR(OptimizerStepTime(1'000'000'000, kAdamBytesPerParam, hw).value(),
              28e9 / (4e12 * 0.6) + 5e-6, 1e-12);
  EXPECT_EQ(OptimizerStepTime(0, kAdamBytesPerParam, hw).value(), 0.0);
  // Weight r/w and gradient read (12 B) plus each state read and written.
  EXPECT_DOUBLE_EQ(kAdamBytesPerParam, 28.0);
  EXPECT_DOUBLE_EQ(FusedOptimizerBytesPerParam(1, 4.0), 20.0);  // SGD momentum, fp32
  EXPECT_DOUBLE_EQ(FusedOptimizerBytesPerParam(2, 2.0), 20.0);  // Adam, bf16 m and v
}

TEST(OpCost, MoreBandwidthNeverSlowsAMemoryBoundOp) {
  HardwareSpec hw = LibraryHardware("h100-sxm");
  const Op op = MemoryOp(Bytes(3e8), MemClass::kElementwise, 1);
  const double t0 = CostOf(op, Pass::kForward, hw).time.value();
  hw.memory_bandwidth *= 1.43;
  EXPECT_LT(CostOf(op, Pass::kForward, hw).time.value(), t0);
}

TEST(OpCost, ExplainMemoryBound) {
  HardwareSpec hw = RoundGpu();
  hw.kernel_launch_overhead = 2e-6;
  const OpCost c = CostOf(MemoryOp(Bytes(1e9), MemClass::kNorm, 1), Pass::kForward, hw);
  EXPECT_EQ(ExplainCost(c),
            "memory-bound: 502 us = max(compute 20.0 ns, memory 500 us [954 MiB at 50% of "
            "4.00 TB/s] (memory_efficiency.norm)) + overhead 2.00 us (1 kernel)");
}

// Unfused attention: the softmax's memory term is its own bytes at the GPU's bandwidth (it showed
// the whole op's bytes, GEMM operands included, over the softmax time: "6.85 TB/s" on an H100).
TEST(OpCost, ExplainUnfusedAttentionShowsTheSoftmaxBytesAtTheHardwareBandwidth) {
  const HardwareSpec hw = RoundGpu();
  const OpCostModel model(hw);
  AttentionShape s;
  s.batch_heads = 32;
  s.seq_q = s.seq_kv = 2048;
  s.head_dim = s.v_head_dim = 128;
  s.flash = false;
  const OpCost c = model.Attention(s, Pass::kForward, DType::kBf16);
  ASSERT_EQ(c.source, CostSource::kAttentionUnfused);
  ASSERT_GT(c.memory_bytes.value(), 0.0);
  EXPECT_LT(c.memory_bytes.value(), c.bytes.value());
  EXPECT_NEAR(c.memory.value(), c.memory_bytes.value() / (4e12 * c.bandwidth_efficiency), 1e-12);
  EXPECT_NE(ExplainCost(c).find("of 4.00 TB/s]"), std::string::npos) << ExplainCost(c);
}

TEST(OpCost, ExplainMatmulCurve) {
  HardwareSpec hw = RoundGpu();
  hw.matmul_k_half = 178;
  hw.matmul_latency = 2e-6;
  hw.kernel_launch_overhead = 1e-6;
  const OpCost c = MatmulCost(12800, 12800, 12800, 1, DType::kBf16, hw);
  EXPECT_EQ(ExplainCost(c),
            "matmul curve bf16: 5.32 ms = max(compute 5.32 ms [tile 128x256, split 1, 50.0 waves; "
            "eff 0.79 = max 0.80 x tile 1.0 x k 0.99 x quant 1.0 x sustained 1.0 of 1.00 "
            "PFLOP/s], memory 307 us [938 MiB at 80% of 4.00 TB/s]) + overhead 3.00 us "
            "(1 kernel) incl. GEMM latency");
}

}  // namespace
}  // namespace shardsim
