// Parameter counts of the families the Hugging Face importer maps since issue 18 (Qwen3,
// Qwen3-MoE, Phi-3, Gemma 2/3, DeepSeek-V2, Llama 4, gpt-oss) and of the library models made
// from them, summed by sim/model from the op graph, against a closed form of each published
// config's shapes and against the publisher's (rounded) totals and actives. The configs and
// where each figure is published: tests/config/data/hf/FAMILIES.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "sim/config/loader.h"
#include "sim/model/params.h"

namespace shardsim {
namespace {

const std::string kSource = SHARDSIM_SOURCE_DIR;

// Shapes -> parameters, per layer (docs/reference.md §5 "Parameters"): attention q, k, v, o; a
// gated MLP 3·h·f; RMSNorms h each.
constexpr int64_t Attn(int64_t h, int64_t n, int64_t k, int64_t d) {
  return h * n * d + 2 * h * k * d + n * d * h;
}
constexpr int64_t Gated(int64_t h, int64_t f) { return 3 * h * f; }

struct Case {
  const char* what;  // HF fixture (tests/config/data/hf/NAME.json) or library model name
  bool hf;
  int64_t total;   // closed form of the published shapes
  int64_t active;  // per token (ParamCount::active, or active_compute when `compute`)
  bool compute;    // the publisher counts active parameters without the embedding lookup
  double published_total, published_active;  // as published, in billions
  // How far the published figure may be from ours, in billions: half a unit of its last digit
  // ("8.2B": 0.05), or more where the publisher counts a part the import leaves out (Llama 4's
  // totals include the vision encoder, about 0.8B) or rounds loosely ("400B").
  double total_tolerance, active_tolerance;
};

// Qwen3-8B: 36 layers of h 4096, 32 heads / 8 kv of 128, f 12288, q/k norms 2·128; V 151936 untied.
constexpr int64_t kQwen3_8bLayer = Attn(4096, 32, 8, 128) + Gated(4096, 12288) + 2 * 4096 + 256;
constexpr int64_t kQwen3_8b = 36 * kQwen3_8bLayer + 2 * 151936 * 4096 + 4096;
// Qwen3-30B-A3B: 48 layers of h 2048, 32 heads / 4 kv of 128; 128 experts of 768, top 8.
constexpr int64_t kQ30Attn = Attn(2048, 32, 4, 128) + 2 * 2048 + 256 + 2048 * 128;  // + router
constexpr int64_t kQ30Emb = 2 * 151936 * 2048 + 2048;
constexpr int64_t kQwen3_30b = 48 * (kQ30Attn + 128 * Gated(2048, 768)) + kQ30Emb;
constexpr int64_t kQwen3_30bActive = 48 * (kQ30Attn + 8 * Gated(2048, 768)) + kQ30Emb;
// Qwen3-235B-A22B: 94 layers of h 4096, 64 heads / 4 kv of 128; 128 experts of 1536, top 8.
constexpr int64_t kQ235Attn = Attn(4096, 64, 4, 128) + 2 * 4096 + 256 + 4096 * 128;
constexpr int64_t kQ235Emb = 2 * 151936 * 4096 + 4096;
constexpr int64_t kQwen3_235b = 94 * (kQ235Attn + 128 * Gated(4096, 1536)) + kQ235Emb;
constexpr int64_t kQwen3_235bActive = 94 * (kQ235Attn + 8 * Gated(4096, 1536)) + kQ235Emb;
// Phi-3-mini-4k: 32 layers of h 3072, 32 heads, f 8192; V 32064 untied.
constexpr int64_t kPhi3 =
    32 * (Attn(3072, 32, 32, 96) + Gated(3072, 8192) + 2 * 3072) + 2 * 32064 * 3072 + 3072;
// Gemma 2 2B: 26 layers of h 2304, 8 heads / 4 kv of 256, f 9216, 4 norms; V 256000 tied.
constexpr int64_t kGemma2_2b =
    26 * (Attn(2304, 8, 4, 256) + Gated(2304, 9216) + 4 * 2304) + 256000 * 2304 + 2304;
// Gemma 3 1B: 26 layers of h 1152, 4 heads / 1 kv of 256, f 6912, 4 norms + q/k norms; V 262144.
constexpr int64_t kGemma3_1b =
    26 * (Attn(1152, 4, 1, 256) + Gated(1152, 6912) + 4 * 1152 + 512) + 262144 * 1152 + 1152;
// DeepSeek-V2: 60 layers of h 5120 (1 dense of f 12288), MLA (q rank 1536, kv rank 512, 128 heads
// of 128 + 64 rope, v 128), 2 shared + 160 routed experts of 1536, top 6; V 102400 untied.
constexpr int64_t kMla = 5120 * 1536 + 1536 + 1536 * 128 * 192 + 5120 * (512 + 64) + 512 +
                         512 * 128 * (128 + 128) + 128 * 128 * 5120;
constexpr int64_t kDsv2Dense = kMla + Gated(5120, 12288) + 2 * 5120;
constexpr int64_t kDsv2MoeBase = kMla + 5120 * 160 + 2 * Gated(5120, 1536) + 2 * 5120;
constexpr int64_t kDsv2Emb = 2 * 102400 * 5120 + 5120;
constexpr int64_t kDsv2 = kDsv2Dense + 59 * (kDsv2MoeBase + 160 * Gated(5120, 1536)) + kDsv2Emb;
constexpr int64_t kDsv2Active = kDsv2Dense + 59 * (kDsv2MoeBase + 6 * Gated(5120, 1536)) + kDsv2Emb;
// Llama 4 (text decoder): 48 layers of h 5120, 40 heads / 8 kv of 128; V 202048 untied. MoE
// layers: router + 1 shared + E routed experts of 8192, top 1. Maverick's dense layers: f 16384.
constexpr int64_t kL4Attn = Attn(5120, 40, 8, 128) + 2 * 5120;
constexpr int64_t kL4Emb = 2 * 202048 * 5120 + 5120;
constexpr int64_t kL4Moe(int64_t experts, int64_t used) {
  return kL4Attn + 5120 * experts + (1 + used) * Gated(5120, 8192);
}
constexpr int64_t kScout = 48 * kL4Moe(16, 16) + kL4Emb;
constexpr int64_t kScoutActive = 48 * kL4Moe(16, 1) + kL4Emb;
constexpr int64_t kL4Dense = kL4Attn + Gated(5120, 16384);
constexpr int64_t kMaverick = 24 * kL4Dense + 24 * kL4Moe(128, 128) + kL4Emb;
constexpr int64_t kMaverickActive = 24 * kL4Dense + 24 * kL4Moe(128, 1) + kL4Emb;
// gpt-oss-120b: 36 layers of h 2880, 64 heads / 8 kv of 64 with q/k/v/o biases and 64 sinks;
// 128 experts of 2880 with biases (gate_up 2·2880, down 2880) and a router with bias, top 4;
// V 201088 untied. Active (OpenAI's 5.13B) leaves out the embedding table a token reads a row of.
constexpr int64_t kOssAttn = Attn(2880, 64, 8, 64) + (64 + 16) * 64 + 2880 + 64 + 2 * 2880;
constexpr int64_t kOssRouter = 2880 * 128 + 128;
constexpr int64_t kOssExpert = Gated(2880, 2880) + 2 * 2880 + 2880;
constexpr int64_t kOss = 36 * (kOssAttn + kOssRouter + 128 * kOssExpert) + 2 * 201088 * 2880 + 2880;
constexpr int64_t kOssActive = 36 * (kOssAttn + kOssRouter + 4 * kOssExpert) + 201088 * 2880 + 2880;

// Qwen3-30B-A3B's "3.3B activated" is 3.353B cut to one decimal (its 8.2B and 30.5B are
// rounded): the active tolerance there is 0.06.
const Case kCases[] = {
    {"qwen3-8b", true, kQwen3_8b, kQwen3_8b, false, 8.2, 8.2, 0.05, 0.05},
    {"qwen3-30b-a3b", true, kQwen3_30b, kQwen3_30bActive, false, 30.5, 3.3, 0.05, 0.06},
    {"qwen3-235b-a22b", true, kQwen3_235b, kQwen3_235bActive, false, 235, 22, 0.5, 0.5},
    {"phi-3-mini-4k", true, kPhi3, kPhi3, false, 3.8, 3.8, 0.05, 0.05},
    {"gemma-2-2b", true, kGemma2_2b, kGemma2_2b, false, 2.61, 2.61, 0.005, 0.005},
    {"gemma-3-1b", true, kGemma3_1b, kGemma3_1b, false, 1.0, 1.0, 0.05, 0.05},
    {"deepseek-v2", true, kDsv2, kDsv2Active, false, 236, 21, 0.5, 0.5},
    {"llama4-scout", true, kScout, kScoutActive, false, 109, 17, 1.5, 0.5},
    {"llama4-maverick", true, kMaverick, kMaverickActive, false, 400, 17, 2.5, 0.5},
    {"gpt-oss-120b", true, kOss, kOssActive, true, 116.83, 5.13, 0.005, 0.005},
    // The library's models/ files of the same shapes.
    {"qwen3-8b", false, kQwen3_8b, kQwen3_8b, false, 8.2, 8.2, 0.05, 0.05},
    {"qwen3-30b-a3b", false, kQwen3_30b, kQwen3_30bActive, false, 30.5, 3.3, 0.05, 0.06},
    {"qwen3-235b-a22b", false, kQwen3_235b, kQwen3_235bActive, false, 235, 22, 0.5, 0.5},
    {"gpt-oss-120b", false, kOss, kOssActive, true, 116.83, 5.13, 0.005, 0.005},
    {"deepseek-v2", false, kDsv2, kDsv2Active, false, 236, 21, 0.5, 0.5},
    {"llama4-scout", false, kScout, kScoutActive, false, 109, 17, 1.5, 0.5},
    {"llama4-maverick", false, kMaverick, kMaverickActive, false, 400, 17, 2.5, 0.5},
};

TEST(FamiliesParams, ExactFromShapesAndRoundToThePublishedFigures) {
  for (const Case& c : kCases) {
    const std::string id = std::string(c.hf ? "hf " : "models/") + c.what;
    const std::string path =
        c.hf ? kSource + "/tests/config/data/hf/" + c.what + ".json" : std::string(c.what);
    Result<ModelSpec> m = LoadModel(path, LoadOptions{});
    ASSERT_TRUE(m.ok()) << id << ": " << m.status().ToString();
    Result<ParamCount> p = CountParams(*m);
    ASSERT_TRUE(p.ok()) << id;
    const int64_t active = c.compute ? p->active_compute : p->active;
    EXPECT_EQ(p->total, c.total) << id;
    EXPECT_EQ(active, c.active) << id;
    EXPECT_LE(std::fabs(static_cast<double>(p->total) / 1e9 - c.published_total),
              c.total_tolerance + 1e-9)
        << id << ": " << p->total << " vs published " << c.published_total << "B";
    EXPECT_LE(std::fabs(static_cast<double>(active) / 1e9 - c.published_active),
              c.active_tolerance + 1e-9)
        << id << ": " << active << " vs published " << c.published_active << "B";
  }
}

// The HF import names a model from its file, not "inline", when the config has no _name_or_path
// (a `{hf_config: ..., num_layers: 4}` override used to print "inline").
TEST(FamiliesParams, HfModelsAreNamedFromTheirFile) {
  Result<ModelSpec> m = LoadModel(kSource + "/tests/config/data/hf/qwen3-8b.json", LoadOptions{});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->name, "qwen3-8b");
  EXPECT_TRUE(m->qk_norm);
}

}  // namespace
}  // namespace shardsim
