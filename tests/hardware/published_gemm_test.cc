// GEMM timing of the library's A100, H100, H200 and B200 against published measured matmul
// throughputs (hardware/calibration/PUBLISHED.md has every figure with its source). Prints
// predicted vs published per row and holds each within 10% (B200: the gap to its calibration node,
// below).
//
// How the rows are compared: predicted TFLOP/s = 2*m*n*k*batch / (time - launch overhead), the
// kernel alone, since these benchmarks time back-to-back kernels; the sustained-clock factor is
// set to 1 because these are short bursts at boost clocks (mamf-finder: 150 iterations of
// < 1 ms; XLA: per-kernel profiles), while the library files carry the power-limited clock of a
// training step (sustained_compute_fraction, measured on our H200 and assumed for the others).
// - H100: every parameter comes from our H200 measurements (same SM) with the memory terms
//   rescaled to 3.35 TB/s; none was fitted to these rows: an independent check.
// - H200 (one row): our measured table (the library default) against an independent published
//   measurement on another H200 with an older software stack.
// - A100: matmul.max_efficiency is the median of these three rows divided by the curve's shape
//   factors, so the rows check the curve's shape dependence and their spread, not the level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/hardware/op_cost.h"
#include "sim/hardware/peaks.h"
#include "tests/hardware/hw_test_util.h"

namespace shardsim {
namespace {

struct Row {
  const char* gpu;     // library hardware name
  const char* source;  // where the figure is published
  DType dtype;
  int64_t batch, m, n, k;
  double tflops;  // published, measured
};

// XLA: openxla/xla (vendored in tensorflow/tensorflow) xla/service/gpu/model/
//   matmul_interpolator_data.h, kDefaultMatmulPTable, "sm_90" entries (H100 SXM: > 756 TFLOP/s
//   excludes the PCIe part), bf16xbf16->bf16. Rows: every entry with all dimensions >= 4096
//   (batch 1, 2, 4), whose kernels run >= 170 us, so the table's ~6 us per-launch floor (its
//   256-sized entries all take 5.9 us) stays under 4%.
// mamf: stas00/ml-engineering compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS
//   comparison table"; shapes printed M x K x N (K, the middle, is the reduction).
// He: Horace He, "Strangely, Matrix Multiplications on GPUs Run Faster When Given Predictable
//   Data" (thonking.ai, 2024): A100 8192^3 cuBLAS via PyTorch on randn inputs.
const std::vector<Row> kRows = {
    {"h100-sxm", "XLA sm_90 table, b=1 4096^3", DType::kBf16, 1, 4096, 4096, 4096, 783.3},
    {"h100-sxm", "XLA sm_90 table, b=2 4096^3", DType::kBf16, 2, 4096, 4096, 4096, 807.7},
    {"h100-sxm", "XLA sm_90 table, b=4 4096^3", DType::kBf16, 4, 4096, 4096, 4096, 793.1},
    {"h100-sxm", "mamf-finder H100 SXM bf16 (torch 2.7.0+cu126)", DType::kBf16, 1, 2048, 13312,
     2048, 794.5},
    {"h100-sxm", "mamf-finder H100 SXM bf16 (CUDA 12.1)", DType::kBf16, 1, 6144, 2816, 17920,
     792.1},
    {"h100-sxm", "mamf-finder H100 SXM fp8 (torch 2.7.0+cu126)", DType::kFp8, 1, 1024, 14336, 9216,
     1402.6},
    {"h200-sxm", "mamf-finder H200 SXM fp8 (torch 2.7.1+cu128)", DType::kFp8, 1, 1280, 4096, 12032,
     1453.4},
    {"a100-sxm4-80gb", "mamf-finder A100 SXM bf16 (torch 2.6.0+cu126)", DType::kBf16, 1, 1024, 5120,
     10240, 271.2},
    {"a100-sxm4-80gb", "mamf-finder A100 SXM bf16 (CUDA 12.1)", DType::kBf16, 1, 6912, 2048, 16384,
     267.9},
    {"a100-sxm4-80gb", "He 2024, A100 8192^3 randn", DType::kBf16, 1, 8192, 8192, 8192, 258.0},
};

double PredictedTflops(const HardwareSpec& hw, const Row& r) {
  const OpCost c = MatmulCost(r.m, r.n, r.k, r.batch, r.dtype, hw);
  const double flops = 2.0 * static_cast<double>(r.m) * static_cast<double>(r.n) *
                       static_cast<double>(r.k) * static_cast<double>(r.batch);
  return flops / (c.time.value() - hw.kernel_launch_overhead) / 1e12;
}

TEST(PublishedGemm, A100AndH100WithinTenPercent) {
  std::printf("%-16s %-48s %-5s %-22s %9s %9s %7s\n", "gpu", "source", "dtype", "b x m x n x k",
              "published", "predicted", "error");
  int within = 0;
  for (const Row& r : kRows) {
    HardwareSpec hw = testing::LibraryHardware(r.gpu);
    SetBurstClocks(&hw);
    const double pred = PredictedTflops(hw, r);
    const double err = pred / r.tflops - 1.0;
    const std::string shape = std::to_string(r.batch) + "x" + std::to_string(r.m) + "x" +
                              std::to_string(r.n) + "x" + std::to_string(r.k);
    std::printf("%-16s %-48s %-5s %-22s %9.1f %9.1f %+6.1f%%\n", r.gpu, r.source, Name(r.dtype),
                shape.c_str(), r.tflops, pred, 100.0 * err);
    EXPECT_LT(std::fabs(err), 0.10) << r.gpu << " " << r.source;
    if (std::fabs(err) < 0.10) ++within;
  }
  EXPECT_GE(within, 5);
}

// B200: hardware/b200.yaml is calibrated to the measured tables of one 8-GPU B200 node
// (MooreThreads/SimuMax v1.2, Transformer Engine GEMMs; hardware/calibration/b200/). Other
// published B200 figures of large GEMMs run much faster than that node's at the same sizes
// (PUBLISHED.md, "B200"): the model, which reproduces the node's tables (b200_tables_test.cc),
// predicts them at 0.55-0.80 of their rate. This test prints the gap and holds it in that band, so
// that a change of the B200 calibration (or a source of it) cannot pass without the README's
// Blackwell paragraph, which quotes the gap, being revisited. Forward (TN) GEMMs, burst clocks.
const std::vector<Row> kOtherB200Rows = {
    {"b200", "mamf-finder B200 SXM bf16 (torch 2.7.1+cu128)", DType::kBf16, 1, 1792, 3072, 16128,
     1745.0},
    {"b200", "Tilus tutorial: cuBLAS 8192^3 fp16 (NCU)", DType::kBf16, 1, 8192, 8192, 8192, 1610.0},
    {"b200", "mamf-finder B200 SXM fp8 (torch 2.7.1+cu128)", DType::kFp8, 1, 15360, 3072, 4096,
     3432.5},
};

TEST(PublishedGemm, B200CalibrationNodeBelowOtherPublishedB200) {
  for (const Row& r : kOtherB200Rows) {
    HardwareSpec hw = testing::LibraryHardware(r.gpu);
    SetBurstClocks(&hw);
    const double pred = PredictedTflops(hw, r);
    const double ratio = pred / r.tflops;
    std::printf("%-6s %-48s %-5s %5lldx%5lldx%5lld  published %7.1f  predicted %7.1f  x%.2f\n",
                r.gpu, r.source, Name(r.dtype), static_cast<long long>(r.m),
                static_cast<long long>(r.n), static_cast<long long>(r.k), r.tflops, pred, ratio);
    EXPECT_GT(ratio, 0.55) << r.source;
    EXPECT_LT(ratio, 0.80) << r.source;
  }
}

// XLA's measured sm_100 table (hardware/calibration/b200/xla-sm100-gemm.csv, README beside it):
// another B200 population, bf16 and fp8 at the same shapes. Each entry's time holds a per-launch
// floor, the 256^3 entry's 4.96 us, taken off before comparing kernels.
// - Where it shares shapes with the calibration node's table, the two GPUs agree within 12%
//   (median 4%). All 9 shapes are of the node's fast 4096-token family, so this says nothing of
//   the node's slower shapes (b200_tables_test.cc, WhatTheRowsSayOfTheirClocks).
// - fp8 over bf16 at every shape of 2048 and more: b200.yaml's assumed fp8 curve against the
//   ratio XLA measured, burst against burst, within 12% each and 5% at the median.
TEST(PublishedGemm, B200XlaTable) {
  struct Entry {
    int64_t m, n, k;
    double bf16, fp8;
  };
  std::vector<Entry> rows;
  for (const auto& r : testing::ReadCsvRows("hardware/calibration/b200/xla-sm100-gemm.csv")) {
    ASSERT_EQ(r.size(), 8u);  // m,n,k,bf16,f32,f8e4m3_e4m3,f8e4m3_e5m2,f8e5m2_e4m3
    rows.push_back({static_cast<int64_t>(testing::CsvNum(r, "m")),
                    static_cast<int64_t>(testing::CsvNum(r, "n")),
                    static_cast<int64_t>(testing::CsvNum(r, "k")), testing::CsvNum(r, "bf16"),
                    testing::CsvNum(r, "f8e4m3_e4m3")});
  }
  ASSERT_EQ(rows.size(), 28u);
  auto flops = [](const Entry& e) {
    return 2.0 * static_cast<double>(e.m) * static_cast<double>(e.n) * static_cast<double>(e.k);
  };
  ASSERT_EQ(rows[0].m, 256);
  const double floor = flops(rows[0]) / rows[0].bf16;
  EXPECT_NEAR(floor, 4.96e-6, 0.01e-6);
  auto kernel = [&](const Entry& e, double rate) { return flops(e) / rate - floor; };

  HardwareSpec hw = testing::LibraryHardware("b200");
  std::vector<double> node;
  for (const GemmMeasurement& g : hw.gemm_table) {
    for (const Entry& e : rows) {
      if (e.m != g.m || e.n != g.n || e.k != g.k) continue;
      const double xla = flops(e) / kernel(e, e.bf16);
      node.push_back(g.flops_per_s / xla);
      std::printf("b200 node %-16s %5lldx%5lldx%5lld  %7.1f TFLOP/s, XLA sm_100 %7.1f: x%.3f\n",
                  g.pass == KernelPass::kForward         ? "forward"
                  : g.pass == KernelPass::kBackwardInput ? "backward_input"
                                                         : "backward_weight",
                  static_cast<long long>(e.m), static_cast<long long>(e.n),
                  static_cast<long long>(e.k), g.flops_per_s / 1e12, xla / 1e12, node.back());
    }
  }
  ASSERT_EQ(node.size(), 9u);
  for (double r : node) EXPECT_NEAR(r, 1.0, 0.12);
  EXPECT_NEAR(testing::Median(node), 1.0, 0.06);

  hw.gemm_table.clear();  // the curve, which carries fp8
  SetBurstClocks(&hw);
  hw.kernel_launch_overhead = 0.0;
  std::vector<double> fp8;
  for (const Entry& e : rows) {
    if (std::min({e.m, e.n, e.k}) < 2048) continue;
    const double model = MatmulCost(e.m, e.n, e.k, 1, DType::kBf16, hw).time.value() /
                         MatmulCost(e.m, e.n, e.k, 1, DType::kFp8, hw).time.value();
    const double xla = kernel(e, e.bf16) / kernel(e, e.fp8);
    fp8.push_back(model / xla);
    std::printf("b200 fp8/bf16 %5lldx%5lldx%5lld: XLA %.3f, model %.3f (x%.3f)\n",
                static_cast<long long>(e.m), static_cast<long long>(e.n),
                static_cast<long long>(e.k), xla, model, fp8.back());
  }
  ASSERT_EQ(fp8.size(), 8u);
  for (double r : fp8) EXPECT_NEAR(r, 1.0, 0.12);
  EXPECT_NEAR(testing::Median(fp8), 1.0, 0.05);
}

}  // namespace
}  // namespace shardsim
