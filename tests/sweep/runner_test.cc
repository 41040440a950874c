// The engine: byte-identical files at any --jobs, resume after a cut or SIGKILL at any moment,
// shards that merge into the unsharded file.
#include "sim/sweep/runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "sim/sweep/merge.h"
#include "sim/sweep/point_space.h"
#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

using sweep_test::ReadFile;
using sweep_test::TempDir;
using sweep_test::WriteFile;

constexpr const char* kSmall = "tests/sweep/data/small.yaml";

const PointSpace& Small() {
  static const PointSpace* space = [] {
    const LoadOptions lib = sweep_test::Lib();
    Result<SweepSpec> spec = LoadSweepSpec(kSmall, lib);
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    Result<PointSpace> s = PointSpace::Enumerate(*spec, lib);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return new PointSpace(std::move(*s));
  }();
  return *space;
}

Result<SweepRun> RunSmall(const std::string& csv, const std::string& jsonl, int jobs,
                          bool resume = false, Shard shard = {}) {
  SweepRunOptions o;
  o.jobs = jobs;
  o.csv_path = csv;
  o.jsonl_path = jsonl;
  o.resume = resume;
  o.overwrite = !resume;
  o.shard = shard;
  return RunSweep(Small(), o, sweep_test::Lib());
}

// The uninterrupted result, computed once.
struct Reference {
  std::string csv, jsonl;
};
const Reference& Full() {
  static const Reference* ref = [] {
    TempDir dir;
    Result<SweepRun> r = RunSmall(dir / "a.csv", dir / "a.jsonl", 2);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return new Reference{ReadFile(dir / "a.csv"), ReadFile(dir / "a.jsonl")};
  }();
  return *ref;
}

TEST(SweepRunner, SameFilesAtOneAndTwoJobs) {
  TempDir dir;
  Result<SweepRun> r = RunSmall(dir / "one.csv", dir / "one.jsonl", 1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->summary.total(), Small().size());
  EXPECT_GT(r->summary.feasible(), 0);
  EXPECT_EQ(ReadFile(dir / "one.csv"), Full().csv);
  EXPECT_EQ(ReadFile(dir / "one.jsonl"), Full().jsonl);
  // One row per point, plus the header.
  EXPECT_EQ(std::count(Full().csv.begin(), Full().csv.end(), '\n'), Small().size() + 1);
}

TEST(SweepRunner, ResumeAfterACutAtAnyByte) {
  const std::string& full = Full().csv;
  const std::string& full_json = Full().jsonl;
  std::mt19937_64 rng(7);
  std::vector<size_t> cuts = {0,          5, full.find('\n'), full.find('\n') + 1, full.size() - 1,
                              full.size()};
  for (int i = 0; i < 6; ++i) cuts.push_back(rng() % full.size());
  for (size_t cut : cuts) {
    TempDir dir;
    WriteFile(dir / "r.csv", full.substr(0, cut));
    // The JSON Lines file was cut elsewhere: resume agrees on the shorter prefix.
    WriteFile(dir / "r.jsonl", full_json.substr(0, rng() % full_json.size()));
    Result<SweepRun> r = RunSmall(dir / "r.csv", dir / "r.jsonl", 2, true);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(ReadFile(dir / "r.csv"), full) << "cut at byte " << cut;
    EXPECT_EQ(ReadFile(dir / "r.jsonl"), full_json) << "cut at byte " << cut;
    EXPECT_EQ(r->summary.total(), Small().size());
  }
}

TEST(SweepRunner, ResumeOfACompleteFileChangesNothing) {
  TempDir dir;
  WriteFile(dir / "r.csv", Full().csv);
  Result<SweepRun> r = RunSmall(dir / "r.csv", "", 2, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->resumed, Small().size());
  EXPECT_EQ(ReadFile(dir / "r.csv"), Full().csv);
}

// The shardsim binary killed with SIGKILL at random moments, then resumed: exactly the
// uninterrupted rows, without duplicates or gaps.
TEST(SweepRunner, SigkillAtRandomMomentsThenResume) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 5; ++trial) {
    TempDir dir;
    const std::string out = dir / "k.csv";
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const int null_fd = ::open("/dev/null", O_WRONLY);
      dup2(null_fd, STDOUT_FILENO);
      dup2(null_fd, STDERR_FILENO);
      execl(SHARDSIM_BINARY, SHARDSIM_BINARY, "sweep", kSmall, "-o", out.c_str(), "--jobs", "2",
            "--progress", "none", static_cast<char*>(nullptr));
      _exit(127);
    }
    // Wait until some rows are written (or a random short time), then kill.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    const size_t target = Full().csv.size() / 8 + rng() % (Full().csv.size() / 2);
    while (std::chrono::steady_clock::now() < deadline) {
      if (ReadFile(out).size() >= target) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200 + rng() % 2000));
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    const std::string cut = ReadFile(out);
    SCOPED_TRACE("trial " + std::to_string(trial) + ", killed after " + std::to_string(cut.size()) +
                 " of " + std::to_string(Full().csv.size()) + " bytes");
    EXPECT_EQ(Full().csv.compare(0, cut.size(), cut), 0) << "the cut file is not a prefix";
    const sweep_test::CliRun r = sweep_test::Shardsim(std::string("sweep ") + kSmall + " -o " +
                                                      out + " --resume --jobs 2 --progress none");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_EQ(ReadFile(out), Full().csv);
  }
}

TEST(SweepRunner, ResumeRefusesTheFileOfAnotherSweep) {
  TempDir dir;
  std::string other = Full().csv;
  other.replace(other.find("\n0,") + 3, 4, "full");  // point 0 with recompute "full"
  WriteFile(dir / "r.csv", other);
  Result<SweepRun> r = RunSmall(dir / "r.csv", "", 2, true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(),
            dir / "r.csv" +
                ":2:1: error: row 1 is not point 0 of this sweep (training.recompute is full, "
                "the sweep's is none); it holds the results of another sweep");
}

TEST(SweepRunner, ExistingFileNeedsResumeOrOverwrite) {
  TempDir dir;
  WriteFile(dir / "r.csv", "x");
  SweepRunOptions o;
  o.csv_path = dir / "r.csv";
  Result<SweepRun> r = RunSweep(Small(), o, sweep_test::Lib());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "'" + dir / "r.csv" +
                                      "' exists; pass --resume to continue the sweep it holds, "
                                      "or --overwrite to start again");
}

TEST(SweepRunner, ShardsMergeIntoTheUnshardedFile) {
  for (const bool jsonl : {false, true}) {
    TempDir dir;
    std::vector<std::string> files;
    int64_t rows = 0;
    for (int64_t k = 0; k < 3; ++k) {
      const std::string f = dir / ("s" + std::to_string(k) + (jsonl ? ".jsonl" : ".csv"));
      Result<SweepRun> r = RunSmall(jsonl ? "" : f, jsonl ? f : "", 2, false, Shard{k, 3});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      EXPECT_EQ(r->shard_points, ShardSize(Shard{k, 3}, Small().size()));
      rows += r->summary.total();
      files.push_back(f);
    }
    EXPECT_EQ(rows, Small().size());
    // Given in any order.
    std::swap(files[0], files[2]);
    MergeOptions o;
    o.space = &Small();
    Result<MergeResult> m = MergeResultFiles(files, dir / "all", o);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->points, Small().size());
    EXPECT_EQ(ReadFile(dir / "all"), jsonl ? Full().jsonl : Full().csv);
    // A missing shard is a gap.
    Result<MergeResult> missing = MergeResultFiles({files[0], files[1]}, dir / "x", o);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().message(),
              "point 0 is in no shard file: a shard is missing or unfinished (run it with "
              "--resume, then merge again)");
    // The same shard twice is a duplicate.
    Result<MergeResult> twice =
        MergeResultFiles({files[0], files[0], files[1], files[2]}, dir / "y", o);
    ASSERT_FALSE(twice.ok());
    EXPECT_NE(twice.status().message().find("is also in"), std::string::npos);
  }
}

TEST(SweepRunner, MergeRefusesATornShard) {
  TempDir dir;
  Result<SweepRun> r = RunSmall(dir / "s.csv", "", 2, false, Shard{0, 2});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string text = ReadFile(dir / "s.csv");
  WriteFile(dir / "s.csv", text.substr(0, text.size() - 3));
  Result<MergeResult> m = MergeResultFiles({dir / "s.csv"}, dir / "all.csv", MergeOptions{});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().ToString().find("the last line is torn"), std::string::npos);
}

TEST(SweepShard, ParseAndSlurm) {
  Result<Shard> s = ParseShard("2/8");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->index, 1);
  EXPECT_EQ(s->count, 8);
  EXPECT_EQ(ParseShard("0/8").status().message(),
            "--shard: expected K/N with 1 <= K <= N (e.g. 3/8), got \"0/8\"");
  EXPECT_FALSE(ParseShard("9/8").ok());
  EXPECT_FALSE(ParseShard("3").ok());
  // --array=0-3 and --array=1-4 name the same four shards.
  Result<std::optional<Shard>> a = ShardFromSlurm("0", "4", "0");
  Result<std::optional<Shard>> b = ShardFromSlurm("4", "4", "1");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->index, 0);
  EXPECT_EQ((*b)->index, 3);
  EXPECT_EQ((*b)->count, 4);
  Result<std::optional<Shard>> none = ShardFromSlurm(std::nullopt, std::nullopt, std::nullopt);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_FALSE(ShardFromSlurm("5", "4", "1").ok());
  EXPECT_EQ(ShardSize(Shard{0, 3}, 10), 4);
  EXPECT_EQ(ShardSize(Shard{2, 3}, 10), 3);
  EXPECT_EQ(ShardSize(Shard{4, 8}, 3), 0);
}

}  // namespace
}  // namespace shardsim
