// Memory held against what was measured and what was stated: the peak memory torchtitan's
// benchmark measured for its Llama 3 8B runs (tests/reference/memory.yaml measured_peak_memory,
// within 15%), and the layouts published as fitting or not fitting in 80 GB
// (tests/reference/memory.yaml feasibility; scenarios in tests/validation/feasibility/ and the
// BLOOM run).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "sim/config/loader.h"
#include "sim/program/simulate.h"

namespace shardsim {
namespace {

const std::string kDir = std::string(SHARDSIM_SOURCE_DIR) + "/tests/validation/";

TEST(MemoryValidation, TorchtitanMeasuredPeaks) {
  std::ifstream in(kDir + "published.json");
  const nlohmann::json runs = nlohmann::json::parse(in)["runs"];
  std::printf("\n%-44s %12s %12s %8s\n", "run", "predicted", "measured", "error");
  int checked = 0;
  for (const auto& r : runs) {
    if (!r.contains("peak_memory_gib") || r["peak_memory_gib"].is_null()) continue;
    auto sc = LoadScenario(kDir + r["scenario"].get<std::string>(), LoadOptions{});
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    auto sim = Simulate(*sc);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    const double measured = r["peak_memory_gib"]["value"].get<double>();
    const double predicted = sim->peak_memory.value() / 1073741824.0;
    const double err = predicted / measured - 1.0;
    std::printf("%-44s %9.1f GiB %9.1f GiB %+7.1f%%\n", r["id"].get<std::string>().c_str(),
                predicted, measured, err * 100.0);
    EXPECT_LE(std::fabs(err), 0.15) << r["id"];
    EXPECT_TRUE(sim->fits) << r["id"] << " ran, so it fits";
    ++checked;
  }
  EXPECT_EQ(checked, 10);
}

TEST(MemoryValidation, PublishedFeasibility) {
  struct Case {
    const char* file;
    bool fits;
  };
  const Case cases[] = {
      {"feasibility/gpt3-175b-h100-fp8-norecompute.yaml", true},
      {"feasibility/llama3-405b-16k-norecompute.yaml", true},
      {"feasibility/gpt-neox-20b-a100-40gb.yaml", true},
      {"feasibility/mpt-7b-h100-mb6-norecompute.yaml", true},
      {"feasibility/mpt-70b-a100-mb8-norecompute.yaml", false},
      {"bloom176b_384gpu.yaml", true},
  };
  for (const Case& c : cases) {
    auto sc = LoadScenario(kDir + c.file, LoadOptions{});
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    auto sim = Simulate(*sc);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    std::printf("%-52s peak %6.1f GiB of %5.1f: %s (stated: %s)\n", c.file,
                sim->peak_memory.value() / 1073741824.0,
                sc->hardware.memory_capacity / 1073741824.0, sim->fits ? "fits" : "does not fit",
                c.fits ? "fits" : "does not fit");
    EXPECT_EQ(sim->fits, c.fits) << c.file;
  }
}

// Published layouts the memory model does not yet reproduce, each with why. The test holds the
// disagreement, so that whoever models the missing mechanism moves the case to
// PublishedFeasibility above.
TEST(MemoryValidation, KnownFeasibilityGaps) {
  struct Gap {
    const char* file;
    bool stated_fits;
    const char* why;
  };
  const Gap gaps[] = {
      {"feasibility/deepseek-v3-h800-pp16-ep64.yaml", true,
       "on the line: 79.3 GiB against 79.0 with DeepSeek's FP8 activation caching, RMSNorm / "
       "MLA up-projection / SwiGLU recompute and BF16 moments modeled (arXiv 2412.19437 §3.2.3, "
       "§3.3.3); the rest is inside our memory uncertainty (3% fragmentation reserve assumed, "
       "DualPipe and micro-batch not modeled or stated; docs/moe.md)"},
  };
  for (const Gap& g : gaps) {
    auto sc = LoadScenario(kDir + g.file, LoadOptions{});
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    auto sim = Simulate(*sc);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    std::printf("%-52s peak %6.1f GiB of %5.1f: %s (stated: %s) KNOWN GAP: %s\n", g.file,
                sim->peak_memory.value() / 1073741824.0,
                sc->hardware.memory_capacity / 1073741824.0, sim->fits ? "fits" : "does not fit",
                g.stated_fits ? "fits" : "does not fit", g.why);
    EXPECT_NE(sim->fits, g.stated_fits) << g.file << " now agrees: move it to PublishedFeasibility";
  }
}

}  // namespace
}  // namespace shardsim
