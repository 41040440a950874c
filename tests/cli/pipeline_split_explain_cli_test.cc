// --explain says how the layers were split over the pipeline and which key chose the split:
// even (GPT-3 175B, 96 layers over pp 8 x v 2), uneven first/last stages (DeepSeek-V3 on 2,048
// H800 under DualPipe, rank by rank), the embedding and loss counted as layers (the Llama 3.1
// 405B out-of-sample row), and Megatron-Core's layout string (DeepSeek-V3 on GB200).
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

using testing::Shardsim;

std::string Explain(const std::string& scenario) {
  const std::string src(SHARDSIM_SOURCE_DIR);
  const testing::CliRun r =
      Shardsim("--library " + src + " simulate " + src + "/" + scenario + " --explain",
               /*stderr_too=*/false);
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.out;  // 1: simulated, does not fit
  return r.out;
}

TEST(PipelineSplitExplain, SaysTheSplitAndTheKeyBehindIt) {
  const std::string even = Explain("scenarios/gpt3-175b-a100x1024.yaml");
  EXPECT_NE(even.find("  pipeline split (even): layers per chunk in stage order: 6 x16 "
                      "(embedding with the first, loss with the last)\n"),
            std::string::npos)
      << even;
  const std::string dual = Explain("scenarios/deepseek-v3-h800x2048.yaml");
  EXPECT_NE(dual.find("  pipeline split (parallel.first_stage_layers 4, last_stage_layers 1): "
                      "layers per rank's two chunks: 4+1 4+4"),
            std::string::npos)
      << dual;
  const std::string edges =
      Explain("tests/validation/oos/mbridge25.11_b200_405b_fp8cs_128gpu.yaml");
  EXPECT_NE(edges.find("  pipeline split (the embedding / loss counted as layers "
                       "(parallel.account_for_*)): layers per chunk in stage order: 1, 2 x62, 1 "),
            std::string::npos)
      << edges;
  const std::string layout =
      Explain("tests/validation/oos/mbridge25.11_gb200_dsv3_bf16_256gpu.yaml");
  EXPECT_NE(layout.find("  pipeline split (parallel.pipeline_layout \"Et*3|(t*4|)*14ttL\"): layers "
                        "per chunk in stage order: 3, 4 x14, 2 "),
            std::string::npos)
      << layout;
}

}  // namespace
}  // namespace shardsim
