// The V schedules (zb_v, dualpipe_v) as a user writes them: virtual_stages 2 or left out runs the
// same two chunks per rank, and --json says 2 either way; other values are located errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

using testing::Shardsim;

std::string Write(const std::string& name, const std::string& parallel) {
  const std::string dir = ::testing::TempDir() + "shardsim_v_schedule";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name + ".yaml";
  testing::WriteFile(path, "base: " + std::string(SHARDSIM_SOURCE_DIR) +
                               "/scenarios/quickstart.yaml\nparallel: " + parallel + "\n");
  return path;
}

std::string Lib() { return "--library " + std::string(SHARDSIM_SOURCE_DIR) + " "; }

TEST(VScheduleCli, UnsetAndTwoRunTheSameAndEchoTwo) {
  for (const std::string sched : {"zb_v", "dualpipe_v"}) {
    const testing::CliRun one = Shardsim(
        Lib() + "simulate --json " + Write(sched + "1", "{schedule: " + sched + "}"), false);
    const testing::CliRun two =
        Shardsim(Lib() + "simulate --json " +
                     Write(sched + "2", "{schedule: " + sched + ", virtual_stages: 2}"),
                 false);
    ASSERT_EQ(one.code, 0) << one.out;
    ASSERT_EQ(two.code, 0) << two.out;
    const nlohmann::json a = nlohmann::json::parse(one.out);
    const nlohmann::json b = nlohmann::json::parse(two.out);
    EXPECT_EQ(a["layout"]["virtual_stages"], 2) << sched;
    EXPECT_EQ(b["layout"]["virtual_stages"], 2) << sched;
    EXPECT_EQ(a["step_time_s"], b["step_time_s"]) << sched;
  }
}

TEST(VScheduleCli, OtherValuesAreLocatedErrors) {
  const std::string path = Write("dv3", "{schedule: dualpipe_v, virtual_stages: 3}");
  const testing::CliRun r = Shardsim(Lib() + "simulate " + path);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(path + ":2:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("parallel.virtual_stages: 3: dualpipe_v runs exactly two model chunks per "
                       "rank"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace shardsim
