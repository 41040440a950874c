// SplitLayers against Megatron-Core's layer placement (get_num_layers_to_build and
// get_transformer_layer_offset): model chunk c holds layers [c·L/v, (c+1)·L/v) split over the
// ranks in order; uneven first/last stages split each stage's layers over its chunks; with the
// embedding / loss counted in the split, every chunk holds (L + e + l)/(p·v) less one at the ends.
#include "sim/parallel/stages.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace shardsim {
namespace {

using Ranges = std::vector<std::pair<int64_t, int64_t>>;

// Each rank's chunks as [begin, end) pairs.
std::vector<Ranges> Split(int64_t layers, ParallelSpec p) {
  Result<std::vector<PipelineRank>> r = SplitLayers(layers, p);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::vector<Ranges> out;
  if (!r.ok()) return out;
  for (const PipelineRank& rank : *r) {
    Ranges chunks;
    for (const LayerRange& c : rank.chunks) chunks.emplace_back(c.begin, c.end);
    out.push_back(chunks);
  }
  return out;
}

ParallelSpec Pipeline(int64_t pp, int64_t v) {
  ParallelSpec p;
  p.pp = pp;
  p.virtual_stages = v;
  p.schedule = v > 1 ? PipelineSchedule::kInterleaved1F1B : PipelineSchedule::k1F1B;
  return p;
}

TEST(SplitLayers, EvenInterleaved) {
  // Narayanan 2021 §2.2.2: chunk c of rank r holds layers (c·p + r)·L/(p·v) onwards.
  EXPECT_EQ(Split(8, Pipeline(2, 2)), (std::vector<Ranges>{{{0, 2}, {4, 6}}, {{2, 4}, {6, 8}}}));
}

TEST(SplitLayers, UnevenFirstAndLastStages) {
  ParallelSpec p = Pipeline(3, 1);
  p.first_stage_layers = 2;
  EXPECT_EQ(Split(8, p), (std::vector<Ranges>{{{0, 2}}, {{2, 5}}, {{5, 8}}}));
  // Interleaved: 4 | 2 | 2 layers, each stage's over its 2 chunks; chunk c spans [4c, 4c + 4).
  p = Pipeline(3, 2);
  p.first_stage_layers = 4;
  p.last_stage_layers = 2;
  EXPECT_EQ(Split(8, p),
            (std::vector<Ranges>{{{0, 2}, {4, 6}}, {{2, 3}, {6, 7}}, {{3, 4}, {7, 8}}}));
  p.first_stage_layers = 3;  // 3 layers do not split over 2 chunks
  EXPECT_FALSE(SplitLayers(8, p).ok());
}

TEST(SplitLayers, LayoutString) {
  // DeepSeek-V3 (61 layers) on pp 4 x vp 4 by Megatron-Bridge's layout: stage s (chunk s / 4 of
  // rank s % 4) holds 3, then 4 x 14, then 2 layers.
  ParallelSpec p = Pipeline(4, 4);
  p.pipeline_layout = "Et*3|(t*4|)*14ttL";
  const std::vector<Ranges> split = Split(61, p);
  ASSERT_EQ(split.size(), 4u);
  EXPECT_EQ(split[0], (Ranges{{0, 3}, {15, 19}, {31, 35}, {47, 51}}));
  EXPECT_EQ(split[3], (Ranges{{11, 15}, {27, 31}, {43, 47}, {59, 61}}));
  p.pipeline_layout = "Et*3|(t*4|)*14tL";  // 60 decoder layers
  EXPECT_FALSE(SplitLayers(61, p).ok());
}

TEST(SplitLayers, EmbeddingAndLossCountedAsLayers) {
  // Llama 3.1 405B in NeMo's recipe: 126 + 2 over pp 8 x vp 8, 2 per chunk, 1 at the ends.
  ParallelSpec p = Pipeline(8, 8);
  p.account_for_embedding_in_pipeline_split = true;
  p.account_for_loss_in_pipeline_split = true;
  Result<std::vector<PipelineRank>> r = SplitLayers(126, p);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->front().chunks.front().size(), 1);
  EXPECT_EQ(r->back().chunks.back().size(), 1);
  EXPECT_EQ(r->front().layers(), 15);
  EXPECT_EQ(r->back().layers(), 15);
  for (size_t i = 1; i + 1 < r->size(); ++i) EXPECT_EQ((*r)[i].layers(), 16);
  EXPECT_EQ(r->back().chunks.back().end, 126);
  // Not interleaved, the embedding alone: (8 + 1)/3 = 3 per stage, 2 on the first.
  p = Pipeline(3, 1);
  p.account_for_embedding_in_pipeline_split = true;
  EXPECT_EQ(Split(8, p), (std::vector<Ranges>{{{0, 2}}, {{2, 5}}, {{5, 8}}}));
  EXPECT_FALSE(SplitLayers(9, p).ok());  // 10 over 3
  p.first_stage_layers = 2;              // the two ways of unbalancing exclude each other
  EXPECT_FALSE(SplitLayers(8, p).ok());
}

}  // namespace
}  // namespace shardsim
