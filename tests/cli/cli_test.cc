// End-to-end tests of `shardsim budget` and `shardsim simulate`: the JSON contract of
// docs/reference.md §4, exit codes (0 ok, 1 does not fit, 2 bad input), error messages with
// file:line:col, the trace file, and byte-identical output from run to run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

using testing::Shardsim;

const std::string kSource = SHARDSIM_SOURCE_DIR;

std::string Quickstart() { return kSource + "/scenarios/quickstart.yaml"; }

std::string TempFile(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(BudgetCli, JsonHasTheContractKeys) {
  const auto r = Shardsim("budget " + Quickstart() + " --json", false);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"total", "active", "embedding", "non_embedding"})
    EXPECT_TRUE(j["params"].contains(k)) << k;
  for (const char* k : {"per_step", "six_nd", "hardware_per_step"})
    EXPECT_TRUE(j["flops"].contains(k)) << k;
  for (const char* k : {"weights", "gradients", "optimizer", "activations", "total"}) {
    EXPECT_TRUE(j["memory"]["per_device"].contains(k)) << k;
  }
  EXPECT_EQ(j["params"]["total"], 70553706496);  // Llama 3 70B
  EXPECT_EQ(j["params"]["active"], j["params"]["total"]);
}

TEST(BudgetCli, ExplainPrintsThePerOpTable) {
  const auto r = Shardsim("budget " + Quickstart() + " --explain", false);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("Per-op table"), std::string::npos);
  EXPECT_NE(r.out.find("attn.qkv"), std::string::npos);
  EXPECT_NE(r.out.find("Korthikanti"), std::string::npos);
}

// --explain lists the layer kinds the model has, with their counts (Mixtral: no dense layer),
// and every op priced in a block (DeepSeek-V3's head block carries its MTP module).
TEST(SimulateCli, ExplainListsTheModelsLayerKindsAndEveryOpOfABlock) {
  const std::string dir = kSource + "/scenarios/";
  const auto mixtral = Shardsim("simulate " + dir + "mixtral-8x7b-h100x64.yaml --explain", false);
  ASSERT_EQ(mixtral.code, 0) << mixtral.out;
  EXPECT_NE(mixtral.out.find("moe layer x32"), std::string::npos) << mixtral.out;
  EXPECT_EQ(mixtral.out.find("dense layer"), std::string::npos) << mixtral.out;
  // DeepSeek-V3 runs DualPipe: its two parameter copies and pp + 1 micro-batches in flight are
  // predicted not to fit the H800 (exit 1, ran but infeasible; docs/schedules.md).
  const auto ds = Shardsim("simulate " + dir + "deepseek-v3-h800x2048.yaml --explain", false);
  ASSERT_EQ(ds.code, 1) << ds.out;
  EXPECT_NE(ds.out.find("dense layer x3"), std::string::npos);
  EXPECT_NE(ds.out.find("moe layer x58"), std::string::npos);
  EXPECT_NE(ds.out.find("head + loss + MTP"), std::string::npos);
  EXPECT_NE(ds.out.find("mtp1.eh_proj fwd"), std::string::npos);
}

TEST(SimulateCli, JsonHasTheContractKeys) {
  const auto r = Shardsim("simulate " + Quickstart() + " --json", false);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "tflops_per_gpu",
                        "mfu", "hfu", "bubble_fraction", "fits", "bottlenecks"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_TRUE(j["memory"].contains("peak_bytes"));
  EXPECT_TRUE(j["memory"].contains("breakdown"));
  EXPECT_GT(j["mfu"].get<double>(), 0.0);
  EXPECT_LT(j["mfu"].get<double>(), 1.0);
  const auto& b = j["bottlenecks"];
  ASSERT_FALSE(b.empty());
  for (const char* k : {"kind", "collective", "resource", "exposed_s", "share"})
    EXPECT_TRUE(b[0].contains(k)) << k;
  for (size_t i = 1; i < b.size(); ++i)
    EXPECT_GE(b[i - 1]["exposed_s"].get<double>(), b[i]["exposed_s"].get<double>());
  // tokens/s is the batch's tokens over the step time.
  EXPECT_NEAR(j["tokens_per_s"].get<double>() * j["step_time_s"].get<double>(), 1024.0 * 8192.0,
              1e-3);
}

TEST(SimulateCli, SameInputSameBytes) {
  const auto a = Shardsim("simulate " + Quickstart() + " --json", false);
  const auto b = Shardsim("simulate " + Quickstart() + " --json", false);
  EXPECT_EQ(a.out, b.out);
}

TEST(SimulateCli, TraceIsChromeTraceJson) {
  const std::string trace =
      (std::filesystem::temp_directory_path() / "shardsim_trace.json").string();
  const auto r = Shardsim("simulate " + Quickstart() + " --trace " + trace, false);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(trace);
  const auto j = nlohmann::json::parse(in);
  int complete = 0, threads = 0;
  // Each forward and backward event is told apart by its name: a backward split by gradient
  // bucket names its piece ("B mb63 chunk1 bucket3/16"; it was 16 events of one name).
  std::set<std::string> passes;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") ++complete;
    if (e["ph"] == "M" && e["name"] == "thread_name") ++threads;
    const std::string name = e["name"];
    if (e["ph"] == "X" && (name.rfind("F ", 0) == 0 || name.rfind("B ", 0) == 0)) {
      EXPECT_TRUE(passes.insert(std::to_string(e["pid"].get<int>()) + " " + name).second) << name;
    }
  }
  EXPECT_GT(complete, 500);
  EXPECT_EQ(threads, 4 * 5);  // 4 pipeline ranks x 5 streams
}

TEST(SimulateCli, DoesNotFitExitsOne) {
  const std::string path = TempFile("shardsim_nofit.yaml",
                                    "name: nofit\nmodel: llama3-70b\nhardware: h100-sxm\n"
                                    "topology: dgx-h100\ngpus: 8\ntraining:\n  seq_len: 8192\n"
                                    "  global_batch: 8\nparallel:\n  dp: 8\n");
  for (const char* cmd : {"simulate ", "budget "}) {
    const auto r = Shardsim(cmd + path, false);
    EXPECT_EQ(r.code, 1) << cmd << r.out;
    EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos) << cmd;
  }
  const auto json = Shardsim("budget --json " + path, false);
  EXPECT_EQ(json.code, 1);
  EXPECT_FALSE(nlohmann::json::parse(json.out)["memory"]["fits"].get<bool>());
}

TEST(SimulateCli, BadInputExitsTwoWithLocation) {
  const std::string path = TempFile("shardsim_bad.yaml",
                                    "name: bad\nmodel: llama3-70b\nhardware: h100-sxm\n"
                                    "topology: dgx-h100\ngpus: 24\ntraining:\n  seq_len: 8192\n"
                                    "  global_batch: 8\nparallel:\n  tp: 3\n");
  for (const char* cmd : {"simulate ", "budget "}) {
    const auto r = Shardsim(cmd + path);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(path + ":10:7: error: parallel.tp: 3 does not divide model.num_heads"),
              std::string::npos)
        << r.out;
  }
}

// A config.json with num_hidden_layers: 1e12 used to abort in std::bad_alloc (exit 134).
TEST(SimulateCli, OversizedHfModelExitsTwoWithLocation) {
  const std::string json = kSource + "/tests/config/data/hf/llama-oversized.json";
  const std::string path = TempFile("shardsim_oversized.yaml",
                                    "model: {hf_config: " + json +
                                        "}\nhardware: h100-sxm\n"
                                        "topology: dgx-h100\ngpus: 8\ntraining:\n  seq_len: 4096\n"
                                        "  global_batch: 8\n");
  for (const char* cmd : {"simulate ", "budget "}) {
    const auto r = Shardsim(cmd + path);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(json + ":2:49: error: model.num_layers: must be between 1 and 100000, "
                                "got 1000000000000"),
              std::string::npos)
        << r.out;
  }
}

TEST(SimulateCli, MissingFileExitsTwo) {
  const auto r = Shardsim("simulate /nonexistent/scenario.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("/nonexistent/scenario.yaml"), std::string::npos) << r.out;
}

TEST(Cli, UnknownCommandExitsTwo) {
  // It said only "A subcommand is required"; then the commands, without the one meant.
  const auto typo = Shardsim("simulat " + Quickstart());
  EXPECT_EQ(typo.code, 2);
  EXPECT_EQ(typo.out,
            "error: unknown command 'simulat'; did you mean 'simulate'? The commands are budget, "
            "comm, simulate, sweep, merge, check-claim, calibrate (see --help)\n");
  const auto claim = Shardsim("check-clam \"1200 tokens/s/GPU\"");
  EXPECT_EQ(claim.code, 2);
  EXPECT_EQ(claim.out.rfind("error: unknown command 'check-clam'; did you mean 'check-claim'? ", 0),
            0u)
      << claim.out;
  // Nothing close: no suggestion.
  const auto bogus = Shardsim("--library " + kSource + " bogus");
  EXPECT_EQ(bogus.code, 2);
  EXPECT_EQ(
      bogus.out,
      "error: unknown command 'bogus'; the commands are budget, comm, simulate, sweep, merge, "
      "check-claim, calibrate (see --help)\n");
  EXPECT_EQ(Shardsim("").code, 2);
}

// An unknown option of a command: CLI11 said "The following argument was not expected: --jsn /
// Run with --help for more information."; now the command, the option, the closest of its
// options when one is close, exit 2. An extra positional argument keeps CLI11's message.
TEST(Cli, UnknownOptionSuggestsTheClosest) {
  const auto json = Shardsim("simulate " + Quickstart() + " --jsn");
  EXPECT_EQ(json.code, 2);
  EXPECT_EQ(json.out,
            "error: simulate: unknown option '--jsn'; did you mean '--json'? (see shardsim "
            "simulate --help)\n");
  const auto rank = Shardsim("sweep tests/sweep/data/small.yaml --top=3 --rank-bi cost");
  EXPECT_EQ(rank.code, 2);
  EXPECT_EQ(rank.out,
            "error: sweep: unknown option '--rank-bi'; did you mean '--rank-by'? (see shardsim "
            "sweep --help)\n");
  const auto far = Shardsim("budget " + Quickstart() + " --zzzzzzzz");
  EXPECT_EQ(far.code, 2);
  EXPECT_EQ(far.out, "error: budget: unknown option '--zzzzzzzz' (see shardsim budget --help)\n");
  const auto extra = Shardsim("simulate " + Quickstart() + " other.yaml");
  EXPECT_EQ(extra.code, 2);
  EXPECT_NE(extra.out.find("not expected: other.yaml"), std::string::npos) << extra.out;
}

// There was no --version (CLI11 said a subcommand is required): it prints the project version.
TEST(Cli, VersionPrintsTheProjectVersion) {
  const auto r = Shardsim("--version");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(std::regex_match(r.out, std::regex("shardsim [0-9]+\\.[0-9]+\\.[0-9]+\n"))) << r.out;
}

// --explain prints text: with --json it was silently dropped; now the two are refused together.
TEST(Cli, ExplainAndJsonAreExclusive) {
  for (const char* cmd : {"simulate", "budget"}) {
    const auto r = Shardsim(std::string(cmd) + " " + Quickstart() + " --json --explain");
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_NE(r.out.find("excludes"), std::string::npos) << r.out;
  }
}

// --library is a common option: before the command or after its arguments, the same run.
TEST(Cli, LibraryBeforeOrAfterTheCommand) {
  const auto before = Shardsim("--library " + kSource + " budget " + Quickstart() + " --json");
  const auto after = Shardsim("budget " + Quickstart() + " --json --library " + kSource);
  EXPECT_EQ(before.code, 0) << before.out;
  EXPECT_EQ(after.code, 0) << after.out;  // "The following arguments were not expected"
  EXPECT_EQ(before.out, after.out);
  const auto nowhere = Shardsim("budget " + Quickstart() + " --library /nonexistent");
  EXPECT_EQ(nowhere.code, 2);
  EXPECT_EQ(nowhere.out.rfind("--library: Directory does not exist: /nonexistent\n", 0), 0u)
      << nowhere.out;
}

// $SHARDSIM_LIBRARY naming no folder is an error as --library's is (it was skipped silently for
// the default library); --library wins over it. --explain says which folders were used.
TEST(Cli, LibraryEnvironmentFolderMustExist) {
  const std::string bin = SHARDSIM_BINARY;
  const auto env = testing::RunCommand("SHARDSIM_LIBRARY=/nonexistent:" + kSource + " " + bin +
                                       " budget " + Quickstart() + " 2>&1");
  EXPECT_EQ(env.code, 2);
  EXPECT_EQ(env.out,
            "error: SHARDSIM_LIBRARY: '/nonexistent' is not a folder; expected folders holding "
            "models/, hardware/, topologies/ (':'-separated), or unset it (or pass --library)\n");
  const auto flag = testing::RunCommand("SHARDSIM_LIBRARY=/nonexistent " + bin + " --library " +
                                        kSource + " budget " + Quickstart() + " --json 2>&1");
  EXPECT_EQ(flag.code, 0) << flag.out;
  const auto good = testing::RunCommand("SHARDSIM_LIBRARY=" + kSource + " " + bin + " simulate " +
                                        Quickstart() + " --explain 2>&1");
  EXPECT_EQ(good.code, 0) << good.out;
  const std::string tail = "\nLibrary folders ($SHARDSIM_LIBRARY, then the default): " + kSource;
  EXPECT_NE(good.out.find(tail), std::string::npos) << good.out.substr(good.out.size() - 300);
  const auto plain = Shardsim("--library " + kSource + " simulate " + Quickstart(), false);
  EXPECT_EQ(plain.out.find("Library folders"), std::string::npos);  // the default text: as before
  const auto expl =
      Shardsim("--library " + kSource + " simulate " + Quickstart() + " --explain", false);
  EXPECT_NE(expl.out.find("\nLibrary folders (--library): " + kSource + "\n"), std::string::npos);
}

// budget's "how" column reproduces its own figure: bytes/param x the parameters over the ZeRO
// group, the dense and the routed-expert parameters each over their own group for MoE models.
// It said "12.0 B/param / 16" for Mixtral's optimizer state (8.20 GiB), which is 1.31 GiB.
TEST(BudgetCli, MemoryHowReproducesTheFigureForMoeModels) {
  const std::string mixtral = kSource + "/scenarios/mixtral-8x7b-h100x64.yaml";
  std::string z3 = testing::ReadFile(mixtral);
  const size_t at = z3.find("zero_stage: 1");
  ASSERT_NE(at, std::string::npos);
  z3.replace(at, 13, "zero_stage: 3");
  const std::vector<std::string> scenarios = {mixtral,
                                              kSource + "/scenarios/deepseek-v3-h800x2048.yaml",
                                              TempFile("shardsim_budget_mixtral_z3.yaml", z3)};
  const std::regex line(
      R"(\n  (weights|gradients|optimizer state) +([0-9.]+) (TiB|GiB|MiB|KiB) +([0-9.]+) B/param( / ([0-9]+)| x \(([0-9,]+) dense / ([0-9]+) \+ ([0-9,]+) expert / ([0-9]+)\))?)");
  auto count = [](std::string v) {
    v.erase(std::remove(v.begin(), v.end(), ','), v.end());
    return std::stod(v);
  };
  int expert_lines = 0;
  for (const std::string& sc : scenarios) {
    const auto r = Shardsim("budget " + sc, false);
    ASSERT_LE(r.code, 1) << sc << "\n" << r.out;  // 1: DeepSeek-V3's budget does not fit
    int lines = 0;
    for (std::sregex_iterator it(r.out.begin(), r.out.end(), line), end; it != end; ++it) {
      const std::smatch& m = *it;
      ++lines;
      if (!m[7].matched) continue;  // unsharded (params x B/param) or dense (/ N: one group)
      ++expert_lines;
      const double unit = m[3] == "TiB"   ? 1099511627776.0
                          : m[3] == "GiB" ? 1073741824.0
                          : m[3] == "MiB" ? 1048576.0
                                          : 1024.0;
      const double shown = std::stod(m[2]) * unit;
      const double recomputed =
          std::stod(m[4]) * (count(m[7]) / std::stod(m[8]) + count(m[9]) / std::stod(m[10]));
      EXPECT_NEAR(recomputed / shown, 1.0, 0.006) << sc << ": " << m[0];
    }
    EXPECT_EQ(lines, 3) << sc << "\n" << r.out;
  }
  EXPECT_EQ(expert_lines, 1 + 1 + 3);  // ZeRO-1: the optimizer; ZeRO-3: all three
}

}  // namespace
}  // namespace shardsim
