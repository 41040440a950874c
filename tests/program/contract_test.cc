// A step run with its replayed passes contracted (ProgramOptions::contract_passes,
// Engine::AddRegion, sim/engine/contraction.cc: a pass that provably runs in isolation simulated
// once and run as one task) equals the run of every task: each task's start, end, release and
// the task that released it, each flow's bounding link, each stream's and link's busy time, each
// link's bytes (bit for bit), the makespan and the critical path; and the program built either way
// is the same. On the cases tests/program/replay_test.cc covers, plus layouts where the passes
// cannot be contracted (TP flows sharing NVLink with the pipeline's sends), and a contraction
// broken on purpose, which the comparison must catch.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/loader.h"
#include "sim/hardware/op_cost.h"
#include "sim/memory/budget.h"
#include "sim/parallel/plan.h"
#include "sim/program/step_costs.h"
#include "sim/program/step_program.h"

namespace shardsim {
namespace {

struct Runs {
  RunResult contracted, full;
  int32_t tasks = 0;
  int32_t resources = 0;
  bool ok = false;
};

StepProgram BuildProgram(const Scenario& sc, bool contract, bool every_rank) {
  Result<Plan> plan = MakePlan(sc);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  const OpCostModel hw(sc.hardware);
  Result<StepCosts> costs = PriceStep(sc, *plan, hw);
  EXPECT_TRUE(costs.ok()) << costs.status().ToString();
  Result<MemoryBudget> memory =
      EstimateMemory(*plan, sc.model, sc.training, sc.parallel, sc.hardware, sc.framework);
  EXPECT_TRUE(memory.ok()) << memory.status().ToString();
  ProgramOptions options;
  options.every_rank = every_rank;
  options.contract_passes = contract;
  Result<StepProgram> prog = BuildStepProgram(sc, *plan, *costs, hw, *memory, options);
  EXPECT_TRUE(prog.ok()) << prog.status().ToString();
  return std::move(*prog);
}

Result<Scenario> Load(const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& set) {
  Result<ScenarioDocument> doc = ScenarioDocument::Parse(path);
  if (!doc.ok()) return doc.status();
  for (const auto& [key, value] : set) {
    SHARDSIM_RETURN_IF_ERROR(doc->Set(key, value));
  }
  return doc->Build(LoadOptions{});
}

// The number of differences between the two runs (each reported, up to a few).
int Differences(const Engine& e, const RunResult& a, const RunResult& b, const std::string& what) {
  int diffs = 0;
  const auto report = [&](const std::string& msg) {
    if (++diffs <= 5) ADD_FAILURE() << what << ": " << msg;
  };
  if (a.num_tasks() != b.num_tasks()) {
    report("task counts differ");
    return diffs;
  }
  for (int32_t i = 0; i < a.num_tasks(); ++i) {
    const TaskId t(i);
    if (a.start(t) != b.start(t) || a.end(t) != b.end(t) || a.released_by(t) != b.released_by(t) ||
        a.released_by_task(t) != b.released_by_task(t) || a.BoundBy(t) != b.BoundBy(t)) {
      report(e.TaskName(t) + " (task " + std::to_string(i) + ") differs: start " +
             std::to_string(a.start(t).picos()) + " / " + std::to_string(b.start(t).picos()) +
             ", end " + std::to_string(a.end(t).picos()) + " / " +
             std::to_string(b.end(t).picos()) + ", released by " +
             std::to_string(a.released_by_task(t).v) + " / " +
             std::to_string(b.released_by_task(t).v) + ", bound " + std::to_string(a.BoundBy(t).v) +
             " / " + std::to_string(b.BoundBy(t).v));
    }
  }
  for (int32_t i = 0; i < e.num_resources(); ++i) {
    const ResourceId r(i);
    if (e.resource_kind(r) == ResourceKind::kStream) {
      if (a.StreamBusy(r) != b.StreamBusy(r)) report("stream " + e.resource_name(r) + " busy");
      const auto sa = a.StreamTasks(r), sb = b.StreamTasks(r);
      if (sa.size() != sb.size() || !std::equal(sa.begin(), sa.end(), sb.begin())) {
        report("stream " + e.resource_name(r) + " tasks");
      }
    } else {
      if (a.LinkBusy(r) != b.LinkBusy(r)) report("link " + e.resource_name(r) + " busy");
      if (a.LinkBytes(r).value() != b.LinkBytes(r).value()) {
        report("link " + e.resource_name(r) + " bytes");
      }
    }
  }
  if (a.makespan() != b.makespan()) report("makespan");
  if (a.CriticalPathToString() != b.CriticalPathToString()) report("critical path");
  return diffs;
}

struct Outcome {
  int32_t tasks = 0;
  int64_t contracted = 0;
  int64_t fallbacks = 0;
  int diffs = 0;
};

// Builds `path` with the overrides, contracted and not, and compares both programs' runs.
Outcome Compare(const std::string& path,
                const std::vector<std::pair<std::string, std::string>>& set,
                bool every_rank = false, int64_t break_ps = 0) {
  Outcome out;
  Result<Scenario> sc = Load(path, set);
  EXPECT_TRUE(sc.ok()) << sc.status().ToString();
  if (!sc.ok()) return out;
  StepProgram a = BuildProgram(*sc, true, every_rank);
  const StepProgram b = BuildProgram(*sc, false, every_rank);
  EXPECT_EQ(b.engine.num_regions(), 0);
  EXPECT_EQ(a.engine.num_tasks(), b.engine.num_tasks()) << path;
  EXPECT_EQ(a.engine.num_dependencies(), b.engine.num_dependencies()) << path;
  if (break_ps != 0) a.engine.BreakContractionForTest(break_ps);
  Result<RunResult> ra = a.engine.Run();
  Result<RunResult> rb = b.engine.Run();
  EXPECT_TRUE(ra.ok() && rb.ok());
  if (!ra.ok() || !rb.ok()) return out;
  out.tasks = a.engine.num_tasks();
  out.contracted = ra->stats().contracted_tasks;
  out.fallbacks = ra->stats().contraction_fallbacks;
  EXPECT_EQ(rb->stats().contracted_tasks, 0);
  out.diffs = Differences(a.engine, *ra, *rb, path);
  std::printf("%s: %d tasks, %lld in %d regions contracted, %lld fallbacks\n", path.c_str(),
              out.tasks, static_cast<long long>(out.contracted), a.engine.num_regions(),
              static_cast<long long>(out.fallbacks));
  return out;
}

TEST(Contract, OnePassTasksHaveNoRegions) {
  const Outcome o = Compare("scenarios/gpt3-175b-a100x1024.yaml", {});
  EXPECT_GT(o.tasks, 1000);
  EXPECT_EQ(o.contracted, 0);
  EXPECT_EQ(o.diffs, 0);
}

TEST(Contract, ExpertFlowsOnNvlinkBesideDataParallelTraffic) {
  const std::string moe = "scenarios/mixtral-8x7b-h100x64.yaml";
  for (const auto& set : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {},
           {{"parallel.schedule", "1f1b"}, {"parallel.virtual_stages", "1"}},
           {{"parallel.schedule", "zb_h1"}, {"parallel.virtual_stages", "1"}}}) {
    const Outcome o = Compare(moe, set);
    EXPECT_GT(o.contracted, 0) << "no pass was contracted";
    EXPECT_EQ(o.diffs, 0);
  }
}

TEST(Contract, TensorParallelFlowsBesideDataParallelTraffic) {
  // NeMo's GPT-3 175B on 128 H100: TP4 and DP4 share each GPU's NVLink port, the pipeline's
  // sends cross the NICs; the passes between the DP traffic are contracted.
  const Outcome o = Compare("tests/validation/nemo24.07_megatron-gpt-175b_128gpu.yaml", {});
  EXPECT_GT(o.contracted, o.tasks / 4);
  EXPECT_EQ(o.diffs, 0);
}

TEST(Contract, NotWherePipelineSendsShareTheTensorParallelLinks) {
  // TP 2 and PP 16 inside nodes: every pipeline send crosses the NVLink ports of the TP flows,
  // and a send is not ordered against the passes it runs beside.
  const Outcome o =
      Compare("scenarios/gpt3-175b-a100x1024.yaml", {{"gpus", "64"},
                                                     {"parallel.tp", "2"},
                                                     {"parallel.pp", "16"},
                                                     {"training.global_batch", "64"}});
  EXPECT_GT(o.tasks, 1000);
  EXPECT_EQ(o.diffs, 0);
}

TEST(Contract, DualPipeAndOtherSchedules) {
  EXPECT_EQ(Compare("scenarios/deepseek-v3-h800x2048.yaml", {}).diffs, 0);
  EXPECT_EQ(Compare("tests/validation/torchtitan_t2_8b_cp2_64k.yaml", {}).diffs, 0);
  EXPECT_EQ(Compare("tests/validation/llmfoundry_a100_40gb_mpt-7b_seq2048_128gpu.yaml", {}).diffs,
            0);
  EXPECT_EQ(Compare("tests/validation/bloom176b_384gpu.yaml", {}).diffs, 0);
  EXPECT_EQ(Compare("tests/validation/nemo24.07_llama2-70b_64gpu.yaml", {}).diffs, 0);
}

TEST(Contract, EveryRankHasNoRegions) {
  const Outcome o = Compare("scenarios/quickstart.yaml", {}, true);
  EXPECT_EQ(o.contracted, 0);
  EXPECT_EQ(o.diffs, 0);
}

TEST(Contract, ABrokenContractionIsCaught) {
  // Every contracted pass ending a picosecond late: the comparison must see it.
  ::testing::TestPartResultArray failures;
  Outcome o;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    o = Compare("scenarios/mixtral-8x7b-h100x64.yaml", {}, false, 1);
  }
  EXPECT_GT(o.contracted, 0);
  EXPECT_GT(o.diffs, 0);
  EXPECT_GT(failures.size(), 0);
}

}  // namespace
}  // namespace shardsim
