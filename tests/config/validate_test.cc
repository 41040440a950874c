// The layout arithmetic of ValidateScenario, each check located at the key to change.
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "tests/config/test_util.h"

namespace shardsim {
namespace {

using testing_util::BuildText;
using testing_util::Head;

// tiny-llama: 8 layers, 8 heads, 2 kv heads, ffn 1536; seq 4096 by default here.
Result<Scenario> Layout(const std::string& gpus, const std::string& parallel,
                        const std::string& training = "{seq_len: 4096, global_batch: 256}",
                        const std::string& model = "tiny-llama") {
  return BuildText(Head(model) + "gpus: " + gpus + "\ntraining: " + training +
                   "\nparallel: " + parallel + "\n");
}

// The first diagnostic's message, or "" when the scenario is valid.
std::string First(const Result<Scenario>& s) {
  return s.ok() ? "" : s.status().diagnostics().front().message;
}

TEST(ValidateTest, ValidLayoutsPass) {
  EXPECT_EQ(First(Layout("64", "{dp: 4, tp: 2, pp: 4, cp: 2}")), "");
  EXPECT_EQ(First(Layout("16", "{dp: 2, tp: 8}")), "");  // tp > kv heads: kv replicated
  EXPECT_EQ(First(Layout("8", "{dp: 4, tp: 2, pp: 1}")), "");
}

TEST(ValidateTest, GpusMustEqualTheLayout) {
  Result<Scenario> s = Layout("48", "{dp: 4, tp: 2, pp: 4}");
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(First(s), "gpus: 48 does not equal dp*tp*pp*cp = 4*2*4*1 = 32");
  EXPECT_EQ(s.status().diagnostics().front().loc.ToString(), "tests/config/data/inline.yaml:4:7");
}

TEST(ValidateTest, DpIsDerivedWhenNotWritten) {
  Result<Scenario> s = Layout("64", "{tp: 2, pp: 4}");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->parallel.dp, 8);
  // Not a multiple: the remainder is reported at gpus.
  EXPECT_EQ(First(Layout("36", "{tp: 2, pp: 4}")),
            "gpus: 36 does not equal dp*tp*pp*cp = 4*2*4*1 = 32");
}

TEST(ValidateTest, TpAndKvHeadsMustNest) {
  // 8 heads, 2 kv heads: tp 4 is fine (kv replicated 2x), tp 8 too; a model with 6 kv heads and
  // tp 4 is not.
  EXPECT_EQ(First(Layout("4", "{tp: 4}")), "");
  Result<Scenario> s = Layout("4", "{tp: 4}", "{seq_len: 4096, global_batch: 256}",
                              "{base: tiny-llama, num_heads: 12, num_kv_heads: 6, head_dim: 64}");
  EXPECT_EQ(First(s),
            "parallel.tp: 4 and model.num_kv_heads (6, tests/config/data/inline.yaml:1:56) are "
            "incompatible: one must divide the other");
}

TEST(ValidateTest, TpMustDivideTheFfn) {
  Result<Scenario> s = Layout("2", "{tp: 2}", "{seq_len: 4096, global_batch: 256}",
                              "{base: tiny-llama, ffn_hidden_size: 1537}");
  EXPECT_EQ(First(s),
            "parallel.tp: 2 does not divide model.ffn_hidden_size (1537, "
            "tests/config/data/inline.yaml:1:44)");
}

TEST(ValidateTest, LayersSplitOverPipelineAndVirtualStages) {
  EXPECT_EQ(First(Layout("3", "{pp: 3}")),
            "parallel.pp: model.num_layers (8, tests/config/data/lib/models/tiny-llama.yaml:4:13) "
            "is not divisible by pp*virtual_stages = 3*1 = 3");
  EXPECT_EQ(First(Layout("4", "{pp: 4, schedule: interleaved_1f1b, virtual_stages: 4}")),
            "parallel.pp: model.num_layers (8, tests/config/data/lib/models/tiny-llama.yaml:4:13) "
            "is not divisible by pp*virtual_stages = 4*4 = 16");
}

TEST(ValidateTest, UnevenFirstAndLastStages) {
  // 8 layers over pp 3 with a 2-layer first stage: 6 left for 2 stages, 3 each.
  EXPECT_EQ(First(Layout("3", "{pp: 3, first_stage_layers: 2}")), "");
  EXPECT_EQ(First(Layout("3", "{pp: 3, first_stage_layers: 3}")),
            "parallel.first_stage_layers: first_stage_layers 3 and last_stage_layers 0 leave 5 of "
            "model.num_layers (8, tests/config/data/lib/models/tiny-llama.yaml:4:13) for 2 other "
            "stages, which is not a whole positive number per stage");
  EXPECT_EQ(First(Layout("2", "{pp: 2, first_stage_layers: 3, last_stage_layers: 5}")), "");
  EXPECT_EQ(First(Layout("1", "{first_stage_layers: 3}")),
            "parallel.first_stage_layers: an uneven first/last stage needs pp >= 2 (pp is 1)");
  // More layers than the model has: the remainder as it is, negative.
  EXPECT_EQ(
      First(Layout("4", "{pp: 4, first_stage_layers: 10}")),
      "parallel.first_stage_layers: first_stage_layers 10 and last_stage_layers 0 leave -2 of "
      "model.num_layers (8, tests/config/data/lib/models/tiny-llama.yaml:4:13) for 3 other "
      "stages, which is not a whole positive number per stage");
  // Interleaved (Megatron-Core's decoder_first/last_pipeline_num_layers with VPP): each stage's
  // layers split over its virtual stages.
  const std::string interleaved = "schedule: interleaved_1f1b, virtual_stages: 2";
  EXPECT_EQ(First(Layout("2", "{pp: 2, first_stage_layers: 2, " + interleaved + "}")), "");
  const std::string batch = "{seq_len: 4096, global_batch: 255}";  // micro-batches: 3k
  EXPECT_EQ(
      First(Layout("3", "{pp: 3, first_stage_layers: 4, last_stage_layers: 2, " + interleaved + "}",
                   batch)),
      "");
  EXPECT_EQ(
      First(Layout("3", "{pp: 3, first_stage_layers: 3, last_stage_layers: 3, " + interleaved + "}",
                   batch)),
      "parallel.first_stage_layers: first_stage_layers 3 and last_stage_layers 3 leave 2 of "
      "model.num_layers (8, tests/config/data/lib/models/tiny-llama.yaml:4:13) for 1 other "
      "stage; every stage's layers must be divisible by virtual_stages (2)");
}

// Megatron-Core's account_for_embedding/loss_in_pipeline_split: the embedding and the loss count
// as layers of the split (Llama 3.1 405B's 126 layers + 2 over pp 8 x vp 8 in NeMo's recipe).
TEST(ValidateTest, EmbeddingAndLossCountedInTheSplit) {
  const std::string both =
      "account_for_embedding_in_pipeline_split: true, account_for_loss_in_pipeline_split: true";
  EXPECT_EQ(First(Layout("2", "{pp: 2, " + both + "}")), "");  // 8 + 2 over 2
  EXPECT_EQ(First(Layout("4", "{pp: 4, " + both + "}")),
            "parallel.pp: model.num_layers (8, tests/config/data/lib/models/tiny-llama.yaml:4:13) "
            "+ 2 (embedding and loss counted as layers) is not divisible by pp*virtual_stages = "
            "4*1 = 4");
  EXPECT_EQ(First(Layout("3", "{pp: 3, account_for_embedding_in_pipeline_split: true}")), "");
  EXPECT_EQ(First(Layout("2", "{pp: 2, first_stage_layers: 3, " + both + "}")),
            "parallel.first_stage_layers: an uneven first/last stage and "
            "parallel.account_for_embedding_in_pipeline_split exclude each other (as in "
            "Megatron-Core): use one or the other");
}

TEST(ValidateTest, GpusMustFitTheTopology) {
  // test-dgx: 8 GPUs per node.
  EXPECT_EQ(First(Layout("12", "{dp: 12}", "{seq_len: 4096, global_batch: 240}")),
            "gpus: 12 GPUs do not fill whole nodes of topology 'test-dgx' (8 GPUs per node); use "
            "a multiple of 8");
  Result<Scenario> s = BuildText(
      "model: tiny-llama\nhardware: test-gpu\ntopology: one-node\ngpus: 16\n"
      "training: {seq_len: 4096, global_batch: 256}\nparallel: {dp: 16}\n");
  EXPECT_EQ(First(s),
            "gpus: topology 'one-node' is a single node of 8 GPUs (no inter_node block); "
            "16 GPUs do not fit");
  EXPECT_EQ(s.status().diagnostics().front().loc.ToString(), "tests/config/data/inline.yaml:4:7");
}

TEST(ValidateTest, PrecisionNeedsAMatmulPeak) {
  // test-gpu lists fp32, bf16 and fp8 peaks only.
  Result<Scenario> s = Layout("1", "{}", "{seq_len: 4096, global_batch: 256, precision: fp16}");
  EXPECT_EQ(First(s),
            "training.precision: fp16 needs a matmul peak for it in the hardware (test-gpu has "
            "peak_flops for fp32, bf16, fp8, tests/config/data/lib/hardware/test-gpu.yaml:2:13)");
  EXPECT_EQ(First(Layout("1", "{}", "{seq_len: 4096, global_batch: 256, precision: fp8}")), "");
  // Block-scaled precisions have no stand-in units: without their own peak they are an error.
  EXPECT_EQ(First(Layout("1", "{}", "{seq_len: 4096, global_batch: 256, precision: mxfp8}")),
            "training.precision: mxfp8 needs a matmul peak for it in the hardware (test-gpu has "
            "peak_flops for fp32, bf16, fp8, tests/config/data/lib/hardware/test-gpu.yaml:2:13)");
  EXPECT_NE(First(Layout("1", "{}", "{seq_len: 4096, global_batch: 256, precision: nvfp4}")), "");
}

TEST(ValidateTest, StepSizeLimits) {
  // Every micro-batch is simulated: at most 65,536 per step.
  EXPECT_EQ(First(Layout("1", "{}", "{seq_len: 16, global_batch: 65537}")),
            "training.global_batch: 65537 makes 65537 micro-batches per step (global_batch / "
            "(dp*micro_batch)); shardsim simulates each and takes at most 65536: raise "
            "training.micro_batch or parallel.dp");
  EXPECT_EQ(First(Layout("1", "{}", "{seq_len: 16, global_batch: 65536}")), "");
  // The task graph holds pp*virtual_stages*micro-batches passes, at most 2^20 (pp 100 x v 1000
  // x 65,500 micro-batches grew past 4.6 GB and aborted with bad_alloc).
  const std::string deep = "{base: tiny-llama, num_layers: 32}";
  EXPECT_EQ(First(Layout("16", "{pp: 16}", "{seq_len: 16, global_batch: 65536}", deep)), "");
  EXPECT_EQ(First(Layout("32", "{pp: 32}", "{seq_len: 16, global_batch: 65536}", deep)),
            "training.global_batch: pp*virtual_stages*micro-batches per step = 32*1*65536 = "
            "2097152 pipeline passes; one simulation holds at most 1048576 (about 800 MB of task "
            "graph): raise training.micro_batch or parallel.dp, or lower the global batch");
  EXPECT_EQ(First(Layout("8", "{pp: 8, schedule: interleaved_1f1b, virtual_stages: 4}",
                         "{seq_len: 16, global_batch: 65536}", deep)),
            "training.global_batch: pp*virtual_stages*micro-batches per step = 8*4*65536 = "
            "2097152 pipeline passes; one simulation holds at most 1048576 (about 800 MB of task "
            "graph): raise training.micro_batch or parallel.dp, or lower the global batch");
  // Tokens per step counted exactly (no wrap into negative tokens).
  EXPECT_EQ(
      First(Layout("1", "{}", "{seq_len: 4611686018427387904, global_batch: 4, micro_batch: 4}")),
      "training.global_batch: global_batch * seq_len = 4*4611686018427387904 tokens per step "
      "is more than shardsim counts exactly (9007199254740992, 2^53)");
  // 2^28 tokens ran into the engine's clock ("the simulated step lasts longer than ...").
  EXPECT_EQ(
      First(Layout("1", "{}", "{seq_len: 268435456, global_batch: 1}")),
      "training.seq_len: 268435456 is longer than shardsim simulates (16777216 tokens, 2^24)");
  EXPECT_EQ(First(Layout("1", "{}", "{seq_len: 16777216, global_batch: 1}")), "");
}

TEST(ValidateTest, SequenceParallelismSplitsTheTokens) {
  EXPECT_EQ(
      First(Layout("2", "{tp: 2, sequence_parallel: true}", "{seq_len: 1, global_batch: 256}")),
      "training.seq_len: sequence parallelism splits the tokens of a micro-batch "
      "(micro_batch*seq_len/cp = 1) over the tp ranks, but tp (2) does not divide them");
  EXPECT_EQ(First(Layout("2", "{tp: 2, sequence_parallel: true}",
                         "{seq_len: 1, global_batch: 256, micro_batch: 2}")),
            "");
}

TEST(ValidateTest, GlobalBatchOverDpAndMicroBatch) {
  EXPECT_EQ(First(Layout("8", "{dp: 8}", "{seq_len: 4096, global_batch: 100, micro_batch: 2}")),
            "training.global_batch: 100 is not divisible by dp*micro_batch = 8*2 = 16");
}

TEST(ValidateTest, SequenceOverContextParallelism) {
  EXPECT_EQ(First(Layout("2", "{cp: 2}", "{seq_len: 4098, global_batch: 256}")),
            "training.seq_len: 4098 is not divisible by 2*cp = 4 (context parallelism cuts each "
            "sequence into 2*cp chunks to balance causal attention)");
  EXPECT_EQ(First(Layout("2", "{cp: 2}", "{seq_len: 4100, global_batch: 256}")), "");
}

TEST(ValidateTest, VirtualStagesOnlyWithInterleaving) {
  EXPECT_EQ(First(Layout("2", "{pp: 2, virtual_stages: 2}")),
            "parallel.virtual_stages: 2 needs schedule interleaved_1f1b (schedule is 1f1b)");
  EXPECT_EQ(First(Layout("2", "{pp: 2, schedule: interleaved_1f1b}")),
            "parallel.schedule: interleaved_1f1b needs virtual_stages >= 2 (virtual_stages is 1)");
  EXPECT_EQ(First(Layout("2", "{pp: 2, schedule: interleaved_1f1b, virtual_stages: 2}")), "");
}

// Megatron-LM's microbatch_group_size_per_vp_stage (N): interleaved only, pp <= N <= m, and a
// last group of 0 or at least pp micro-batches; with it, m need not be a multiple of pp.
TEST(ValidateTest, MicrobatchGroupAsMegatronTakesIt) {
  const std::string ten = "{seq_len: 4096, global_batch: 10}";  // 10 micro-batches per step
  const std::string il = "{pp: 4, schedule: interleaved_1f1b, virtual_stages: 2, ";
  EXPECT_EQ(First(Layout("4", il + "microbatch_group_size_per_vp_stage: 6}", ten)), "");
  EXPECT_EQ(First(Layout("4", il + "microbatch_group_size_per_vp_stage: 5}", ten)), "");
  EXPECT_EQ(First(Layout("4", il + "microbatch_group_size_per_vp_stage: 10}", ten)), "");
  EXPECT_EQ(First(Layout("4", il + "microbatch_group_size_per_vp_stage: 3}", ten)),
            "parallel.microbatch_group_size_per_vp_stage: 3 is below pp; Megatron-LM's "
            "interleaved schedule takes pp (4) <= it <= the micro-batches per step (global_batch "
            "/ (dp*micro_batch) = 10)");
  EXPECT_EQ(First(Layout("4", il + "microbatch_group_size_per_vp_stage: 11}", ten)),
            "parallel.microbatch_group_size_per_vp_stage: 11 is above the micro-batches per step; "
            "Megatron-LM's interleaved schedule takes pp (4) <= it <= the micro-batches per step "
            "(global_batch / (dp*micro_batch) = 10)");
  Result<Scenario> seven = Layout("4", il + "microbatch_group_size_per_vp_stage: 7}", ten);
  EXPECT_EQ(First(seven),
            "parallel.microbatch_group_size_per_vp_stage: 7 leaves 3 of the 10 micro-batches per "
            "step for the last group, fewer than pp (4): Megatron-LM refuses it (dependency "
            "bubbles); use a group that divides 10 or leaves at least pp over");
  EXPECT_TRUE(seven.status().diagnostics().front().loc.known());
  // Left out, the group is pp, and 10 is not a multiple of it.
  EXPECT_EQ(First(Layout("4", "{pp: 4, schedule: interleaved_1f1b, virtual_stages: 2}", ten)),
            "parallel.schedule: interleaved_1f1b needs the micro-batches per step (global_batch / "
            "(dp*micro_batch) = 10) to be a multiple of pp (4)");
  EXPECT_EQ(First(Layout("4", "{pp: 4, microbatch_group_size_per_vp_stage: 4}", ten)),
            "parallel.microbatch_group_size_per_vp_stage: 4 needs schedule interleaved_1f1b "
            "(schedule is 1f1b)");
}

// The layouts the zero-bubble and DualPipe runtimes refuse (deepseek-ai/DualPipe asserts an
// even rank count and at least 2*pp micro-batches, an even number for DualPipe), each located.
TEST(ValidateTest, ZeroBubbleAndDualPipeLayouts) {
  EXPECT_EQ(First(Layout("2", "{pp: 2, schedule: zb_h1}")), "");
  EXPECT_EQ(First(Layout("4", "{pp: 2, schedule: zb_h2, zero_stage: 3}")),
            "parallel.schedule: zb_h2 splits the backward into B and W passes, which is not "
            "simulated with zero_stage 3; use zero_stage 0, 1 or 2");
  EXPECT_EQ(First(Layout("2", "{pp: 2, schedule: zb_h1, virtual_stages: 2}")),
            "parallel.virtual_stages: 2 needs schedule interleaved_1f1b (schedule is zb_h1)");
  // ZB-V: exactly two chunks per rank in a V over 2*pp stages, pp >= 2, 2*pp - 1 micro-batches.
  EXPECT_EQ(First(Layout("2", "{pp: 2, schedule: zb_v}")), "");  // 8 layers = 2*2*2
  EXPECT_EQ(First(Layout("2", "{pp: 2, schedule: zb_v, virtual_stages: 2}")), "");
  EXPECT_EQ(First(Layout("2", "{pp: 2, schedule: zb_v, virtual_stages: 4}")),
            "parallel.virtual_stages: 4: zb_v runs exactly two model chunks per rank (a V: "
            "stages r and 2*pp-1-r); use virtual_stages 2 or leave it out");
  EXPECT_EQ(First(Layout("1", "{pp: 1, schedule: zb_v}")),
            "parallel.schedule: zb_v needs pp >= 2 (pp is 1)");
  Result<Scenario> few = Layout("4", "{pp: 4, schedule: zb_v}", "{seq_len: 4096, global_batch: 6}");
  EXPECT_EQ(First(few),
            "parallel.schedule: zb_v needs at least 2*pp-1 micro-batches per step (global_batch / "
            "(dp*micro_batch) = 6, 2*pp-1 = 7): fewer leave its V unfilled");
  EXPECT_EQ(few.status().diagnostics().front().loc.ToString(),
            "tests/config/data/inline.yaml:6:29");
  EXPECT_EQ(First(Layout("4", "{pp: 4, schedule: zb_v}", "{seq_len: 4096, global_batch: 7}")), "");
  EXPECT_NE(First(Layout("8", "{pp: 8, schedule: zb_v}")).find("pp*virtual_stages = 8*2"),
            std::string::npos);
  EXPECT_EQ(First(Layout("2", "{pp: 2, schedule: zb_v, first_stage_layers: 2}")),
            "parallel.first_stage_layers: zb_v places the first and last stages on the same "
            "rank; an uneven first/last stage is not simulated with it");
  EXPECT_EQ(First(Layout("4", "{pp: 4, schedule: dualpipe}")), "");
  EXPECT_EQ(First(Layout("2", "{pp: 2, schedule: dualpipe_v}")), "");  // 8 layers = 2*2*2
  // DualPipeV, the other V, takes what ZB-V takes: virtual_stages 2 or left out; DualPipe (two
  // copies of a pp-stage split) only 1.
  EXPECT_EQ(First(Layout("2", "{pp: 2, schedule: dualpipe_v, virtual_stages: 2}")), "");
  Result<Scenario> dv3 = Layout("2", "{pp: 2, schedule: dualpipe_v, virtual_stages: 3}");
  EXPECT_EQ(First(dv3),
            "parallel.virtual_stages: 3: dualpipe_v runs exactly two model chunks per rank (a V: "
            "stages r and 2*pp-1-r); use virtual_stages 2 or leave it out");
  EXPECT_TRUE(dv3.status().diagnostics().front().loc.known());
  EXPECT_EQ(First(Layout("4", "{pp: 4, schedule: dualpipe, virtual_stages: 2}")),
            "parallel.virtual_stages: 2 needs schedule interleaved_1f1b (schedule is dualpipe)");
  // Both V schedules run (and echo) two chunks, written or not.
  for (const char* v : {"", ", virtual_stages: 2"}) {
    for (const char* sched : {"zb_v", "dualpipe_v"}) {
      Result<Scenario> s = Layout("2", std::string("{pp: 2, schedule: ") + sched + v + "}");
      ASSERT_TRUE(s.ok()) << sched << v;
      EXPECT_EQ(SimulatedVirtualStages(s->parallel), 2) << sched << v;
      EXPECT_EQ(s->parallel.ChunksPerRank(), 2) << sched << v;
    }
  }
  EXPECT_EQ(SimulatedVirtualStages(Layout("4", "{pp: 4, schedule: dualpipe}")->parallel), 1);
  EXPECT_EQ(SimulatedVirtualStages(
                Layout("2", "{pp: 2, schedule: interleaved_1f1b, virtual_stages: 2}")->parallel),
            2);
  EXPECT_EQ(SimulatedVirtualStages(Layout("2", "{pp: 2}")->parallel), 1);
  EXPECT_EQ(First(Layout("1", "{pp: 1, schedule: dualpipe}")),
            "parallel.schedule: dualpipe needs pp >= 2 (pp is 1)");
  EXPECT_EQ(First(Layout("4", "{pp: 4, schedule: dualpipe}", "{seq_len: 4096, global_batch: 6}")),
            "parallel.schedule: dualpipe needs an even number of micro-batches per step, at "
            "least 2*pp (global_batch / (dp*micro_batch) = 6, 2*pp = 8): half enter at each end");
  EXPECT_EQ(First(Layout("4", "{pp: 4, schedule: dualpipe_v}", "{seq_len: 4096, global_batch: 7}")),
            "parallel.schedule: dualpipe_v needs at least 2*pp micro-batches per step "
            "(global_batch / (dp*micro_batch) = 7, 2*pp = 8)");
  // DualPipeV splits the model in 2*pp stages: 8 layers do not split over 2*8.
  EXPECT_NE(First(Layout("8", "{pp: 8, schedule: dualpipe_v}"))
                .find("is not divisible by "
                      "pp*virtual_stages = 8*2"),
            std::string::npos);
}

TEST(ValidateTest, ZeroStageRange) {
  Result<Scenario> s = Layout("1", "{zero_stage: 4}");
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(First(s), "parallel.zero_stage: must be between 0 and 3, got 4");
}

TEST(ValidateTest, ExpertParallelism) {
  EXPECT_EQ(First(Layout("8", "{dp: 8, ep: 2}")),
            "parallel.ep: 2 needs a mixture-of-experts model (model tiny-llama has no moe block)");
  EXPECT_EQ(First(Layout("8", "{dp: 8, ep: 4}", "{seq_len: 4096, global_batch: 256}", "tiny-moe")),
            "");
  EXPECT_EQ(First(Layout("8", "{dp: 8, ep: 3}", "{seq_len: 4096, global_batch: 240}", "tiny-moe")),
            "parallel.ep: 3 does not divide model.moe.num_experts (8, "
            "tests/config/data/lib/models/tiny-moe.yaml:4:16)");
  EXPECT_EQ(First(Layout("4", "{dp: 4, ep: 8}", "{seq_len: 4096, global_batch: 256}", "tiny-moe")),
            "parallel.ep: 8 does not divide dp*cp = 4*1 = 4");
}

TEST(ValidateTest, LearnedPositionsBoundTheSequence) {
  EXPECT_EQ(First(Layout("1", "{}", "{seq_len: 2048, global_batch: 8}", "tiny-gpt")),
            "training.seq_len: 2048 exceeds model.max_seq_len (1024, "
            "tests/config/data/lib/models/tiny-gpt.yaml:7:14), the rows of the learned position "
            "table");
  EXPECT_EQ(First(Layout("1", "{}", "{seq_len: 1024, global_batch: 8}", "tiny-gpt")), "");
}

TEST(ValidateTest, MicroBatchAtLeastOne) {
  EXPECT_EQ(First(Layout("1", "{}", "{seq_len: 1024, global_batch: 8, micro_batch: 0}")),
            "training.micro_batch: must be positive, got 0");
}

TEST(ValidateTest, ReportsEveryLayoutProblemAtOnce) {
  Result<Scenario> s = Layout("100", "{dp: 3, tp: 3, pp: 3}", "{seq_len: 4096, global_batch: 256}");
  ASSERT_FALSE(s.ok());
  // gpus, tp | heads, tp | ffn? (1536 % 3 == 0: no), layers, 100 GPUs not whole nodes, batch.
  EXPECT_EQ(s.status().diagnostics().size(), 5u) << s.status().ToString();
}

// training.cross_entropy_fusion_impl: read as Megatron-Core names it; te needs the fused loss.
TEST(ValidateTest, CrossEntropyFusionImpl) {
  const auto training = [](const std::string& extra) {
    return "{seq_len: 4096, global_batch: 256" + extra + "}";
  };
  Result<Scenario> te = Layout("1", "{}", training(", cross_entropy_fusion_impl: te"));
  ASSERT_TRUE(te.ok()) << te.status().ToString();
  EXPECT_EQ(te->training.cross_entropy_impl, CrossEntropyImpl::kTe);
  EXPECT_EQ(First(Layout("1", "{}", training(", cross_entropy_fusion_impl: triton"))),
            "training.cross_entropy_fusion_impl: \"triton\" is not one of native, te");
  EXPECT_EQ(
      First(Layout("1", "{}", training(", cross_entropy_fusion_impl: te, fused_loss: false"))),
      "training.cross_entropy_fusion_impl: te is Transformer Engine's fused cross-entropy, "
      "but training.fused_loss is false (the scenario's): set fused_loss: true, or leave "
      "this key out");
}

}  // namespace
}  // namespace shardsim
