// The measured GEMM table: exact at measured shapes, log-linear between them, clamped outside,
// inverse-distance weighted when the rows are not a full grid (sim/hardware/gemm_table.h).
#include "sim/hardware/gemm_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/hardware/op_cost.h"
#include "tests/hardware/hw_test_util.h"

namespace shardsim {
namespace {

// A 2x2x2 grid over {256, 1024}^3 whose rate grows with every dimension.
double Rate(int64_t m, int64_t n, int64_t k) {
  return 1e12 * (1.0 + static_cast<double>(m) / 256.0) * (1.0 + static_cast<double>(n) / 512.0) *
         (1.0 + static_cast<double>(k) / 1024.0);
}

std::vector<GemmMeasurement> Grid() {
  std::vector<GemmMeasurement> rows;
  for (int64_t m : {256, 1024}) {
    for (int64_t n : {256, 1024}) {
      for (int64_t k : {256, 1024}) rows.push_back({DType::kBf16, m, n, k, Rate(m, n, k)});
    }
  }
  return rows;
}

TEST(GemmTable, ExactAtMeasuredShapes) {
  const GemmTable t(Grid());
  ASSERT_TRUE(t.Has(DType::kBf16));
  EXPECT_TRUE(t.IsGrid(DType::kBf16));
  EXPECT_FALSE(t.Has(DType::kFp8));
  EXPECT_FALSE(t.FlopsPerSecond(DType::kFp8, 256, 256, 256).has_value());
  for (const GemmMeasurement& r : Grid()) {
    EXPECT_NEAR(*t.FlopsPerSecond(DType::kBf16, r.m, r.n, r.k), r.flops_per_s,
                1e-9 * r.flops_per_s);
  }
}

TEST(GemmTable, LogLinearBetweenMeasuredShapes) {
  const GemmTable t(Grid());
  // m = 512 is halfway between 256 and 1024 in log2: the geometric mean of the neighbours.
  const double lo = Rate(256, 1024, 256), hi = Rate(1024, 1024, 256);
  EXPECT_NEAR(*t.FlopsPerSecond(DType::kBf16, 512, 1024, 256), std::sqrt(lo * hi), 1e-6 * hi);
  // Monotone and between the neighbours along every axis.
  double prev = 0.0;
  for (int64_t m = 256; m <= 1024; m += 64) {
    const double v = *t.FlopsPerSecond(DType::kBf16, m, 700, 300);
    EXPECT_GE(v, prev);
    prev = v;
  }
  const double mid = *t.FlopsPerSecond(DType::kBf16, 400, 700, 300);
  EXPECT_GT(mid, Rate(256, 256, 256));
  EXPECT_LT(mid, Rate(1024, 1024, 1024));
}

TEST(GemmTable, ClampsOutsideTheGrid) {
  const GemmTable t(Grid());
  EXPECT_NEAR(*t.FlopsPerSecond(DType::kBf16, 64, 256, 256), Rate(256, 256, 256), 1e3);
  EXPECT_NEAR(*t.FlopsPerSecond(DType::kBf16, 1 << 20, 1 << 20, 1 << 20), Rate(1024, 1024, 1024),
              1e3);
}

TEST(GemmTable, BatchedLookupsUseBatchTimesM) {
  const GemmTable t(Grid());
  EXPECT_DOUBLE_EQ(*t.FlopsPerSecond(DType::kBf16, 256, 1024, 1024, 4),
                   *t.FlopsPerSecond(DType::kBf16, 1024, 1024, 1024));
}

TEST(GemmTable, ScatteredRowsWeightedByInverseSquaredDistance) {
  std::vector<GemmMeasurement> rows = Grid();
  rows.pop_back();  // no longer a full grid
  const GemmTable t(rows);
  EXPECT_FALSE(t.IsGrid(DType::kBf16));
  EXPECT_NEAR(*t.FlopsPerSecond(DType::kBf16, 256, 1024, 256), Rate(256, 1024, 256),
              1e-9 * Rate(256, 1024, 256));
  // Weights 1/d^2 in (log2 m, log2 n, log2 k): the two rows at m = 256 and 1024 (d = 1) dominate.
  const double v = *t.FlopsPerSecond(DType::kBf16, 512, 256, 256);
  double wsum = 0.0, lsum = 0.0;
  for (const GemmMeasurement& r : rows) {
    const double d2 = std::pow(std::log2(static_cast<double>(r.m)) - 9.0, 2) +
                      std::pow(std::log2(static_cast<double>(r.n)) - 8.0, 2) +
                      std::pow(std::log2(static_cast<double>(r.k)) - 8.0, 2);
    wsum += 1.0 / d2;
    lsum += std::log(r.flops_per_s) / d2;
  }
  EXPECT_NEAR(v, std::exp(lsum / wsum), 1e-9 * v);
}

TEST(GemmTable, RepeatedShapesAverageGeometrically) {
  const GemmTable t({{DType::kBf16, 512, 512, 512, 100e12}, {DType::kBf16, 512, 512, 512, 400e12}});
  EXPECT_NEAR(*t.FlopsPerSecond(DType::kBf16, 512, 512, 512), 200e12, 1e3);
}

TEST(GemmTable, OverridesTheCurveInOpCosts) {
  HardwareSpec hw = testing::RoundGpu();
  hw.kernel_launch_overhead = 2e-6;
  hw.sustained_compute_fraction = 0.8;
  hw.gemm_table = Grid();
  const OpCost c = MatmulCost(1024, 1024, 1024, 1, DType::kBf16, hw);
  EXPECT_EQ(c.source, CostSource::kGemmTable);
  const double flops = 2.0 * 1024.0 * 1024.0 * 1024.0;
  EXPECT_NEAR(c.compute.value(), flops / (Rate(1024, 1024, 1024) * 0.8), 1e-15);
  EXPECT_NEAR(c.time.value(), std::max(c.compute, c.memory).value() + 2e-6, 1e-15);
  // Dtypes without rows keep the curve.
  EXPECT_EQ(MatmulCost(1024, 1024, 1024, 1, DType::kFp8, hw).source, CostSource::kMatmulCurve);
}

}  // namespace
}  // namespace shardsim
