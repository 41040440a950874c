// Megatron-LM's microbatch_group_size_per_vp_stage as a user writes it on an interleaved
// scenario: --json and the text echo it when set (and only then); a larger group runs more
// warm-up forwards ((v - 1)·N), so the first stage holds more activations; the default is pp's
// group exactly; budget says where its in-flight count comes from.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

using testing::Shardsim;

std::string Lib() { return "--library " + std::string(SHARDSIM_SOURCE_DIR) + " "; }

// GPT-3 175B, TP8 PP8 DP16, 2 chunks, 96 micro-batches, with the group written (or not).
std::string Write(const std::string& group) {
  const std::string dir = ::testing::TempDir() + "shardsim_microbatch_group";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/g" + group + ".yaml";
  std::string text =
      "base: " + std::string(SHARDSIM_SOURCE_DIR) + "/scenarios/gpt3-175b-a100x1024.yaml\n";
  if (!group.empty()) text += "parallel: {microbatch_group_size_per_vp_stage: " + group + "}\n";
  testing::WriteFile(path, text);
  return path;
}

nlohmann::json Json(const std::string& group) {
  const testing::CliRun r = Shardsim(Lib() + "simulate --json " + Write(group), false);
  EXPECT_EQ(r.code, 0) << r.out;
  return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json{};
}

TEST(MicrobatchGroupCli, EchoedWhenSetAndTheDefaultIsPp) {
  const nlohmann::json unset = Json("");
  const nlohmann::json eight = Json("8");
  const nlohmann::json sixteen = Json("16");
  ASSERT_FALSE(unset.empty() || eight.empty() || sixteen.empty());
  EXPECT_FALSE(unset["layout"].contains("microbatch_group_size_per_vp_stage"));
  EXPECT_EQ(sixteen["layout"]["microbatch_group_size_per_vp_stage"], 16);
  // pp written out is the default: the same step and memory.
  EXPECT_EQ(eight["step_time_s"], unset["step_time_s"]);
  EXPECT_EQ(eight["memory"]["peak_bytes"], unset["memory"]["peak_bytes"]);
  // 16 per group: 8 more warm-up chunk-forwards on every rank, so more activations at the peak.
  EXPECT_GT(sixteen["memory"]["peak_bytes"].get<double>(),
            unset["memory"]["peak_bytes"].get<double>());

  const testing::CliRun text = Shardsim(Lib() + "simulate " + Write("16"), false);
  EXPECT_NE(text.out.find("interleaved_1f1b v2 (16 micro-batches per chunk group)"),
            std::string::npos)
      << text.out;
}

// budget says where its in-flight count comes from: stage 0 warms up with (pp - 1)·2 + (v - 1)·N
// chunk-forwards, 14 + 8 by default and 14 + 16 with N = 16; its first chunk also holds the
// embedding, so the count is the stage's peak over one micro-batch's bytes.
TEST(MicrobatchGroupCli, BudgetSaysWhereTheInFlightCountComesFrom) {
  for (const auto& [group, warmup] : {std::pair<std::string, int>{"", 22}, {"16", 30}}) {
    const testing::CliRun r = Shardsim(Lib() + "budget " + Write(group), false);
    EXPECT_EQ(r.code, 0) << r.out;
    const std::string want = "in flight (interleaved_1f1b: " + std::to_string(warmup) +
                             " warm-up chunk-forwards on this stage, then one more; " +
                             (group.empty() ? "8" : group) + " micro-batches per chunk group";
    EXPECT_NE(r.out.find(want + "; its chunks save different bytes"), std::string::npos) << r.out;
  }
}

TEST(MicrobatchGroupCli, OutOfMegatronsRangeIsALocatedError) {
  const std::string path = Write("10");  // leaves 6 of 96 for the last group, fewer than pp 8
  const testing::CliRun r = Shardsim(Lib() + "simulate " + path);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(path + ":2:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("parallel.microbatch_group_size_per_vp_stage: 10 leaves 6 of the 96"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace shardsim
