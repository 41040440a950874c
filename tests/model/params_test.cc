#include "sim/model/params.h"

#include <gtest/gtest.h>

#include "tests/model/test_models.h"

namespace shardsim {
namespace {

using testing::Gpt;
using testing::Llama;

// GPT-3 175B: 12·L·h² + 13·L·h + (V + P)·h + 2h with V 50257, P 2048 (tests/reference/
// models.yaml, derived from Brown et al. 2020 Table 2.1).
TEST(Params, Gpt3_175b) {
  auto c = CountParams(Gpt(96, 12288, 96, 50257, 2048));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->total, 174604259328);
  EXPECT_EQ(c->active, c->total);
  EXPECT_EQ(c->embedding, (50257 + 2048) * 12288);  // tied: the head adds nothing
  EXPECT_EQ(c->non_embedding + c->embedding, c->total);
}

// Hugging Face configs and their exact counts (tests/reference/hf/params.yaml).
TEST(Params, Llama2_7b) {
  auto c = CountParams(Llama(32, 4096, 32, 32, 11008, 32000));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->total, 6738415616);
  EXPECT_EQ(c->embedding, 2 * 32000 * 4096);  // untied head counts as embedding
}

TEST(Params, Llama31_70b) {
  auto c = CountParams(Llama(80, 8192, 64, 8, 28672, 128256));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->total, 70553706496);
}

TEST(Params, Qwen25_05b_QkvBiasTied) {
  ModelSpec m = Llama(24, 896, 14, 2, 4864, 151936);
  m.head_dim = 64;
  m.qkv_bias = true;
  m.tied_embeddings = true;
  auto c = CountParams(m);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->total, 494032768);
}

// BLOOM-176B: GPT-2 style with an embedding layernorm, ALiBi (no position table), tied.
TEST(Params, Bloom176b) {
  ModelSpec m = Gpt(70, 14336, 112, 250880, 2048);
  m.position_embedding = PositionEmbedding::kAlibi;
  m.embedding_norm = true;
  auto c = CountParams(m);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->total, 176247271424);
}

// Mixtral-8x7B: 46.7B total, 12.9B active (Jiang et al. 2024, arXiv 2401.04088 §2).
TEST(Params, Mixtral8x7bTotalAndActive) {
  ModelSpec m = Llama(32, 4096, 32, 8, 14336, 32000);
  m.moe = MoeSpec{};
  m.moe->num_experts = 8;
  m.moe->top_k = 2;
  m.moe->expert_ffn_hidden_size = 14336;
  auto c = CountParams(m);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->total, 46702792704);  // HF model card: 46.7B
  EXPECT_NEAR(static_cast<double>(c->active) / 12.9e9, 1.0, 0.01);
}

// DeepSeek-V3: 671B total, 37B activated (arXiv 2412.19437 §1), MTP module counted apart.
TEST(Params, DeepSeekV3) {
  ModelSpec m = Llama(61, 7168, 128, 128, 18432, 129280);
  m.mla = MlaSpec{1536, 512, 128, 64, 128};
  m.moe = MoeSpec{};
  m.moe->num_experts = 256;
  m.moe->top_k = 8;
  m.moe->expert_ffn_hidden_size = 2048;
  m.moe->num_shared_experts = 1;
  m.moe->shared_expert_ffn_hidden_size = 2048;
  m.moe->first_dense_layers = 3;
  m.mtp_depth = 1;
  auto c = CountParams(m);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NEAR(static_cast<double>(c->total) / 671e9, 1.0, 0.001) << c->total;
  EXPECT_NEAR(static_cast<double>(c->active) / 37e9, 1.0, 0.02) << c->active;
  EXPECT_GT(c->mtp, 11e9);  // one MoE block + projection: ~11.7B (the HF checkpoint's 685B - 671B
                            // also includes the MTP copy of the shared embedding and head)
}

}  // namespace
}  // namespace shardsim
