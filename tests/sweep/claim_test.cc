// check-claim: parsing the forms vendors use, and verdicts on a claim above peak, a published
// run and twice that run.
#include "sim/sweep/claim.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

struct Form {
  const char* text;
  ClaimKind kind;
  double value;
  double tokens = 0;
};

class ClaimForms : public ::testing::TestWithParam<Form> {};

TEST_P(ClaimForms, Parse) {
  Result<Claim> c = ParseClaim(GetParam().text);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->kind, GetParam().kind);
  EXPECT_DOUBLE_EQ(c->value, GetParam().value);
  EXPECT_DOUBLE_EQ(c->train_tokens, GetParam().tokens);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ClaimForms,
    ::testing::Values(Form{"1200 tokens/s/GPU", ClaimKind::kTokensPerSPerGpu, 1200},
                      Form{"1,200 tok/s per GPU", ClaimKind::kTokensPerSPerGpu, 1200},
                      Form{"1,200,000 tokens/s", ClaimKind::kTokensPerS, 1.2e6},
                      Form{"3.2M tokens/s", ClaimKind::kTokensPerS, 3.2e6},
                      Form{"600k tokens per second", ClaimKind::kTokensPerS, 6e5},
                      Form{"400 TFLOP/s per GPU", ClaimKind::kFlopsPerGpu, 400e12},
                      Form{"400 TFLOPS/GPU", ClaimKind::kFlopsPerGpu, 400e12},
                      Form{"0.2 EFLOP/s total", ClaimKind::kFlopsTotal, 0.2e18},
                      Form{"45% MFU", ClaimKind::kMfu, 0.45},
                      Form{"MFU 0.45", ClaimKind::kMfu, 0.45},
                      Form{"MFU of 38.1%", ClaimKind::kMfu, 0.381},
                      Form{"15T tokens in 54 days", ClaimKind::kTimeToTrain, 54 * 86400.0, 15e12},
                      Form{"300B tokens in 2 weeks", ClaimKind::kTimeToTrain, 14 * 86400.0, 300e9}),
    [](const ::testing::TestParamInfo<ClaimForms::ParamType>& param) {
      return "case" + std::to_string(param.index);
    });

TEST(Claim, UnreadableForms) {
  EXPECT_EQ(ParseClaim("fast").status().message(),
            "claim \"fast\" is not in a form shardsim reads; write the claim as e.g. \"1200 "
            "tokens/s/GPU\", \"3.2M tokens/s\", \"400 TFLOP/s per GPU\", \"200 PFLOP/s total\", "
            "\"45% MFU\" or \"15T tokens in 54 days\"");
  EXPECT_EQ(ParseClaim("400 TFLOPS").status().message(),
            "claim \"400 TFLOPS\": say whether the FLOP/s are per GPU (\"400 TFLOP/s per GPU\") "
            "or in total (\"... total\")");
  // A decimal comma is not a thousands separator: "1,2M" was read as 12M.
  EXPECT_FALSE(ParseClaim("1,2M tokens/s").ok());
  EXPECT_FALSE(ParseClaim("1,20 tokens/s").ok());
  // Too large for a double: refused like any non-positive figure, not thrown.
  EXPECT_EQ(ParseClaim("1e999 tokens/s").status().message(),
            "claim \"1e999 tokens/s\": the figure must be a positive number");
}

// Korthikanti et al. 2022 (arXiv 2205.05198), Table 5: the 22B model on 8 A100s with sequence
// parallelism and selective recompute, 1.10 s per iteration of 4 sequences of 2048 tokens:
// 930.9 tokens/s per GPU, MFU 41.5% (tests/validation/published.json).
constexpr const char* kPublished = "tests/validation/korthikanti2022_22b_sp_selective.yaml";

Result<ClaimCheck> Check(const std::string& claim) {
  const LoadOptions lib = sweep_test::Lib();
  Result<Claim> c = ParseClaim(claim);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  Result<ScenarioDocument> doc = ScenarioDocument::Parse(kPublished);
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  ClaimOptions o;
  o.jobs = 2;
  o.simulate_given_layout = true;
  return CheckClaim(*doc, *c, o, lib);
}

TEST(Claim, PublishedRunIsPlausible) {
  Result<ClaimCheck> c = Check("930.9 tokens/s/GPU");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->verdict, Verdict::kPlausible) << ClaimReport(*c);
  ASSERT_TRUE(c->best.has_value());
  ASSERT_TRUE(c->given.has_value());
  // The 6·N convention: 6 x 21.8B parameters per token; the published MFU (Megatron model FLOPs)
  // is 41.5%, which the model-FLOPs convention must reproduce within a few percent.
  EXPECT_EQ(c->conventions[0].name, "6·N");
  EXPECT_NEAR(c->conventions[2].mfu, 0.415, 0.02);
  EXPECT_NE(ClaimReport(*c).find("Verdict: plausible"), std::string::npos);
  // The same run stated as its MFU.
  Result<ClaimCheck> m = Check("41.5% MFU");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->verdict, Verdict::kPlausible) << ClaimReport(*m);
  // A token rate reads the same under every convention: nothing to qualify.
  EXPECT_EQ(c->reasons.front().find("read under"), std::string::npos) << c->reasons.front();
  // An MFU claim that is within the uncertainty only under some conventions says under which
  // (and under which not), rather than "within ±15%" next to figures that are not.
  // Here: within under 6·N, 6·N + attention, model FLOPs and selective recompute; 31% below
  // under full recompute's hardware FLOPs.
  ASSERT_FALSE(m->reasons.empty());
  EXPECT_NE(m->reasons.front().find("read under 6·N "), std::string::npos) << m->reasons.front();
  EXPECT_NE(m->reasons.front().find("; not under with full recompute -"), std::string::npos)
      << m->reasons.front();
}

TEST(Claim, TwiceThePublishedRunIsImplausible) {
  Result<ClaimCheck> c = Check("1861.8 tokens/s/GPU");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_LT(c->claimed_low, c->ceiling);
  EXPECT_EQ(c->verdict, Verdict::kImplausible) << ClaimReport(*c);
  EXPECT_GE(c->assumptions.size(), 2u);
}

TEST(Claim, AbovePeakIsImpossible) {
  // A100: 312 TFLOP/s dense bf16/fp16.
  Result<ClaimCheck> f = Check("400 TFLOP/s per GPU");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->verdict, Verdict::kImpossible) << ClaimReport(*f);
  Result<ClaimCheck> t = Check("5000 tokens/s/GPU");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_GT(5000.0, t->ceiling);
  EXPECT_EQ(t->verdict, Verdict::kImpossible) << ClaimReport(*t);
  Result<ClaimCheck> m = Check("105% MFU");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->verdict, Verdict::kImpossible);
}

TEST(Claim, CeilingIsPeakOverTheLeastFlopsPerToken) {
  Result<ClaimCheck> c = Check("900 tokens/s/GPU");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_DOUBLE_EQ(c->ceiling, c->peak_flops / c->min_flops_per_token);
  // 6·N counts the input embedding, which does no matmul: the minimum is below 6·N + attention.
  EXPECT_LT(c->min_flops_per_token, c->conventions[1].flops_per_token);
  EXPECT_EQ(c->peak_flops, 312e12);
}

}  // namespace
}  // namespace shardsim

namespace shardsim {
namespace {

// A claim may state its sequence length; it was not read at all ("at seq 4096" did not parse).
TEST(Claim, SequenceLengthInTheClaim) {
  for (const auto& [text, seq] : std::vector<std::pair<std::string, int64_t>>{
           {"1200 tokens/s/GPU at seq 4096", 4096},
           {"1200 tokens/s/GPU, seq 8K", 8192},
           {"45% MFU @ 8192 context", 8192},
           {"400 TFLOP/s per GPU at 4096-token sequences", 4096},
           {"15T tokens in 54 days, sequence length 8192", 8192},
           {"1200 tokens/s/GPU", 0}}) {
    Result<Claim> c = ParseClaim(text);
    ASSERT_TRUE(c.ok()) << text << ": " << c.status().ToString();
    EXPECT_EQ(c->seq_len, seq) << text;
  }
  Result<Claim> c = ParseClaim("1200 tokens/s/GPU at seq 4096");
  EXPECT_EQ(c->kind, ClaimKind::kTokensPerSPerGpu);
  EXPECT_DOUBLE_EQ(c->value, 1200);
  EXPECT_FALSE(ParseClaim("1200 tokens/s/GPU at seq 0").ok());
}

// About 4M tokens per step: at 128K tokens a 512-GPU check used 512 sequences (67M tokens).
TEST(Claim, DefaultBatchIsAboutFourMillionTokens) {
  EXPECT_EQ(ClaimDefaultGlobalBatch(8192, 512), 512);    // 4.19M tokens
  EXPECT_EQ(ClaimDefaultGlobalBatch(4096, 512), 1024);   // 4.19M
  EXPECT_EQ(ClaimDefaultGlobalBatch(131072, 512), 32);   // 4.19M (was 512: 67M)
  EXPECT_EQ(ClaimDefaultGlobalBatch(131072, 1000), 25);  // largest divisor of 1000 <= 32
  EXPECT_EQ(ClaimDefaultGlobalBatch(2048, 1024), 2048);  // 4.19M
  EXPECT_EQ(ClaimDefaultGlobalBatch(8192, 8), 512);
  EXPECT_EQ(kClaimDefaultSeqLen, 8192);
}

TEST(Claim, LayoutOption) {
  Result<std::vector<std::pair<std::string, std::string>>> l =
      ParseLayoutOption("tp=4, pp=4,vp=5,mb=1,zero=1,sp=true");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  const std::vector<std::pair<std::string, std::string>> want = {
      {"parallel.tp", "4"},
      {"parallel.pp", "4"},
      {"parallel.virtual_stages", "5"},
      {"training.micro_batch", "1"},
      {"parallel.zero_stage", "1"},
      {"parallel.sequence_parallel", "true"},
      {"parallel.schedule", "interleaved_1f1b"}};
  EXPECT_EQ(*l, want);
  EXPECT_EQ(ParseLayoutOption("tp=4,tq=2").status().message(),
            "--layout: 'tq=2' is not KEY=VALUE with KEY one of dp, tp, pp, cp, ep, vp, mbg, "
            "schedule, zero, sp, mb, recompute (e.g. \"tp=4,pp=4,vp=5,mb=1\")");
  // Megatron's micro-batch group, by its short name or its own.
  for (const char* key : {"mbg", "microbatch_group_size_per_vp_stage"}) {
    Result<std::vector<std::pair<std::string, std::string>>> g =
        ParseLayoutOption("pp=8,vp=2," + std::string(key) + "=16");
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ((*g)[2], (std::pair<std::string, std::string>{
                           "parallel.microbatch_group_size_per_vp_stage", "16"}));
  }
  EXPECT_EQ(ParseLayoutOption("tp=4,tp=8").status().message(), "--layout: tp is given twice");
}

// Sequence parallelism where tp > 1 unless the scenario says: the search ran with it off.
TEST(Claim, SearchTurnsSequenceParallelismOnUnlessTheScenarioSaysOtherwise) {
  const LoadOptions lib = sweep_test::Lib();
  Result<Claim> claim = ParseClaim("900 tokens/s/GPU");
  ASSERT_TRUE(claim.ok());
  ClaimOptions o;
  o.jobs = 2;
  const std::string head =
      "name: t\nmodel: gpt3-350m\nhardware: a100-sxm4-40gb\ntopology: dgx-a100\ngpus: 8\n"
      "training: {seq_len: 2048, global_batch: 16}\n";
  Result<ScenarioDocument> unsaid = ScenarioDocument::ParseText(head, "tests/sweep/data/t.yaml");
  ASSERT_TRUE(unsaid.ok());
  Result<ClaimCheck> on = CheckClaim(*unsaid, *claim, o, lib);
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->sequence_parallel);
  EXPECT_NE(ClaimReport(*on).find("\n  sequence parallelism on where tp > 1\n"), std::string::npos);
  Result<ScenarioDocument> off = ScenarioDocument::ParseText(
      head + "parallel: {sequence_parallel: false}\n", "tests/sweep/data/t.yaml");
  ASSERT_TRUE(off.ok());
  Result<ClaimCheck> kept = CheckClaim(*off, *claim, o, lib);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  EXPECT_FALSE(kept->sequence_parallel);
}

}  // namespace
}  // namespace shardsim
