// The FSDP mechanisms of a framework profile in the simulated step (sim/program/step_program.cc,
// BuildZero3Item), counted in tasks: Megatron-Core's ZeRO-3 gathers each layer before every
// forward and backward and reduce-scatters after every backward (2 m L gathers and m L
// reductions per device, L layers of the stage, m micro-batches); torchtitan under PP gathers
// once per layer (the first micro-batch's forward) and reduces once (after the last backward).
#include <gtest/gtest.h>

#include "sim/parallel/layout.h"
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

// HSDP and FSDP2's post-forward group as sub-groups of the dp x cp group (sim/parallel/layout.h):
// 16 GPUs, tp 2 innermost, dp 8 (stride 2). Rank dp 5 (GPU 10): its shard group of 4 is dp 4..7
// (GPUs 8, 10, 12, 14), its replicas dp 1 and 5 (GPUs 2, 10), its reshard group of 2 dp 4, 5.
TEST(FrameworkProgram, HsdpGroupsAreBlocksOfTheGradientGroup) {
  Result<Scenario> sc = testing_util::BuildText(
      testing_util::Head() +
      "gpus: 16\ntraining: {seq_len: 1024, global_batch: 16}\n"
      "parallel: {dp: 8, tp: 2, zero_stage: 3}\n"
      "framework: {name: torchtitan, shard_group: 4, reshard_after_forward: 2}\n");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  Result<Layout> layout = Layout::Make(*sc);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->GroupSize(CommGroup::kGrad), 8);
  EXPECT_EQ(layout->GroupSize(CommGroup::kShard), 4);
  EXPECT_EQ(layout->GroupSize(CommGroup::kReplica), 2);
  EXPECT_EQ(layout->GroupSize(CommGroup::kReshard), 2);
  RankCoords at;
  at.dp = 5;
  auto members = [&](CommGroup g) {
    Result<Group> group = layout->GroupAt(g, at);
    EXPECT_TRUE(group.ok()) << group.status().ToString();
    std::vector<int32_t> out;
    for (GpuId id : group->Members()) out.push_back(id.v);
    return out;
  };
  EXPECT_EQ(members(CommGroup::kShard), (std::vector<int32_t>{8, 10, 12, 14}));
  EXPECT_EQ(members(CommGroup::kReplica), (std::vector<int32_t>{2, 10}));
  EXPECT_EQ(members(CommGroup::kReshard), (std::vector<int32_t>{8, 10}));
}

struct Collective {
  TaskCategory category;
  CommGroup group;
  CollectiveOp op;
  double bytes;
  LinkClass link;
};

// Device 0's collectives (first phase of each), in the order they were added.
std::vector<Collective> Collectives(const std::string& framework, const std::string& parallel,
                                    int gpus = 8) {
  Result<Scenario> sc = testing_util::BuildText(
      testing_util::Head() + "gpus: " + std::to_string(gpus) +
      "\ntraining: {seq_len: 1024, global_batch: 16}\n" + parallel + framework);
  EXPECT_TRUE(sc.ok()) << sc.status().ToString();
  Result<SimResult> r = Simulate(*sc);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::vector<Collective> out;
  if (!r.ok()) return out;
  for (const TaskInfo& t : *r->program->tasks) {
    if (t.device != 0 || t.phase != 0) continue;
    if (t.category != TaskCategory::kZero3Gather && t.category != TaskCategory::kGradReduce &&
        t.category != TaskCategory::kParamGather) {
      continue;
    }
    out.push_back({t.category, t.group, t.op, t.bytes.value(), t.link});
  }
  return out;
}

// HSDP under ZeRO-3 (tiny-llama: 8 layers; dp 8, 2 micro-batches): every all-gather and
// reduce-scatter spans the shard group of 2, and each reduce-scatter of B bytes is followed by an
// all-reduce of B / 2 (the rank's shard) across the 4 replicas (FSDP2 foreach_reduce).
TEST(FrameworkProgram, HsdpGathersInsideTheShardGroupAndAllReducesAcrossReplicas) {
  const std::string dp = "parallel: {dp: 8, zero_stage: 3}\n";
  const std::vector<Collective> plain = Collectives("framework: torchtitan\n", dp);
  const std::vector<Collective> hsdp =
      Collectives("framework: {name: torchtitan, shard_group: 2}\n", dp);
  int gathers = 0, scatters = 0, all_reduces = 0;
  for (const Collective& c : plain) EXPECT_EQ(c.group, CommGroup::kGrad);
  for (size_t i = 0; i < hsdp.size(); ++i) {
    const Collective& c = hsdp[i];
    if (c.category == TaskCategory::kZero3Gather) {
      ++gathers;
      EXPECT_EQ(c.group, CommGroup::kShard);
    } else if (c.op == CollectiveOp::kReduceScatter) {
      ++scatters;
      EXPECT_EQ(c.group, CommGroup::kShard);
      ASSERT_LT(i + 1, hsdp.size());
      EXPECT_EQ(hsdp[i + 1].op, CollectiveOp::kAllReduce);
      EXPECT_EQ(hsdp[i + 1].group, CommGroup::kReplica);
      EXPECT_DOUBLE_EQ(hsdp[i + 1].bytes, c.bytes / 2);
    } else {
      ++all_reduces;
    }
  }
  EXPECT_EQ(gathers, 2 * 2 * 8);
  EXPECT_EQ(scatters, 2 * 8);
  EXPECT_EQ(all_reduces, scatters);
  EXPECT_EQ(plain.size(), static_cast<size_t>(gathers + scatters));
}

// On two 8-GPU nodes (dp 16), a shard group of one node keeps every all-gather and reduce-scatter
// on NVLink; only the replica all-reduce crosses the NICs. Without HSDP they cross the NICs.
TEST(FrameworkProgram, HsdpShardGroupOfANodeStaysOnNvlink) {
  const std::string dp = "parallel: {dp: 16, zero_stage: 3}\n";
  for (const Collective& c :
       Collectives("framework: {name: torchtitan, shard_group: 8}\n", dp, 16)) {
    EXPECT_EQ(c.link, c.group == CommGroup::kReplica ? LinkClass::kNic : LinkClass::kNvlink)
        << Name(c.group);
  }
  for (const Collective& c : Collectives("framework: torchtitan\n", dp, 16)) {
    EXPECT_EQ(c.link, LinkClass::kNic);
  }
}

// HSDP under ZeRO-1: each gradient bucket is reduce-scattered over the shard group of 4 and its
// quarter all-reduced across the 2 replicas; the parameter all-gather spans the shard group. A
// shard group of the whole dp x cp is no HSDP: the same collectives and step as without it.
TEST(FrameworkProgram, HsdpUnderZero1) {
  const std::string z1 = "parallel: {dp: 8, zero_stage: 1}\n";
  const std::vector<Collective> hsdp = Collectives("framework: {shard_group: 4}\n", z1);
  int all_reduces = 0;
  for (size_t i = 0; i < hsdp.size(); ++i) {
    const Collective& c = hsdp[i];
    if (c.op == CollectiveOp::kAllReduce) {
      ++all_reduces;
      EXPECT_EQ(c.group, CommGroup::kReplica);
      ASSERT_GT(i, 0u);
      EXPECT_EQ(hsdp[i - 1].op, CollectiveOp::kReduceScatter);
      EXPECT_DOUBLE_EQ(c.bytes, hsdp[i - 1].bytes / 4);
    } else {
      EXPECT_EQ(c.group, CommGroup::kShard);
    }
  }
  EXPECT_GT(all_reduces, 0);
  const std::vector<Collective> whole = Collectives("framework: {shard_group: 8}\n", z1);
  const std::vector<Collective> none = Collectives("", z1);
  ASSERT_EQ(whole.size(), none.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(whole[i].group, CommGroup::kGrad);
    EXPECT_EQ(whole[i].bytes, none[i].bytes);
  }
}

// FSDP2's reshard_after_forward: N: the forward all-gathers span the shard group (8), the backward
// ones the N = 2 consecutive ranks the forward resharded to; the reduce-scatters the shard group.
TEST(FrameworkProgram, ReshardToGroupGathersBackwardFromIt) {
  const std::vector<Collective> c =
      Collectives("framework: {name: torchtitan, reshard_after_forward: 2}\n",
                  "parallel: {dp: 8, zero_stage: 3}\n");
  int forward = 0, backward = 0;
  for (const Collective& x : c) {
    if (x.category != TaskCategory::kZero3Gather) {
      EXPECT_EQ(x.group, CommGroup::kGrad);
      continue;
    }
    (x.group == CommGroup::kReshard ? backward : forward) += 1;
    EXPECT_TRUE(x.group == CommGroup::kReshard || x.group == CommGroup::kGrad);
  }
  EXPECT_EQ(forward, 2 * 8);
  EXPECT_EQ(backward, 2 * 8);
}

// The representative pipeline stands for its replicas under the new groups too: HSDP's shard and
// replica collectives, FSDP2's reshard group, DeepSpeed's per-submodule gathers and its blocking
// pipeline sends give the same step simulated on every rank (two 8-GPU nodes).
TEST(FrameworkProgram, RepresentativeEqualsEveryRank) {
  const std::string cases[] = {
      "parallel: {dp: 16, zero_stage: 3}\nframework: {name: torchtitan, shard_group: 8}\n",
      "parallel: {dp: 8, tp: 2, zero_stage: 1}\nframework: {shard_group: 4}\n",
      "parallel: {dp: 16, zero_stage: 3}\n"
      "framework: {name: torchtitan, shard_group: 8, reshard_after_forward: 2}\n",
      "parallel: {dp: 16, zero_stage: 3}\nframework: deepspeed\n",
      "parallel: {dp: 8, pp: 2, zero_stage: 1}\nframework: megatron-deepspeed\n"};
  for (const std::string& c : cases) {
    Result<Scenario> sc = testing_util::BuildText(
        testing_util::Head() + "gpus: 16\ntraining: {seq_len: 1024, global_batch: 32}\n" + c);
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    Result<SimResult> rep = Simulate(*sc);
    SimOptions every;
    every.every_rank = true;
    Result<SimResult> all = Simulate(*sc, every);
    ASSERT_TRUE(rep.ok()) << rep.status().ToString();
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    EXPECT_NEAR(all->step_time.value() / rep->step_time.value(), 1.0, 1e-9) << c;
  }
}

// DeepSpeed's PipelineEngine sends block (framework.blocking_p2p): the same scenario is never
// faster with them, and on device 0 the first pass after each send starts when the send ends.
TEST(FrameworkProgram, BlockingSendsHoldTheSendersNextPass) {
  auto simulate = [](bool blocking) {
    Result<Scenario> sc = testing_util::BuildText(
        testing_util::Head() +
        "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n"
        "parallel: {dp: 2, tp: 2, pp: 2}\nframework: {name: megatron-deepspeed, blocking_p2p: " +
        std::string(blocking ? "true" : "false") + "}\n");
    EXPECT_TRUE(sc.ok()) << sc.status().ToString();
    Result<SimResult> r = Simulate(*sc);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r;
  };
  Result<SimResult> blocking = simulate(true);
  Result<SimResult> free = simulate(false);
  ASSERT_TRUE(blocking.ok() && free.ok());
  EXPECT_GE(blocking->step_time.value(), free->step_time.value());
  const StepProgram& p = *blocking->program;
  const Device& d = p.devices[0];
  const RunResult& run = *blocking->run;
  int checked = 0;
  for (TaskId s : run.StreamTasks(d.pp_next)) {
    for (TaskId t : run.StreamTasks(d.compute)) {
      const TaskInfo& info = (*p.tasks)[static_cast<size_t>(p.engine.label(t))];
      if (info.category != TaskCategory::kForward && info.category != TaskCategory::kBackward) {
        continue;
      }
      if (run.start(t) < run.start(s)) continue;
      EXPECT_GE(run.start(t).picos(), run.end(s).picos());  // the first pass after the send
      ++checked;
      break;
    }
  }
  EXPECT_GT(checked, 0);
}

// DeepSpeed ZeRO-3 (gather_unit: submodule) on tiny-llama, dp 8, 2 micro-batches, no recompute:
// each pass gathers every submodule once (a submodule per op holding at least
// stage3_param_persistence_threshold = 1e5 parameters; the norms persist), the embedding and the
// head too, forward and backward: 2 m (8 k + 2) all-gathers, k such ops per layer. Gradients of a
// whole backward (under 5e8 elements) leave in one reduce bucket per micro-batch. A prefetch
// bucket of 0 leaves every gather on demand, behind the submodule before it: never faster.
TEST(FrameworkProgram, DeepspeedGathersPerSubmodule) {
  auto simulate = [](const std::string& fw) {
    Result<Scenario> sc = testing_util::BuildText(
        testing_util::Head() +
        "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16, recompute: none}\n"
        "parallel: {dp: 8, zero_stage: 3}\nframework: " +
        fw + "\n");
    EXPECT_TRUE(sc.ok()) << sc.status().ToString();
    Result<SimResult> r = Simulate(*sc);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r;
  };
  Result<SimResult> ds = simulate("deepspeed");
  ASSERT_TRUE(ds.ok());
  int64_t k = 0;
  for (const Op& op : ds->plan->graph.layer(0).ops) k += op.params >= 100'000 ? 1 : 0;
  ASSERT_GT(k, 1);
  int64_t gathers = 0, reductions = 0;
  for (const TaskInfo& t : *ds->program->tasks) {
    if (t.device != 0 || t.phase != 0) continue;
    gathers += t.category == TaskCategory::kZero3Gather ? 1 : 0;
    reductions += t.category == TaskCategory::kGradReduce ? 1 : 0;
  }
  EXPECT_EQ(gathers, 2 * 2 * (8 * k + 2));
  EXPECT_EQ(reductions, 2);
  Result<SimResult> on_demand = simulate("{name: deepspeed, stage3_prefetch_bucket_size: 0}");
  ASSERT_TRUE(on_demand.ok());
  EXPECT_GE(on_demand->step_time.value(), ds->step_time.value());
}

}  // namespace
}  // namespace shardsim
