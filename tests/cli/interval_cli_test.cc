// simulate prints the step time's prediction interval with its basis, and the three memory
// figures beside memory.peak_bytes (sim/report/interval.h, sim/memory/allocator.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

using Json = nlohmann::json;

TEST(SimulateInterval, JsonCarriesTheIntervalAndItsBasis) {
  const testing::CliRun r = testing::Shardsim("simulate scenarios/quickstart.yaml --json", false);
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  const double t = j["step_time_s"];
  const Json& iv = j["step_time_interval_s"];
  ASSERT_EQ(iv.size(), 2u);
  EXPECT_LT(iv[0].get<double>(), iv[1].get<double>());
  const Json& b = j["step_time_interval_basis"];
  EXPECT_EQ(b["group"], "h100");
  EXPECT_EQ(b["kind"], "dense");
  EXPECT_TRUE(b["hardware_validated"]);
  EXPECT_GE(b["runs"].get<int>(), 5);
  EXPECT_NEAR(iv[0].get<double>(), t * (1.0 + b["error_low"].get<double>()), 1e-9 * t);
  EXPECT_NEAR(iv[1].get<double>(), t * (1.0 + b["error_high"].get<double>()), 1e-9 * t);
  const double mfu = j["mfu"];
  EXPECT_NEAR(j["mfu_interval"][0].get<double>(), mfu / (1.0 + b["error_high"].get<double>()),
              1e-12);
  // Memory: allocated <= reserved <= device; peak_bytes is the figure fits is judged on.
  const Json& m = j["memory"];
  EXPECT_LE(m["allocated_peak_bytes"].get<double>(), m["reserved_peak_bytes"].get<double>());
  EXPECT_LE(m["reserved_peak_bytes"].get<double>(), m["device_peak_bytes"].get<double>());
  EXPECT_EQ(j["fits"], m["peak_bytes"].get<double>() <= m["capacity_bytes"].get<double>());
}

TEST(SimulateInterval, HardwareWithoutValidationRunsSaysSo) {
  // The quickstart on other hardware (`overrides`: its hardware and topology keys).
  auto quickstart_on = [](const std::string& name, const std::string& overrides) {
    const std::string file = "/tmp/shardsim_interval_" + name + ".yaml";
    testing::WriteFile(file, "base: " + std::string(SHARDSIM_SOURCE_DIR) +
                                 "/scenarios/quickstart.yaml\n" + overrides);
    return testing::Shardsim("simulate " + file);
  };
  // H200: no validation run; the interval of every dense run, labelled.
  const testing::CliRun h = quickstart_on("h200", "hardware: h200-sxm\n");
  EXPECT_NE(h.out.find("no dense validation runs on h200 hardware: wider interval from all"),
            std::string::npos)
      << h.out;
  // B300: one dense run out of sample (tests/validation/oos/), fewer than a group needs.
  const testing::CliRun b = quickstart_on("b300", "hardware: b300\ntopology: dgx-b300\n");
  EXPECT_NE(b.out.find("too few dense validation runs on b300 hardware: wider interval from all"),
            std::string::npos)
      << b.out;
  // B200: six dense runs, all predicted too slow: its own interval, which lies below the
  // prediction (a biased group says so rather than centring on it).
  const testing::CliRun b2 = quickstart_on("b200", "hardware: b200\ntopology: dgx-b200\n");
  EXPECT_NE(b2.out.find("from 6 validation runs (b200): published/predicted step -25.1% to"),
            std::string::npos)
      << b2.out;
  // GB300: its nine dense out-of-sample runs, all but one MLPerf run predicted too slow, give a
  // median error far below zero; a MoE layout there gets the five MoE runs instead.
  const testing::CliRun g =
      testing::Shardsim("simulate " + std::string(SHARDSIM_SOURCE_DIR) +
                            "/tests/validation/oos/mbridge26.02_gb300_70b_fp8mx_64gpu.yaml --json",
                        false);
  ASSERT_EQ(g.code, 0) << g.out;
  const Json gj = Json::parse(g.out);
  EXPECT_EQ(gj["step_time_interval_basis"]["group"], "gb300");
  EXPECT_EQ(gj["step_time_interval_basis"]["runs"], 9);
  EXPECT_TRUE(gj["step_time_interval_basis"]["hardware_validated"]);
  EXPECT_LT(gj["step_time_interval_basis"]["median_error"].get<double>(), -0.2);
  EXPECT_LT(gj["step_time_interval_s"][0].get<double>(), 0.7 * gj["step_time_s"].get<double>());
  const testing::CliRun m = testing::Shardsim(
      "simulate " + std::string(SHARDSIM_SOURCE_DIR) +
          "/tests/validation/oos/mbridge25.11_gb300_qwen3a22b_bf16_256gpu.yaml --json",
      false);
  ASSERT_EQ(m.code, 0) << m.out;
  EXPECT_EQ(Json::parse(m.out)["step_time_interval_basis"]["group"], "gb300 moe");
  EXPECT_EQ(Json::parse(m.out)["step_time_interval_basis"]["kind"], "moe");
  // A library without the residuals file: no interval, and the text says why.
  namespace fs = std::filesystem;
  const fs::path src(SHARDSIM_SOURCE_DIR);
  const fs::path lib = fs::temp_directory_path() / "shardsim_interval_library";
  fs::remove_all(lib);
  fs::create_directories(lib / "hardware");
  fs::create_directory_symlink(src / "models", lib / "models");
  fs::create_directory_symlink(src / "topologies", lib / "topologies");
  fs::create_symlink(src / "hardware/h100-sxm.yaml", lib / "hardware/h100-sxm.yaml");
  const testing::CliRun none =
      testing::Shardsim("simulate scenarios/quickstart.yaml --library " + lib.string());
  EXPECT_NE(none.out.find("interval: none (no hardware/calibration/residuals.json in the library"),
            std::string::npos)
      << none.out;
}

}  // namespace
}  // namespace shardsim
