// parallel: auto: the divisor chains find every layout ValidateScenario accepts, and no other.
#include "sim/sweep/layout_space.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/sweep/sweep_spec.h"
#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

// On nodes of 4 GPUs, so that 12 and 24 GPUs are whole nodes.
Scenario Small(const std::string& model, int64_t gpus, int64_t seq, int64_t batch) {
  const LoadOptions lib = sweep_test::Lib();
  Result<ScenarioDocument> doc = ScenarioDocument::ParseText(
      "model: " + model +
          "\nhardware: a100-sxm4-80gb\ntopology: {base: dgx-a100, gpus_per_node: 4}\ngpus: " +
          std::to_string(gpus) + "\ntraining: {seq_len: " + std::to_string(seq) +
          ", global_batch: " + std::to_string(batch) + "}\nparallel: {dp: " + std::to_string(gpus) +
          "}\n",
      "tests/sweep/data/inline.yaml");
  Result<Scenario> s = doc->Build(lib);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return *s;
}

using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int, int64_t, int64_t>;
Key KeyOf(const LayoutChoice& l) {
  return {l.dp, l.tp, l.pp, l.cp, static_cast<int>(l.schedule), l.virtual_stages, l.ep};
}

TEST(LayoutSpace, Divisors) {
  EXPECT_EQ(Divisors(1), (std::vector<int64_t>{1}));
  EXPECT_EQ(Divisors(12), (std::vector<int64_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(Divisors(16), (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(Divisors(49), (std::vector<int64_t>{1, 7, 49}));
}

// gpt3-350m: 16 heads, 24 layers, ffn 4096, on 16 GPUs (2^4), seq 2048, batch 32. Every
// (tp, pp, cp, dp) with product 16 is valid except pp = 16 (24 layers, nor 24 + 2): 35 - 1 = 34
// tuples; by pp: 15 with pp 1, 10 with pp 2, 6 with pp 4, 3 with pp 8. pp 1 runs 1F1B; pp >= 2
// runs GPipe, 1F1B, ZB-H1, ZB-H2 and interleaved with v >= 2 dividing 24/pp: 5 (pp 2:
// 2,3,4,6,12), 3 (pp 4: 2,3,6), 1 (pp 8: 3); ZB-V, DualPipe and DualPipeV are refused, the
// embeddings being tied. Total 15 + 10*9 + 6*7 + 3*5 = 162 (every pp divides the layers: no
// split counts the embedding and loss).
TEST(LayoutSpace, ClosedFormCount) {
  const Scenario s = Small("gpt3-350m", 16, 2048, 32);
  EXPECT_EQ(ValidLayouts(s, 16, LayoutAuto{}, true).size(), 162u);
}

// The zero-bubble and DualPipe schedules are in the default search, each where validation takes
// it. llama3-8b (32 layers, untied) on 16 GPUs with tp = cp = 1: pp 2, 4, 8, 16 with dp 8, 4, 2,
// 1. Batch 32 (4, 8, 16, 32 micro-batches): every one of the five at every pp (ZB-V and
// DualPipeV split 32 layers over 2*pp stages; ZB-V needs 2*pp - 1 micro-batches, DualPipe and
// DualPipeV 2*pp). Batch 16 (2, 4, 8, 16): ZB-H1 and ZB-H2 only, the others short of
// micro-batches at every pp.
TEST(LayoutSpace, NewSchedulesInTheDefaultSearch) {
  for (int64_t batch : {32, 16}) {
    const Scenario s = Small("llama3-8b", 16, 2048, batch);
    LayoutAuto only;
    only.tp = {1};
    only.cp = {1};
    std::set<std::pair<int64_t, int>> got;
    for (const LayoutChoice& l : ValidLayouts(s, 16, only, true)) {
      got.emplace(l.pp, static_cast<int>(l.schedule));
    }
    const auto has = [&](int64_t pp, PipelineSchedule z) {
      return got.count({pp, static_cast<int>(z)}) == 1;
    };
    for (int64_t pp : {2, 4, 8, 16}) {
      EXPECT_TRUE(has(pp, PipelineSchedule::kZbH1)) << "pp " << pp;
      EXPECT_TRUE(has(pp, PipelineSchedule::kZbH2)) << "pp " << pp;
      for (PipelineSchedule z :
           {PipelineSchedule::kZbV, PipelineSchedule::kDualPipe, PipelineSchedule::kDualPipeV}) {
        EXPECT_EQ(has(pp, z), batch == 32) << Name(z) << " pp " << pp << " batch " << batch;
      }
    }
    EXPECT_FALSE(has(1, PipelineSchedule::kZbH1));  // no pipeline, no pipeline schedule
  }
}

// A schedule list still restricts the search: zb_h1 at every pp >= 2 (2, 4, 8 with tp = cp = 1),
// DualPipe at none, gpt3-350m's embeddings being tied (refused with it).
TEST(LayoutSpace, NewSchedulesWhenNamed) {
  const Scenario s = Small("gpt3-350m", 16, 2048, 32);
  LayoutAuto only;
  only.tp = {1};
  only.cp = {1};
  only.schedules = {PipelineSchedule::kZbH1, PipelineSchedule::kDualPipe};
  std::vector<std::pair<int64_t, int>> got;
  for (const LayoutChoice& l : ValidLayouts(s, 16, only, true)) {
    got.emplace_back(l.pp, static_cast<int>(l.schedule));
  }
  const int zb = static_cast<int>(PipelineSchedule::kZbH1);
  EXPECT_EQ(got, (std::vector<std::pair<int64_t, int>>{{2, zb}, {4, zb}, {8, zb}}));
}

// The base's split keys are kept: gpt3-350m's 24 layers + embedding + loss = 26 = 2 x 13 take
// pp 2 (13 per stage) and no longer pp 4 or 8 (it dropped the keys and found no layout of a
// 126-layer model with both keys over pp 8).
TEST(LayoutSpace, KeepsTheBaseSplitKeys) {
  Scenario s = Small("gpt3-350m", 16, 2048, 32);
  s.parallel.account_for_embedding_in_pipeline_split = true;
  s.parallel.account_for_loss_in_pipeline_split = true;
  LayoutAuto only;
  only.tp = {1};
  only.cp = {1};
  only.schedules = {PipelineSchedule::k1F1B};
  const std::vector<LayoutChoice> ls = ValidLayouts(s, 16, only, true);
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_EQ(ls[0].pp, 1);
  EXPECT_EQ(ls[1].pp, 2);
}

// A pp that does not divide the layers, where the layers + 2 do (Megatron-Core's account_for_*
// keys): megatron-gpt-3.6b's 30 layers take pp 2 evenly and pp 4, 8, 16 with 32 counted; the
// split is applied to the scenario the point builds.
TEST(LayoutSpace, CountsTheEmbeddingAndLossWhereTheLayersDoNotDivide) {
  Scenario s = Small("megatron-gpt-3.6b", 16, 2048, 64);
  LayoutAuto only;
  only.tp = {1};
  only.cp = {1};
  only.schedules = {PipelineSchedule::k1F1B};
  const std::vector<LayoutChoice> ls = ValidLayouts(s, 16, only, true);
  std::vector<std::pair<int64_t, bool>> got;
  for (const LayoutChoice& l : ls) got.emplace_back(l.pp, l.edges_in_split);
  EXPECT_EQ(got, (std::vector<std::pair<int64_t, bool>>{
                     {1, false}, {2, false}, {4, true}, {8, true}, {16, true}}));
  ApplyLayout(ls[3], &s);
  EXPECT_TRUE(s.parallel.account_for_embedding_in_pipeline_split);
  EXPECT_TRUE(s.parallel.account_for_loss_in_pipeline_split);
  EXPECT_TRUE(ValidateScenario(s).ok());
}

// A split key the base gives, even false, is the user's: the search counts no edges of its own
// (it set both true over an axis value "false", and the rows no longer said how they ran).
TEST(LayoutSpace, SplitKeyGivenFalseIsKept) {
  const LoadOptions lib = sweep_test::Lib();
  Result<ScenarioDocument> doc = ScenarioDocument::ParseText(
      "model: megatron-gpt-3.6b\nhardware: a100-sxm4-80gb\ntopology: {base: dgx-a100, "
      "gpus_per_node: 4}\ngpus: 16\ntraining: {seq_len: 2048, global_batch: 64}\n"
      "parallel: {dp: 16, account_for_loss_in_pipeline_split: false}\n",
      "tests/sweep/data/inline.yaml");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  Result<Scenario> s = doc->Build(lib);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(SplitKeysGiven(*s));
  LayoutAuto only;
  only.tp = {1};
  only.cp = {1};
  only.schedules = {PipelineSchedule::k1F1B};
  std::vector<int64_t> pps;
  for (const LayoutChoice& l : ValidLayouts(*s, 16, only, true)) {
    pps.push_back(l.pp);
    EXPECT_FALSE(l.edges_in_split);
  }
  EXPECT_EQ(pps, (std::vector<int64_t>{1, 2}));
}

// A base's layout string belongs to its pipeline: the search chooses pipelines, so it finds the
// layouts it finds without one and drops the string from the points it builds.
TEST(LayoutSpace, ABaseLayoutStringIsDroppedWhereTheSearchChoosesThePipeline) {
  Scenario s = Small("gpt3-350m", 16, 2048, 32);  // 24 layers
  LayoutAuto only;
  only.tp = {1};
  only.cp = {1};
  only.schedules = {PipelineSchedule::k1F1B};
  const std::vector<LayoutChoice> plain = ValidLayouts(s, 16, only, true);
  s.parallel.pp = 4;
  s.parallel.dp = 4;
  s.parallel.pipeline_layout = "Et*5|t*7|t*7|t*5L";
  ASSERT_TRUE(ValidateScenario(s).ok()) << ValidateScenario(s).ToString();
  const std::vector<LayoutChoice> ls = ValidLayouts(s, 16, only, true);
  ASSERT_EQ(ls.size(), plain.size());
  for (size_t i = 0; i < ls.size(); ++i) EXPECT_EQ(KeyOf(ls[i]), KeyOf(plain[i]));
  ApplyLayout(ls.back(), &s);
  EXPECT_EQ(s.parallel.pipeline_layout, "");
  EXPECT_TRUE(ValidateScenario(s).ok());
}

TEST(LayoutSpace, RestrictionsFilterCandidates) {
  const Scenario s = Small("gpt3-350m", 16, 2048, 32);
  LayoutAuto only;
  only.tp = {2};
  only.cp = {1};
  only.schedules = {PipelineSchedule::k1F1B};
  const std::vector<LayoutChoice> ls = ValidLayouts(s, 16, only, true);
  // (tp 2, cp 1): pp in {1, 2, 4, 8}, 1F1B only.
  ASSERT_EQ(ls.size(), 4u);
  for (const LayoutChoice& l : ls) {
    EXPECT_EQ(l.tp, 2);
    EXPECT_EQ(l.cp, 1);
    EXPECT_EQ(l.schedule, PipelineSchedule::k1F1B);
    EXPECT_EQ(l.dp * l.tp * l.pp * l.cp, 16);
  }
}

// A mixture-of-experts model also gets every expert-parallel degree: ep | dp*cp and
// ep | num_experts (Megatron-Core's expert grid; docs/reference.md §3.1). mixtral-8x7b (8 experts)
// on 16 GPUs with tp 2, pp 1, 1F1B: cp 1 -> dp 8, ep in {1, 2, 4, 8}; cp 2 -> dp 4, dp*cp 8, ep in
// {1, 2, 4, 8}; cp 4 -> dp 2, dp*cp 8, the same four. 12 layouts; a dense model keeps ep 1.
TEST(LayoutSpace, MixtureOfExpertsEnumeratesExpertParallelism) {
  const Scenario s = Small("mixtral-8x7b", 16, 4096, 32);
  LayoutAuto only;
  only.tp = {2};
  only.pp = {1};
  only.cp = {1, 2, 4};
  const std::vector<LayoutChoice> ls = ValidLayouts(s, 16, only, true);
  ASSERT_EQ(ls.size(), 12u);
  EXPECT_EQ(ls[0].ep, 1);
  EXPECT_EQ(ls[3].ep, 8);
  EXPECT_EQ(ls[3].dp, 8);
  for (const LayoutChoice& l : ls) EXPECT_EQ((l.dp * l.cp) % l.ep, 0);
  only.ep = {8};
  EXPECT_EQ(ValidLayouts(s, 16, only, true).size(), 3u);
  only.ep = {16};  // does not divide 8 experts
  EXPECT_TRUE(ValidLayouts(s, 16, only, true).empty());
  for (const LayoutChoice& l : ValidLayouts(Small("gpt3-350m", 16, 2048, 32), 16, {}, true)) {
    EXPECT_EQ(l.ep, 1);
  }
}

// Every tuple of degrees up to the GPU count and every schedule, checked by ValidateScenario
// with an even split, or, for a pp that does not divide the layers, the embedding and loss
// counted in the split: the enumeration holds exactly the accepted ones (pp = 1 GPipe excepted
// by design).
TEST(LayoutSpace, AgreesWithValidateScenarioOnEveryCandidate) {
  for (const auto& [model, gpus, seq, batch] :
       std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>>{
           {"gpt3-350m", 16, 2048, 32},
           {"llama3-8b", 24, 8192, 48},
           {"gpt3-125m", 12, 2048, 24},
           {"mixtral-8x7b", 16, 4096, 32}}) {
    Scenario s = Small(model, gpus, seq, batch);
    std::set<Key> enumerated;
    for (const LayoutChoice& l : ValidLayouts(s, gpus, LayoutAuto{}, false)) {
      EXPECT_TRUE(enumerated.insert(KeyOf(l)).second) << "duplicate layout";
    }
    std::set<Key> accepted;
    s.gpus = gpus;
    for (int64_t tp = 1; tp <= gpus; ++tp) {
      for (int64_t pp = 1; pp <= gpus; ++pp) {
        for (int64_t cp = 1; cp <= gpus; ++cp) {
          for (int64_t dp = 1; dp <= gpus; ++dp) {
            if (tp * pp * cp * dp != gpus) continue;
            for (PipelineSchedule p : {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B,
                                       PipelineSchedule::kInterleaved1F1B, PipelineSchedule::kZbH1,
                                       PipelineSchedule::kZbH2, PipelineSchedule::kZbV,
                                       PipelineSchedule::kDualPipe, PipelineSchedule::kDualPipeV}) {
              for (int64_t v = 1; v <= s.model.num_layers + 2; ++v) {
                // The V schedules (ZB-V, DualPipeV) take virtual_stages 2 as well as 1, the same
                // layout: searched as 1.
                if ((p == PipelineSchedule::kZbV || p == PipelineSchedule::kDualPipeV) && v != 1)
                  continue;
                for (int64_t ep = 1; ep <= gpus; ++ep) {
                  LayoutChoice l{dp, tp, pp, cp, p, v, ep};
                  s.parallel.account_for_embedding_in_pipeline_split = false;
                  s.parallel.account_for_loss_in_pipeline_split = false;
                  ApplyLayout(l, &s);
                  if (!ValidateScenario(s).ok()) {
                    if (pp == 1 || s.model.num_layers % pp == 0) continue;
                    l.edges_in_split = true;
                    ApplyLayout(l, &s);
                    if (!ValidateScenario(s).ok()) continue;
                  }
                  // A pipeline schedule without a pipeline is 1F1B's layout.
                  if (pp == 1 && p != PipelineSchedule::k1F1B) continue;
                  accepted.insert(KeyOf(l));
                }
              }
            }
          }
        }
      }
    }
    EXPECT_EQ(enumerated, accepted) << model << " on " << gpus;
    EXPECT_FALSE(accepted.empty());
  }
}

}  // namespace
}  // namespace shardsim
