// `shardsim calibrate` (sim/calibrate/): a trace synthesized from a known hardware file's
// predicted kernel times calibrates back to that file's efficiencies; the CPU trace made by
// Debian's python3-torch (tests/data/calibrate/make_cpu_trace.py) reads end to end; a file it
// cannot read is a located error; the overlay is written whole or not at all.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/calibrate/fit.h"
#include "sim/calibrate/samples.h"
#include "sim/config/loader.h"
#include "sim/hardware/op_cost.h"
#include "sim/hardware/peaks.h"
#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("shardsim_calibrate_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

// A Kineto GPU trace: one cpu_op per op (with its shapes) and its kernel, whose duration is what
// `truth` predicts for the kernel on the GPU (no launch overhead: that is the gap between kernels).
std::string SynthesizedTrace(const HardwareSpec& truth) {
  const OpCostModel m(truth);
  Json events = Json::array();
  int64_t id = 0;
  double ts = 0.0;
  auto add = [&](const std::string& op, const Json& dims, const Json& types,
                 const std::string& kernel, double seconds) {
    ++id;
    events.push_back(
        {{"ph", "X"},
         {"cat", "cpu_op"},
         {"name", op},
         {"pid", 1},
         {"tid", 1},
         {"ts", ts},
         {"dur", 5.0},
         {"args", {{"External id", id}, {"Input Dims", dims}, {"Input type", types}}}});
    events.push_back({{"ph", "X"},
                      {"cat", "kernel"},
                      {"name", kernel},
                      {"pid", 0},
                      {"tid", 7},
                      {"ts", ts + 10.0},
                      {"dur", seconds * 1e6},
                      {"args", {{"External id", id}, {"correlation", id}}}});
    ts += seconds * 1e6 + 20.0;
  };
  const std::string bf = "c10::BFloat16";
  const int64_t shapes[][3] = {{8192, 8192, 8192},  {16384, 3072, 8192}, {16384, 8192, 1024},
                               {4096, 28672, 8192}, {8192, 8192, 28672}, {2048, 2048, 2048}};
  for (const auto& s : shapes) {
    const OpCost c = m.Matmul(s[0], s[1], s[2], 1, DType::kBf16);
    const double gpu = std::max(c.compute, c.memory).value() + truth.matmul_latency;
    add("aten::mm", Json::array({Json::array({s[0], s[2]}), Json::array({s[2], s[1]})}),
        Json::array({bf, bf}), "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64", gpu);
  }
  for (const int64_t seq : {2048, 4096, 8192}) {
    AttentionShape a;
    a.batch_heads = 2 * 32;
    a.seq_q = a.seq_kv = seq;
    a.head_dim = a.v_head_dim = 128;
    a.causal = true;
    a.flash = true;
    a.flash2 = true;
    const Json q = Json::array({2, 32, seq, 128});
    for (const bool bwd : {false, true}) {
      const OpCost c = m.Attention(a, bwd ? Pass::kBackwardInput : Pass::kForward, DType::kBf16);
      const double gpu = std::max(c.compute, c.memory).value();
      if (bwd) {
        add("aten::_scaled_dot_product_flash_attention_backward", Json::array({q, q, q, q, q}),
            Json::array({bf, bf, bf, bf, bf}), "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel", gpu);
      } else {
        add("aten::_scaled_dot_product_flash_attention", Json::array({q, q, q, {}, {}}),
            Json::array({bf, bf, bf, "Scalar", "Scalar"}), "flash_fwd_kernel", gpu);
      }
    }
  }
  for (const int64_t tokens : {4096, 16384}) {
    const double n = static_cast<double>(tokens) * 8192.0;
    const Json x = Json::array({tokens, 8192});
    const double norm_f = m.MemoryBound(Bytes(2 * n * 2), MemClass::kNorm).memory.value();
    const double norm_b = m.MemoryBound(Bytes(3 * n * 2), MemClass::kNorm).memory.value();
    add("aten::native_layer_norm", Json::array({x, {8192}, {8192}, {8192}, {}}),
        Json::array({bf, "", bf, bf, "Scalar"}), "vectorized_layer_norm_kernel", norm_f);
    add("aten::native_layer_norm_backward", Json::array({x, x, {8192}, {tokens, 1}, {tokens, 1}}),
        Json::array({bf, bf, "", "float", "float"}), "layer_norm_grad_input_kernel", norm_b);
    const double sm = m.MemoryBound(Bytes(2 * n * 2), MemClass::kSoftmax).memory.value();
    add("aten::_softmax", Json::array({x, {}, {}}), Json::array({bf, "Scalar", "Scalar"}),
        "softmax_warp_forward", sm);
    const double ew = m.MemoryBound(Bytes(3 * n * 2), MemClass::kElementwise).memory.value();
    add("aten::add", Json::array({x, x, {}}), Json::array({bf, bf, "Scalar"}),
        "vectorized_elementwise_kernel<4, CUDAFunctor_add<c10::BFloat16>>", ew);
  }
  add("record_param_comms", Json::array(), Json::array(),
      "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 1e-3);
  return Json{{"schemaVersion", 1}, {"traceEvents", events}}.dump();
}

HardwareSpec H100() {
  Result<HardwareSpec> hw = LoadHardware("h100-sxm", LoadOptions{});
  EXPECT_TRUE(hw.ok()) << hw.status().ToString();
  return *hw;
}

// The round trip: efficiencies of h100-sxm, perturbed in the base, come back within 2%.
TEST(Calibrate, RoundTripRecoversTheHardwareFile) {
  HardwareSpec truth = H100();
  SetBurstClocks(&truth);  // a burst-clock benchmark
  const std::string dir = TempDir("roundtrip");
  const std::string trace = dir + "/synthetic.json";
  testing::WriteFile(trace, SynthesizedTrace(truth));
  HardwareSpec base = truth;
  base.matmul_max_efficiency = 0.5;
  base.attention_flash2_fwd_efficiency = 0.6;
  base.attention_flash2_bwd_efficiency = 0.2;
  base.mem_eff_norm = 0.3;
  base.mem_eff_softmax = 0.9;
  base.mem_eff_elementwise = 0.5;
  KernelSamples samples;
  ASSERT_TRUE(ReadKernelFile(trace, &samples).ok());
  Result<Calibration> c = FitHardware(samples, base, Clocks::kBurst);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const HardwareSpec& f = c->hardware;
  const double flash2_fwd = truth.attention_flash2_fwd_efficiency > 0
                                ? truth.attention_flash2_fwd_efficiency
                                : truth.attention_fwd_efficiency;
  const double flash2_bwd = truth.attention_flash2_bwd_efficiency > 0
                                ? truth.attention_flash2_bwd_efficiency
                                : truth.attention_bwd_efficiency;
  EXPECT_NEAR(f.matmul_max_efficiency / truth.matmul_max_efficiency, 1.0, 0.02);
  EXPECT_NEAR(f.attention_flash2_fwd_efficiency / flash2_fwd, 1.0, 0.02);
  EXPECT_NEAR(f.attention_flash2_bwd_efficiency / flash2_bwd, 1.0, 0.02);
  EXPECT_NEAR(f.mem_eff_norm / truth.mem_eff_norm, 1.0, 0.02);
  EXPECT_NEAR(f.mem_eff_softmax / truth.mem_eff_softmax, 1.0, 0.02);
  EXPECT_NEAR(f.mem_eff_elementwise / truth.mem_eff_elementwise, 1.0, 0.02);
  EXPECT_EQ(f.sustained_compute_fraction, truth.sustained_compute_fraction);  // burst: kept
  ASSERT_EQ(c->fits.size(), 6u);
  for (const ClassFit& k : c->fits) {
    EXPECT_LE(k.max_abs_residual, 0.02) << k.cls;
    EXPECT_GT(k.samples, 0) << k.cls;
  }
  EXPECT_EQ(c->gemm_rows.size(), 6u);
  ASSERT_EQ(c->nccl.size(), 1u);  // reported, not fitted
  std::printf("%s", CalibrationReport(*c).c_str());
}

// A trace of a training run, whose kernels ran at power-limited clocks: the fitted efficiency
// holds the clocks (max_efficiency x sustained of the file it came from) and the overlay sets
// sustained_compute_fraction 1, so simulations price the GEMMs as the file did.
TEST(Calibrate, ProfiledClocksAreAbsorbed) {
  const HardwareSpec truth = H100();
  ASSERT_LT(truth.sustained_compute_fraction, 1.0);
  const std::string dir = TempDir("profiled");
  testing::WriteFile(dir + "/t.json", SynthesizedTrace(truth));
  KernelSamples samples;
  ASSERT_TRUE(ReadKernelFile(dir + "/t.json", &samples).ok());
  Result<Calibration> c = FitHardware(samples, truth, Clocks::kProfiled);
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(c->hardware.matmul_max_efficiency /
                  (truth.matmul_max_efficiency * truth.sustained_compute_fraction),
              1.0, 0.02);
  EXPECT_EQ(c->hardware.sustained_compute_fraction, 1.0);
  // What the trace did not measure (cuDNN fused attention, the fp8 GEMM curve) keeps its
  // pricing: the base's factor with the base's clocks folded in.
  EXPECT_DOUBLE_EQ(c->hardware.attention_fwd_efficiency,
                   truth.attention_fwd_efficiency * truth.sustained_compute_fraction);
  // fp8 GEMMs carry the base's own fp8 clock (sustained_compute_fraction_by_dtype).
  ASSERT_EQ(truth.sustained_compute_fraction_by_dtype.count(DType::kFp8), 1u);
  EXPECT_DOUBLE_EQ(c->hardware.matmul_max_efficiency_by_dtype.at(DType::kFp8),
                   truth.matmul_max_efficiency_by_dtype.at(DType::kFp8) *
                       truth.sustained_compute_fraction_by_dtype.at(DType::kFp8));
  EXPECT_TRUE(c->hardware.sustained_compute_fraction_by_dtype.empty());
  for (DType d : {DType::kBf16, DType::kFp8}) {
    const OpCost before = OpCostModel(truth).Matmul(8192, 8192, 8192, 1, d);
    HardwareSpec after = c->hardware;
    after.gemm_table.clear();
    EXPECT_NEAR(OpCostModel(after).Matmul(8192, 8192, 8192, 1, d).compute / before.compute, 1.0,
                0.02)
        << Name(d);
  }
  const OpCost a = OpCostModel(truth).Matmul(8192, 8192, 8192, 1, DType::kBf16);
  HardwareSpec curve = c->hardware;
  curve.gemm_table.clear();
  const OpCost b = OpCostModel(curve).Matmul(8192, 8192, 8192, 1, DType::kBf16);
  EXPECT_NEAR(b.compute / a.compute, 1.0, 0.02);
}

// The overlay reads back through the hardware reader with the fitted values, and its GEMM CSV
// is the table of the measured shapes.
TEST(Calibrate, OverlayReadsBack) {
  const std::string dir = TempDir("overlay");
  testing::WriteFile(dir + "/t.json", SynthesizedTrace(H100()));
  const testing::CliRun r = testing::Shardsim(
      "calibrate " + dir + "/t.json --hardware h100-sxm -o " + dir + "/my-gpu.yaml");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("gemm bf16"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("median|r|"), std::string::npos) << r.out;
  Result<HardwareSpec> hw = LoadHardware(dir + "/my-gpu.yaml", LoadOptions{});
  ASSERT_TRUE(hw.ok()) << hw.status().ToString() << "\n" << testing::ReadFile(dir + "/my-gpu.yaml");
  const HardwareSpec h100 = H100();
  EXPECT_NEAR(hw->matmul_max_efficiency,
              h100.matmul_max_efficiency * h100.sustained_compute_fraction, 0.02);
  EXPECT_EQ(hw->sustained_compute_fraction, 1.0);
  EXPECT_EQ(hw->gemm_table.size(), 6u);
  EXPECT_EQ(hw->name, h100.name);  // the base's other keys
  EXPECT_FALSE(fs::exists(dir + "/my-gpu.yaml.tmp"));
}

// The trace Debian's python3-torch wrote on a CPU (aten ops, no kernels), end to end.
TEST(Calibrate, CpuTraceFixtureEndToEnd) {
  const std::string fixture =
      std::string(SHARDSIM_SOURCE_DIR) + "/tests/data/calibrate/cpu_step.trace.json";
  KernelSamples samples;
  ASSERT_TRUE(ReadKernelFile(fixture, &samples).ok());
  int gemm = 0, norm = 0, softmax = 0, elementwise = 0;
  for (const KernelSample& s : samples.samples) {
    // Every op with work has its shapes (a 0-d tensor's elementwise op, the loss scale, has
    // none); the model is float32.
    EXPECT_TRUE(s.has_shape || s.cls == KernelClass::kElementwise) << s.name;
    EXPECT_EQ(s.dtype, DType::kFp32) << s.name;
    gemm += s.cls == KernelClass::kGemm;
    norm += s.cls == KernelClass::kNorm;
    softmax += s.cls == KernelClass::kSoftmax;
    elementwise += s.cls == KernelClass::kElementwise;
  }
  // One step of two blocks: per block 4 linear forwards (addmm) and 8 backward mm, 2 + 4 bmm,
  // 2 + 2 layer norms, 1 + 1 softmax.
  EXPECT_EQ(gemm, 2 * (4 + 8 + 6));
  EXPECT_EQ(norm, 2 * 4);
  EXPECT_EQ(softmax, 2 * 2);
  EXPECT_GT(elementwise, 0);
  const std::string dir = TempDir("cpu");
  const testing::CliRun r = testing::Shardsim(
      "calibrate " + fixture + " --hardware h100-sxm --clocks burst -o " + dir + "/cpu.yaml");
  ASSERT_EQ(r.code, 0) << r.out;
  std::printf("%s", r.out.c_str());
  for (const char* cls : {"gemm fp32", "norm", "softmax", "elementwise"}) {
    EXPECT_NE(r.out.find(cls), std::string::npos) << cls;
  }
  Result<HardwareSpec> hw = LoadHardware(dir + "/cpu.yaml", LoadOptions{});
  ASSERT_TRUE(hw.ok()) << hw.status().ToString() << "\n" << testing::ReadFile(dir + "/cpu.yaml");
  EXPECT_GT(hw->gemm_table.size(), 0u);
}

TEST(Calibrate, UnreadableInputsAreLocatedErrors) {
  const std::string dir = TempDir("errors");
  testing::WriteFile(dir + "/cut.json", "{\"traceEvents\": [\n  {\"ph\": \"X\", \"name\": ");
  testing::CliRun r =
      testing::Shardsim("calibrate " + dir + "/cut.json --hardware h100-sxm -o " + dir + "/o.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find(dir + "/cut.json:2:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error: trace: not a Chrome trace"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/o.yaml"));
  testing::WriteFile(dir + "/what.txt", "hello\n");
  r = testing::Shardsim("calibrate " + dir + "/what.txt --hardware h100-sxm -o " + dir + "/o.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find(dir + "/what.txt:1:1: error: calibrate input: not a PyTorch profiler trace"),
            std::string::npos)
      << r.out;
  testing::WriteFile(dir + "/kern.csv",
                     "Time (%),Total Time (ns),Instances,Avg (ns),Name\n"
                     "50.0,abc,10,100,\"sm90_xmma_gemm_bf16bf16, tn\"\n");
  r = testing::Shardsim("calibrate " + dir + "/kern.csv --hardware h100-sxm -o " + dir + "/o.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find(dir + "/kern.csv:2:6: error: Total Time (ns): expected"), std::string::npos)
      << r.out;
  // Nothing to fit (an nsys summary has no shapes): an error, and no file.
  testing::WriteFile(dir + "/kern.csv",
                     "Time (%),Total Time (ns),Instances,Avg (ns),Name\n"
                     "50.0,1000,10,100,\"sm90_xmma_gemm_bf16bf16, tn\"\n");
  r = testing::Shardsim("calibrate " + dir + "/kern.csv --hardware h100-sxm -o " + dir + "/o.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("nothing to fit"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/o.yaml"));
  // An output that cannot be written: exit 2, nothing left behind.
  testing::WriteFile(dir + "/t.json", SynthesizedTrace(H100()));
  r = testing::Shardsim("calibrate " + dir + "/t.json --hardware h100-sxm -o " + dir +
                        "/no/such/dir/o.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("cannot write"), std::string::npos) << r.out;
}

// A GEMM CSV rate above the base's peak is refused where it stands (file:line:col, exit 2), as
// hardware.gemm_table's reader refuses it in the overlay, and nothing is written; so is a trace
// whose GEMM beats the peak. Every overlay calibrate writes loads in simulate.
TEST(Calibrate, RatesAbovePeakAreRefusedAndWrittenOverlaysSimulate) {
  const std::string dir = TempDir("peak");
  for (const char* rate : {"1200", "3000"}) {
    testing::WriteFile(dir + "/g4.csv",
                       std::string("dtype,m,n,k,tflops\nbf16,8192,8192,8192,") + rate + "\n");
    const testing::CliRun r = testing::Shardsim(
        "calibrate " + dir + "/g4.csv --hardware h100-sxm -o " + dir + "/g4-gpu.yaml");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(dir + "/g4.csv:2:21: error: tflops: " + rate +
                         " is above the bf16 peak (peak_flops.bf16: 989.4 TFLOP/s)"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("capped"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(dir + "/g4-gpu.yaml"));
    EXPECT_FALSE(fs::exists(dir + "/g4-gpu-gemm.csv"));
  }
  // A trace written on one line: refused at its kernel's event (line 1, the column of the
  // event; the line is too long to print), with the shape. It named the file only.
  HardwareSpec fast = H100();
  SetBurstClocks(&fast);
  fast.matmul_max_efficiency = 1.0;
  fast.peak_flops[DType::kBf16] *= 1.5;
  const std::string trace = SynthesizedTrace(fast);
  testing::WriteFile(dir + "/fast.json", trace);
  KernelSamples samples;
  ASSERT_TRUE(ReadKernelFile(dir + "/fast.json", &samples, H100().peak_flops).ok());
  Result<Calibration> c = FitHardware(samples, H100(), Clocks::kProfiled);
  ASSERT_FALSE(c.ok());
  // The first GEMM's kernel is the trace's second event (traceEvents[1]).
  const size_t events = trace.find("\"traceEvents\":[") + std::string("\"traceEvents\":[").size();
  const size_t second = trace.find(",{", events) + 1;
  EXPECT_NE(c.status().ToString().find(dir + "/fast.json:1:" + std::to_string(second + 1) +
                                       ": error: traceEvents[1] (kernel "
                                       "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64"
                                       ", shapes from traceEvents[0] aten::mm) ran at "),
            std::string::npos)
      << c.status().ToString();
  EXPECT_NE(c.status().ToString().find(" TFLOP/s: gemm bf16 8192x8192x8192 (median of 1 kernels)"),
            std::string::npos)
      << c.status().ToString();
  EXPECT_NE(c.status().ToString().find("is above the bf16 peak"), std::string::npos);
  // Legal rates: the overlay is written and simulate reads it.
  testing::WriteFile(dir + "/g5.csv",
                     "dtype,m,n,k,tflops\nbf16,8192,8192,8192,700\nbf16,4096,4096,4096,600\n");
  testing::WriteFile(dir + "/t.json", SynthesizedTrace(H100()));
  for (const std::string& in : {dir + "/g5.csv", dir + "/t.json"}) {
    for (const char* clocks : {"profiled", "burst"}) {
      testing::CliRun r = testing::Shardsim("calibrate " + in + " --hardware h100-sxm --clocks " +
                                            clocks + " -o " + dir + "/g5-gpu.yaml");
      ASSERT_EQ(r.code, 0) << r.out;
      EXPECT_FALSE(fs::exists(dir + "/.g5-gpu.yaml.tmp"));
      const std::string scenario =
          testing::ReadFile(std::string(SHARDSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml");
      const size_t at = scenario.find("hardware: h100-sxm");
      ASSERT_NE(at, std::string::npos);
      testing::WriteFile(dir + "/q.yaml",
                         scenario.substr(0, at) + "hardware: " + dir + "/g5-gpu.yaml" +
                             scenario.substr(at + sizeof("hardware: h100-sxm") - 1));
      r = testing::Shardsim("simulate " + dir + "/q.yaml --json");
      EXPECT_EQ(r.code, 0) << in << " " << clocks << "\n" << r.out;
    }
  }
}

// `calibrate` on a trace with a GEMM above the peak, from the CLI: the error is located at the
// first kernel (GPU trace) or op (CPU trace) of that shape that is itself above the peak, as
// file:line:col with the event's line and a caret, and names the event as the trace nests it
// (traceEvents[i], or [i] in a bare event array) and the op whose shapes it took. It said
// "fast.json: error: gemm bf16 ..." with no line or event.
TEST(Calibrate, AbovePeakTraceRatesAreLocatedAtTheirEvent) {
  const std::string dir = TempDir("located");
  // 2 x 8192^3 FLOPs: 2000 us is 550 TFLOP/s, 500 us 2199 (above h100's 989.4), 400 us 2749.
  const auto op = [](int id, int ts) {
    return "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"tid\": 1, \"ts\": " +
           std::to_string(ts) +
           ", \"dur\": 5,\n   \"args\": {\"External id\": " + std::to_string(id) +
           ", \"Input Dims\": [[8192, 8192], [8192, 8192]], \"Input type\": "
           "[\"c10::BFloat16\", \"c10::BFloat16\"]}}";
  };
  const auto kernel = [](int id, int ts, int dur) {
    return "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"nvjet_tst_128x256\", \"tid\": 7, "
           "\"ts\": " +
           std::to_string(ts) + ", \"dur\": " + std::to_string(dur) +
           ", \"args\": {\"External id\": " + std::to_string(id) + "}}";
  };
  const std::string gpu = "{\"schemaVersion\": 1, \"traceEvents\": [\n" + op(1, 0) + ",\n" +
                          kernel(1, 10, 2000) + ",\n" + op(2, 3000) + ",\n" + kernel(2, 3010, 500) +
                          ",\n" + op(3, 4000) + ",\n" + kernel(3, 4010, 400) + "\n]}\n";
  testing::WriteFile(dir + "/gpu.json", gpu);
  const testing::CliRun r =
      testing::Shardsim("calibrate " + dir + "/gpu.json --hardware h100-sxm -o " + dir + "/o.yaml");
  EXPECT_EQ(r.code, 2) << r.out;
  // Lines: 1 the header, 2-3 op 1, 4 kernel 1, 5-6 op 2, 7 kernel 2 (500 us, the first above).
  EXPECT_NE(r.out.find(dir + "/gpu.json:7:3: error: traceEvents[3] (kernel nvjet_tst_128x256, "
                             "shapes from traceEvents[2] aten::mm) ran at 2199 TFLOP/s: gemm bf16 "
                             "8192x8192x8192 (median of 3 kernels): tflops: 2199.023255552 is "
                             "above the bf16 peak (peak_flops.bf16: 989.4 TFLOP/s)"),
            std::string::npos)
      << r.out;
  // The event's line under the message, and a caret under its column.
  EXPECT_NE(r.out.find("\n    " + kernel(2, 3010, 500) + ",\n      ^\n"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir + "/o.yaml"));
  // A CPU trace (no kernels) in a bare event array: the op itself, [i].
  const auto cpu_op = [](int ts, int dur) {
    return "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"tid\": 1, \"ts\": " +
           std::to_string(ts) + ", \"dur\": " + std::to_string(dur) +
           ", \"args\": {\"Input Dims\": [[8192, 8192], [8192, 8192]], \"Input type\": "
           "[\"c10::BFloat16\", \"c10::BFloat16\"]}}";
  };
  testing::WriteFile(dir + "/cpu.json",
                     "[\n" + cpu_op(0, 2000) + ",\n" + cpu_op(5000, 300) + "\n]\n");
  const testing::CliRun c =
      testing::Shardsim("calibrate " + dir + "/cpu.json --hardware h100-sxm -o " + dir + "/o.yaml");
  EXPECT_EQ(c.code, 2) << c.out;
  EXPECT_NE(c.out.find(dir + "/cpu.json:3:3: error: [1] (aten::mm) ran at 3665 TFLOP/s: gemm "
                             "bf16 8192x8192x8192 (median of 2 kernels): "),
            std::string::npos)
      << c.out;
}

// A base whose bf16 GEMMs have a clock of their own (sustained_compute_fraction_by_dtype.bf16):
// a profiled fit of bf16 writes matmul.max_efficiency and nothing overrides it, and a dtype the
// base clocked apart from bf16 keeps the base's pricing.
TEST(Calibrate, ProfiledBf16FitWithABf16ClockEntry) {
  HardwareSpec base = H100();
  base.sustained_compute_fraction_by_dtype[DType::kBf16] = 0.9;
  const std::string dir = TempDir("bf16clock");
  testing::WriteFile(dir + "/g.csv", "dtype,m,n,k,tflops\nbf16,8192,8192,8192,700\n");
  KernelSamples samples;
  ASSERT_TRUE(ReadKernelFile(dir + "/g.csv", &samples, base.peak_flops).ok());
  Result<Calibration> c = FitHardware(samples, base, Clocks::kProfiled);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->hardware.matmul_max_efficiency_by_dtype.count(DType::kBf16), 0u);
  HardwareSpec fitted = c->hardware;
  fitted.gemm_table.clear();
  const double flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  const OpCost bf16 = OpCostModel(fitted).Matmul(8192, 8192, 8192, 1, DType::kBf16);
  EXPECT_NEAR(flops / (bf16.compute.value() + base.matmul_latency) / 700e12, 1.0, 0.01);
  for (DType d : {DType::kFp8, DType::kFp16}) {
    const OpCost before = OpCostModel(base).Matmul(8192, 8192, 8192, 1, d);
    EXPECT_NEAR(OpCostModel(fitted).Matmul(8192, 8192, 8192, 1, d).compute / before.compute, 1.0,
                1e-9)
        << Name(d);
  }
}

// The report's base column means one thing on every row: the base's value of the key on the
// footing of the fitted one (profiled clocks: x the base's sustained fraction), measured or not;
// the header says so.
TEST(Calibrate, BaseColumnIsTheBaseValueAtTheOverlaysClocks) {
  const HardwareSpec h100 = H100();
  const double s = h100.sustained_compute_fraction;
  ASSERT_LT(s, 1.0);
  const std::string dir = TempDir("basecol");
  testing::WriteFile(dir + "/g.csv", "dtype,m,n,k,tflops\nbf16,8192,8192,8192,700\n");
  KernelSamples samples;
  ASSERT_TRUE(ReadKernelFile(dir + "/g.csv", &samples, h100.peak_flops).ok());
  for (const Clocks clocks : {Clocks::kProfiled, Clocks::kBurst}) {
    Result<Calibration> c = FitHardware(samples, h100, clocks);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    const double k = clocks == Clocks::kProfiled ? s : 1.0;
    bool measured = false, unmeasured = false;
    for (const ClassFit& f : c->fits) {
      if (f.key == "matmul.max_efficiency") {
        measured = true;
        EXPECT_DOUBLE_EQ(f.base, h100.matmul_max_efficiency * k);
      } else if (f.key == "matmul.max_efficiency_by_dtype.fp8") {
        unmeasured = true;
        const double k8 = clocks == Clocks::kProfiled
                              ? h100.sustained_compute_fraction_by_dtype.at(DType::kFp8)
                              : 1.0;
        EXPECT_DOUBLE_EQ(f.base, h100.matmul_max_efficiency_by_dtype.at(DType::kFp8) * k8);
        EXPECT_DOUBLE_EQ(f.fitted, f.base);  // not measured: priced as the base prices it
      } else if (f.key == "attention.fwd_efficiency") {
        EXPECT_DOUBLE_EQ(f.base, h100.attention_fwd_efficiency * k);
        EXPECT_DOUBLE_EQ(f.fitted, f.base);
      }
    }
    EXPECT_TRUE(measured);
    EXPECT_EQ(unmeasured, clocks == Clocks::kProfiled);  // burst carries nothing over
    const std::string report = CalibrationReport(*c);
    EXPECT_NE(report.find(clocks == Clocks::kProfiled
                              ? "base: the base's value of the key at the clocks the overlay "
                                "assumes (compute keys x its sustained_compute_fraction 0.84, "
                                "fp8 GEMMs 0.82"
                              : "base: the base's value of the key (its "
                                "sustained_compute_fraction is kept)"),
              std::string::npos)
        << report;
  }
}

}  // namespace
}  // namespace shardsim
