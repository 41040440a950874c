// What sweep and check-claim show of the executed FLOPs that simulate prints beside MFU / HFU
// (sim/report/flops_note.h), as a user reads them from the CLI: the CSV's new columns (after
// `reason`) hold simulate's figures, the HTML report's top table has them with the note, and
// check-claim prints and returns them with the note.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/report/summary.h"
#include "sim/sweep/rows.h"
#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

using sweep_test::Lines;
using sweep_test::ReadFile;
using sweep_test::Shardsim;
using sweep_test::TempDir;
using sweep_test::WriteFile;

// GPT-3 350M on 16 A100s in one layout, two recompute modes: two points, a fraction of a second.
const char* const kScenario =
    "name: executed\n"
    "model: gpt3-350m\n"
    "hardware: a100-sxm4-40gb\n"
    "topology: dgx-a100\n"
    "gpus: 16\n"
    "training: {seq_len: 2048, global_batch: 32, micro_batch: 1, precision: bf16, recompute: "
    "none}\n"
    "parallel: {dp: 4, tp: 2, pp: 2, zero_stage: 1}\n";

TEST(FlopsNoteCli, SweepCsvAndHtmlCarrySimulatesExecutedFigures) {
  TempDir dir;
  WriteFile(dir / "s.yaml", kScenario);
  WriteFile(dir / "sweep.yaml",
            std::string(kScenario) + "sweep:\n  training.recompute: [none, full]\n");
  const sweep_test::CliRun sim = Shardsim("simulate " + dir / "s.yaml" + " --json", false);
  ASSERT_EQ(sim.code, 0) << sim.out;
  const nlohmann::json j = nlohmann::json::parse(sim.out);
  const sweep_test::CliRun sw = Shardsim("sweep " + dir / "sweep.yaml" + " -o " + dir / "r.csv" +
                                             " --html " + dir / "r.html" + " -j 1 --progress none",
                                         false);
  ASSERT_EQ(sw.code, 0) << sw.out;
  const std::vector<std::string> lines = Lines(ReadFile(dir / "r.csv"));
  ASSERT_EQ(lines.size(), 3u);
  const RowFormat csv(RowFormatKind::kCsv, {"training.recompute"});
  EXPECT_EQ(lines[0] + "\n", csv.Header());
  Result<Row> none = csv.Parse(lines[1]);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  ASSERT_EQ(none->inputs, std::vector<std::string>{"none"});
  // The same figures as simulate's keys of the same names.
  EXPECT_EQ((*none)[Metric::kExecutedTflopsPerGpu], j["executed_tflops_per_gpu"].get<double>());
  EXPECT_EQ((*none)[Metric::kExecutedFractionOfPeak], j["executed_fraction_of_peak"].get<double>());
  EXPECT_EQ((*none)[Metric::kFlopsConventionOverExecuted],
            j["flops_convention_over_executed"].get<double>());
  // Causal attention counted as the full square: the conventions count more than ran, and
  // simulate's note says so; the row's note is the same text.
  ASSERT_GT(j["flops_convention_over_executed"].get<double>(), 1.0);
  EXPECT_EQ(FlopsNoteOf(*none), j["flops_convention_note"].get<std::string>());
  // HFU = executed fraction x the factor (HFU's FLOPs over those executed).
  EXPECT_NEAR(
      (*none)[Metric::kHfu],
      (*none)[Metric::kExecutedFractionOfPeak] * (*none)[Metric::kFlopsConventionOverExecuted],
      1e-12);
  // The text's top table: the executed fraction beside MFU, as the CSV holds it.
  EXPECT_NE(sw.out.find("    MFU  executed    step"), std::string::npos) << sw.out;
  EXPECT_NE(sw.out.find(Percent((*none)[Metric::kMfu]) + "     " +
                        Percent((*none)[Metric::kExecutedFractionOfPeak])),
            std::string::npos)
      << sw.out;
  const std::string html = ReadFile(dir / "r.html");
  EXPECT_NE(html.find("<th class=\"num\">MFU</th><th class=\"num\">executed</th>"),
            std::string::npos);
  EXPECT_NE(html.find("data-key=\"executed_fraction_of_peak\""), std::string::npos);
  EXPECT_NE(html.find("<p class=\"hint\" id=\"flops-note\">MFU counts causal attention as the "
                      "full s x s square (the published convention)"),
            std::string::npos);
}

// Splits a CSV line of numbers and plain words (no quoted fields) at its commas.
std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out;
  for (size_t s = 0, c;; s = c + 1) {
    c = line.find(',', s);
    out.push_back(line.substr(s, c == std::string::npos ? std::string::npos : c - s));
    if (c == std::string::npos) break;
  }
  return out;
}

std::string Joined(const std::vector<std::string>& f) {
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) out += (i ? "," : "") + f[i];
  return out;
}

// Writes dir/sweep.yaml (the scenario in both recompute modes) and sweeps it into dir/r.csv.
bool SweepBothModes(const TempDir& dir) {
  WriteFile(dir / "sweep.yaml",
            std::string(kScenario) + "sweep:\n  training.recompute: [none, full]\n");
  return Shardsim("sweep " + dir / "sweep.yaml" + " -o " + dir / "r.csv" + " --progress none",
                  false)
             .code == 0;
}

// merge refused any MFU or HFU above 1, so the file of a sweep whose MFU convention passes 100%
// could not be merged; it now bounds them by flops_convention_over_executed, and the executed
// fraction by 1.
TEST(FlopsNoteCli, MergeBoundsMfuByTheConventionFactor) {
  TempDir dir;
  ASSERT_TRUE(SweepBothModes(dir));
  const std::vector<std::string> lines = Lines(ReadFile(dir / "r.csv"));
  ASSERT_EQ(lines.size(), 3u);
  const std::vector<std::string> head = Fields(lines[0]);
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(head.begin(), head.end(), name) - head.begin());
  };
  const size_t mfu = column("mfu"), hfu = column("hfu"), exec = column("executed_fraction_of_peak"),
               factor = column("flops_convention_over_executed");
  ASSERT_LT(factor, head.size());
  const std::vector<std::string> row = Fields(lines[1]);
  const double f = std::stod(row[factor]);
  ASSERT_GT(f, 1.0);
  struct Edit {
    size_t column;
    double value;
    const char* refused;  // nullptr: merged
  };
  const Edit edits[] = {
      {mfu, 0.5 * (1.0 + f), nullptr},  // above 1, within the factor: as a sweep can write it
      {hfu, 1.01 * f, "hfu is above "},
      {exec, 1.01, "executed_fraction_of_peak is above 1 (1.01)"},
  };
  for (const Edit& e : edits) {
    std::vector<std::string> edited = row;
    edited[e.column] = std::to_string(e.value);
    WriteFile(dir / "e.csv", lines[0] + "\n" + Joined(edited) + "\n" + lines[2] + "\n");
    const sweep_test::CliRun m = Shardsim("merge --sweep " + dir / "sweep.yaml" +
                                          " --overwrite -o " + dir / "m.csv " + dir / "e.csv");
    if (e.refused == nullptr) {
      EXPECT_EQ(m.code, 0) << m.out;
    } else {
      EXPECT_EQ(m.code, 2) << m.out;
      EXPECT_NE(m.out.find(dir / "e.csv:2:1: error: point 0: " + std::string(e.refused)),
                std::string::npos)
          << m.out;
    }
  }
}

// A result file of a shardsim without the new columns is not "another sweep": --resume says which
// columns it lacks and what to do.
TEST(FlopsNoteCli, ResumingAFileWithoutTheNewColumnsSaysSo) {
  TempDir dir;
  ASSERT_TRUE(SweepBothModes(dir));
  std::string old;
  for (const std::string& line : Lines(ReadFile(dir / "r.csv"))) {
    std::vector<std::string> f = Fields(line);
    f.resize(f.size() - 3);
    old += Joined(f) + "\n";
  }
  WriteFile(dir / "r.csv", old);
  const sweep_test::CliRun r = Shardsim("sweep " + dir / "sweep.yaml" + " -o " + dir / "r.csv" +
                                        " --resume --progress none");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir / "r.csv" +
                       ":1:1: error: the header lacks the columns added at the end of a row since "
                       "it was written (executed_tflops_per_gpu,executed_fraction_of_peak,"
                       "flops_convention_over_executed): it comes from an older shardsim; run the "
                       "sweep again with --overwrite"),
            std::string::npos)
      << r.out;
}

// The same for JSON Lines, which has no header: a row with every key in order but the new ones.
TEST(FlopsNoteCli, ResumingJsonLinesWithoutTheNewFieldsSaysSo) {
  TempDir dir;
  WriteFile(dir / "sweep.yaml",
            std::string(kScenario) + "sweep:\n  training.recompute: [none, full]\n");
  const std::string run = "sweep " + dir / "sweep.yaml" + " -o " + dir / "r.csv" + " --jsonl " +
                          dir / "r.jsonl" + " --progress none";
  ASSERT_EQ(Shardsim(run, false).code, 0);
  std::string old;
  for (const std::string& line : Lines(ReadFile(dir / "r.jsonl"))) {
    const size_t cut = line.find(",\"executed_tflops_per_gpu\":");
    ASSERT_NE(cut, std::string::npos) << line;
    old += line.substr(0, cut) + "}\n";
  }
  WriteFile(dir / "r.jsonl", old);
  const sweep_test::CliRun r = Shardsim(run + " --resume");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir / "r.jsonl" +
                       ":1:1: error: the row lacks the fields added at the end of a row since it "
                       "was written (executed_tflops_per_gpu, executed_fraction_of_peak, "
                       "flops_convention_over_executed): it comes from an older shardsim; run the "
                       "sweep again with --overwrite"),
            std::string::npos)
      << r.out;
}

// check-claim: the best layout's line gives what it executed and the note, and --json returns
// the row's figures with the note beside it (null where nothing needs explaining).
TEST(FlopsNoteCli, CheckClaimShowsExecutedFlopsAndTheNote) {
  const std::string args =
      "check-claim \"40000 tokens/s/GPU\" --model gpt3-125m --hardware h100-sxm --gpus 1 -j 2 "
      "--progress none";
  const sweep_test::CliRun text = Shardsim(args, false);
  const sweep_test::CliRun json = Shardsim(args + " --json", false);
  ASSERT_EQ(text.code, 0) << text.out;
  ASSERT_EQ(json.code, 0) << json.out;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const nlohmann::json& best = j["best"];
  const double f = best["flops_convention_over_executed"];
  ASSERT_GT(f, 1.0);
  EXPECT_LE(best["executed_fraction_of_peak"].get<double>(), 1.0);
  EXPECT_NEAR(best["hfu"].get<double>(), best["executed_fraction_of_peak"].get<double>() * f,
              1e-12);
  ASSERT_TRUE(j["best_flops_convention_note"].is_string()) << json.out;
  EXPECT_TRUE(j["given_flops_convention_note"].is_null());  // no scenario, no --layout
  const std::string note = j["best_flops_convention_note"];
  EXPECT_EQ(note.rfind("MFU / HFU count causal attention as the full s x s square", 0), 0u);
  const size_t at = text.out.find("Best layout found: ");
  ASSERT_NE(at, std::string::npos) << text.out;
  const std::string line = text.out.substr(at, text.out.find('\n', at) - at);
  EXPECT_NE(line.find(", executed "), std::string::npos) << line;
  EXPECT_NE(line.find(" TFLOP/s per GPU ("), std::string::npos) << line;
  EXPECT_NE(text.out.find("\n  flops: " + note + "\n"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace shardsim
