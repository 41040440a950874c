// Hugging Face config.json import: the shapes of each family field by field, and for every
// sample in tests/reference/hf the exact parameter count its publisher states (params.yaml).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/config/config_node.h"
#include "sim/config/loader.h"
#include "sim/config/value_reader.h"
#include "sim/config/yaml_source.h"
#include "tests/config/param_count.h"
#include "tests/config/test_util.h"

namespace shardsim {
namespace {

using testing_util::BuildText;
using testing_util::CountParams;
using testing_util::TestLib;

const char* kRef = "tests/reference/hf/";

ModelSpec Import(const std::string& path) {
  TestLib();
  Result<ModelSpec> m = ImportHfConfig(path);
  EXPECT_TRUE(m.ok()) << path << ": " << m.status().ToString();
  return m.ok() ? *m : ModelSpec{};
}

TEST(HfImportTest, EverySampleHasItsPublishedParameterCount) {
  TestLib();
  Result<ConfigNode> counts = ParseYamlFile(std::string(kRef) + "params.yaml");
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kRef)) {
    if (entry.path().extension() != ".json") continue;
    const std::string stem = entry.path().stem().string();
    const ConfigNode* row = counts->Find(stem);
    ASSERT_NE(row, nullptr) << stem << " has no row in params.yaml";
    Result<int64_t> expected = ParseInteger(row->Find("params")->text());
    ASSERT_TRUE(expected.ok());
    const ModelSpec m = Import(entry.path().string());
    EXPECT_EQ(CountParams(m).total, *expected) << stem;
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

// A JSON string where a number belongs ("hidden_size": "4096") is refused at it, as the YAML
// readers refuse "8192" for an integer key.
TEST(HfImportTest, ANumberWrittenAsAStringIsRefused) {
  TestLib();
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "shardsim_hf_string_number.json";
  {
    std::ofstream out(path);
    out << "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": \"4096\", "
           "\"num_hidden_layers\": 2, \"num_attention_heads\": 32, \"intermediate_size\": 11008, "
           "\"vocab_size\": 32000, \"max_position_embeddings\": 4096}\n";
  }
  Result<ModelSpec> m = ImportHfConfig(path.string());
  std::filesystem::remove(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().ToString().find(
                "hidden_size: expected a number, got the string \"4096\" (write the number "
                "without quotes)"),
            std::string::npos)
      << m.status().ToString();
}

TEST(HfImportTest, Llama) {
  const ModelSpec m = Import(std::string(kRef) + "llama3.1-70b.json");
  EXPECT_EQ(m.name, "llama3.1-70b");
  EXPECT_EQ(m.hidden_size, 8192);
  EXPECT_EQ(m.num_layers, 80);
  EXPECT_EQ(m.num_heads, 64);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.ffn_hidden_size, 28672);
  EXPECT_EQ(m.vocab_size, 128256);
  EXPECT_EQ(m.max_seq_len, 131072);
  EXPECT_EQ(m.activation, Activation::kSwiglu);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_FALSE(m.bias);
  EXPECT_FALSE(m.qkv_bias);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::kRope);
  // Origins point into the config.json.
  EXPECT_EQ(m.origins.Get("num_heads").loc.file, std::string(kRef) + "llama3.1-70b.json");
  EXPECT_GT(m.origins.Get("num_heads").loc.col, 1);
}

// LlamaMLP: bias=config.mlp_bias on gate_proj, up_proj and down_proj, i.e. 32 x (2 x 14336 +
// 4096) = 1,048,576 more than llama3.1-8b's 8,030,261,248.
TEST(HfImportTest, LlamaMlpBiasOnGateUpAndDown) {
  const ModelSpec m = Import("tests/config/data/hf/llama3.1-8b-mlp-bias.json");
  EXPECT_TRUE(m.mlp_bias);
  EXPECT_FALSE(m.qkv_bias);
  EXPECT_FALSE(m.bias);
  EXPECT_EQ(m.origins.Get("mlp_bias").loc.file, "tests/config/data/hf/llama3.1-8b-mlp-bias.json");
  EXPECT_EQ(CountParams(m).total, 8031309824);
}

// LlamaAttention: bias=config.attention_bias on q_proj, k_proj, v_proj and o_proj: 32 x (4096 +
// 2 x 1024 + 4096) = 327,680 more than llama3.1-8b's 8,030,261,248.
TEST(HfImportTest, LlamaAttentionBiasOnQkvAndOutput) {
  const ModelSpec m = Import("tests/config/data/hf/llama3.1-8b-attention-bias.json");
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_TRUE(m.attn_out_bias);
  EXPECT_FALSE(m.mlp_bias);
  EXPECT_EQ(CountParams(m).total, 8030588928);
}

TEST(HfImportTest, Qwen2HasQkvBiasOnly) {
  const ModelSpec m = Import(std::string(kRef) + "qwen2.5-0.5b.json");
  EXPECT_FALSE(m.bias);
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_FALSE(m.attn_out_bias);
  EXPECT_FALSE(m.mlp_bias);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.num_kv_heads, 2);
  EXPECT_EQ(m.head_dim, 64);
}

TEST(HfImportTest, Gpt2) {
  const ModelSpec m = Import(std::string(kRef) + "gpt2.json");
  EXPECT_EQ(m.hidden_size, 768);
  EXPECT_EQ(m.num_layers, 12);
  EXPECT_EQ(m.num_heads, 12);
  EXPECT_EQ(m.ffn_hidden_size, 3072);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::kLearned);
  EXPECT_EQ(m.position_table_rows, 1024);
  EXPECT_EQ(m.activation, Activation::kGelu);
  EXPECT_EQ(m.norm, NormKind::kLayerNorm);
  EXPECT_TRUE(m.bias);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_DOUBLE_EQ(m.dropout, 0.1);
}

TEST(HfImportTest, GptNeoxParallelResidualTwoNormsUntied) {
  const ModelSpec m = Import(std::string(kRef) + "pythia-1b.json");
  EXPECT_TRUE(m.parallel_attention);
  EXPECT_EQ(m.norms_per_layer, 2);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_TRUE(m.bias);
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::kRope);
}

TEST(HfImportTest, Falcon7bParallelAttentionOneNormMultiQuery) {
  const ModelSpec m = Import(std::string(kRef) + "falcon-7b.json");
  EXPECT_TRUE(m.parallel_attention);
  EXPECT_EQ(m.norms_per_layer, 1);
  EXPECT_EQ(m.num_kv_heads, 1);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.ffn_hidden_size, 4 * 4544);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_FALSE(m.bias);
  EXPECT_EQ(m.max_seq_len, 2048);  // FalconConfig's default
}

TEST(HfImportTest, Falcon40bNewDecoderArchitecture) {
  const ModelSpec m = Import("tests/config/data/hf/falcon-40b.json");
  EXPECT_TRUE(m.parallel_attention);
  EXPECT_EQ(m.norms_per_layer, 2);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.head_dim, 64);
  // Closed form of the mapping: per layer q and o (h*h each), k and v for 8 groups of 64, a
  // 4h MLP without biases, two LayerNorms; a tied 65024-row embedding and the final LayerNorm.
  const int64_t h = 8192;
  const int64_t layer = 2 * h * h + 2 * h * 8 * 64 + 2 * h * 4 * h + 2 * 2 * h;
  EXPECT_EQ(CountParams(m).total, 60 * layer + 65024 * h + 2 * h);
}

TEST(HfImportTest, OptHasTwoExtraPositionRows) {
  const ModelSpec m = Import(std::string(kRef) + "opt-1.3b.json");
  EXPECT_EQ(m.max_seq_len, 2048);
  EXPECT_EQ(m.position_table_rows, 2050);
  EXPECT_EQ(m.activation, Activation::kRelu);
  EXPECT_EQ(m.ffn_hidden_size, 8192);
  EXPECT_TRUE(m.tied_embeddings);
}

TEST(HfImportTest, OptWithProjectionIsRejected) {
  TestLib();
  Result<ModelSpec> m = ImportHfConfig("tests/config/data/hf/opt-350m.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().diagnostics().size(), 2u) << m.status().ToString();
}

TEST(HfImportTest, BloomEmbeddingNormAndAlibi) {
  const ModelSpec m = Import(std::string(kRef) + "bloom-560m.json");
  EXPECT_TRUE(m.embedding_norm);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::kAlibi);
  EXPECT_TRUE(m.bias);
  EXPECT_EQ(m.ffn_hidden_size, 4096);
  EXPECT_EQ(m.max_seq_len, 0);  // not in BLOOM's config; ALiBi has no table
}

TEST(HfImportTest, GemmaTiedGegluHeadDim256) {
  const ModelSpec m = Import(std::string(kRef) + "gemma-2b.json");
  EXPECT_EQ(m.activation, Activation::kGeglu);
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_EQ(m.num_kv_heads, 1);
  EXPECT_TRUE(m.tied_embeddings);
  const ModelSpec g2 = Import("tests/config/data/hf/gemma2-tiny.json");
  EXPECT_EQ(g2.norms_per_layer, 4);
  EXPECT_EQ(g2.head_dim, 32);
}

TEST(HfImportTest, MixtralMoe) {
  const ModelSpec m = Import("tests/config/data/hf/mixtral-8x7b.json");
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->num_experts, 8);
  EXPECT_EQ(m.moe->top_k, 2);
  EXPECT_EQ(m.moe->expert_ffn_hidden_size, 14336);
  // Mistral AI: "46.7B total parameters but only uses 12.9B parameters per token".
  const auto c = CountParams(m);
  EXPECT_EQ(c.total, 46702792704);
  EXPECT_NEAR(static_cast<double>(c.active), 12.9e9, 0.05e9);
}

TEST(HfImportTest, Qwen2MoeSharedExpert) {
  const ModelSpec m = Import("tests/config/data/hf/qwen2-moe-tiny.json");
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->expert_ffn_hidden_size, 32);
  EXPECT_EQ(m.moe->num_shared_experts, 1);
  EXPECT_EQ(m.moe->shared_expert_ffn_hidden_size, 128);
  EXPECT_TRUE(m.moe->shared_expert_gate);
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_EQ(m.moe->first_dense_layers, 0);
  EXPECT_EQ(m.moe->layer_freq, 1);
}

// Qwen2MoeSparseMoeBlock's shared_expert_gate, a Linear(hidden_size, 1) without bias in every
// MoE layer: 32 x 4096 = 131,072 on top of 41,049,264,128 for this 32-layer h=4096 config.
TEST(HfImportTest, Qwen2MoeSharedExpertGateIsCounted) {
  const ModelSpec m = Import("tests/config/data/hf/qwen2-moe-h4096.json");
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_TRUE(m.moe->shared_expert_gate);
  EXPECT_EQ(CountParams(m).total, 41049395200);
  ModelSpec ungated = m;
  ungated.moe->shared_expert_gate = false;
  EXPECT_EQ(CountParams(ungated).total, 41049264128);
}

TEST(HfImportTest, Qwen2MoeSparseStepMapsToDenseLayersThenFrequency) {
  Result<ModelSpec> m = LoadModel("tests/config/data/hf/qwen2-moe-step2.json", TestLib());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // Sparse layers are 1 and 3 of 4 ((i + 1) % 2 == 0): dense first layer, then every 2nd.
  EXPECT_EQ(m->moe->first_dense_layers, 1);
  EXPECT_EQ(m->moe->layer_freq, 2);
}

TEST(HfImportTest, DeepseekV3MlaMoeMtp) {
  const ModelSpec m = Import("tests/config/data/hf/deepseek-v3.json");
  ASSERT_TRUE(m.mla.has_value());
  EXPECT_EQ(m.mla->q_lora_rank, 1536);
  EXPECT_EQ(m.mla->kv_lora_rank, 512);
  EXPECT_EQ(m.mla->qk_nope_head_dim, 128);
  EXPECT_EQ(m.mla->qk_rope_head_dim, 64);
  EXPECT_EQ(m.mla->v_head_dim, 128);
  EXPECT_EQ(m.head_dim, 192);
  ASSERT_TRUE(m.moe.has_value());
  EXPECT_EQ(m.moe->num_experts, 256);
  EXPECT_EQ(m.moe->top_k, 8);
  EXPECT_EQ(m.moe->num_shared_experts, 1);
  EXPECT_EQ(m.moe->expert_ffn_hidden_size, 2048);
  EXPECT_EQ(m.moe->first_dense_layers, 3);
  EXPECT_EQ(m.mtp_depth, 1);
  // DeepSeek-V3 report (arXiv 2412.19437): 671B total, 37B activated per token, without the
  // MTP module. Our count adds ~11.6B for the MTP module.
  ModelSpec main = m;
  main.mtp_depth = 0;
  const auto c = CountParams(main);
  EXPECT_NEAR(static_cast<double>(c.total), 671e9, 0.5e9);
  EXPECT_NEAR(static_cast<double>(c.active), 37e9, 0.6e9);
}

TEST(HfImportTest, ModelTypeWithoutArchitectures) {
  const ModelSpec m = Import("tests/config/data/hf/no-arch.json");
  EXPECT_EQ(m.hidden_size, 64);
  EXPECT_EQ(m.position_table_rows, 1024);  // GPT2Config's default n_positions
}

TEST(HfImportTest, HfConfigInAScenarioWithOverrides) {
  Result<Scenario> s = BuildText(
      "model: {hf_config: ../../reference/hf/llama2-7b.json, num_layers: 4}\n"
      "hardware: test-gpu\ntopology: one-node\ngpus: 8\n"
      "training: {seq_len: 4096, global_batch: 8}\nparallel: {tp: 8}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->model.num_layers, 4);
  EXPECT_EQ(s->model.hidden_size, 4096);
  // Named after the file (it was "inline": the overrides made the model an inline mapping).
  EXPECT_EQ(s->model.name, "llama2-7b");
  // A json path whose top level has `architectures` is read as an HF config too, and so is
  // "hf:PATH".
  Result<ModelSpec> direct = LoadModel(std::string(kRef) + "llama2-7b.json", TestLib());
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  EXPECT_EQ(direct->num_layers, 32);
  Result<ModelSpec> prefixed = LoadModel("hf:" + std::string(kRef) + "llama2-7b.json", TestLib());
  ASSERT_TRUE(prefixed.ok());
  EXPECT_EQ(prefixed->ffn_hidden_size, 11008);
}

// Local attention from each family's own keys: gpt-oss's 128-token window on every other layer
// (layer_types sliding first), Llama 4's 8,192-token chunks with every 4th layer global, Gemma
// 2's alternating and Gemma 3's 5-of-6 sliding windows, Mistral 7B v0.1's window on every layer.
TEST(HfImportTest, LocalAttention) {
  struct Want {
    const char* path;
    LocalAttention kind;
    int64_t size, full_every;
  };
  const Want wants[] = {
      {"tests/config/data/hf/gpt-oss-120b.json", LocalAttention::kSliding, 128, 2},
      {"tests/config/data/hf/llama4-scout.json", LocalAttention::kChunked, 8192, 4},
      {"tests/config/data/hf/gemma-2-2b.json", LocalAttention::kSliding, 4096, 2},
      {"tests/config/data/hf/gemma-3-1b.json", LocalAttention::kSliding, 512, 6},
      {"tests/reference/hf/mistral-7b-v0.1.json", LocalAttention::kSliding, 4096, 0},
      {"tests/config/data/hf/qwen3-8b.json", LocalAttention::kNone, 0, 0}};
  for (const Want& w : wants) {
    const ModelSpec m = Import(w.path);
    EXPECT_EQ(m.local_attention, w.kind) << w.path;
    EXPECT_EQ(m.local_attention_size, w.size) << w.path;
    EXPECT_EQ(m.local_attention_full_every, w.full_every) << w.path;
  }
}

}  // namespace
}  // namespace shardsim
