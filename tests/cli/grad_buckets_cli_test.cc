// parallel.dp_bucket_size as the user sees it: --explain says the buckets asked for and the
// buckets simulated (at most kMaxGradBuckets per chunk), and text output warns, at the key's
// location, when the scenario set a size that was not honoured.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

using testing::Shardsim;

std::string Scenario(const std::string& name, const std::string& bucket) {
  const std::string dir = ::testing::TempDir() + "shardsim_grad_buckets";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name + ".yaml";
  std::string text = "base: " + std::string(SHARDSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml\n";
  if (!bucket.empty()) text += "parallel:\n  dp_bucket_size: " + bucket + "\n";
  testing::WriteFile(path, text);
  return path;
}

std::string Lib() { return "--library " + std::string(SHARDSIM_SOURCE_DIR) + " "; }

// Quick start (TP8 PP4 VP2): 4.47 GiB of fp32 gradients per chunk; 16 buckets of 286 MiB.
TEST(GradBucketsCli, CappedSizeWarnsAtTheKeyAndExplainSaysWhy) {
  const std::string path = Scenario("tiny", "1 KiB");
  const testing::CliRun r = Shardsim(Lib() + "simulate " + path, /*stderr_too=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("  warning: " + path + ":3:19: parallel.dp_bucket_size 1.00 KiB asks for "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("simulated 16 buckets of 286 MiB (at most 16 per chunk"), std::string::npos)
      << r.out;
  const testing::CliRun e = Shardsim(Lib() + "simulate " + path + " --explain", false);
  ASSERT_EQ(e.code, 0);
  EXPECT_NE(e.out.find("  gradient buckets (parallel.dp_bucket_size): 1.00 KiB asks for "),
            std::string::npos)
      << e.out;
}

TEST(GradBucketsCli, DefaultAndHonouredSizesDoNotWarn) {
  // The default 40 MB (38.1 MiB) is capped too (explain says so) but was not the user's choice:
  // no warning.
  const std::string quick = std::string(SHARDSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  const testing::CliRun d = Shardsim(Lib() + "simulate " + quick, false);
  ASSERT_EQ(d.code, 0);
  EXPECT_EQ(d.out.find("warning"), std::string::npos) << d.out;
  const testing::CliRun de = Shardsim(Lib() + "simulate " + quick + " --explain", false);
  EXPECT_NE(de.out.find("gradient buckets (parallel.dp_bucket_size): 38.1 MiB asks for 121 "
                        "buckets of the largest chunk's 4.47 GiB of gradients; simulated 16 "
                        "buckets of 286 MiB (at most 16 per chunk"),
            std::string::npos)
      << de.out;
  // 1 GiB buckets: ceil(4.47 / 1) = 5, honoured, no warning, and explain says 5.
  const std::string big = Scenario("big", "1 GiB");
  const testing::CliRun b = Shardsim(Lib() + "simulate " + big, false);
  ASSERT_EQ(b.code, 0);
  EXPECT_EQ(b.out.find("warning"), std::string::npos) << b.out;
  const testing::CliRun be = Shardsim(Lib() + "simulate " + big + " --explain", false);
  EXPECT_NE(be.out.find("simulated 5 buckets of "), std::string::npos) << be.out;
  // --json stays the contract's keys: no warning text in it.
  const testing::CliRun j =
      Shardsim(Lib() + "simulate " + Scenario("tiny", "1 KiB") + " --json", false);
  ASSERT_EQ(j.code, 0);
  EXPECT_EQ(j.out.find("warning"), std::string::npos);
}

}  // namespace
}  // namespace shardsim
