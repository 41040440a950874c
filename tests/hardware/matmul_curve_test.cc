// Closed-form and property tests of the GEMM curve (sim/hardware/matmul_curve.h) through
// MatmulCost, on a GPU with round numbers (hw_test_util.h) and on the library's H200.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/hardware/op_cost.h"
#include "sim/hardware/peaks.h"
#include "tests/hardware/hw_test_util.h"

namespace shardsim {
namespace {

using testing::LibraryHardware;
using testing::RoundGpu;

double Flops(int64_t m, int64_t n, int64_t k, int64_t b = 1) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
         static_cast<double>(b);
}

// 12800 = 100 tiles of 128 = 50 tiles of 256: 5000 tiles fill 100 SMs in exactly 50 waves.
constexpr int64_t kEven = 12800;

TEST(MatmulCurve, LargeSquareGemmRunsAtPeakTimesMaxEfficiency) {
  HardwareSpec hw = RoundGpu();
  hw.matmul_latency = 2e-6;
  hw.kernel_launch_overhead = 3e-6;
  const OpCost c = MatmulCost(kEven, kEven, kEven, 1, DType::kBf16, hw);
  EXPECT_EQ(c.source, CostSource::kMatmulCurve);
  EXPECT_FALSE(c.memory_bound);
  // time = 2mnk / (peak * max_eff) + latency + launch (k_half = 0, no quantization).
  EXPECT_NEAR(c.time.value(), Flops(kEven, kEven, kEven) / (1000e12 * 0.8) + 5e-6, 1e-12);
  EXPECT_NEAR(c.efficiency, 0.8, 1e-12);
  EXPECT_EQ(c.curve.tile_a, 128);
  EXPECT_EQ(c.curve.tile_b, 256);
  EXPECT_DOUBLE_EQ(c.curve.waves, 50.0);
}

TEST(MatmulCurve, KLoopEfficiencyIsKOverKPlusKHalf) {
  HardwareSpec hw = RoundGpu();
  hw.matmul_k_half = 178;
  for (int64_t k : {1024, 2048, 8192}) {
    const OpCost c = MatmulCost(kEven, kEven, k, 1, DType::kBf16, hw);
    ASSERT_FALSE(c.memory_bound) << k;
    const double kf = static_cast<double>(k) / (static_cast<double>(k) + 178.0);
    EXPECT_NEAR(c.curve.k_efficiency, kf, 1e-12) << k;
    EXPECT_NEAR(c.efficiency, 0.8 * kf, 1e-12) << k;
  }
}

TEST(MatmulCurve, KHalfIsAFixedNumberOfOperandBytes) {
  HardwareSpec hw = RoundGpu();
  hw.memory_bandwidth = 40e12;
  hw.matmul_k_half = 100;  // k-steps of a 2-byte operand
  const OpCost bf16 = MatmulCost(kEven, kEven, 400, 1, DType::kBf16, hw);
  const OpCost fp8 = MatmulCost(kEven, kEven, 400, 1, DType::kFp8, hw);
  EXPECT_NEAR(bf16.curve.k_efficiency, 400.0 / 500.0, 1e-12);
  EXPECT_NEAR(fp8.curve.k_efficiency, 400.0 / 600.0, 1e-12);  // 1-byte operands: 200 k-steps
  EXPECT_EQ(fp8.dtype, DType::kFp8);
}

TEST(MatmulCurve, EfficiencyNeverExceedsMax) {
  const std::vector<int64_t> dims = {64, 100, 128, 333, 1024, 1536, 4096, 12288, 16384};
  for (HardwareSpec hw :
       {RoundGpu(), LibraryHardware("h200-sxm"), LibraryHardware("a100-sxm4-80gb")}) {
    hw.gemm_table.clear();
    for (DType dt : {DType::kBf16, DType::kFp8, DType::kFp32}) {
      const OpCostModel model(hw);
      const MatmulCurveParams p = MakeMatmulCurveParams(hw, dt);
      for (int64_t m : dims) {
        for (int64_t n : dims) {
          for (int64_t k : dims) {
            const OpCost c = model.Matmul(m, n, k, 1, dt);
            EXPECT_LE(c.efficiency, p.max_efficiency * p.sustained + 1e-12)
                << hw.name << " " << Name(dt) << " " << m << "x" << n << "x" << k;
            EXPECT_GT(c.efficiency, 0.0);
          }
        }
      }
    }
  }
}

TEST(MatmulCurve, MorePeakOrBandwidthNeverSlowsAGemm) {
  const std::vector<int64_t> dims = {64, 128, 777, 2048, 8192};
  HardwareSpec base = LibraryHardware("h100-sxm");
  HardwareSpec faster_math = base, faster_memory = base;
  for (auto& [d, v] : faster_math.peak_flops) v *= 1.5;
  faster_memory.memory_bandwidth *= 1.5;
  const OpCostModel m0(base), m1(faster_math), m2(faster_memory);
  for (int64_t m : dims) {
    for (int64_t n : dims) {
      for (int64_t k : dims) {
        const double t0 = m0.Matmul(m, n, k, 2, DType::kBf16).time.value();
        EXPECT_LE(m1.Matmul(m, n, k, 2, DType::kBf16).time.value(), t0 * (1 + 1e-12));
        EXPECT_LE(m2.Matmul(m, n, k, 2, DType::kBf16).time.value(), t0 * (1 + 1e-12));
      }
    }
  }
}

TEST(MatmulCurve, SkinnyGemmIsLessEfficientThanSquareOfEqualFlops) {
  HardwareSpec hw = LibraryHardware("h200-sxm");
  hw.gemm_table.clear();
  const OpCost square = MatmulCost(4096, 4096, 4096, 1, DType::kBf16, hw);
  const OpCost skinny_k = MatmulCost(128, 4096, 131072, 1, DType::kBf16, hw);  // same 2mnk
  const OpCost skinny_mn = MatmulCost(65536, 65536, 16, 1, DType::kBf16, hw);
  ASSERT_DOUBLE_EQ(square.flops.value(), skinny_k.flops.value());
  ASSERT_DOUBLE_EQ(square.flops.value(), skinny_mn.flops.value());
  EXPECT_LT(skinny_k.flops.value() / skinny_k.time.value(),
            square.flops.value() / square.time.value());
  EXPECT_LT(skinny_mn.flops.value() / skinny_mn.time.value(),
            square.flops.value() / square.time.value());
}

TEST(MatmulCurve, WaveQuantizationMakesOneExtraTileCostAWave) {
  HardwareSpec hw = RoundGpu();
  hw.memory_bandwidth = 40e12;  // keep these GEMMs compute-bound
  // 100 tiles of 128x256 (n = 256) fill the 100 SMs once; 101 need a second wave.
  const double full = MatmulCost(100 * 128, 256, 8192, 1, DType::kBf16, hw).time.value();
  const double over = MatmulCost(101 * 128, 256, 8192, 1, DType::kBf16, hw).time.value();
  EXPECT_NEAR(over / full, 101.0 / 100.0, 1e-9);  // balanced (Hopper): proportional
  hw.matmul_wave_quantization = true;
  const double full_w = MatmulCost(100 * 128, 256, 8192, 1, DType::kBf16, hw).time.value();
  const double over_w = MatmulCost(101 * 128, 256, 8192, 1, DType::kBf16, hw).time.value();
  EXPECT_NEAR(full_w, full, 1e-15);
  // With whole waves the best tile becomes 64x64: 808 tiles in 9 waves, each tile 1/8 of the
  // work at e_tile(64x64) = [32/42] / [85.33/95.33].
  const double ref = (128.0 * 256.0 / 384.0) / (128.0 * 256.0 / 384.0 + 10.0);
  const double e64 = (32.0 / 42.0) / ref;
  EXPECT_NEAR(over_w / full_w, 9.0 * 0.125 / e64, 1e-9);
  EXPECT_GT(over_w / full_w, 1.3);
}

TEST(MatmulCurve, SplitKSpreadsADeepSmallGemmOverTheSms) {
  HardwareSpec hw = RoundGpu();
  const OpCost c = MatmulCost(128, 128, 65536, 1, DType::kBf16, hw);
  EXPECT_GT(c.curve.split, 1);
  const double one_sm = Flops(128, 128, 65536) / (1000e12 * 0.8 / 100.0);
  EXPECT_LT(c.time.value(), one_sm / 10.0);
  EXPECT_TRUE(c.memory_bound);  // streaming the 2 x 16 MB operands is what is left
}

TEST(MatmulCurve, MemoryBoundGemmTakesItsBytesAtTheAchievedBandwidth) {
  const HardwareSpec hw = RoundGpu();
  const int64_t m = 16384, n = 16384, k = 16;
  const OpCost c = MatmulCost(m, n, k, 1, DType::kBf16, hw);
  ASSERT_TRUE(c.memory_bound);
  const double bytes = 2.0 * (m * k + k * n) + 2.0 * m * n;
  EXPECT_NEAR(c.time.value(), bytes / (4e12 * 0.8), 1e-15);
}

TEST(MatmulCurve, SustainedFractionSlowsOnlyTheMath) {
  HardwareSpec hw = RoundGpu();
  const double burst = MatmulCost(kEven, kEven, kEven, 1, DType::kBf16, hw).time.value();
  hw.sustained_compute_fraction = 0.5;
  EXPECT_NEAR(MatmulCost(kEven, kEven, kEven, 1, DType::kBf16, hw).time.value(), 2.0 * burst,
              1e-12);
  hw.sustained_compute_fraction = 1.0;
  const double mem = MatmulCost(16384, 16384, 16, 1, DType::kBf16, hw).time.value();
  hw.sustained_compute_fraction = 0.5;
  EXPECT_DOUBLE_EQ(MatmulCost(16384, 16384, 16, 1, DType::kBf16, hw).time.value(), mem);
}

// sustained_compute_fraction_by_dtype: a GEMM takes its dtype's clock; mxfp8 and nvfp4 without
// an entry take fp8's; fp8 on a GPU without fp8 units computes in bf16 at bf16's clock.
TEST(MatmulCurve, SustainedFractionByDtype) {
  HardwareSpec hw = RoundGpu();
  hw.peak_flops[DType::kFp8] = 2.0 * hw.peak_flops.at(DType::kBf16);
  hw.peak_flops[DType::kMxfp8] = hw.peak_flops.at(DType::kFp8);
  hw.sustained_compute_fraction = 0.8;
  auto time = [&](DType d) { return MatmulCost(kEven, kEven, kEven, 1, d, hw).compute.value(); };
  const double bf16 = time(DType::kBf16), fp8 = time(DType::kFp8), mx = time(DType::kMxfp8);
  hw.sustained_compute_fraction_by_dtype[DType::kFp8] = 0.4;
  EXPECT_DOUBLE_EQ(time(DType::kBf16), bf16);
  EXPECT_NEAR(time(DType::kFp8), 2.0 * fp8, 1e-15);
  EXPECT_NEAR(time(DType::kMxfp8), 2.0 * mx, 1e-15);
  hw.sustained_compute_fraction_by_dtype[DType::kMxfp8] = 0.8;  // its own entry wins
  EXPECT_NEAR(time(DType::kMxfp8), mx, 1e-15);
  EXPECT_DOUBLE_EQ(MaxSustainedFraction(hw), 0.8);
  hw.sustained_compute_fraction_by_dtype[DType::kBf16] = 0.7;  // below the scalar: attention's
  EXPECT_DOUBLE_EQ(MaxSustainedFraction(hw), 0.8);
  hw.sustained_compute_fraction_by_dtype[DType::kBf16] = 0.9;
  EXPECT_DOUBLE_EQ(MaxSustainedFraction(hw), 0.9);
  // No fp8 units: the GEMM runs in bf16, at bf16's clock.
  hw.peak_flops.erase(DType::kFp8);
  EXPECT_DOUBLE_EQ(SustainedFraction(hw, PeakFor(hw, DType::kFp8).dtype), 0.9);
  EXPECT_NEAR(MatmulCost(kEven, kEven, kEven, 1, DType::kFp8, hw).compute.value(),
              MatmulCost(kEven, kEven, kEven, 1, DType::kBf16, hw).compute.value(), 1e-15);
}

TEST(MatmulCurve, BatchedGemmCostsLikeItsTiles) {
  const HardwareSpec hw = RoundGpu();
  // 4 copies of 3200 x 12800 have the tiles of one 12800 x 12800.
  const OpCost batched = MatmulCost(3200, kEven, 4096, 4, DType::kBf16, hw);
  const OpCost single = MatmulCost(kEven, kEven, 4096, 1, DType::kBf16, hw);
  EXPECT_NEAR(batched.compute.value(), single.compute.value(), 1e-15);
  EXPECT_DOUBLE_EQ(batched.flops.value(), single.flops.value());
}

TEST(Peaks, MissingDtypesRunOnTheNearestUnits) {
  const HardwareSpec a100 = LibraryHardware("a100-sxm4-80gb");
  EXPECT_EQ(PeakFor(a100, DType::kFp8).dtype, DType::kBf16);  // no fp8 tensor cores
  EXPECT_DOUBLE_EQ(PeakFor(a100, DType::kFp8).flops_per_s, 312e12);
  // ...so an fp8 GEMM costs what the bf16 one does.
  EXPECT_DOUBLE_EQ(MatmulCost(4096, 4096, 4096, 1, DType::kFp8, a100).time.value(),
                   MatmulCost(4096, 4096, 4096, 1, DType::kBf16, a100).time.value());
  HardwareSpec fp16_only;
  fp16_only.peak_flops = {{DType::kFp16, 100e12}};
  EXPECT_EQ(PeakFor(fp16_only, DType::kBf16).dtype, DType::kFp16);
  EXPECT_EQ(PeakFor(fp16_only, DType::kTf32).dtype, DType::kFp16);  // nothing close: the largest
}

}  // namespace
}  // namespace shardsim
