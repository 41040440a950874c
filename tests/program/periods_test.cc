// A step program that names its repetition to the engine (ProgramOptions::periods,
// Builder::Counterparts) runs to the same result, bit for bit, as the same program simulated
// period by period: every task's times, release cause and bounding link, every stream's and
// link's busy time and bytes, the critical path and the run's counters. And the periods are
// really skipped where the schedule repeats.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/loader.h"
#include "sim/hardware/op_cost.h"
#include "sim/memory/budget.h"
#include "sim/parallel/plan.h"
#include "sim/program/step_costs.h"
#include "sim/program/step_program.h"
#include "tests/engine/same_run.h"

namespace shardsim {
namespace {

using Overrides = std::vector<std::pair<std::string, std::string>>;

// The step program of `path` with the overrides, or nothing (the failure recorded).
std::optional<StepProgram> Program(const std::string& path, const Overrides& set,
                                   const ProgramOptions& options = {}) {
  Result<ScenarioDocument> doc = ScenarioDocument::Parse(path);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  if (!doc.ok()) return std::nullopt;
  for (const auto& [key, value] : set) EXPECT_TRUE(doc->Set(key, value).ok()) << key;
  Result<Scenario> sc = doc->Build(LoadOptions{});
  EXPECT_TRUE(sc.ok()) << sc.status().ToString();
  if (!sc.ok()) return std::nullopt;
  Result<Plan> plan = MakePlan(*sc);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return std::nullopt;
  const OpCostModel hw(sc->hardware);
  Result<StepCosts> costs = PriceStep(*sc, *plan, hw);
  EXPECT_TRUE(costs.ok()) << costs.status().ToString();
  Result<MemoryBudget> memory =
      EstimateMemory(*plan, sc->model, sc->training, sc->parallel, sc->hardware, sc->framework);
  EXPECT_TRUE(memory.ok()) << memory.status().ToString();
  if (!costs.ok() || !memory.ok()) return std::nullopt;
  Result<StepProgram> prog = BuildStepProgram(*sc, *plan, *costs, hw, *memory, options);
  EXPECT_TRUE(prog.ok()) << prog.status().ToString();
  if (!prog.ok()) return std::nullopt;
  return std::move(*prog);
}

// Builds `path` with the overrides, runs it with its counterparts and without; returns the
// periodic run's counters.
RunStats ExpectPeriodsExact(const std::string& path, const Overrides& set) {
  std::optional<StepProgram> prog = Program(path, set);
  if (!prog) return {};
  Engine& e = prog->engine;
  EXPECT_FALSE(e.counterparts().empty()) << path << ": no period named";
  Result<RunResult> periodic = e.Run();
  e.SetCounterparts({});
  Result<RunResult> full = e.Run();
  EXPECT_TRUE(periodic.ok()) << periodic.status().ToString();
  EXPECT_TRUE(full.ok()) << full.status().ToString();
  if (!periodic.ok() || !full.ok()) return {};
  ExpectSameRun(e, *full, *periodic);
  EXPECT_EQ(full->stats().tasks_skipped, 0);
  std::printf("%s (%zu overrides): %lld of %d tasks filled in, %lld periods\n", path.c_str(),
              set.size(), static_cast<long long>(periodic->stats().tasks_skipped), e.num_tasks(),
              static_cast<long long>(periodic->stats().periods_skipped));
  return periodic->stats();
}

TEST(Periods, InterleavedGroupsAreSkippedExactly) {
  // GPT-3 175B, TP8 PP8 DP16, 2 chunks: 96 micro-batches in 12 groups of 8.
  const RunStats s = ExpectPeriodsExact("scenarios/gpt3-175b-a100x1024.yaml", {});
  EXPECT_GE(s.periods_skipped, 6);
  EXPECT_GT(s.tasks_skipped, 3000);
}

TEST(Periods, TunedInterleavedGroupsAreSkippedExactly) {
  // 192 micro-batches in groups of 16 (Megatron's microbatch_group_size_per_vp_stage), and in
  // groups of 13 whose last holds 10: it does not repeat the others, and ends the chains.
  for (const char* group : {"16", "13"}) {
    const RunStats s = ExpectPeriodsExact("scenarios/gpt3-175b-a100x1024.yaml",
                                          {{"training.global_batch", "3072"},
                                           {"parallel.microbatch_group_size_per_vp_stage", group}});
    EXPECT_GE(s.periods_skipped, 5) << group;
    EXPECT_GT(s.tasks_skipped, 3000) << group;
  }
}

TEST(Periods, OneFOneBMicroBatchesAreSkippedExactly) {
  const RunStats s =
      ExpectPeriodsExact("scenarios/gpt3-175b-a100x1024.yaml", {{"parallel.schedule", "1f1b"},
                                                                {"parallel.virtual_stages", "1"},
                                                                {"training.global_batch", "6144"}});
  EXPECT_GT(s.periods_skipped, 300);  // of 384 micro-batches
}

TEST(Periods, TensorParallelFlowsOnSharedLinks) {
  // TP 2 as flows on NVLink, shared with the pipeline's transfers: the max-min solver decides
  // the rates, and they repeat too.
  const RunStats s =
      ExpectPeriodsExact("scenarios/gpt3-175b-a100x1024.yaml", {{"gpus", "64"},
                                                                {"parallel.tp", "2"},
                                                                {"parallel.pp", "16"},
                                                                {"parallel.schedule", "1f1b"},
                                                                {"parallel.virtual_stages", "1"},
                                                                {"training.global_batch", "256"}});
  EXPECT_GT(s.periods_skipped, 50);  // of 128 micro-batches
}

TEST(Periods, ExpertsAndZero1OverlappedGathers) {
  ExpectPeriodsExact("scenarios/mixtral-8x7b-h100x64.yaml", {{"parallel.schedule", "1f1b"},
                                                             {"parallel.virtual_stages", "1"},
                                                             {"training.global_batch", "1024"}});
}

TEST(Periods, DualPipeMicroBatchesAreSkippedExactly) {
  // DeepSeek-V3 as shipped: DualPipe over 16 stages, 120 micro-batches, EP64 all-to-alls across
  // nodes as flows on the NICs the pipeline sends use.
  const RunStats s = ExpectPeriodsExact("scenarios/deepseek-v3-h800x2048.yaml", {});
  EXPECT_GE(s.periods_skipped, 30);
  EXPECT_GT(s.tasks_skipped, 10000);  // of 18,990
}

TEST(Periods, DualPipeVMicroBatchesAreSkippedExactly) {
  // Llama 3 70B, TP8 PP4, 128 micro-batches in DualPipeV's V.
  const RunStats s = ExpectPeriodsExact("scenarios/llama3-70b-h100x1024.yaml",
                                        {{"parallel.schedule", "dualpipe_v"},
                                         {"parallel.virtual_stages", "1"},
                                         {"training.global_batch", "4096"}});
  EXPECT_GE(s.periods_skipped, 100);
  EXPECT_GT(s.tasks_skipped, 3000);  // of 3,866
}

// The program of `path` with the overrides (and options) names no period.
void ExpectNoPeriods(const std::string& path, const Overrides& set,
                     const ProgramOptions& options = {}) {
  std::optional<StepProgram> prog = Program(path, set, options);
  ASSERT_TRUE(prog.has_value()) << path;
  EXPECT_TRUE(prog->engine.counterparts().empty()) << path;
}

TEST(Periods, NamedOnlyWhereTheyPay) {
  // Mixtral 8x7B's 16 micro-batches in 4 groups: checking would cost more than it saves.
  ExpectNoPeriods("scenarios/mixtral-8x7b-h100x64.yaml", {});
  // GPipe has no steady state; the zero-bubble schedules' deferred W passes did not repeat.
  ExpectNoPeriods("scenarios/gpt3-175b-a100x1024.yaml",
                  {{"parallel.schedule", "gpipe"}, {"parallel.virtual_stages", "1"}});
  ExpectNoPeriods("scenarios/gpt3-175b-a100x1024.yaml",
                  {{"parallel.schedule", "zb_h1"}, {"parallel.virtual_stages", "1"}});
  // DualPipe below 6 micro-batches per stage (Mixtral's 16 over 4 stages): its warm-up and
  // cool-down leave too little to skip.
  ExpectNoPeriods("scenarios/mixtral-8x7b-h100x64.yaml",
                  {{"parallel.schedule", "dualpipe"}, {"parallel.virtual_stages", "1"}});
  // Off by option: the oracle.
  ProgramOptions off;
  off.periods = false;
  ExpectNoPeriods("scenarios/gpt3-175b-a100x1024.yaml", {}, off);
}

}  // namespace
}  // namespace shardsim
