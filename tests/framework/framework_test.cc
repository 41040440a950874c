// The `framework:` key: each profile's mechanisms (sim/framework/framework.h), the reader's two
// forms and key-by-key overrides, the profile's kernel defaults under the training keys, and the
// located errors (exact text).
#include "sim/framework/framework.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "sim/config/loader.h"
#include "tests/config/test_util.h"

namespace shardsim {
namespace {

using testing_util::BuildText;
using testing_util::Head;

constexpr const char* kRun =
    "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n"
    "parallel: {dp: 2, tp: 2, pp: 2, zero_stage: 3}\n";

TEST(FrameworkProfiles, MegatronIsTheDefaultAndTodaysSemantics) {
  const FrameworkSpec m = ProfileOf(Framework::kMegatron);
  EXPECT_TRUE(m.fused_kernels);
  EXPECT_TRUE(m.fused_loss);
  EXPECT_FALSE(m.flash2_attention);
  EXPECT_EQ(m.reshard_after_forward, Reshard::kAlways);
  EXPECT_EQ(m.grad_sync, GradSync::kEveryMicrobatch);
  EXPECT_EQ(m.shard_group, 0);
  EXPECT_EQ(GatheredLayers(m), 2);
  EXPECT_FALSE(KeepsParamsUnsharded(m, 8));
  EXPECT_FALSE(HoldsUnshardedGrads(m, 8, 16));
  Result<Scenario> s = BuildText(Head() + kRun);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->framework.name, Framework::kMegatron);
  EXPECT_TRUE(s->framework.overridden.empty());
}

// torchtitan apply_fsdp: reshard after forward only without PP; the pipelining stage keeps
// gradients unsharded until the last micro-batch under PP; eager kernels, FlashAttention-2.
TEST(FrameworkProfiles, TorchtitanPipelineRule) {
  const FrameworkSpec t = ProfileOf(Framework::kTorchtitan);
  EXPECT_FALSE(t.fused_kernels);
  EXPECT_FALSE(t.fused_loss);
  EXPECT_TRUE(t.flash2_attention);
  EXPECT_EQ(t.memory_figure, MemoryFigure::kReserved);
  EXPECT_FALSE(KeepsParamsUnsharded(t, 1));
  EXPECT_TRUE(KeepsParamsUnsharded(t, 2));
  EXPECT_FALSE(HoldsUnshardedGrads(t, 1, 16));
  EXPECT_TRUE(HoldsUnshardedGrads(t, 2, 16));
  EXPECT_FALSE(HoldsUnshardedGrads(t, 2, 1));  // one micro-batch: nothing to accumulate
}

// (ZeRO-1: DeepSpeed's PipelineEngine refuses ZeRO-3 with pp 2, PipelineEngineRefusesZero2And3.)
TEST(FrameworkProfiles, NamesRoundTripThroughTheReader) {
  for (int i = 0; i < kNumFrameworks; ++i) {
    const auto f = static_cast<Framework>(i);
    Result<Scenario> s = BuildText(Head() +
                                   "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n"
                                   "parallel: {dp: 2, tp: 2, pp: 2, zero_stage: 1}\n"
                                   "framework: " +
                                   Name(f) + "\n");
    ASSERT_TRUE(s.ok()) << Name(f) << ": " << s.status().ToString();
    EXPECT_EQ(s->framework.name, f);
  }
}

// The profile's kernels become the training keys' defaults; a key the scenario writes wins.
TEST(FrameworkConfig, KernelDefaultsUnderTheTrainingKeys) {
  Result<Scenario> eager = BuildText(Head() + kRun + "framework: torchtitan\n");
  ASSERT_TRUE(eager.ok()) << eager.status().ToString();
  EXPECT_FALSE(eager->training.fused_kernels);
  EXPECT_FALSE(eager->training.fused_loss);
  EXPECT_EQ(eager->training.attention_kernel, AttentionKernel::kFlash2);
  Result<Scenario> compiled =
      BuildText(Head() +
                "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16, fused_kernels: true}\n"
                "parallel: {dp: 2, tp: 2, pp: 2, zero_stage: 3}\nframework: torchtitan\n");
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  EXPECT_TRUE(compiled->training.fused_kernels);
  EXPECT_FALSE(compiled->training.fused_loss);
}

TEST(FrameworkConfig, OverridesKeyByKey) {
  Result<Scenario> s = BuildText(Head() + kRun +
                                 "framework: {name: torchtitan, reshard_after_forward: false, "
                                 "grad_sync: every_microbatch, shard_group: 2, prefetch_layers: 2, "
                                 "memory_figure: allocated}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const FrameworkSpec& f = s->framework;
  EXPECT_EQ(f.name, Framework::kTorchtitan);
  EXPECT_EQ(f.reshard_after_forward, Reshard::kNever);
  EXPECT_EQ(f.grad_sync, GradSync::kEveryMicrobatch);
  EXPECT_EQ(f.shard_group, 2);
  EXPECT_EQ(f.prefetch_layers, 2);
  EXPECT_EQ(f.memory_figure, MemoryFigure::kAllocated);
  EXPECT_FALSE(f.fused_kernels);  // not overridden: the profile's
  EXPECT_EQ(f.overridden,
            (std::vector<std::string>{"reshard_after_forward", "grad_sync", "shard_group",
                                      "prefetch_layers", "memory_figure"}));
  Result<Scenario> g = BuildText(Head() +
                                 "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n"
                                 "parallel: {dp: 8, zero_stage: 3}\nframework: {name: torchtitan, "
                                 "reshard_after_forward: 4}\n");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->framework.reshard_after_forward, Reshard::kToGroup);
  EXPECT_EQ(g->framework.reshard_group, 4);
}

// torchtitan's launcher runs the caching allocator with expandable segments; no other profile
// does; framework.expandable_segments overrides it.
TEST(FrameworkConfig, ExpandableSegments) {
  for (int i = 0; i < kNumFrameworks; ++i) {
    const auto f = static_cast<Framework>(i);
    EXPECT_EQ(ProfileOf(f).expandable_segments, f == Framework::kTorchtitan) << Name(f);
  }
  Result<Scenario> s =
      BuildText(Head() + kRun + "framework: {name: torchtitan, expandable_segments: false}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->framework.expandable_segments);
  EXPECT_EQ(s->framework.overridden, (std::vector<std::string>{"expandable_segments"}));
  Result<Scenario> bad =
      BuildText(Head() + kRun + "framework: {name: megatron, expandable_segments: 3}\n");
  EXPECT_FALSE(bad.ok());
}

// Megatron-Core and NeMo run the layers' linears as Transformer Engine modules
// (FrameworkSpec::te_linears); no other profile does; framework.te_linears overrides it, and the
// scenario's training spec (which the op graph reads) follows the framework, with or without the
// framework key.
TEST(FrameworkConfig, TransformerEngineLinears) {
  for (int i = 0; i < kNumFrameworks; ++i) {
    const auto f = static_cast<Framework>(i);
    EXPECT_EQ(ProfileOf(f).te_linears, f == Framework::kMegatron || f == Framework::kNemo)
        << Name(f);
  }
  Result<Scenario> plain = BuildText(Head() + kRun);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(plain->training.te_linears);
  Result<Scenario> titan = BuildText(Head() + kRun + "framework: torchtitan\n");
  ASSERT_TRUE(titan.ok()) << titan.status().ToString();
  EXPECT_FALSE(titan->training.te_linears);
  Result<Scenario> off = BuildText(Head() + kRun + "framework: {name: nemo, te_linears: false}\n");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->framework.te_linears);
  EXPECT_FALSE(off->training.te_linears);
  EXPECT_EQ(off->framework.overridden, (std::vector<std::string>{"te_linears"}));
  Result<Scenario> bad = BuildText(Head() + kRun + "framework: {name: megatron, te_linears: 3}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("te_linears"), std::string::npos) << bad.status().message();
}

// FSDP1 as Composer runs it (FSDPConfig backward_prefetch 'BACKWARD_POST'): one NCCL stream for
// the ZeRO-3 collectives; every other profile keeps them on streams of their own; the key
// overrides it and needs ZeRO-3.
TEST(FrameworkConfig, BackwardPrefetch) {
  for (int i = 0; i < kNumFrameworks; ++i) {
    const auto f = static_cast<Framework>(i);
    EXPECT_EQ(SharesCollectiveStream(ProfileOf(f)), f == Framework::kFsdp) << Name(f);
  }
  Result<Scenario> pre =
      BuildText(Head() + kRun + "framework: {name: fsdp, backward_prefetch: pre}\n");
  ASSERT_TRUE(pre.ok()) << pre.status().ToString();
  EXPECT_EQ(pre->framework.backward_prefetch, BackwardPrefetch::kPre);
  EXPECT_EQ(pre->framework.overridden, (std::vector<std::string>{"backward_prefetch"}));
  Result<Scenario> bad =
      BuildText(Head() + kRun + "framework: {name: fsdp, backward_prefetch: BACKWARD_PRE}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(),
            "tests/config/data/inline.yaml:7:44: error: framework.backward_prefetch: "
            "\"BACKWARD_PRE\" is not one of pre, post\n"
            "    framework: {name: fsdp, backward_prefetch: BACKWARD_PRE}\n"
            "                                               ^");
  Result<Scenario> z1 = BuildText(
      Head() +
      "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n"
      "parallel: {dp: 8, zero_stage: 1}\nframework: {name: fsdp, backward_prefetch: post}\n");
  ASSERT_FALSE(z1.ok());
  EXPECT_NE(z1.status().ToString().find("framework.backward_prefetch: applies to FSDP / ZeRO-3"),
            std::string::npos)
      << z1.status().ToString();
}

TEST(FrameworkConfig, LocatedErrors) {
  Result<Scenario> bad_name = BuildText(Head() + kRun + "framework: torchtitn\n");
  ASSERT_FALSE(bad_name.ok());
  EXPECT_EQ(bad_name.status().ToString(),
            "tests/config/data/inline.yaml:7:12: error: framework: \"torchtitn\" is not one of "
            "megatron, nemo, torchtitan, fsdp, deepspeed, megatron-deepspeed; did you mean "
            "'torchtitan'?\n"
            "    framework: torchtitn\n"
            "               ^");
  Result<Scenario> bad_keys =
      BuildText(Head() + kRun +
                "framework:\n  name: fsdp\n  reshard_after_forward: 1\n  grad_sync: never\n"
                "  shard_group: 3\n  prefetch: 1\n");
  ASSERT_FALSE(bad_keys.ok());
  EXPECT_EQ(
      bad_keys.status().ToString(),
      "tests/config/data/inline.yaml:9:26: error: framework.reshard_after_forward: "
      "expected true, false, when_no_pp or a group size of at least 2 ranks, got \"1\"\n"
      "      reshard_after_forward: 1\n"
      "                             ^\n"
      "tests/config/data/inline.yaml:10:14: error: framework.grad_sync: \"never\" is not "
      "one of every_microbatch, last_microbatch, last_under_pp\n"
      "      grad_sync: never\n"
      "                 ^\n"
      "tests/config/data/inline.yaml:12:3: error: framework.prefetch: unknown key; valid keys "
      "here: name, reshard_after_forward, grad_sync, shard_group, prefetch_layers, "
      "backward_prefetch, memory_figure, gather_unit, stage3_prefetch_bucket_size, "
      "stage3_max_live_parameters, stage3_max_reuse_distance, "
      "stage3_param_persistence_threshold, reduce_bucket_size, blocking_p2p, te_linears, "
      "expandable_segments\n"
      "      prefetch: 1\n"
      "      ^\n"
      "tests/config/data/inline.yaml:11:16: error: framework.shard_group: 3 does not divide "
      "dp x cp = 2; ZeRO / FSDP shards inside groups of that many ranks\n"
      "      shard_group: 3\n"
      "                   ^");
  Result<Scenario> not_fsdp = BuildText(
      Head() +
      "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n"
      "parallel: {dp: 8, zero_stage: 1}\nframework: {name: torchtitan, prefetch_layers: 2}\n");
  ASSERT_FALSE(not_fsdp.ok());
  EXPECT_EQ(not_fsdp.status().ToString(),
            "tests/config/data/inline.yaml:7:48: error: framework.prefetch_layers: applies to "
            "FSDP / ZeRO-3 (parallel.zero_stage: 3), but zero_stage is 1\n"
            "    framework: {name: torchtitan, prefetch_layers: 2}\n"
            "                                                   ^");
}

// hardware: {base: ..., power_limit: 500 W}: the README's rule, sustained fraction x
// (cap / rated)^(1/3); a cap at or above the rated power changes nothing.
TEST(PowerCap, DerivesTheSustainedClock) {
  const std::string rated =
      "{base: test-gpu, power_limit: 700 W, sustained_compute_fraction: 0.84}";
  auto with = [&](const std::string& hw) {
    return BuildText("model: tiny-llama\nhardware: " + hw + "\ntopology: test-dgx\n" + kRun);
  };
  Result<Scenario> capped = with("{base: " + rated + ", power_limit: 500 W}");
  ASSERT_TRUE(capped.ok()) << capped.status().ToString();
  EXPECT_DOUBLE_EQ(capped->hardware.sustained_compute_fraction, 0.84 * std::cbrt(500.0 / 700.0));
  EXPECT_NEAR(capped->hardware.sustained_compute_fraction, 0.7509, 1e-4);
  Result<Scenario> above = with("{base: " + rated + ", power_limit: 800 W}");
  ASSERT_TRUE(above.ok()) << above.status().ToString();
  EXPECT_DOUBLE_EQ(above->hardware.sustained_compute_fraction, 0.84);
  Result<Scenario> own =
      with("{base: " + rated + ", power_limit: 500 W, sustained_compute_fraction: 0.7}");
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_DOUBLE_EQ(own->hardware.sustained_compute_fraction, 0.7);
  Result<Scenario> unrated = with("{base: test-gpu, power_limit: 500 W}");
  ASSERT_FALSE(unrated.ok());
  EXPECT_EQ(unrated.status().ToString(),
            "tests/config/data/inline.yaml:2:41: error: hardware.power_limit: the base hardware "
            "(test-gpu) gives no power_limit, so a cap has no rated power to scale its clock "
            "from; give the base's power_limit or write sustained_compute_fraction\n"
            "    hardware: {base: test-gpu, power_limit: 500 W}\n"
            "                                            ^");
}

// sustained_compute_fraction_by_dtype: a power cap scales each entry by the same clock factor;
// an overlay that restates sustained_compute_fraction alone restates it for every dtype (the
// base's entries go), and one that writes the entries keeps them.
TEST(PowerCap, PerDtypeSustainedFractions) {
  const std::string rated =
      "{base: test-gpu, power_limit: 700 W, sustained_compute_fraction: 0.84, "
      "sustained_compute_fraction_by_dtype: {fp8: 0.82}}";
  auto with = [&](const std::string& hw) {
    return BuildText("model: tiny-llama\nhardware: " + hw + "\ntopology: test-dgx\n" + kRun);
  };
  Result<Scenario> plain = with(rated);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->hardware.sustained_compute_fraction_by_dtype,
            (std::map<DType, double>{{DType::kFp8, 0.82}}));
  Result<Scenario> capped = with("{base: " + rated + ", power_limit: 500 W}");
  ASSERT_TRUE(capped.ok()) << capped.status().ToString();
  EXPECT_DOUBLE_EQ(capped->hardware.sustained_compute_fraction_by_dtype.at(DType::kFp8),
                   0.82 * std::cbrt(500.0 / 700.0));
  // An overlay that writes only the entries keeps them and still caps the scalar.
  Result<Scenario> entries = with("{base: " + rated +
                                  ", power_limit: 500 W, "
                                  "sustained_compute_fraction_by_dtype: {fp8: 0.7}}");
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  EXPECT_DOUBLE_EQ(entries->hardware.sustained_compute_fraction, 0.84 * std::cbrt(500.0 / 700.0));
  EXPECT_EQ(entries->hardware.sustained_compute_fraction_by_dtype,
            (std::map<DType, double>{{DType::kFp8, 0.7}}));
  Result<Scenario> burst = with("{base: " + rated + ", sustained_compute_fraction: 1}");
  ASSERT_TRUE(burst.ok()) << burst.status().ToString();
  EXPECT_TRUE(burst->hardware.sustained_compute_fraction_by_dtype.empty());
  Result<Scenario> own = with("{base: " + rated +
                              ", sustained_compute_fraction: 1, "
                              "sustained_compute_fraction_by_dtype: {fp8: 0.9}}");
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(own->hardware.sustained_compute_fraction_by_dtype,
            (std::map<DType, double>{{DType::kFp8, 0.9}}));
  Result<Scenario> bad =
      with("{base: test-gpu, sustained_compute_fraction_by_dtype: {fp8: 1.5, fp9: 0.5}}");
  ASSERT_FALSE(bad.ok());
  const std::string text = bad.status().ToString();
  EXPECT_NE(text.find("sustained_compute_fraction_by_dtype.fp8"), std::string::npos) << text;
  EXPECT_NE(text.find("fp9"), std::string::npos) << text;
}

// A sweep axis (or a scenario built on another) that sets a framework key refines the named
// profile: `framework: torchtitan` + `framework.reshard_after_forward: true` keeps torchtitan.
TEST(FrameworkConfig, AxisRefinesTheNamedProfile) {
  const LoadOptions lib = testing_util::TestLib();
  Result<ScenarioDocument> doc = ScenarioDocument::ParseText(
      Head() + kRun + "framework: torchtitan\n", "tests/config/data/inline.yaml");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  ASSERT_TRUE(doc->Set("framework.reshard_after_forward", "true").ok());
  Result<Scenario> s = doc->Build(lib);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->framework.name, Framework::kTorchtitan);
  EXPECT_EQ(s->framework.reshard_after_forward, Reshard::kAlways);
  EXPECT_EQ(s->framework.grad_sync, GradSync::kLastUnderPp);
  Result<ScenarioDocument> plain =
      ScenarioDocument::ParseText(Head() + kRun, "tests/config/data/inline.yaml");
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE(plain->Set("framework.grad_sync", "last_microbatch").ok());
  Result<Scenario> m = plain->Build(lib);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->framework.name, Framework::kMegatron);  // a mapping without a name: megatron's
  EXPECT_EQ(m->framework.grad_sync, GradSync::kLastMicrobatch);
}

// The DeepSpeed engine: overlap_comm defaults to ZeRO-3 only, the PipelineEngine reduces after
// the last backward; parameters are gathered after the step. Written parallel keys win.
TEST(FrameworkConfig, DeepspeedCommunicationDefaults) {
  auto build = [](const std::string& parallel, const std::string& fw) {
    return BuildText(Head() + "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n" + parallel +
                     "framework: " + fw + "\n");
  };
  Result<Scenario> pipe = build("parallel: {dp: 4, pp: 2, zero_stage: 1}\n", "megatron-deepspeed");
  ASSERT_TRUE(pipe.ok()) << pipe.status().ToString();
  EXPECT_FALSE(pipe->parallel.overlap_grad_reduce);
  EXPECT_FALSE(pipe->parallel.overlap_param_gather);
  Result<Scenario> z3 = build("parallel: {dp: 8, zero_stage: 3}\n", "deepspeed");
  ASSERT_TRUE(z3.ok()) << z3.status().ToString();
  EXPECT_TRUE(z3->parallel.overlap_grad_reduce);
  Result<Scenario> written =
      build("parallel: {dp: 4, pp: 2, zero_stage: 1, overlap_grad_reduce: true}\n", "deepspeed");
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_TRUE(written->parallel.overlap_grad_reduce);
  EXPECT_FALSE(written->parallel.overlap_param_gather);
  Result<Scenario> mega = build("parallel: {dp: 4, pp: 2, zero_stage: 1}\n", "megatron");
  ASSERT_TRUE(mega.ok()) << mega.status().ToString();
  EXPECT_TRUE(mega->parallel.overlap_grad_reduce);
  EXPECT_TRUE(mega->parallel.overlap_param_gather);
}

// DeepSpeed's ZeRO-3 coordinator and PipelineEngine keys: the deepspeed profiles gather per
// submodule with deepspeed/runtime/zero/config.py's defaults and send blocking; each key
// overridable (counts written as DeepSpeed writes them, 5e8), and a located error for a count
// that is not a whole number of elements.
TEST(FrameworkConfig, DeepspeedZero3Keys) {
  for (Framework f : {Framework::kDeepspeed, Framework::kMegatronDeepspeed}) {
    const FrameworkSpec d = ProfileOf(f);
    EXPECT_EQ(d.gather_unit, GatherUnit::kSubmodule);
    EXPECT_EQ(d.prefetch_bucket_size, 50'000'000);
    EXPECT_EQ(d.max_live_parameters, 1'000'000'000);
    EXPECT_EQ(d.max_reuse_distance, 1'000'000'000);
    EXPECT_EQ(d.param_persistence_threshold, 100'000);
    EXPECT_EQ(d.reduce_bucket_size, 500'000'000);
    EXPECT_TRUE(d.blocking_p2p);
  }
  for (Framework f :
       {Framework::kMegatron, Framework::kNemo, Framework::kTorchtitan, Framework::kFsdp}) {
    EXPECT_EQ(ProfileOf(f).gather_unit, GatherUnit::kLayer) << Name(f);
    EXPECT_FALSE(ProfileOf(f).blocking_p2p) << Name(f);
  }
  Result<Scenario> s = BuildText(
      Head() +
      "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n"
      "parallel: {dp: 8, zero_stage: 3}\n"
      "framework: {name: deepspeed, stage3_prefetch_bucket_size: 2e8, reduce_bucket_size: "
      "1000, gather_unit: layer, blocking_p2p: false}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->framework.prefetch_bucket_size, 200'000'000);
  EXPECT_EQ(s->framework.reduce_bucket_size, 1000);
  EXPECT_EQ(s->framework.max_live_parameters, 1'000'000'000);
  EXPECT_EQ(s->framework.gather_unit, GatherUnit::kLayer);
  EXPECT_FALSE(s->framework.blocking_p2p);
  Result<Scenario> bad =
      BuildText(Head() +
                "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n"
                "parallel: {dp: 8, zero_stage: 3}\n"
                "framework: {name: deepspeed, stage3_max_live_parameters: 1.5}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(),
            "tests/config/data/inline.yaml:7:30: error: framework.stage3_max_live_parameters: "
            "expected a whole number of parameter elements between 0 and 1e15, got 1.5\n"
            "    framework: {name: deepspeed, stage3_max_live_parameters: 1.5}\n"
            "                                 ^");
}

// DeepSpeed's PipelineEngine asserts ZeRO stage < 2 (deepspeed/runtime/pipe/engine.py): a
// deepspeed profile with pp > 1 and zero_stage 2 or 3 is a located error; pp 1 or ZeRO-1 runs.
TEST(FrameworkConfig, PipelineEngineRefusesZero2And3) {
  auto build = [](const std::string& parallel) {
    return BuildText(Head() + "gpus: 8\ntraining: {seq_len: 1024, global_batch: 16}\n" + parallel +
                     "framework: deepspeed\n");
  };
  EXPECT_TRUE(build("parallel: {dp: 4, pp: 2, zero_stage: 1}\n").ok());
  EXPECT_TRUE(build("parallel: {dp: 8, zero_stage: 3}\n").ok());
  Result<Scenario> bad = build("parallel: {dp: 4, pp: 2, zero_stage: 3}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().ToString(),
            "tests/config/data/inline.yaml:6:38: error: parallel.zero_stage: 3 with pp 2 under "
            "framework deepspeed: DeepSpeed's PipelineEngine runs ZeRO stage 0 or 1 only "
            "(\"ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism\"); use zero_stage "
            "0 or 1, or pp 1\n"
            "    parallel: {dp: 4, pp: 2, zero_stage: 3}\n"
            "                                         ^");
}

}  // namespace
}  // namespace shardsim
