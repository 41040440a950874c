// check-claim --json (sim/sweep/claim_json.h): the keys and values of a check, and the CLI's
// JSON saying what its text says.
#include "sim/sweep/claim_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

TEST(ClaimJson, KeysAndValues) {
  ClaimCheck c;
  c.claim.kind = ClaimKind::kTimeToTrain;
  c.claim.value = 54 * 86400.0;
  c.claim.train_tokens = 15e12;
  c.claim.text = "15T tokens in 54 days";
  c.model = "llama3-70b";
  c.hardware = "h100-sxm";
  c.topology = "dgx-h100";
  c.precision = "bf16";
  c.gpus = 512;
  c.seq_len = 8192;
  c.global_batch = 512;
  c.peak_flops = 989.4e12;
  c.conventions.push_back({"6·N", "Kaplan", 4.2e11, 1200, 504, 0.51});
  c.claimed_low = 1100;
  c.claimed_high = 1200;
  c.ceiling = 2202;
  c.searched = 10;
  c.feasible = 0;
  c.verdict = Verdict::kImplausible;
  c.reasons = {"a reason"};
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(ClaimJson(c));
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"claim",
                                            "model",
                                            "hardware",
                                            "topology",
                                            "gpus",
                                            "seq_len",
                                            "global_batch",
                                            "precision",
                                            "peak_flops",
                                            "fp8_peak_flops",
                                            "conventions",
                                            "claimed_tokens_per_s_per_gpu",
                                            "ceiling_tokens_per_s_per_gpu",
                                            "min_flops_per_token",
                                            "searched",
                                            "feasible",
                                            "best",
                                            "best_columns",
                                            "given",
                                            "verdict",
                                            "judged_against",
                                            "runs_as_stated",
                                            "uncertainty",
                                            "interval",
                                            "reasons",
                                            "assumptions",
                                            "best_flops_convention_note",
                                            "given_flops_convention_note",
                                            "cannot_finish"}));
  EXPECT_EQ(j["claim"]["kind"], "time_to_train_s");
  EXPECT_EQ(j["claim"]["value"], 54 * 86400.0);
  EXPECT_EQ(j["claim"]["train_tokens"], 15e12);
  EXPECT_EQ(j["conventions"][0]["tokens_per_s_per_gpu"], 1200);
  EXPECT_EQ(j["claimed_tokens_per_s_per_gpu"], nlohmann::json({1100, 1200}));
  EXPECT_TRUE(j["best"].is_null());  // no feasible layout
  EXPECT_TRUE(j["given"].is_null());
  EXPECT_EQ(j["verdict"], "implausible");
  EXPECT_EQ(j["uncertainty"], kStatedUncertainty);
  EXPECT_TRUE(j["interval"].is_null());  // no residuals given: the fixed uncertainty
  EXPECT_EQ(j["judged_against"], "best");
  EXPECT_TRUE(j["runs_as_stated"].is_null());  // no --layout
}

TEST(ClaimJson, CliSaysWhatItsTextSays) {
  const std::string args =
      "check-claim \"40000 tokens/s/GPU\" --model gpt3-125m --hardware h100-sxm --gpus 1 -j 2 "
      "--progress none";
  const sweep_test::CliRun text = sweep_test::Shardsim(args, false);
  const sweep_test::CliRun json = sweep_test::Shardsim(args + " --json", false);
  ASSERT_EQ(text.code, 0) << text.out;
  ASSERT_EQ(json.code, 0) << json.out;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const std::string verdict = j["verdict"];
  EXPECT_NE(text.out.find("\nVerdict: " + verdict + "\n"), std::string::npos) << text.out;
  EXPECT_EQ(j["gpus"], 1);
  EXPECT_EQ(j["best"]["status"], "ok");
  const std::string searched = "of " + std::to_string(j["searched"].get<int64_t>()) + " points";
  EXPECT_NE(text.out.find(searched), std::string::npos) << text.out;
}

}  // namespace
}  // namespace shardsim
