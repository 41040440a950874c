// The FSDP mechanisms of a framework profile in the simulated step (sim/program/step_program.cc,
// BuildZero3Item), counted in tasks: Megatron-Core's ZeRO-3 gathers each layer before every
// forward and backward and reduce-scatters after every backward (2 m L gathers and m L
// reductions per device, L layers of the stage, m micro-batches); torchtitan under PP gathers
// once per layer (the first micro-batch's forward) and reduces once (after the last backward).
#include <gtest/gtest.h>

#include "sim/report/simulate.h"
#include "tests/config/test_util.h"

namespace shardsim {
namespace {

struct Counts {
  int64_t gathers = 0, reductions = 0;
};

Counts CountDevice0(const std::string& framework, const std::string& parallel) {
  Result<Scenario> sc = testing_util::BuildText(
      testing_util::Head() + "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n" + parallel +
      framework);
  EXPECT_TRUE(sc.ok()) << sc.status().ToString();
  Result<SimResult> r = Simulate(*sc);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  Counts c;
  for (const TaskInfo& t : *r->program->tasks) {
    if (t.device != 0) continue;
    if (t.category == TaskCategory::kZero3Gather) ++c.gathers;
    if (t.category == TaskCategory::kGradReduce) ++c.reductions;
  }
  return c;
}

// tiny-llama: 8 layers, PP 2 -> L = 4 per stage; global batch 16 over dp 2 -> m = 8.
TEST(FrameworkProgram, GathersAndReductionsPerMicrobatch) {
  const std::string pp2 = "parallel: {dp: 2, tp: 2, pp: 2, zero_stage: 3}\n";
  const Counts mega = CountDevice0("", pp2);
  EXPECT_EQ(mega.gathers, 2 * 8 * 4);
  EXPECT_EQ(mega.reductions, 8 * 4);
  const Counts titan = CountDevice0("framework: torchtitan\n", pp2);
  EXPECT_EQ(titan.gathers, 4);
  EXPECT_EQ(titan.reductions, 4);
  // reshard_after_forward true with PP: gathered for every forward and backward again, but the
  // gradients still wait for the last micro-batch.
  const Counts resharded =
      CountDevice0("framework: {name: torchtitan, reshard_after_forward: true}\n", pp2);
  EXPECT_EQ(resharded.gathers, 2 * 8 * 4);
  EXPECT_EQ(resharded.reductions, 4);
}

// Without PP torchtitan runs the usual FSDP (Megatron's count); reshard false drops the
// backward's gather only.
TEST(FrameworkProgram, NoPipeline) {
  const std::string dp = "parallel: {dp: 8, zero_stage: 3}\n";
  const Counts mega = CountDevice0("", dp);
  const Counts titan = CountDevice0("framework: torchtitan\n", dp);
  EXPECT_EQ(titan.gathers, mega.gathers);
  EXPECT_EQ(titan.reductions, mega.reductions);
  const Counts kept =
      CountDevice0("framework: {name: torchtitan, reshard_after_forward: false}\n", dp);
  EXPECT_EQ(kept.gathers, mega.gathers / 2);
}

// A deeper prefetch never slows the step: the gathers only start earlier.
TEST(FrameworkProgram, PrefetchNeverSlows) {
  auto step = [](int prefetch) {
    Result<Scenario> sc = testing_util::BuildText(
        testing_util::Head() +
        "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n"
        "parallel: {dp: 8, zero_stage: 3}\nframework: {name: fsdp, prefetch_layers: " +
        std::to_string(prefetch) + "}\n");
    EXPECT_TRUE(sc.ok()) << sc.status().ToString();
    Result<SimResult> r = Simulate(*sc);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r->step_time.value();
  };
  const double none = step(0), one = step(1), three = step(3);
  EXPECT_GE(none, one);
  EXPECT_GE(one, three);
}

// FSDP1 BACKWARD_POST: device 0's ZeRO-3 collectives run on one stream (the per-device NCCL
// stream) in the post-backward hook's order. Per micro-batch of tiny-llama's 8 layers: the
// forward gathers G0..G7, then the backward: layer k's hook issues the all-gather of layer k-1,
// then the reduce-scatter of layer k (Gk-1 Rk), after the first gather G7. Under `pre` the
// reduce-scatters have a stream of their own (two micro-batches: global batch 16 over dp 8).
TEST(FrameworkProgram, Fsdp1CollectivesShareOneStreamInPostOrder) {
  auto sequence = [](const std::string& prefetch, bool gather_stream) {
    Result<Scenario> sc = testing_util::BuildText(
        testing_util::Head() +
        "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n"
        "parallel: {dp: 8, zero_stage: 3}\nframework: {name: fsdp, backward_prefetch: " +
        prefetch + "}\n");
    EXPECT_TRUE(sc.ok()) << sc.status().ToString();
    Result<SimResult> r = Simulate(*sc);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    const StepProgram& p = *r->program;
    const Device& d = p.devices[0];
    std::string out;
    int32_t mb = -1;
    for (TaskId t : r->run->StreamTasks(gather_stream ? d.gather : d.grad)) {
      const TaskInfo& info = (*p.tasks)[static_cast<size_t>(p.engine.label(t))];
      if (info.phase != 0) continue;  // one letter per collective
      if (info.category != TaskCategory::kZero3Gather &&
          info.category != TaskCategory::kGradReduce) {
        continue;
      }
      if (info.microbatch != mb) {
        mb = info.microbatch;
        out += "|";
      }
      out += (info.category == TaskCategory::kZero3Gather ? "G" : "R") +
             std::to_string(info.layer) + " ";
    }
    return out;
  };
  const std::string one =
      "G0 G1 G2 G3 G4 G5 G6 G7 G7 G6 R7 G5 R6 G4 R5 G3 R4 G2 R3 G1 R2 G0 R1 R0 ";
  EXPECT_EQ(sequence("post", true), "|" + one + "|" + one);
  EXPECT_EQ(sequence("post", false), "");
  EXPECT_EQ(sequence("pre", true),
            "|G0 G1 G2 G3 G4 G5 G6 G7 G7 G6 G5 G4 G3 G2 G1 G0 "
            "|G0 G1 G2 G3 G4 G5 G6 G7 G7 G6 G5 G4 G3 G2 G1 G0 ");
  EXPECT_EQ(sequence("pre", false), "|R7 R6 R5 R4 R3 R2 R1 R0 |R7 R6 R5 R4 R3 R2 R1 R0 ");
}

}  // namespace
}  // namespace shardsim
