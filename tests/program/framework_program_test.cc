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

}  // namespace
}  // namespace shardsim
