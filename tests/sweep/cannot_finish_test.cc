// Sweep points whose run cannot finish (with training.tokens, Goodput::feasible false: simulate
// reports the step and exits 1) have their own status, cannot_finish: their rows keep the step's
// outputs and the goodput reason, they are never ranked, and the report counts them apart from
// points whose simulation failed (they were `error` rows, without outputs).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/sweep/rows.h"
#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

using sweep_test::Lines;
using sweep_test::ReadFile;
using sweep_test::Shardsim;
using sweep_test::TempDir;
using sweep_test::WriteFile;

// GPT-3 350M on 16 A100s, one layout: at 10 interruptions per GPU-hour the job MTBF (22.5 s) is
// shorter than a restart (600 s), so the run cannot finish; at 1e-5 it can.
const char* const kScenario =
    "name: goodput\n"
    "model: gpt3-350m\n"
    "hardware: a100-sxm4-40gb\n"
    "topology: dgx-a100\n"
    "gpus: 16\n"
    "training: {seq_len: 2048, global_batch: 32, micro_batch: 1, precision: bf16, recompute: "
    "none, tokens: 1e9}\n"
    "parallel: {dp: 4, tp: 2, pp: 2, zero_stage: 1}\n";

TEST(CannotFinish, SweepRowsKeepTheStepAndAreNeverRanked) {
  TempDir dir;
  WriteFile(dir / "s.yaml",
            std::string(kScenario) + "reliability: {interruptions_per_gpu_hour: 10}\n");
  WriteFile(
      dir / "sweep.yaml",
      std::string(kScenario) + "sweep:\n  reliability.interruptions_per_gpu_hour: [1e-5, 10]\n");
  // simulate of the point that cannot finish: the step, exit 1.
  const sweep_test::CliRun sim = Shardsim("simulate " + dir / "s.yaml" + " --json", false);
  ASSERT_EQ(sim.code, 1) << sim.out;
  const nlohmann::json j = nlohmann::json::parse(sim.out);
  ASSERT_FALSE(j["goodput"]["feasible"].get<bool>());
  const sweep_test::CliRun r = Shardsim(
      "sweep " + dir / "sweep.yaml" + " -o " + dir / "r.csv" + " --jsonl " + dir / "r.jsonl" +
          " --ranking " + dir / "ranked.csv" + " --rank-by goodput --progress none",
      false);
  ASSERT_EQ(r.code, 0) << r.out;  // one point is feasible
  const std::vector<std::string> lines = Lines(ReadFile(dir / "r.csv"));
  ASSERT_EQ(lines.size(), 3u);
  const RowFormat csv(RowFormatKind::kCsv, {"reliability.interruptions_per_gpu_hour"});
  Result<Row> ok = csv.Parse(lines[1]);
  Result<Row> never = csv.Parse(lines[2]);
  ASSERT_TRUE(ok.ok() && never.ok());
  EXPECT_EQ(ok->status, PointStatus::kOk);
  EXPECT_EQ(never->status, PointStatus::kCannotFinish);
  EXPECT_NE(lines[2].find(",cannot_finish,true,"), std::string::npos) << lines[2];
  // The step is reported, as simulate reports it; nothing is booked.
  EXPECT_EQ((*never)[Metric::kStepTime], j["step_time_s"].get<double>());
  EXPECT_EQ((*never)[Metric::kTokensPerS], j["tokens_per_s"].get<double>());
  EXPECT_EQ((*never)[Metric::kTimeToTrainIdeal], j["time_to_train_ideal_s"].get<double>());
  EXPECT_EQ((*never)[Metric::kGoodput], 0.0);
  EXPECT_FALSE(never->has(Metric::kTimeToTrain));
  EXPECT_FALSE(never->has(Metric::kGpuHours));
  EXPECT_EQ(never->reason, j["goodput"]["infeasible_reason"].get<std::string>());
  EXPECT_EQ(never->reason.rfind("goodput: the run cannot finish: ", 0), 0u) << never->reason;
  // The JSON Lines row says the same.
  const std::vector<std::string> jl = Lines(ReadFile(dir / "r.jsonl"));
  ASSERT_EQ(jl.size(), 2u);
  const nlohmann::json row = nlohmann::json::parse(jl[1]);
  EXPECT_EQ(row["status"], "cannot_finish");
  EXPECT_EQ(row["fits"], true);
  EXPECT_TRUE(row["time_to_train_s"].is_null());
  // Ranked: the point that can finish only; the report counts the other apart from failures.
  const std::vector<std::string> ranked = Lines(ReadFile(dir / "ranked.csv"));
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_EQ(ranked[1].rfind("1,0,", 0), 0u) << ranked[1];
  EXPECT_NE(r.out.find("Top 1 of 1 feasible points by goodput"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failed 0, cannot finish (goodput) 1)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  cannot_finish  goodput       1  point 1: goodput: the run cannot "
                       "finish: the job MTBF, 22.5 s"),
            std::string::npos)
      << r.out;
  // Every point unable to finish: no feasible point, exit 1 (as simulate of each).
  WriteFile(dir / "all.yaml", std::string(kScenario) +
                                  "sweep:\n  reliability.interruptions_per_gpu_hour: [10, 20]\n");
  const sweep_test::CliRun none = Shardsim("sweep " + dir / "all.yaml" + " --progress none", false);
  EXPECT_EQ(none.code, 1) << none.out;
  EXPECT_NE(none.out.find("no feasible point: all 2 points are infeasible"), std::string::npos)
      << none.out;
  EXPECT_EQ(none.out.find("  error "), std::string::npos) << none.out;
}

// check-claim of a scenario whose run cannot finish: with --layout it exited 2 with "internal
// error: check-claim: simulating --layout ... failed"; now, as simulate: the stated layout's step
// is reported, the verdict (impossible: the claim cannot be run as stated) says why, exit 1.
// Without --layout, the search says no layout can finish the run (it said none fits in memory).
TEST(CannotFinish, CheckClaimReportsTheStepAndWhy) {
  TempDir dir;
  WriteFile(dir / "c.yaml",
            "name: claim-goodput\n"
            "model: gpt3-125m\n"
            "hardware: h100-sxm\n"
            "topology: dgx-h100\n"
            "gpus: 8\n"
            "training: {seq_len: 2048, global_batch: 64, micro_batch: 1, precision: bf16, "
            "tokens: 1e9}\n"
            "parallel: {dp: 8, tp: 1, pp: 1}\n"
            "reliability: {interruptions_per_gpu_hour: 10}\n");
  const sweep_test::CliRun sim = Shardsim("simulate " + dir / "c.yaml" + " --json", false);
  ASSERT_EQ(sim.code, 1) << sim.out;
  const nlohmann::json s = nlohmann::json::parse(sim.out);
  const std::string claim =
      "check-claim \"40000 tokens/s/GPU\" --scenario " + dir / "c.yaml" + " --progress none -j 2";
  const sweep_test::CliRun text = Shardsim(claim + " --layout tp=1,mb=1");
  EXPECT_EQ(text.code, 1) << text.out;
  EXPECT_EQ(text.out.find("internal"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("error:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\nThe stated layout (tp=1,mb=1): cannot_finish: goodput: the run "
                          "cannot finish: the job MTBF, 45.0 s"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("\n  its step: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("\nVerdict: impossible\n  - the stated layout (tp=1,mb=1) runs a step "
                          "of 54.9 ms ("),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("but the run of training.tokens cannot finish (goodput: "),
            std::string::npos);
  EXPECT_EQ(text.out.find("does not fit in memory"), std::string::npos) << text.out;
  const sweep_test::CliRun json = Shardsim(claim + " --layout tp=1,mb=1 --json", false);
  EXPECT_EQ(json.code, 1) << json.out;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["verdict"], "impossible");
  EXPECT_EQ(j["runs_as_stated"], false);
  EXPECT_EQ(j["given"]["status"], "cannot_finish");
  // The stated layout is the scenario's: the step simulate reports.
  EXPECT_EQ(j["given"]["step_time_s"].get<double>(), s["step_time_s"].get<double>());
  EXPECT_EQ(j["given"]["reason"], s["goodput"]["infeasible_reason"]);
  EXPECT_TRUE(j["best"].is_null());
  EXPECT_GT(j["cannot_finish"].get<int64_t>(), 0);
  const sweep_test::CliRun search = Shardsim(claim);
  EXPECT_EQ(search.code, 0) << search.out;
  EXPECT_NE(search.out.find("Best layout found: none can finish the run ("), std::string::npos)
      << search.out;
  EXPECT_NE(search.out.find("\nVerdict: implausible\n  - no layout of 8 h100-sxm among the "),
            std::string::npos)
      << search.out;
  EXPECT_NE(search.out.find(" points searched can finish the run of training.tokens: "),
            std::string::npos)
      << search.out;
  EXPECT_EQ(search.out.find("fits the model in memory"), std::string::npos) << search.out;
}

// The status reads back (resume, merge) and its row says fits = true.
TEST(CannotFinish, StatusRoundTrips) {
  Row r;
  r.point = 1;
  r.inputs = {"10"};
  r.status = PointStatus::kCannotFinish;
  r[Metric::kStepTime] = 0.5;
  r.reason = "goodput: the run cannot finish: ...";
  EXPECT_FALSE(Feasible(r.status));
  EXPECT_TRUE(Simulated(r.status));
  for (RowFormatKind kind : {RowFormatKind::kCsv, RowFormatKind::kJsonl}) {
    const RowFormat f(kind, {"reliability.interruptions_per_gpu_hour"});
    const std::string line = f.Format(r);
    Result<Row> back = f.Parse(line.substr(0, line.size() - 1));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->status, PointStatus::kCannotFinish);
    EXPECT_EQ(f.Format(*back), line);
  }
}

}  // namespace
}  // namespace shardsim
