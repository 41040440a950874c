// Loading specs: every key read with its type and unit, defaults, base: merging, path
// resolution, origins.
#include "sim/config/loader.h"

#include <gtest/gtest.h>

#include "tests/config/test_util.h"

namespace shardsim {
namespace {

using testing_util::BuildText;
using testing_util::Head;
using testing_util::TestLib;

TEST(LoaderTest, ReadsEveryScenarioKey) {
  const LoadOptions lib = TestLib();
  Result<Scenario> s = LoadScenario("tests/config/data/good.yaml", lib);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->name, "good");
  EXPECT_EQ(s->file, "tests/config/data/good.yaml");
  EXPECT_EQ(s->gpus, 64);
  const TrainingSpec& t = s->training;
  EXPECT_EQ(t.seq_len, 4096);
  EXPECT_EQ(t.global_batch, 256);
  EXPECT_EQ(t.micro_batch, 2);
  EXPECT_EQ(t.precision, DType::kBf16);
  EXPECT_EQ(t.optimizer, Optimizer::kAdam);
  EXPECT_EQ(t.grad_dtype, DType::kFp32);
  EXPECT_EQ(t.recompute, Recompute::kSelective);
  EXPECT_TRUE(t.flash_attention);
  ASSERT_TRUE(t.tokens.has_value());
  EXPECT_DOUBLE_EQ(*t.tokens, 1.5e12);
  const ParallelSpec& p = s->parallel;
  EXPECT_EQ(p.dp, 4);
  EXPECT_EQ(p.tp, 2);
  EXPECT_EQ(p.pp, 4);
  EXPECT_EQ(p.cp, 2);
  EXPECT_EQ(p.zero_stage, 1);
  EXPECT_TRUE(p.sequence_parallel);
  EXPECT_EQ(p.schedule, PipelineSchedule::kInterleaved1F1B);
  EXPECT_EQ(p.virtual_stages, 2);
  EXPECT_EQ(p.order, (std::vector<std::string>{"tp", "cp", "dp", "pp"}));
  EXPECT_DOUBLE_EQ(p.dp_bucket_bytes, 25e6);
  EXPECT_FALSE(p.overlap_grad_reduce);
  EXPECT_TRUE(p.overlap_param_gather);  // default
  EXPECT_EQ(s->origins.Get("parallel.tp").loc.ToString(), "tests/config/data/good.yaml:18:7");
  EXPECT_EQ(s->origins.Get("parallel.tp").source_line, "  tp: 2");
}

TEST(LoaderTest, ModelKeysAndDefaults) {
  const LoadOptions lib = TestLib();
  Result<ModelSpec> m = LoadModel("tiny-llama", lib);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "tiny-llama");
  EXPECT_EQ(m->hidden_size, 512);
  EXPECT_EQ(m->num_layers, 8);
  EXPECT_EQ(m->num_heads, 8);
  EXPECT_EQ(m->num_kv_heads, 2);
  EXPECT_EQ(m->head_dim, 64);  // default h / n
  EXPECT_EQ(m->ffn_hidden_size, 1536);
  EXPECT_EQ(m->activation, Activation::kSwiglu);
  EXPECT_EQ(m->norm, NormKind::kRmsNorm);
  EXPECT_FALSE(m->qkv_bias);  // default = bias
  EXPECT_FALSE(m->attn_out_bias);
  EXPECT_FALSE(m->mlp_bias);
  EXPECT_EQ(m->position_embedding, PositionEmbedding::kRope);
  EXPECT_EQ(m->source, "test fixture");
  EXPECT_EQ(m->origins.file(), "tests/config/data/lib/models/tiny-llama.yaml");
  EXPECT_EQ(m->origins.Get("num_heads").loc.ToString(),
            "tests/config/data/lib/models/tiny-llama.yaml:5:12");
  // A defaulted key points at the file alone.
  EXPECT_EQ(m->origins.Get("head_dim").loc.ToString(),
            "tests/config/data/lib/models/tiny-llama.yaml");

  Result<ModelSpec> g = LoadModel("tiny-gpt", lib);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->num_kv_heads, 4);        // default: num_heads
  EXPECT_EQ(g->ffn_hidden_size, 1024);  // default: 4h
  EXPECT_TRUE(g->qkv_bias);             // default: bias
  EXPECT_TRUE(g->attn_out_bias);
  EXPECT_TRUE(g->mlp_bias);
  EXPECT_EQ(g->position_table_rows, 1024);  // default: max_seq_len
  EXPECT_DOUBLE_EQ(g->dropout, 0.1);
}

// attn_out_bias and mlp_bias put biases on one block of a model whose `bias` is false.
TEST(LoaderTest, BiasOnTheOutputProjectionOrTheMlpOnly) {
  Result<Scenario> s = BuildText(Head("{base: tiny-llama, attn_out_bias: true, mlp_bias: true}") +
                                 "gpus: 8\ntraining: {seq_len: 4096, global_batch: 8}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->model.bias);
  EXPECT_FALSE(s->model.qkv_bias);
  EXPECT_TRUE(s->model.attn_out_bias);
  EXPECT_TRUE(s->model.mlp_bias);
}

TEST(LoaderTest, HardwareKeysWithUnits) {
  const LoadOptions lib = TestLib();
  Result<HardwareSpec> h = LoadHardware("test-gpu", lib);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_DOUBLE_EQ(h->peak_flops.at(DType::kBf16), 989.4e12);
  EXPECT_DOUBLE_EQ(h->peak_flops.at(DType::kFp32), 66.9e12);
  EXPECT_EQ(h->peak_flops.count(DType::kTf32), 0u);
  EXPECT_DOUBLE_EQ(h->memory_capacity, 80.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(h->memory_bandwidth, 3.35e12);
  EXPECT_EQ(h->sm_count, 132);
  EXPECT_DOUBLE_EQ(h->matmul_max_efficiency, 0.8);
  EXPECT_EQ(h->matmul_tile_m, 128);
  EXPECT_EQ(h->matmul_tile_n, 256);
  EXPECT_DOUBLE_EQ(h->kernel_launch_overhead, 4e-6);
  EXPECT_DOUBLE_EQ(h->reserve_cuda_context, 800.0 * 1048576.0);
  EXPECT_DOUBLE_EQ(h->reserve_comm_buffers, 1073741824.0);
  ASSERT_EQ(h->gemm_table.size(), 2u);
  EXPECT_EQ(h->gemm_table[1].dtype, DType::kFp8);
  EXPECT_EQ(h->gemm_table[1].k, 8192);
  EXPECT_DOUBLE_EQ(h->gemm_table[1].flops_per_s, 1300.5e12);
}

TEST(LoaderTest, GemmTableFromCsvRelativeToTheHardwareFile) {
  const LoadOptions lib = TestLib();
  Result<HardwareSpec> h = LoadHardware("csv-gpu", lib);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_EQ(h->gemm_table.size(), 2u);  // the CSV replaces the base's inline list
  EXPECT_EQ(h->gemm_table[1].dtype, DType::kFp16);
  EXPECT_EQ(h->gemm_table[1].m, 1024);
  EXPECT_EQ(h->gemm_table[1].n, 2048);
  EXPECT_EQ(h->gemm_table[1].k, 4096);
  EXPECT_DOUBLE_EQ(h->gemm_table[1].flops_per_s, 171.8e12);
  EXPECT_DOUBLE_EQ(h->memory_bandwidth, 3.35e12);  // inherited from base: test-gpu
}

TEST(LoaderTest, GemmTableFromTheH200CalibrationRun) {
  const LoadOptions lib = TestLib();
  Result<HardwareSpec> h = LoadHardware("bench-h200", lib);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_GT(h->gemm_table.size(), 10u);
  EXPECT_EQ(h->gemm_table[0].dtype, DType::kBf16);
  EXPECT_EQ(h->gemm_table[0].m, 128);
  EXPECT_NEAR(h->gemm_table[0].flops_per_s, 0.12639537370246579e12, 1.0);
}

TEST(LoaderTest, TopologyWithAndWithoutInterNode) {
  const LoadOptions lib = TestLib();
  Result<TopologySpec> t = LoadTopology("test-dgx", lib);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->gpus_per_node, 8);
  EXPECT_EQ(t->intra_kind, LinkKind::kNvSwitch);
  EXPECT_DOUBLE_EQ(t->intra_bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(t->intra_latency, 1e-6);
  EXPECT_TRUE(t->has_inter_node);
  EXPECT_EQ(t->inter_kind, LinkKind::kInfiniBand);
  EXPECT_DOUBLE_EQ(t->nic_bandwidth, 50e9);  // 400 Gb/s
  EXPECT_EQ(t->fabric, FabricKind::kRailOptimized);
  EXPECT_DOUBLE_EQ(t->oversubscription, 2.0);
  EXPECT_EQ(t->nodes_per_leaf, 32);
  Result<TopologySpec> one = LoadTopology("one-node", lib);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_FALSE(one->has_inter_node);
  EXPECT_EQ(one->intra_kind, LinkKind::kNvLink);
}

TEST(LoaderTest, BaseMergesNestedMappingsKeyByKey) {
  Result<Scenario> s = BuildText(
      "model: {base: tiny-llama, num_layers: 4, moe: {num_experts: 4, top_k: 1}}\n"
      "hardware: {base: test-gpu, memory: {capacity: 96 GB}}\n"
      "topology: test-dgx\n"
      "gpus: 8\ntraining: {seq_len: 1024, global_batch: 8}\nparallel: {tp: 8}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->model.num_layers, 4);
  EXPECT_EQ(s->model.hidden_size, 512);  // from the base
  ASSERT_TRUE(s->model.moe.has_value());
  EXPECT_EQ(s->model.moe->expert_ffn_hidden_size, 1536);  // default: ffn_hidden_size
  EXPECT_DOUBLE_EQ(s->hardware.memory_capacity, 96e9);
  EXPECT_DOUBLE_EQ(s->hardware.memory_bandwidth, 3.35e12);  // the rest of memory: inherited
  // Origins follow the values: the override in the scenario, the rest in the base file.
  EXPECT_EQ(s->model.origins.Get("num_layers").loc.ToString(),
            "tests/config/data/inline.yaml:1:39");
  EXPECT_EQ(s->model.origins.Get("hidden_size").loc.ToString(),
            "tests/config/data/lib/models/tiny-llama.yaml:3:14");
  EXPECT_EQ(s->parallel.dp, 1);  // derived: gpus / (tp*pp*cp)
}

TEST(LoaderTest, BaseChainThroughFiles) {
  const LoadOptions lib = TestLib();
  Result<ModelSpec> m = LoadModel("tiny-moe", lib);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "tiny-moe");
  EXPECT_EQ(m->num_layers, 8);
  ASSERT_TRUE(m->moe.has_value());
  EXPECT_EQ(m->moe->num_experts, 8);
  EXPECT_EQ(m->origins.Get("moe.top_k").loc.ToString(),
            "tests/config/data/lib/models/tiny-moe.yaml:5:10");
}

TEST(LoaderTest, PathsResolveRelativeToTheFileThatNamesThem) {
  // A path from a scenario in tests/config/data/ to the fixture library.
  Result<Scenario> s = BuildText(
      "model: lib/models/tiny-gpt.yaml\nhardware: ./lib/hardware/test-gpu.yaml\n"
      "topology: lib/topologies/one-node.yaml\ngpus: 8\n"
      "training: {seq_len: 1024, global_batch: 8}\nparallel: {dp: 8}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->model.name, "tiny-gpt");
  EXPECT_EQ(s->model.origins.file(), "tests/config/data/lib/models/tiny-gpt.yaml");
  EXPECT_FALSE(s->topology.has_inter_node);
}

TEST(LoaderTest, ScenarioBase) {
  Result<Scenario> s = BuildText("base: lib/scenarios/base-run.yaml\nparallel: {pp: 2, dp: 16}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->parallel.pp, 2);
  EXPECT_EQ(s->parallel.dp, 16);
  EXPECT_EQ(s->parallel.tp, 2);  // from the base scenario
  EXPECT_EQ(s->model.name, "tiny-llama");
}

// The base scenario names its model and hardware (`model: tiny-llama`); keys set below them in
// the scenario built on it refine those entries instead of replacing them with mappings that hold
// only the new keys (a sweep axis `model.num_layers` over a `base:` scenario does the same).
TEST(LoaderTest, KeysBelowANamedEntryOfTheBaseScenarioRefineIt) {
  Result<Scenario> s = BuildText(
      "base: lib/scenarios/base-run.yaml\nmodel: {num_layers: 8}\n"
      "hardware: {memory: {capacity: 96 GB}}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->model.name, "tiny-llama");
  EXPECT_EQ(s->model.num_layers, 8);
  EXPECT_EQ(s->model.hidden_size, 512);  // from tiny-llama
  EXPECT_DOUBLE_EQ(s->hardware.memory_capacity, 96e9);
  EXPECT_DOUBLE_EQ(s->hardware.memory_bandwidth, 3.35e12);  // from test-gpu
}

TEST(LoaderTest, InlineModelWithoutBase) {
  Result<Scenario> s = BuildText(
      "model:\n  hidden_size: 128\n  num_layers: 2\n  num_heads: 2\n  vocab_size: 100\n"
      "  activation: relu\n  norm: layernorm\n  bias: true\n  tied_embeddings: true\n"
      "  position_embedding: none\n"
      "hardware: test-gpu\ntopology: one-node\ngpus: 1\n"
      "training: {seq_len: 128, global_batch: 4}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->model.name, "inline");
  EXPECT_EQ(s->model.head_dim, 64);
  EXPECT_EQ(s->model.position_embedding, PositionEmbedding::kNone);
}

TEST(LoaderTest, IntegersAcceptExponentFormButNotFractions) {
  Result<Scenario> s = BuildText(Head() +
                                 "gpus: 8\ntraining: {seq_len: 4096, global_batch: 1e3}\n"
                                 "parallel: {dp: 8}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->training.global_batch, 1000);
}

}  // namespace
}  // namespace shardsim

namespace shardsim {
namespace {

// Kernel tables by pass, grouped GEMMs and attention from CSV files beside the hardware file,
// and power_limit in kW (docs/hardware.md).
TEST(LoaderTest, KernelTablesByPassGroupedAndAttention) {
  const LoadOptions lib = testing_util::TestLib();
  Result<HardwareSpec> h = LoadHardware("tables-gpu", lib);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_EQ(h->gemm_table.size(), 2u);
  EXPECT_EQ(h->gemm_table[0].pass, KernelPass::kForward);
  EXPECT_EQ(h->gemm_table[0].groups, 0);
  EXPECT_EQ(h->gemm_table[1].pass, KernelPass::kBackwardWeight);
  ASSERT_EQ(h->grouped_gemm_table.size(), 2u);
  EXPECT_EQ(h->grouped_gemm_table[1].pass, KernelPass::kBackwardInput);
  EXPECT_EQ(h->grouped_gemm_table[1].groups, 8);
  EXPECT_DOUBLE_EQ(h->grouped_gemm_table[1].flops_per_s, 550e12);
  ASSERT_EQ(h->attention_table.size(), 2u);
  EXPECT_EQ(h->attention_table[1].pass, KernelPass::kBackwardInput);
  EXPECT_EQ(h->attention_table[1].batch_heads, 64);
  EXPECT_DOUBLE_EQ(h->attention_table[0].flops_per_s, 980.4e12);
  EXPECT_DOUBLE_EQ(h->power_limit, 1200.0);
}

TEST(LoaderTest, KernelTableWithAnUnknownPassIsALocatedError) {
  const LoadOptions lib = testing_util::TestLib();
  Result<HardwareSpec> h = LoadHardware("bad-pass-gpu", lib);
  ASSERT_FALSE(h.ok());
  const Diagnostic& d = h.status().diagnostics().front();
  EXPECT_EQ(d.loc.ToString() + ": " + d.message,
            "tests/config/data/lib/gemm_bad_pass.csv:2:6: pass: \"sideways\" is not one of "
            "forward, backward_input, backward_weight, any");
}

}  // namespace
}  // namespace shardsim
