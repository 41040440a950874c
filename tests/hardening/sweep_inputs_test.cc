// Issue 19, continued: the claim parser, sweep ranges and bounds, merge, and the CLI's outputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "sim/sweep/claim.h"
#include "sim/sweep/point_space.h"
#include "sim/sweep/sweep_spec.h"
#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

using sweep_test::ReadFile;
using sweep_test::Shardsim;
using sweep_test::TempDir;

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// ---------------------------------------------------------------- the claim parser

TEST(ClaimParser, ALongDigitRunIsLinearNotAStackOverflow) {
  // 28,000 digits overflowed std::regex's recursion (SIGSEGV); 8,000 took 21 s.
  const std::string digits(28000, '7');
  Result<Claim> c = ParseClaim(digits + " tokens/s");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "claim \"" + digits + " tokens/s\": the figure must be a positive number");
  EXPECT_FALSE(ParseClaim(std::string(100000, '1')).ok());
  EXPECT_FALSE(ParseClaim("1" + std::string(50000, ' ') + "x").ok());
}

TEST(ClaimParser, AnInfiniteTokenCountIsRefused) {
  Result<Claim> c = ParseClaim("1e999 tokens in 54 days");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "claim \"1e999 tokens in 54 days\": the figure must be a positive number");
}

// The grammar is the one the regular expressions wrote: every short string built from the
// claims' pieces parses (or not) and reads the same figure as std::regex did.
TEST(ClaimParser, ReadsWhatTheRegularExpressionsRead) {
  const std::string num = R"(([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?))";
  const std::regex train("^" + num + R"( ?([kmbt])? ?(?:tokens?|tok) in )" + num +
                         R"( ?(s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?)$)");
  const std::regex mfu_after("^" + num + R"( ?(%)? ?mfu$)");
  const std::regex mfu_before("^mfu ?(?:of|=|:|is)? ?" + num + R"( ?(%)?$)");
  const std::regex flops(
      "^" + num +
      R"( ?([gtpe])flop(?:s|/s|/sec)?(?: ?(/ ?gpu|per gpu|/ ?device|per device|total|aggregate|in total))?$)");
  const std::regex tokens(
      "^" + num +
      R"( ?([kmbt])? ?(?:tokens?|tok)(?: ?/ ?s| ?/ ?sec| per s(?:ec(?:ond)?)?)(?: ?(/ ?gpu|per gpu|/ ?device|per device))?$)");
  const std::vector<std::string> numbers = {"5", "1.5", ".5", "12.", "2e3", "3e+2", "4e", "1e-1"};
  const std::vector<std::string> middles = {" tokens/s",
                                            "t tokens/s",
                                            " t tokens/s",
                                            "m tok/s",
                                            " k tokens per second",
                                            " tokens per sec/gpu",
                                            " tokens/sec per gpu",
                                            " tokens / s / gpu",
                                            " token/s/device",
                                            " tflop/s per gpu",
                                            "tflops total",
                                            " pflop/sec in total",
                                            " eflop/s aggregate",
                                            " gflop/gpu",
                                            " tflop/s",
                                            " tflops/gpu",
                                            " % mfu",
                                            "% mfu",
                                            " mfu",
                                            "t tokens in 54 days",
                                            " tokens in 3 h",
                                            "b tokens in 2 weeks",
                                            " tok in 1.5 d",
                                            " tokens in 5e1 min",
                                            " tokens/s per device",
                                            " tokens/ s",
                                            "x tokens/s",
                                            " tokens/s/"};
  int compared = 0;
  for (const std::string& n : numbers) {
    for (const std::string& m : middles) {
      for (std::string text :
           {n + m, "mfu " + n + m.substr(0, 2), "mfu of " + n + "%", "mfu=" + n, "mfu is " + n}) {
        // As ParseClaim normalizes it (these are lower case, without thousands separators).
        while (!text.empty() && text.back() == ' ') text.pop_back();
        const bool by_regex = std::regex_match(text, train) || std::regex_match(text, mfu_after) ||
                              std::regex_match(text, mfu_before) || std::regex_match(text, flops) ||
                              std::regex_match(text, tokens);
        Result<Claim> c = ParseClaim(text);
        // Read by the grammar: parsed, or refused for its figure or its missing FLOP/s scope.
        const bool by_parser =
            c.ok() || c.status().message().find("is not in a form") == std::string::npos;
        EXPECT_EQ(by_parser, by_regex) << text;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

// ---------------------------------------------------------------- sweep ranges and bounds

TEST(SweepRanges, ARangeEndingAtInt64MaxEnds) {
  TempDir dir;
  Write(dir / "s.yaml", "base: ../../tests/sweep/data/small.yaml\n");
  const std::string spec =
      "name: r\nmodel: gpt3-350m\nhardware: a100-sxm4-40gb\n"
      "topology: dgx-a100\ngpus: 16\ntraining: {seq_len: 2048, "
      "global_batch: 32}\nsweep:\n  training.seq_len: {from: "
      "9223372036854775800, to: 9223372036854775807}\n";
  Result<SweepSpec> s = ParseSweepSpec(spec, dir / "r.yaml", sweep_test::Lib());
  // Eight values (before: x += step wrapped round and allocated until bad_alloc); each then a
  // located error of its value.
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().ToString().find(
                dir / "r.yaml:8:21: error: training.seq_len: 9223372036854775807 is longer than "),
            std::string::npos)
      << s.status().ToString();
}

TEST(SweepRanges, ASpanPastInt64IsTooManyValuesNotAnOverflow) {
  TempDir dir;
  const std::string spec =
      "name: r\nmodel: gpt3-350m\nhardware: a100-sxm4-40gb\n"
      "topology: dgx-a100\ngpus: 16\ntraining: {seq_len: 2048, "
      "global_batch: 32}\nsweep:\n  parallel.ep: {from: "
      "-9000000000000000000, to: 9000000000000000000}\n";
  Result<SweepSpec> s = ParseSweepSpec(spec, dir / "r.yaml", sweep_test::Lib());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().ToString().find("the range has more than 100000 values"), std::string::npos)
      << s.status().ToString();
}

TEST(SweepBounds, HugeGpusWithParallelAutoIsALocatedErrorNotAHang) {
  TempDir dir;
  const std::string spec =
      "name: r\nmodel: gpt3-350m\nhardware: a100-sxm4-40gb\n"
      "topology: dgx-a100\ngpus: 9223372036854775807\ntraining: {seq_len: "
      "2048, global_batch: 32}\nsweep:\n  parallel: auto\n";
  Write(dir / "r.yaml", spec);
  const sweep_test::CliRun r = Shardsim("sweep " + dir / "r.yaml" + " --dry-run");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir / "r.yaml:5:7: error: gpus: 9223372036854775807 is above 16777216"),
            std::string::npos)
      << r.out;
}

TEST(SweepSpecErrors, NoSweepBlockIsLocatedAtTheMapping) {
  Result<SweepSpec> s = ParseSweepSpec("# a scenario\nname: x\ngpus: 8\n", "x.yaml", {});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "x.yaml:2:1: error: no sweep: block (a sweep file is a scenario, or `base: "
            "scenario.yaml`, with a sweep: mapping of axes)\n    name: x\n    ^");
  Result<SweepSpec> empty = ParseSweepSpec("\n# nothing\n", "e.yaml", {});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().ToString(),
            "e.yaml:1:1: error: the file is empty (nothing but white space and comments); "
            "expected a mapping of keys");
}

TEST(SweepSpecErrors, ATypoInTheBaseFailsDryRunAtItsKey) {
  TempDir dir;
  Write(dir / "t.yaml",
        "name: t\nmodel: gpt3-350m\nhardware: a100-sxm4-40gb\ntopology: dgx-a100\ngpus: 16\n"
        "training:\n  seq_len: 2048\n  global_batch: 32\n  recompte: full\nsweep:\n"
        "  parallel.tp: [1, 2]\n");
  const sweep_test::CliRun r = Shardsim("sweep " + dir / "t.yaml" + " --dry-run");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir / "t.yaml:9:3: error: training.recompte: unknown key; did you mean "
                             "'recompute'?"),
            std::string::npos)
      << r.out;
}

// A value the reader refuses on its own (its range or type) in the base fails every point the
// same way: a spec error at its key before anything runs, exit 2, also where the probe's
// permissive layout would have replaced it (micro_batch) and under parallel: auto.
TEST(SweepSpecErrors, ABadBaseValueFailsDryRunAtItsKey) {
  TempDir dir;
  const std::string head =
      "name: t\nmodel: gpt3-350m\nhardware: a100-sxm4-40gb\ntopology: dgx-a100\ngpus: 16\n"
      "training:\n  global_batch: 32\n";
  struct Case {
    std::string training, sweep, want;
  };
  for (const Case& c :
       std::vector<Case>{{"  seq_len: -5\n", "  parallel.tp: [1, 2]\n",
                          "t.yaml:8:12: error: training.seq_len: must be positive, got -5"},
                         {"  seq_len: 2048\n  micro_batch: 0\n", "  parallel.tp: [1, 2]\n",
                          "t.yaml:9:16: error: training.micro_batch: must be positive, got 0"},
                         {"  seq_len: -5\n", "  parallel: {auto: true}\n",
                          "t.yaml:8:12: error: training.seq_len: must be positive, got -5"}}) {
    Write(dir / "t.yaml", head + c.training + "sweep:\n" + c.sweep);
    const sweep_test::CliRun r = Shardsim("sweep " + dir / "t.yaml" + " --dry-run");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(dir / c.want), std::string::npos) << r.out;
  }
}

// ---------------------------------------------------------------- merge

std::string SmallShard(const TempDir& dir) {
  const sweep_test::CliRun r =
      Shardsim("sweep tests/sweep/data/small.yaml -o " + dir / "s.csv" + " -j 2", false);
  EXPECT_EQ(r.code, 0) << r.out;
  return ReadFile(dir / "s.csv");
}

TEST(Merge, AnEditedOutputFieldIsRefused) {
  TempDir dir;
  std::string csv = SmallShard(dir);
  // The first ok row: tokens_per_s made 1e300 by hand.
  const std::string header = csv.substr(0, csv.find('\n'));
  std::vector<std::string> cols;
  for (size_t s = 0, c;; s = c + 1) {
    c = header.find(',', s);
    cols.push_back(header.substr(s, c - s));
    if (c == std::string::npos) break;
  }
  const size_t tps =
      static_cast<size_t>(std::find(cols.begin(), cols.end(), "tokens_per_s") - cols.begin());
  ASSERT_LT(tps, cols.size());
  size_t line_start = csv.find(",ok,");
  line_start = csv.rfind('\n', line_start) + 1;
  const size_t line_end = csv.find('\n', line_start);
  std::string line = csv.substr(line_start, line_end - line_start);
  std::vector<std::string> f;
  for (size_t s = 0, c;; s = c + 1) {
    c = line.find(',', s);
    f.push_back(line.substr(s, c - s));
    if (c == std::string::npos) break;
  }
  f[tps] = "1e300";
  std::string edited;
  for (size_t i = 0; i < f.size(); ++i) edited += (i ? "," : "") + f[i];
  csv.replace(line_start, line_end - line_start, edited);
  Write(dir / "s.csv", csv);
  const int64_t line_no =
      1 + std::count(csv.begin(), csv.begin() + static_cast<long>(line_start), '\n');
  const sweep_test::CliRun r =
      Shardsim("merge --sweep tests/sweep/data/small.yaml -o " + dir / "m.csv " + dir / "s.csv");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir / "s.csv:" + std::to_string(line_no) + ":1: error: point " + f[0] +
                       ": tokens_per_s (1e+300) is not tokens_per_step / step_time_s ("),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "m.csv"));
}

TEST(Merge, OntoOneOfItsOwnInputsIsRefused) {
  TempDir dir;
  const std::string csv = SmallShard(dir);
  const sweep_test::CliRun r = Shardsim("merge --overwrite -o " + dir / "s.csv " + dir / "s.csv");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("error: merge: the output '" + dir / "s.csv" + "' is also an input"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(ReadFile(dir / "s.csv"), csv);
}

TEST(Merge, WritesThroughATemporaryFile) {
  TempDir dir;
  const std::string csv = SmallShard(dir);
  const sweep_test::CliRun r = Shardsim("merge -o " + dir / "m.csv " + dir / "s.csv");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(ReadFile(dir / "m.csv"), csv);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir / "")) ++files;
  EXPECT_EQ(files, 2);  // s.csv and m.csv, no temporary left
  // A full disk: an error, and no truncated file.
  const sweep_test::CliRun full = Shardsim("merge --overwrite -o /dev/full " + dir / "s.csv");
  EXPECT_EQ(full.code, 2) << full.out;
  EXPECT_NE(full.out.find("error: merge: cannot write '/dev/full': No space left on device"),
            std::string::npos)
      << full.out;
}

// ---------------------------------------------------------------- the CLI's outputs

TEST(CliOutputs, InvalidUtf8InANameIsReplacedInJsonNotAnAbort) {
  TempDir dir;
  Write(dir / "sc.yaml",
        "name: bad \xff name\nmodel: gpt3-350m\nhardware: a100-sxm4-40gb\n"
        "topology: dgx-a100\ngpus: 8\ntraining: {seq_len: 2048, global_batch: "
        "16, micro_batch: 1}\nparallel: {dp: 8}\n");
  for (const std::string cmd : {"simulate --json", "budget --json"}) {
    const sweep_test::CliRun r = Shardsim(cmd + " " + dir / "sc.yaml", false);
    EXPECT_EQ(r.code, 0) << cmd << r.out;
    EXPECT_NE(r.out.find("bad \xEF\xBF\xBD name"), std::string::npos) << cmd << r.out;
  }
  const sweep_test::CliRun t =
      Shardsim("simulate " + dir / "sc.yaml" + " --trace " + dir / "t.json", false);
  EXPECT_EQ(t.code, 0) << t.out;
  EXPECT_NE(ReadFile(dir / "t.json").find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(CliOutputs, ATraceThatCannotBeWrittenLeavesNoFile) {
  TempDir dir;
  const sweep_test::CliRun r = Shardsim("simulate scenarios/quickstart.yaml --trace /dev/full");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("error: --trace: cannot write '/dev/full': No space left on device"),
            std::string::npos)
      << r.out;
}

TEST(CliOutputs, CommConcurrentGroupsBeyondWhatSharesALinkIsRefused) {
  const sweep_test::CliRun r =
      Shardsim("comm --topology dgx-h100 --gpus 16 --op all_reduce --concurrent-groups 1000000");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("error: --concurrent-groups 1000000: at most "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace shardsim
