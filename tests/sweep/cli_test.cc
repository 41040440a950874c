// The sweep, merge and check-claim commands end to end: exit codes, stdout, files.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

using sweep_test::ReadFile;
using sweep_test::Shardsim;
using sweep_test::TempDir;

TEST(SweepCli, RanksAndWritesFiles) {
  TempDir dir;
  const sweep_test::CliRun r = Shardsim("sweep tests/sweep/data/small.yaml -o " + dir / "s.csv" +
                                            " --jsonl " + dir / "s.jsonl" + " -j 2 --top 3",
                                        false);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("shardsim sweep: tests/sweep/data/small.yaml, 1262 points\n"
                        "Top 3 of ",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("(* = on the Pareto front)"), std::string::npos);
  EXPECT_NE(r.out.find("\nPareto front: "), std::string::npos);
  EXPECT_NE(r.out.find("invalid  parallel.schedule"), std::string::npos) << r.out;
  EXPECT_FALSE(ReadFile(dir / "s.csv").empty());
  EXPECT_FALSE(ReadFile(dir / "s.jsonl").empty());
  // The HTML report's title names the command once ("shardsim sweep: shardsim sweep: ..." before).
  const sweep_test::CliRun html =
      Shardsim("sweep tests/sweep/data/small.yaml --html " + dir / "s.html", false);
  ASSERT_EQ(html.code, 0) << html.out;
  EXPECT_NE(
      ReadFile(dir / "s.html").find("<title>shardsim sweep: tests/sweep/data/small.yaml</title>"),
      std::string::npos);
  // Existing files are kept unless told.
  const sweep_test::CliRun again =
      Shardsim("sweep tests/sweep/data/small.yaml -o " + dir / "s.csv");
  EXPECT_EQ(again.code, 2) << again.out;
}

TEST(SweepCli, BadSpecExitsTwoNamingFileLineAndKey) {
  const sweep_test::CliRun r = Shardsim("sweep tests/sweep/data/bad.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("tests/sweep/data/bad.yaml:10:3: error: parallel.tpp: unknown key"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("tests/sweep/data/bad.yaml:11:23: error: training.recompute: empty list"),
            std::string::npos);
}

TEST(SweepCli, EveryPointInfeasibleSaysWhyAndExitsOne) {
  const sweep_test::CliRun r = Shardsim("sweep tests/sweep/data/infeasible.yaml -j 2", false);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("\nInfeasible: 220 of 220 points (pruned 220, simulated and not fitting "
                       "0, invalid 0, failed 0)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("pruned  memory before activations over capacity     220  point 0: memory "
                       "before activations over capacity: 386 GiB of 40.0 GiB on pipeline stage 0; "
                       "model states 366 GiB (weights"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nno feasible point: all 220 points are infeasible (reasons above)\n"),
            std::string::npos);
}

TEST(SweepCli, SlurmArrayShardsAndMerge) {
  TempDir dir;
  std::string files;
  for (int id = 1; id <= 2; ++id) {
    const std::string f = dir / ("s" + std::to_string(id) + ".csv");
    const sweep_test::CliRun r =
        Shardsim("sweep tests/sweep/data/infeasible.yaml -o " + f + " -j 1 --progress none", false);
    (void)r;
    files += " " + f;
  }
  // Both runs above were unsharded (no SLURM variables): merging them is a duplicate error.
  const sweep_test::CliRun dup = Shardsim("merge -o " + dir / "m.csv" + files);
  EXPECT_EQ(dup.code, 2) << dup.out;
  std::string shards;
  for (int id = 1; id <= 2; ++id) {
    const std::string f = dir / ("t" + std::to_string(id) + ".csv");
    const sweep_test::CliRun r =
        Shardsim("sweep tests/sweep/data/small.yaml -o " + f + " -j 2 --progress none", false);
    (void)r;
    shards += " " + f;
    break;
  }
  const std::string env =
      "env SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_COUNT=2 "
      "SLURM_ARRAY_TASK_MIN=3 ";
  const std::string shard2 = dir / "u2.csv";
  const std::string cmd = env + SHARDSIM_BINARY + " sweep tests/sweep/data/small.yaml -o " +
                          shard2 + " -j 2 --progress none > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const sweep_test::CliRun s1 = Shardsim("sweep tests/sweep/data/small.yaml -o " + dir / "u1.csv" +
                                             " --shard 1/2 -j 2 --progress none",
                                         false);
  ASSERT_EQ(s1.code, 0) << s1.out;
  EXPECT_NE(s1.out.find("shard 1/2: 631 points"), std::string::npos) << s1.out;
  const sweep_test::CliRun m = Shardsim("merge --sweep tests/sweep/data/small.yaml -o " +
                                            dir / "u.csv" + " " + dir / "u1.csv" + " " + shard2,
                                        false);
  ASSERT_EQ(m.code, 0) << m.out;
  EXPECT_EQ(m.out.rfind("shardsim merge: 1262 points from 2 files into " + dir / "u.csv", 0), 0u);
  EXPECT_EQ(ReadFile(dir / "u.csv"), ReadFile(dir / "t1.csv"));
}

// Option problems exit 2 before a single point is evaluated (no "points evaluated" line).
TEST(SweepCli, BadOptionsExitTwoBeforeRunning) {
  TempDir dir;
  struct Case {
    std::string args;
    std::string message;
  };
  const Case cases[] = {
      // Both wrote the same file, interleaved.
      {"-o " + dir / "same.csv" + " --jsonl " + dir / "./same.csv",
       "error: --jsonl '" + dir / "./same.csv" + "' is the same file as --output '" +
           dir / "same.csv" + "'; give each output its own file"},
      {"--csv " + dir / "r.csv" + " --html " + dir / "r.csv",
       "error: --html '" + dir / "r.csv" + "' is the same file as --csv '" + dir / "r.csv" +
           "'; give each output its own file"},
      // Both failed only after the whole sweep.
      {"--rank-by time_to_train",
       "error: --rank-by time_to_train needs training.tokens in the scenario (the tokens to train "
       "on); tests/sweep/data/small.yaml sets it neither in its base scenario nor on a sweep "
       "axis"},
      {"--html /nonexistent/dir/h.html",
       "error: --html: cannot write '/nonexistent/dir/h.html': No such file or directory"},
      {"-j -1", "error: --jobs must be a positive thread count, or 0 for every core; got -1"},
  };
  for (const Case& c : cases) {
    const sweep_test::CliRun r =
        Shardsim("sweep tests/sweep/data/small.yaml --progress none " + c.args);
    EXPECT_EQ(r.code, 2) << c.args;
    EXPECT_EQ(r.out, c.message + "\n") << c.args;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "same.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir / "r.csv"));
}

// time_to_train is checked up front only when no point can have it: a sweep axis may set it.
TEST(SweepCli, RankByTimeToTrainWithTokensOnAnAxis) {
  TempDir dir;
  sweep_test::WriteFile(dir / "tokens.yaml",
                        "name: tokens\nmodel: gpt3-350m\nhardware: a100-sxm4-40gb\n"
                        "topology: dgx-a100\ngpus: 16\n"
                        "training: {seq_len: 2048, global_batch: 32, micro_batch: 1}\n"
                        "parallel: {dp: 16, tp: 1, pp: 1}\n"
                        "sweep:\n  training.tokens: [1e9, 2e9]\n");
  const sweep_test::CliRun r = Shardsim(
      "sweep " + dir / "tokens.yaml" + " --rank-by time_to_train -j 2 --progress none", false);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("by time to train"), std::string::npos) << r.out;
  // training.tokens in the file a `base:` names (scenarios/sweeps/h100-vs-h200-deadline.yaml's
  // form, refused up front when only the spec's own lines were read).
  sweep_test::WriteFile(dir / "base.yaml",
                        "name: base\nmodel: gpt3-350m\nhardware: a100-sxm4-40gb\n"
                        "topology: dgx-a100\ngpus: 16\n"
                        "training: {seq_len: 2048, global_batch: 32, micro_batch: 1, tokens: 1e9}\n"
                        "parallel: {dp: 16, tp: 1, pp: 1}\n");
  sweep_test::WriteFile(dir / "on_base.yaml",
                        "base: base.yaml\nsweep:\n  training.recompute: [none, full]\n");
  const sweep_test::CliRun b = Shardsim(
      "sweep " + dir / "on_base.yaml" + " --rank-by time_to_train -j 2 --progress none", false);
  EXPECT_EQ(b.code, 0) << b.out;
  EXPECT_NE(b.out.find("by time to train"), std::string::npos) << b.out;
}

TEST(MergeCli, OutputNamedForTheOtherFormatExitsTwo) {
  TempDir dir;
  const sweep_test::CliRun s = Shardsim(
      "sweep tests/sweep/data/infeasible.yaml -o " + dir / "s.jsonl" + " -j 2 --progress none",
      false);
  ASSERT_EQ(s.code, 1) << s.out;  // every point is infeasible
  // It wrote JSON Lines into m.csv.
  const sweep_test::CliRun m = Shardsim("merge -o " + dir / "m.csv" + " " + dir / "s.jsonl");
  EXPECT_EQ(m.code, 2) << m.out;
  EXPECT_EQ(m.out, "error: output '" + dir / "m.csv" +
                       "' is named as CSV but the shards are JSON Lines (" + dir / "s.jsonl" +
                       "); name it .jsonl\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "m.csv"));
}

TEST(MergeCli, OtherInputsNameTheColumnAndBothValues) {
  TempDir dir;
  const std::string shard = dir / "s.csv";
  const sweep_test::CliRun s = Shardsim(
      "sweep tests/sweep/data/infeasible.yaml -o " + shard + " -j 2 --progress none", false);
  ASSERT_EQ(s.code, 1) << s.out;
  std::string text = ReadFile(shard);
  const size_t row = text.find("\n3,selective,");
  ASSERT_NE(row, std::string::npos) << text.substr(0, 2000);
  text.replace(row, 13, "\n3,full,");
  sweep_test::WriteFile(shard, text);
  const sweep_test::CliRun m =
      Shardsim("merge --sweep tests/sweep/data/infeasible.yaml -o " + dir / "m.csv" + " " + shard);
  EXPECT_EQ(m.code, 2) << m.out;
  EXPECT_EQ(m.out, shard +
                       ":5:1: error: point 3 has other inputs than this sweep's: "
                       "training.recompute is full, the sweep's is selective\n");
}

TEST(CheckClaimCli, AbovePeak) {
  const sweep_test::CliRun r = Shardsim(
      "check-claim \"20000 tokens/s/GPU\" --model llama3-8b --hardware h100-sxm --gpus 8 -j 2 "
      "--progress none",
      false);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("Verdict: impossible\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("llama3-8b on 8 x h100-sxm (dgx-h100), seq 8192, global batch 512, bf16"),
            std::string::npos)
      << r.out;
  // The uncertainty is the prediction interval of the h100 validation runs
  // (hardware/calibration/residuals.json), not a fixed ±15%.
  EXPECT_NE(r.out.find("Uncertainty: published/predicted step time "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("validation runs (h100) in hardware/calibration/residuals.json\n"),
            std::string::npos)
      << r.out;
}

// At 128K tokens attention is most of the work: a FLOP/s claim reads far above the best layout
// under 6·N and far below it under the conventions that count attention, within the prediction
// interval under none.
// The reason said "read under ; not under ..." with nothing under "read under".
TEST(CheckClaimCli, ClaimBetweenConventionsSaysSo) {
  const sweep_test::CliRun r = Shardsim(
      "check-claim \"500 TFLOP/s per GPU\" --model llama3-8b --hardware h100-sxm --gpus 8 "
      "--seq-len 131072 --progress none -j 2");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("read under ;"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("no FLOPs convention listed reads the claim within the prediction interval ("),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("it is plausible only under a FLOPs count between those conventions"),
            std::string::npos)
      << r.out;
}

// The best layout's line says which of the embedding and the loss count as layers of its
// pipeline split: here the scenario's own key, the embedding only (31 + 1 over pp 2 x v 8). It
// said "embedding and loss" from the layer count alone.
TEST(CheckClaimCli, BestLayoutNamesTheSplitKeysInEffect) {
  const sweep_test::CliRun r = Shardsim(
      "check-claim \"3000 tokens/s/GPU\" --scenario tests/sweep/data/split_keys_given.yaml "
      "--progress none -j 2");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("pp 2, cp 1, schedule interleaved_1f1b, virtual_stages 8"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(", embedding counted as a layer of the pipeline split ("), std::string::npos)
      << r.out;
}

TEST(CheckClaimCli, BadClaimExitsTwo) {
  const sweep_test::CliRun r = Shardsim(
      "check-claim \"very fast\" --model llama3-8b "
      "--hardware h100-sxm --gpus 8");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out.rfind("error: claim \"very fast\" is not in a form shardsim reads", 0), 0u)
      << r.out;
}

TEST(CheckClaimCli, BadOptionsExitTwoNamingTheOption) {
  struct Case {
    std::string args;
    std::string message;
  };
  const std::string layout = "--model llama3-8b --hardware h100-sxm --gpus 8";
  const std::string positive = " must be a positive integer, got ";
  const Case cases[] = {
      // These four ran with the defaults.
      {layout + " --seq-len 0", "check-claim: --seq-len" + positive + "0"},
      {layout + " --seq-len -5", "check-claim: --seq-len" + positive + "-5"},
      {layout + " --global-batch 0", "check-claim: --global-batch" + positive + "0"},
      {layout + " --global-batch -5", "check-claim: --global-batch" + positive + "-5"},
      // These said to give --gpus.
      {"--model llama3-8b --hardware h100-sxm --gpus 0", "check-claim: --gpus" + positive + "0"},
      {"--model llama3-8b --hardware h100-sxm --gpus -8", "check-claim: --gpus" + positive + "-8"},
      {"--model llama3-8b --hardware h100-sxm",
       "check-claim: give --scenario FILE, or --model, --hardware and --gpus"},
      // This ignored --model.
      {"--scenario scenarios/quickstart.yaml --model llama3-8b --seq-len 4096",
       "check-claim: --model, --seq-len cannot be combined with --scenario, which gives the "
       "model, hardware, topology, GPU count and training; give --scenario alone, or --model, "
       "--hardware and --gpus"},
      // This said "no default cluster for hardware 'h100'; give --topology".
      {"--model llama3-8b --hardware h100 --gpus 8", "hardware: no hardware named 'h100' in " +
                                                         std::string(SHARDSIM_SOURCE_DIR) +
                                                         "/hardware/; close names: b200"},
      {layout + " -j -1", "--jobs must be a positive thread count, or 0 for every core; got -1"},
      // This said "implausible: no layout of 12 h100-sxm fits the model in memory".
      {"--model llama3-8b --hardware h100-sxm --gpus 12",
       "check-claim: 12 GPUs do not fill whole nodes of topology 'dgx-h100' (8 GPUs per node); "
       "use a multiple of 8"},
  };
  for (const Case& c : cases) {
    const sweep_test::CliRun r =
        Shardsim("check-claim \"1000 tokens/s/GPU\" --progress none " + c.args);
    EXPECT_EQ(r.code, 2) << c.args;
    EXPECT_EQ(r.out, "error: " + c.message + "\n") << c.args;
  }
}

}  // namespace
}  // namespace shardsim
