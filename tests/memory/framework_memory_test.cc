// The FSDP / ZeRO-3 mechanisms of a framework profile in the memory budget, in closed form
// (sim/memory/budget.h): torchtitan's PP rule holds the stage's weights unsharded (2 B/param in
// bf16) and its gradients unsharded in the reduce dtype (4 B/param in fp32) across micro-batches;
// prefetch_layers widens the gathered window; reshard_after_forward N holds a 1/N shard from
// forward to backward; HSDP shards over shard_group instead of dp x cp.
#include <gtest/gtest.h>

#include <cmath>

#include "sim/memory/allocator.h"
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
    // FSDP2 keeps no sharded bf16 copy: its fp32 shards are the master in optimizer state
    // (MemoryBudget::fp32_sharded_params); Megatron holds 2 B/param / dp of bf16 shards.
    EXPECT_DOUBLE_EQ(t.weights.value(), 0.0);
    EXPECT_DOUBLE_EQ(m.weights.value(), 2.0 * static_cast<double>(m.params) / 4.0);
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
  EXPECT_TRUE(titan.fp32_sharded_params);
  EXPECT_FALSE(mega.fp32_sharded_params);
}

// Without PP torchtitan reshards after forward and syncs every micro-batch; FSDP2 (fully_shard)
// keeps the root group unsharded and caches its collectives' buffers on their own streams. By
// hand, per device (TP 2): a layer holds L = (4h^2 + 3hf)/2 + 2h parameters, the root group
// (embedding and head, vocab-parallel, + the final norm) R = 2 x (V/2) x h + h, R > L:
//   zero3_buffers = Megatron's 2 layers x 2 B + 2 B x R;
//   stream_pools  = all-gather stream max(2R + 2L, 2 x 2L) + reduce-scatter stream 4L + 4R (fp32
//                   reduce; the root's input is larger than the layer's, so a second segment);
//                   under expandable segments (torchtitan's default) each stream one segment of
//                   20 MiB pages, the root's input growing the reduce-scatter stream's from the
//                   freed layer input: pages(2R + 2L) + pages(4R);
//   weights       = 0: no sharded bf16 copy beside the fp32 shards (the optimizer's master).
TEST(FrameworkMemory, TorchtitanWithoutPipelineIsFsdp2) {
  FsdpRun s;
  s.parallel.pp = 1;
  s.parallel.dp = 8;
  const MemoryBudget mega = s.Run(ProfileOf(Framework::kMegatron));
  const MemoryBudget titan = s.Run(ProfileOf(Framework::kTorchtitan));
  const StageMemory& t = titan.stages[0];
  const StageMemory& m = mega.stages[0];
  const double h = 1024, f = 4096, v = 32000;
  const double layer = (4.0 * h * h + 3.0 * h * f) / 2.0 + 2.0 * h;
  const double root = 2.0 * (v / 2.0) * h + h;
  EXPECT_DOUBLE_EQ(t.root_gathered.value(), 2.0 * root);
  EXPECT_DOUBLE_EQ(t.zero3_buffers.value(), 2.0 * 2.0 * layer + 2.0 * root);
  EXPECT_DOUBLE_EQ(m.zero3_buffers.value(), 2.0 * 2.0 * layer);
  const double page = 20.0 * 1048576.0;
  auto pages = [&](double bytes) { return std::ceil(bytes / page) * page; };
  EXPECT_DOUBLE_EQ(t.stream_pools.value(), pages(2.0 * root + 2.0 * layer) + pages(4.0 * root));
  EXPECT_DOUBLE_EQ(m.stream_pools.value(), 0.0);
  FrameworkSpec default_segments = ProfileOf(Framework::kTorchtitan);
  default_segments.expandable_segments = false;
  EXPECT_DOUBLE_EQ(s.Run(default_segments).stages[0].stream_pools.value(),
                   (2.0 * root + 2.0 * layer) + 4.0 * layer + 4.0 * root);
  EXPECT_DOUBLE_EQ(t.weights.value(), 0.0);
  EXPECT_DOUBLE_EQ(m.root_gathered.value(), 0.0);
  EXPECT_DOUBLE_EQ(t.unsharded_grads.value(), 0.0);
  // The rest is Megatron's budget: total grows by the root (with its fragmentation share) and
  // the stream pools, and loses the bf16 shards.
  const double frag = s.hardware.reserve_fragmentation;
  EXPECT_NEAR(
      t.total().value(),
      m.total().value() + (2.0 * root - m.weights.value()) * (1.0 + frag) + t.stream_pools.value(),
      1.0);
  // Without fully_shard (an FSDP framework without FSDP2's root rule) the two agree.
  FrameworkSpec no_fsdp2 = ProfileOf(Framework::kTorchtitan);
  no_fsdp2.fully_shard = false;
  EXPECT_DOUBLE_EQ(s.Run(no_fsdp2).stages[0].total().value(), m.total().value());
}

// FSDP2 under a bf16 param_dtype keeps each parameter's shard in fp32 and steps it in place
// (MixedPrecisionPolicy: "The optimizer step uses the sharded parameter in the original dtype"):
// per device 4 B (fp32 shard, the master) + 4 B (fp32 gradient) + 8 B (Adam m, v) per parameter
// over dp = 8, 16 B in all, against Megatron-Core's 18 (its 2 B bf16 shard beside the master).
// The allocator's blocks (one per tensor) hold the same bytes.
TEST(FrameworkMemory, Fsdp2KeepsOnlyTheFp32Shards) {
  FsdpRun s;
  s.parallel.pp = 1;
  s.parallel.tp = 1;
  s.parallel.dp = 8;
  const StageMemory t = s.Run(ProfileOf(Framework::kTorchtitan)).stages[0];
  const StageMemory m = s.Run(ProfileOf(Framework::kMegatron)).stages[0];
  const double p = static_cast<double>(t.params);
  EXPECT_DOUBLE_EQ(t.weights.value(), 0.0);
  EXPECT_DOUBLE_EQ(t.gradients.value(), 4.0 * p / 8.0);
  EXPECT_DOUBLE_EQ(t.optimizer.value(), 12.0 * p / 8.0);
  EXPECT_DOUBLE_EQ(t.model_states().value(), 16.0 * p / 8.0);
  EXPECT_DOUBLE_EQ(m.model_states().value(), 18.0 * p / 8.0);
  double blocks = 0.0;
  for (const auto& [bytes, count] : t.state_blocks) blocks += bytes * count;
  EXPECT_NEAR(blocks, t.model_states().value(), 1e-6 * blocks);
}

// The stream pools are reserved, not allocated: they add to max_memory_reserved and nvidia-smi
// only (sim/memory/allocator.h).
TEST(FrameworkMemory, StreamPoolsAreReservedNotAllocated) {
  FsdpRun s;
  s.parallel.pp = 1;
  s.parallel.dp = 8;
  const StageMemory t = s.Run(ProfileOf(Framework::kTorchtitan)).stages[0];
  StageMemory without = t;
  without.stream_pools = Bytes(0);
  const MemoryFigures a = DeviceMemoryFigures(t, t.activations, s.hardware);
  const MemoryFigures b = DeviceMemoryFigures(without, t.activations, s.hardware);
  EXPECT_DOUBLE_EQ(a.allocated.value(), b.allocated.value());
  EXPECT_DOUBLE_EQ(a.reserved.value(), b.reserved.value() + t.stream_pools.value());
  EXPECT_DOUBLE_EQ(a.device.value(), b.device.value() + t.stream_pools.value());
  EXPECT_DOUBLE_EQ(a.stream_pools.value(), t.stream_pools.value());
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
// stage: 405e9 / 64 x 6 = 38 GB per device, which Megatron's budget does not hold, and FSDP2's
// stream pools.
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
  // FSDP2's stream pools on a middle stage (no root parameters): the all-gather stream holds two
  // layers' gathers (2 x 2 B x L), the reduce-scatter stream one layer's fp32 input (4 B x L),
  // L = one layer's parameters per TP rank (GQA: 2h^2 + 2 h x 1024 attention, 3 h f MLP, / 8,
  // + 2h norms), each stream's segment in 20 MiB pages (expandable segments).
  const double h = 16384, f = 53248;
  const double layer = (2.0 * h * h + 2.0 * h * 1024 + 3.0 * h * f) / 8.0 + 2.0 * h;
  const double page = 20.0 * 1048576.0;
  auto pages = [&](double bytes) { return std::ceil(bytes / page) * page; };
  EXPECT_DOUBLE_EQ(t.stream_pools.value(), pages(2.0 * 2.0 * layer) + pages(4.0 * layer));
  EXPECT_DOUBLE_EQ(t.root_gathered.value(), 0.0);
  // The PP rule's 6 B/param less the bf16 shards FSDP2 does not keep (2 B/param / dp 8).
  const double expected = (6.0 * p - m.zero3_buffers.value() - m.weights.value()) *
                              (1.0 + s.hardware.reserve_fragmentation) +
                          t.stream_pools.value();
  EXPECT_NEAR(extra, expected, 1.0);
  EXPECT_NEAR(p, 405e9 / 64.0, 0.03 * 405e9 / 64.0);
}

// What the replay covers: one stage (no TP, no PP), one micro-batch per step, the unfused loss.
FsdpRun OneStageRun() {
  FsdpRun s;
  s.parallel.tp = 1;
  s.parallel.pp = 1;
  s.training.global_batch = 4;
  s.training.fused_loss = false;
  return s;
}

// The FSDP2 step replayed through the caching allocator (ReplayFsdp2Step): one stage only, and
// the hole the 16-bit logits leave below log_softmax's saved output is reserved, not allocated.
TEST(FrameworkMemory, Fsdp2StepReplay) {
  FsdpRun s = OneStageRun();
  s.training.fused_kernels = false;
  const FrameworkSpec titan = ProfileOf(Framework::kTorchtitan);
  Result<Sharding> plan = ShardModel(s.model, s.training, s.parallel);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const MemoryBudget b = s.Run(titan);
  Result<StepReplay> r = ReplayFsdp2Step(*plan, s.model, s.training, s.parallel, titan, b);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // tokens x vocab x 2 B of bf16 logits: the second fp32 gradient cannot use that hole.
  const double logits = 1024.0 * 32000.0 * 2.0;
  EXPECT_GE(r->reserved.value() - r->allocated.value(), logits);
  EXPECT_GT(r->collective_streams.value(), 0.0);
  EXPECT_LT(r->collective_streams.value(), r->reserved.value());
  // Not replayed: pipelining, or the default segments.
  FsdpRun p;
  Result<Sharding> pp_plan = ShardModel(p.model, p.training, p.parallel);
  ASSERT_TRUE(pp_plan.ok());
  EXPECT_FALSE(
      ReplayFsdp2Step(*pp_plan, p.model, p.training, p.parallel, titan, p.Run(titan)).ok());
  FrameworkSpec default_segments = titan;
  default_segments.expandable_segments = false;
  EXPECT_FALSE(ReplayFsdp2Step(*plan, s.model, s.training, s.parallel, default_segments, b).ok());
}

// The checkpointed blocks replayed tensor by tensor (sim/memory/layer_forward.h): the step's
// allocated peak is the loss's (log_softmax's backward), when every block's kept tensors are
// alive, so eager and compiled op-SAC differ there by exactly what eager keeps more: each block's
// w2 output, T x h x 2 B (1,024 tokens, hidden 1,024), 8 blocks.
TEST(FrameworkMemory, Fsdp2ReplayCheckpointedBlocks) {
  FsdpRun s = OneStageRun();
  s.training.recompute = Recompute::kSelectiveOps;
  const FrameworkSpec titan = ProfileOf(Framework::kTorchtitan);
  auto replay = [&](bool compiled) {
    TrainingSpec t = s.training;
    t.fused_kernels = compiled;
    FsdpRun r = s;
    r.training = t;
    Result<Sharding> plan = ShardModel(r.model, t, r.parallel);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    Result<StepReplay> out = ReplayFsdp2Step(*plan, r.model, t, r.parallel, titan, r.Run(titan));
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return *out;
  };
  const StepReplay eager = replay(false), compiled = replay(true);
  EXPECT_DOUBLE_EQ(eager.allocated.value() - compiled.allocated.value(),
                   8.0 * 1024.0 * 1024.0 * 2.0);
  // Full recompute keeps one input per block: below both.
  s.training.recompute = Recompute::kFull;
  EXPECT_LT(replay(true).allocated.value(), compiled.allocated.value());
}

}  // namespace
}  // namespace shardsim
