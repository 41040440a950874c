// A step program whose passes are built once per chunk, phase and pairing and replayed for the
// other micro-batches (ProgramOptions::replay_passes, sim/program/step_in_layer.cc StampedPass)
// equals the program built task by task: the same tasks in the same order (kind, stream,
// duration or latency, bytes, links and weights, label, category), the same number of
// dependencies, the same infos, and the same start and end of every task when run.
#include <gtest/gtest.h>

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

struct Built {
  StepProgram program;
  RunResult run;
};

Built Build(const Scenario& sc, bool replay, bool every_rank) {
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
  options.replay_passes = replay;
  Result<StepProgram> prog = BuildStepProgram(sc, *plan, *costs, hw, *memory, options);
  EXPECT_TRUE(prog.ok()) << prog.status().ToString();
  Result<RunResult> run = prog->engine.Run();
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  return Built{std::move(*prog), std::move(*run)};
}

bool SameInfo(const TaskInfo& a, const TaskInfo& b) {
  const auto same_parts = [](const PassTime& x, const PassTime& y) {
    return x.compute == y.compute && x.tp == y.tp && x.cp == y.cp && x.ep == y.ep;
  };
  return same_parts(a.parts, b.parts) && a.recompute == b.recompute && a.bytes == b.bytes &&
         a.activation_delta == b.activation_delta && a.device == b.device && a.chunk == b.chunk &&
         a.microbatch == b.microbatch && a.layer == b.layer && a.group == b.group && a.op == b.op &&
         a.link == b.link && a.bucket == b.bucket && a.buckets == b.buckets && a.phase == b.phase &&
         a.phases == b.phases && a.category == b.category && a.part == b.part;
}

// Builds `path` with the overrides both ways and compares (and each task's category in the
// engine with its TaskInfo's); returns the number of tasks.
int32_t ExpectReplayEqualsTaskByTask(const std::string& path,
                                     const std::vector<std::pair<std::string, std::string>>& set,
                                     bool every_rank = false) {
  Result<ScenarioDocument> doc = ScenarioDocument::Parse(path);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  if (!doc.ok()) return 0;
  for (const auto& [key, value] : set) EXPECT_TRUE(doc->Set(key, value).ok()) << key;
  Result<Scenario> sc = doc->Build(LoadOptions{});
  EXPECT_TRUE(sc.ok()) << sc.status().ToString();
  if (!sc.ok()) return 0;
  const Built a = Build(*sc, true, every_rank);
  const Built b = Build(*sc, false, every_rank);
  const Engine& ea = a.program.engine;
  const Engine& eb = b.program.engine;
  EXPECT_EQ(ea.num_tasks(), eb.num_tasks()) << path;
  EXPECT_EQ(ea.num_dependencies(), eb.num_dependencies()) << path;
  EXPECT_EQ(ea.num_resources(), eb.num_resources()) << path;
  EXPECT_EQ(a.program.tasks->size(), b.program.tasks->size()) << path;
  if (ea.num_tasks() != eb.num_tasks() || a.program.tasks->size() != b.program.tasks->size()) {
    return 0;
  }
  int mismatches = 0;
  for (int32_t i = 0; i < ea.num_tasks() && mismatches < 5; ++i) {
    const TaskId t(i);
    const auto la = ea.flow_links(t), lb = eb.flow_links(t);
    const auto wa = ea.flow_weights(t), wb = eb.flow_weights(t);
    const bool same_task =
        ea.kind(t) == eb.kind(t) && ea.stream(t) == eb.stream(t) &&
        ea.fixed_time(t) == eb.fixed_time(t) && ea.flow_bytes(t) == eb.flow_bytes(t) &&
        std::vector<ResourceId>(la.begin(), la.end()) ==
            std::vector<ResourceId>(lb.begin(), lb.end()) &&
        std::vector<double>(wa.begin(), wa.end()) == std::vector<double>(wb.begin(), wb.end()) &&
        ea.label(t) == eb.label(t) && ea.category(t) == eb.category(t) &&
        SameInfo((*a.program.tasks)[static_cast<size_t>(i)],
                 (*b.program.tasks)[static_cast<size_t>(i)]) &&
        a.run.start(t) == b.run.start(t) && a.run.end(t) == b.run.end(t);
    if (!same_task) {
      ++mismatches;
      ADD_FAILURE() << path << ": task " << i << " (" << ea.TaskName(t)
                    << ") differs between the replayed and the task-by-task program";
    }
    // Stats (sim/report/step_metrics.cc) filters tasks on the engine's category, which must be
    // their TaskInfo's.
    const TaskInfo& info = (*a.program.tasks)[static_cast<size_t>(ea.label(t))];
    if (ea.category(t) != static_cast<uint8_t>(info.category)) {
      ++mismatches;
      ADD_FAILURE() << path << ": task " << i << " (" << ea.TaskName(t)
                    << ") has another category in the engine than in its TaskInfo";
    }
  }
  EXPECT_EQ(a.run.makespan(), b.run.makespan()) << path;
  return ea.num_tasks();
}

TEST(Replay, InterleavedZero1) {
  EXPECT_GT(ExpectReplayEqualsTaskByTask("scenarios/gpt3-175b-a100x1024.yaml", {}), 1000);
}

TEST(Replay, InterleavedWithTensorParallelFlows) {
  // TP 2 over NVLink shared with the pipeline's transfers: every pass is in-layer flows
  // (AddPass stages), the case replay builds once per chunk and phase.
  EXPECT_GT(ExpectReplayEqualsTaskByTask("scenarios/gpt3-175b-a100x1024.yaml",
                                         {{"gpus", "64"},
                                          {"parallel.tp", "2"},
                                          {"parallel.pp", "16"},
                                          {"training.global_batch", "64"}}),
            1000);
}

TEST(Replay, OneFOneBAndZeroBubbleWithExperts) {
  const std::string moe = "scenarios/mixtral-8x7b-h100x64.yaml";
  EXPECT_GT(ExpectReplayEqualsTaskByTask(moe, {}), 1000);
  EXPECT_GT(ExpectReplayEqualsTaskByTask(
                moe, {{"parallel.schedule", "1f1b"}, {"parallel.virtual_stages", "1"}}),
            500);
  EXPECT_GT(ExpectReplayEqualsTaskByTask(
                moe, {{"parallel.schedule", "zb_h1"}, {"parallel.virtual_stages", "1"}}),
            500);
}

TEST(Replay, DualPipeWithExpertOverlap) {
  EXPECT_GT(ExpectReplayEqualsTaskByTask("scenarios/deepseek-v3-h800x2048.yaml", {}), 1000);
}

TEST(Replay, Zero3AndContextParallel) {
  EXPECT_GT(ExpectReplayEqualsTaskByTask("tests/validation/torchtitan_t2_8b_cp2_64k.yaml", {}), 10);
  EXPECT_GT(
      ExpectReplayEqualsTaskByTask("tests/validation/torchtitan_t2_8b_cp2_64k.yaml", {}, true), 10);
  EXPECT_GT(ExpectReplayEqualsTaskByTask(
                "tests/validation/llmfoundry_a100_40gb_mpt-7b_seq2048_128gpu.yaml", {}),
            10);
}

TEST(Replay, EveryRank) {
  EXPECT_GT(ExpectReplayEqualsTaskByTask("scenarios/quickstart.yaml", {}, true), 100);
}

}  // namespace
}  // namespace shardsim
