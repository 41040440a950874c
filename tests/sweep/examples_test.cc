// The example sweeps of scenarios/sweeps/ read, check and enumerate (the benchmark spaces among
// them keep their sizes: docs/sweep.md quotes them).
#include <gtest/gtest.h>

#include "sim/sweep/point_space.h"
#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

int64_t Points(const std::string& path) {
  const LoadOptions lib = sweep_test::Lib();
  Result<SweepSpec> spec = LoadSweepSpec(path, lib);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  if (!spec.ok()) return -1;
  Result<PointSpace> space = PointSpace::Enumerate(*spec, lib);
  EXPECT_TRUE(space.ok()) << space.status().ToString();
  return space.ok() ? space->size() : -1;
}

TEST(SweepExamples, ReadAndEnumerate) {
  // 175B: the layouts of 1,024 GPUs ValidateScenario accepts (tp | 96 heads, pp | 96 layers,
  // batch 1536 over dp, interleaving only with micro-batches per step a multiple of pp; the
  // zero-bubble and DualPipe schedules where they validate), each with every micro-batch dividing
  // 1536 / dp, times 3 recompute modes. Before the five split schedules joined the default
  // search: 55,740, 22,260, 2,332 and 526.
  EXPECT_EQ(Points("scenarios/sweeps/gpt3-175b-a100x1024.yaml"), 70200);
  EXPECT_EQ(Points("scenarios/sweeps/llama3-70b-h100x512.yaml"), 37464);
  EXPECT_EQ(Points("scenarios/sweeps/h100-vs-h200-deadline.yaml"), 3900);
  // 512 layouts (tp, pp, schedule, virtual stages and ep | gcd(dp, 8)) x 2 recompute modes.
  EXPECT_EQ(Points("scenarios/sweeps/mixtral-8x7b-h100x64.yaml"), 1024);
  // Six GPU counts of the Llama 3 405B layout (tests/sweep/goodput_sweep_test.cc runs them).
  EXPECT_EQ(Points("scenarios/sweeps/llama3-405b-gpus-goodput.yaml"), 6);
  // 7 accelerators x 4 precisions.
  EXPECT_EQ(Points("scenarios/sweeps/gpus-and-precisions.yaml"), 28);
}

// Every new hardware file and precision runs end to end: the 28 points simulate, and exactly
// the pairs without a peak (h200-sxm mxfp8 / nvfp4, mi350x and mi355x nvfp4) are invalid with
// the validator's located error.
TEST(SweepExamples, EveryGpuAndPrecisionRuns) {
  sweep_test::TempDir dir;
  const sweep_test::CliRun r =
      sweep_test::Shardsim("sweep scenarios/sweeps/gpus-and-precisions.yaml -o " + dir / "g.csv" +
                               " --jsonl " + dir / "g.jsonl",
                           false);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string jsonl = sweep_test::ReadFile(dir / "g.jsonl");
  int lines = 0, ok = 0, invalid = 0;
  for (size_t start = 0; start < jsonl.size();) {
    size_t end = jsonl.find('\n', start);
    if (end == std::string::npos) end = jsonl.size();
    const std::string line = jsonl.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    ++lines;
    if (line.find("\"status\":\"ok\"") != std::string::npos) ++ok;
    if (line.find("\"status\":\"invalid\"") != std::string::npos) {
      ++invalid;
      EXPECT_NE(line.find("needs a matmul peak for it in the hardware"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(lines, 28) << jsonl.substr(0, 2000);
  EXPECT_EQ(invalid, 4) << jsonl.substr(0, 2000);
  EXPECT_EQ(ok, 24) << jsonl.substr(0, 2000);
}

}  // namespace
}  // namespace shardsim
