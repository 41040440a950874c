// The FSDP / ZeRO-3 mechanisms of a framework profile in the memory budget, in closed form
// (sim/memory/budget.h): torchtitan's PP rule holds the stage's weights unsharded (2 B/param in
// bf16) and its gradients unsharded in the reduce dtype (4 B/param in fp32) across micro-batches;
// prefetch_layers widens the gathered window; reshard_after_forward N holds a 1/N shard from
// forward to backward; HSDP shards over shard_group instead of dp x cp.
#include <gtest/gtest.h>

#include "sim/memory/budget.h"
#include "tests/model/test_models.h"

namespace shardsim {
namespace {

struct FsdpRun {
  ModelSpec model = testing::Llama(8, 1024, 8, 8, 4096, 32000);
  TrainingSpec training;
  ParallelSpec parallel;
  HardwareSpec hardware;
  FsdpRun() {
    training.seq_len = 1024;
    training.global_batch = 32;
    training.micro_batch = 1;
    training.grad_dtype = DType::kFp32;
    parallel.dp = 4;
    parallel.tp = 2;
    parallel.pp = 2;
    parallel.zero_stage = 3;
    hardware.memory_capacity = 80.0 * 1073741824.0;
  }
  MemoryBudget Run(const FrameworkSpec& f) const {
    Result<MemoryBudget> b = EstimateMemory(model, training, parallel, hardware, f);
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    return *b;
  }
};

// FSDP2 under torchtitan with PP (apply_fsdp: reshard_after_forward = not pp_enabled;
// pipelining's backward_maybe_with_nosync: no gradient sync before the last micro-batch):
// gathered weights = 2 B x P and unsharded gradients = 4 B x P per device, P = the stage's
// parameters (its TP shard: ~ model / (TP x PP)); Megatron-Core's window is 2 layers.
TEST(FrameworkMemory, TorchtitanPipelineRuleHoldsTheStageUnsharded) {
  const FsdpRun s;
  const MemoryBudget mega = s.Run(ProfileOf(Framework::kMegatron));
  const MemoryBudget titan = s.Run(ProfileOf(Framework::kTorchtitan));
  ASSERT_EQ(titan.stages.size(), 2u);
  for (size_t i = 0; i < titan.stages.size(); ++i) {
    const StageMemory& t = titan.stages[i];
    const StageMemory& m = mega.stages[i];
    const double p = static_cast<double>(t.params);
    EXPECT_DOUBLE_EQ(t.zero3_buffers.value(), 2.0 * p);
    EXPECT_DOUBLE_EQ(t.unsharded_grads.value(), 4.0 * p);
    EXPECT_DOUBLE_EQ(t.gradients.value(), 4.0 * p / 4.0 + 4.0 * p);  // the dp 4 shard + unsharded
    EXPECT_DOUBLE_EQ(t.weights.value(), m.weights.value());
    EXPECT_DOUBLE_EQ(t.optimizer.value(), m.optimizer.value());
    EXPECT_DOUBLE_EQ(m.unsharded_grads.value(), 0.0);
    // Megatron: two layers of gathered weights (a layer: 4h^2 attention + 3 h f MLP + 2h norms,
    // / TP 2).
    const double layer = (4.0 * 1024 * 1024 + 3.0 * 1024 * 4096) / 2.0 + 2.0 * 1024;
    EXPECT_DOUBLE_EQ(m.zero3_buffers.value(), 2.0 * 2.0 * layer) << "stage " << i;
  }
  // The stages' parameters sum to the model's over TP: P ~ N / (TP x PP).
  const double n = static_cast<double>(titan.stages[0].params + titan.stages[1].params) * 2.0;
  EXPECT_NEAR(n, 8.0 * (4.0 * 1024 * 1024 + 3.0 * 1024 * 4096) + 2.0 * 1024 * 32000, 1e6);
  EXPECT_EQ(titan.gathered_how, "all of the stage's weights, unsharded for the whole step");
}

// Without PP torchtitan reshards after forward and syncs every micro-batch: Megatron's budget.
TEST(FrameworkMemory, TorchtitanWithoutPipelineIsTheUsualFsdp) {
  FsdpRun s;
  s.parallel.pp = 1;
  s.parallel.dp = 8;
  const MemoryBudget mega = s.Run(ProfileOf(Framework::kMegatron));
  const MemoryBudget titan = s.Run(ProfileOf(Framework::kTorchtitan));
  EXPECT_DOUBLE_EQ(titan.stages[0].total().value(), mega.stages[0].total().value());
  EXPECT_DOUBLE_EQ(titan.stages[0].unsharded_grads.value(), 0.0);
}

TEST(FrameworkMemory, PrefetchReshardGroupAndHsdp) {
  const FsdpRun s;
  const MemoryBudget base = s.Run(ProfileOf(Framework::kMegatron));
  const StageMemory& b0 = base.stages[0];
  FrameworkSpec f = ProfileOf(Framework::kMegatron);
  f.prefetch_layers = 3;  // 1 + 3 layers gathered: twice Megatron's two
  EXPECT_DOUBLE_EQ(s.Run(f).stages[0].zero3_buffers.value(), 2.0 * b0.zero3_buffers.value());
  f = ProfileOf(Framework::kMegatron);
  f.reshard_after_forward = Reshard::kToGroup;
  f.reshard_group = 2;  // each layer's 1/2 shard kept from forward to backward
  EXPECT_DOUBLE_EQ(s.Run(f).stages[0].zero3_buffers.value(),
                   b0.zero3_buffers.value() + 2.0 * static_cast<double>(b0.params) / 2.0);
  f = ProfileOf(Framework::kMegatron);
  f.shard_group = 2;  // HSDP: shard over 2 of the 4 data-parallel ranks
  const MemoryBudget h = s.Run(f);
  EXPECT_EQ(h.zero_shards, 2);
  const double p = static_cast<double>(b0.params);
  EXPECT_DOUBLE_EQ(h.stages[0].weights.value(), 2.0 * p / 2.0);
  EXPECT_DOUBLE_EQ(h.stages[0].gradients.value(), 4.0 * p / 2.0);
  EXPECT_DOUBLE_EQ(h.stages[0].optimizer.value(), 12.0 * p / 2.0);
  EXPECT_DOUBLE_EQ(b0.optimizer.value(), 12.0 * p / 4.0);
}

// The 405B layout the issue cites (TP8 PP8 FSDP8, 1F1B): the PP rule adds 6 B/param of the
// stage: 405e9 / 64 x 6 = 38 GB per device, which Megatron's budget does not hold.
TEST(FrameworkMemory, Llama405bPipelineRuleMagnitude) {
  FsdpRun s;
  s.model = testing::Llama(128, 16384, 128, 8, 53248, 128256);
  s.training.seq_len = 8192;
  s.training.global_batch = 64;
  s.training.recompute = Recompute::kFull;
  s.parallel.dp = 8;
  s.parallel.tp = 8;
  s.parallel.pp = 8;
  const MemoryBudget mega = s.Run(ProfileOf(Framework::kMegatron));
  const MemoryBudget titan = s.Run(ProfileOf(Framework::kTorchtitan));
  const StageMemory& t = titan.stages[1];
  const StageMemory& m = mega.stages[1];
  const double extra = (t.total() - m.total()).value();
  const double p = static_cast<double>(t.params);
  const double expected =
      (6.0 * p - m.zero3_buffers.value()) * (1.0 + s.hardware.reserve_fragmentation);
  EXPECT_NEAR(extra, expected, 1.0);
  EXPECT_NEAR(p, 405e9 / 64.0, 0.03 * 405e9 / 64.0);
}

}  // namespace
}  // namespace shardsim
