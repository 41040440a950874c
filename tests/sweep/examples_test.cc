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
  // batch 1536 over dp, interleaving only with micro-batches per step a multiple of pp), each
  // with every micro-batch dividing 1536 / dp, times 3 recompute modes.
  EXPECT_EQ(Points("scenarios/sweeps/gpt3-175b-a100x1024.yaml"), 55740);
  EXPECT_EQ(Points("scenarios/sweeps/llama3-70b-h100x512.yaml"), 22260);
  EXPECT_EQ(Points("scenarios/sweeps/h100-vs-h200-deadline.yaml"), 2332);
  // 263 layouts (tp, pp, schedule, virtual stages and ep | gcd(dp, 8)) x 2 recompute modes.
  EXPECT_EQ(Points("scenarios/sweeps/mixtral-8x7b-h100x64.yaml"), 526);
  // Six GPU counts of the Llama 3 405B layout (tests/sweep/goodput_sweep_test.cc runs them).
  EXPECT_EQ(Points("scenarios/sweeps/llama3-405b-gpus-goodput.yaml"), 6);
}

}  // namespace
}  // namespace shardsim
