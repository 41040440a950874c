// --explain says how much of the step the engine simulated event by event and how much it filled
// in from repeating periods (sim/engine/periods.cc; the figures are the same either way:
// tests/program/periods_test.cc).
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

using testing::Shardsim;

std::string Explain(const std::string& scenario) {
  const std::string src(SHARDSIM_SOURCE_DIR);
  const testing::CliRun r =
      Shardsim("--library " + src + " simulate " + src + "/scenarios/" + scenario + " --explain",
               /*stderr_too=*/false);
  EXPECT_EQ(r.code, 0) << r.out;
  return r.out;
}

TEST(PeriodsExplain, SaysWhatWasFilledIn) {
  // GPT-3 175B: 96 micro-batches in 12 interleaved groups of 8; 8 of them repeat exactly.
  const std::string gpt3 = Explain("gpt3-175b-a100x1024.yaml");
  EXPECT_NE(gpt3.find("  simulation (sim/engine): 6474 tasks, 3968 of them filled in from 8 "
                      "schedule periods that repeat an earlier one's whole run state exactly"),
            std::string::npos)
      << gpt3;
  // Mixtral 8x7B: 4 groups, too few to name (sim/program/step_program.cc, PeriodOf).
  const std::string moe = Explain("mixtral-8x7b-h100x64.yaml");
  EXPECT_NE(moe.find("  simulation (sim/engine): 3368 tasks, every one simulated\n"),
            std::string::npos)
      << moe;
}

}  // namespace
}  // namespace shardsim
