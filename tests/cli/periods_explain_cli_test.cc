// --explain says how much of the step the engine simulated event by event and how much it filled
// in from repeating periods (sim/engine/periods.cc; the figures are the same either way:
// tests/program/periods_test.cc), and how the layers were split over the pipeline and which key
// chose the split.
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

using testing::Shardsim;

// `simulate --explain` of `scenario` (a path from the source tree); `fits`: the step must fit
// (exit 0), else it may also be simulated and not fit (exit 1).
std::string Explain(const std::string& scenario, bool fits = true) {
  const std::string src(SHARDSIM_SOURCE_DIR);
  const testing::CliRun r =
      Shardsim("--library " + src + " simulate " + src + "/" + scenario + " --explain",
               /*stderr_too=*/false);
  EXPECT_TRUE(r.code == 0 || (!fits && r.code == 1)) << r.out;
  return r.out;
}

TEST(PeriodsExplain, SaysWhatWasFilledIn) {
  // GPT-3 175B: 96 micro-batches in 12 interleaved groups of 8; 8 of them repeat exactly.
  const std::string gpt3 = Explain("scenarios/gpt3-175b-a100x1024.yaml");
  EXPECT_NE(gpt3.find("  simulation (sim/engine): 6474 tasks, 3968 of them filled in from 8 "
                      "schedule periods that repeat an earlier one's whole run state exactly"),
            std::string::npos)
      << gpt3;
  // Mixtral 8x7B: 4 groups, too few to name (sim/program/step_program.cc, PeriodOf).
  const std::string moe = Explain("scenarios/mixtral-8x7b-h100x64.yaml");
  EXPECT_NE(moe.find("  simulation (sim/engine): 3368 tasks, every one simulated\n"),
            std::string::npos)
      << moe;
}

// Even (GPT-3 175B, 96 layers over pp 8 x v 2), uneven first/last stages (DeepSeek-V3 on 2,048
// H800 under DualPipe, rank by rank), the embedding and loss counted as layers (the Llama 3.1
// 405B out-of-sample row), and Megatron-Core's layout string (DeepSeek-V3 on GB200).
TEST(PipelineSplitExplain, SaysTheSplitAndTheKeyBehindIt) {
  struct Case {
    const char* scenario;
    bool fits;
    const char* line;
  };
  const Case cases[] = {
      {"scenarios/gpt3-175b-a100x1024.yaml", true,
       "  pipeline split (even): layers per chunk in stage order: 6 x16 "
       "(embedding with the first, loss with the last)\n"},
      {"scenarios/deepseek-v3-h800x2048.yaml", false,
       "  pipeline split (parallel.first_stage_layers 4, last_stage_layers 1): "
       "layers per rank's two chunks: 4+1 4+4"},
      {"tests/validation/oos/mbridge25.11_b200_405b_fp8cs_128gpu.yaml", true,
       "  pipeline split (the embedding / loss counted as layers "
       "(parallel.account_for_*)): layers per chunk in stage order: 1, 2 x62, 1 "},
      {"tests/validation/oos/mbridge25.11_gb200_dsv3_bf16_256gpu.yaml", true,
       "  pipeline split (parallel.pipeline_layout \"Et*3|(t*4|)*14ttL\"): layers "
       "per chunk in stage order: 3, 4 x14, 2 "},
  };
  for (const Case& c : cases) {
    const std::string out = Explain(c.scenario, c.fits);
    EXPECT_NE(out.find(c.line), std::string::npos) << c.scenario << "\n" << out;
  }
}

}  // namespace
}  // namespace shardsim
