// Mixture-of-experts parameter counts from the models' own Hugging Face config.json files
// (tests/data/hf/, sources in its README.md), printed next to what their publishers state.
//
// Published figures:
//   Mixtral-8x7B: "46.7B total parameters but only uses 12.9B parameters per token" (Mistral AI,
//     "Mixtral of experts", https://mistral.ai/news/mixtral-of-experts/, 11 Dec 2023).
//   DeepSeek-V3: "671B total parameters with 37B activated for each token" (DeepSeek-V3
//     Technical Report, arXiv 2412.19437, abstract); README_WEIGHTS.md of the Hugging Face
//     repository: main model "Total parameters: 671B", "Activation parameters: 36.6B (including
//     0.9B for the output Head)", MTP module "11.5B unique parameters".
// DeepSeek counts activated parameters without the input embedding table (a lookup reads one row
// of it per token and multiplies nothing): ParamCount::active_compute.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "sim/config/loader.h"
#include "sim/model/params.h"

namespace shardsim {
namespace {

ParamCount CountFromHf(const std::string& file) {
  Result<ModelSpec> m = ImportHfConfig("tests/data/hf/" + file);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return ParamCount{};
  Result<ParamCount> c = CountParams(*m);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : ParamCount{};
}

// Prints one row and returns the relative error of `counted` against `published`.
double Row(const char* model, const char* what, int64_t counted, double published,
           const char* source) {
  const double err = static_cast<double>(counted) / published - 1.0;
  std::printf("%-13s %-34s %16lld %9.2fB %+8.3f%%  %s\n", model, what,
              static_cast<long long>(counted), published / 1e9, err * 100.0, source);
  return err;
}

TEST(MoeParams, PublishedCountsFromHuggingFaceConfigs) {
  const ParamCount mixtral = CountFromHf("mixtral-8x7b.json");
  const ParamCount ds = CountFromHf("deepseek-v3.json");
  std::printf("\n%-13s %-34s %16s %10s %9s  %s\n", "model", "count", "shapes give", "published",
              "error", "source");

  // Mixtral: 32 layers of GQA attention + 8 SwiGLU experts of 14336, top-2; untied 32000 x 4096
  // embedding and head, counted in both figures (46.7B only comes out with them).
  const double mixtral_total =
      Row("mixtral-8x7b", "total", mixtral.total, 46.7e9, "Mistral AI blog");
  const double mixtral_active =
      Row("mixtral-8x7b", "active (2 of 8 experts)", mixtral.active, 12.9e9, "Mistral AI blog");
  EXPECT_EQ(mixtral.total, 46702792704);
  EXPECT_EQ(mixtral.active, 12879925248);
  EXPECT_LT(std::fabs(mixtral_total), 0.001);
  // "12.9B" is printed to three figures (half a unit of the last digit is 0.39%): the count must
  // round to it; it is 0.16% under it.
  EXPECT_LT(std::fabs(static_cast<double>(mixtral.active) - 12.9e9), 0.05e9);
  EXPECT_LT(std::fabs(mixtral_active), 0.0039);

  // DeepSeek-V3: 61 layers (3 dense), MLA, 1 shared + 256 routed experts of 2048, top-8.
  const double ds_total = Row("deepseek-v3", "total (main model, no MTP)", ds.total, 671e9,
                              "arXiv 2412.19437; README_WEIGHTS");
  const double ds_activated = Row("deepseek-v3", "activated (no input embedding)",
                                  ds.active_compute, 36.6e9, "README_WEIGHTS (36.6B)");
  Row("deepseek-v3", "activated (no input embedding)", ds.active_compute, 37e9,
      "arXiv 2412.19437 abstract (37B)");
  Row("deepseek-v3", "active incl. embedding table", ds.active, 37e9,
      "arXiv 2412.19437 abstract (37B)");
  Row("deepseek-v3", "MTP module (with eh_proj)", ds.mtp, 11.5e9, "README_WEIGHTS (11.5B)");
  EXPECT_LT(std::fabs(ds_total), 0.001);
  EXPECT_LT(std::fabs(ds_activated), 0.001);
  // The report's "37B" is the same count rounded to a whole billion; counting the 0.93B embedding
  // table as well would round to 38B.
  EXPECT_EQ(std::lround(static_cast<double>(ds.active_compute) / 1e9), 37);
  EXPECT_EQ(std::lround(static_cast<double>(ds.active) / 1e9), 38);
  EXPECT_EQ(ds.active - ds.active_compute, 129280LL * 7168);
  // The MTP module: one more MoE layer (11.507B, the README's "11.5B unique parameters") plus
  // its 2h x h projection and three norms.
  EXPECT_NEAR(static_cast<double>(ds.mtp), 11.5e9, 0.12e9);
}

// The input-embedding exclusion applies to lookup tables only: a tied table also serves as the
// output head and multiplies, and a learned position table never does.
TEST(MoeParams, ActiveComputeDropsOnlyLookupTables) {
  ModelSpec m;
  m.name = "tiny";
  m.hidden_size = 64;
  m.num_layers = 2;
  m.num_heads = 4;
  m.num_kv_heads = 4;
  m.head_dim = 16;
  m.ffn_hidden_size = 256;
  m.vocab_size = 1000;
  m.max_seq_len = 128;
  m.position_table_rows = 128;
  m.norm = NormKind::kRmsNorm;
  m.activation = Activation::kSwiglu;
  m.tied_embeddings = false;
  Result<ParamCount> untied = CountParams(m);
  ASSERT_TRUE(untied.ok());
  EXPECT_EQ(untied->active - untied->active_compute, 1000 * 64);
  m.tied_embeddings = true;
  m.position_embedding = PositionEmbedding::kLearned;
  Result<ParamCount> tied = CountParams(m);
  ASSERT_TRUE(tied.ok());
  EXPECT_EQ(tied->active - tied->active_compute, 128 * 64);
}

}  // namespace
}  // namespace shardsim
