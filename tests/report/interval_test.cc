// Prediction intervals from residuals (sim/report/interval.h): the conformal order statistics in
// closed form, the fallback from a group to wider ones, and located errors for a bad file.
#include "sim/report/interval.h"

#include <gtest/gtest.h>

namespace shardsim {
namespace {

ResidualSet Set(const std::vector<ResidualRow>& rows) { return ResidualSet{"", rows}; }

TEST(Interval, ConformalOrderStatistics) {
  // 19 runs of one group, errors -0.09 .. +0.09: k = floor(20 x 0.1) = 2, so the interval is
  // [e_(2), e_(18)] = [-0.08, +0.08] with nominal coverage (20 - 4) / 20 = 80%.
  std::vector<ResidualRow> rows;
  for (int i = 0; i < 19; ++i) {
    rows.push_back({"r" + std::to_string(i), "h100", "bf16/fp16", "megatron", (i - 9) * 0.01});
  }
  const PredictionInterval p = IntervalFor(Set(rows), {"h100", "bf16/fp16", "megatron"});
  ASSERT_TRUE(p.available);
  EXPECT_EQ(p.runs, 19);
  EXPECT_DOUBLE_EQ(p.error_low, -0.08);
  EXPECT_DOUBLE_EQ(p.error_high, 0.08);
  EXPECT_DOUBLE_EQ(p.coverage, 0.8);
  EXPECT_NEAR(p.median_error, 0.0, 1e-12);
  EXPECT_EQ(p.group, "h100 bf16/fp16 megatron");
  EXPECT_TRUE(p.hardware_validated);
  EXPECT_DOUBLE_EQ(p.StepLow(10.0), 9.2);
  EXPECT_DOUBLE_EQ(p.StepHigh(10.0), 10.8);
  // Five runs: k = max(1, floor(6 x 0.1)) = 1, the range of the runs, nominal 4/6.
  rows.resize(5);
  const PredictionInterval q = IntervalFor(Set(rows), {"h100", "bf16/fp16", "megatron"});
  EXPECT_DOUBLE_EQ(q.error_low, -0.09);
  EXPECT_DOUBLE_EQ(q.error_high, -0.05);
  EXPECT_NEAR(q.coverage, 4.0 / 6.0, 1e-12);
}

TEST(Interval, FallsBackToWiderGroups) {
  std::vector<ResidualRow> rows;
  for (int i = 0; i < 6; ++i)
    rows.push_back({"a" + std::to_string(i), "a100", "bf16/fp16", "megatron", 0.01 * i});
  for (int i = 0; i < 3; ++i) rows.push_back({"h" + std::to_string(i), "h100", "fp8", "nemo", 0.2});
  // Three h100 runs: too few for any h100 group, so all nine, labelled.
  const PredictionInterval p = IntervalFor(Set(rows), {"h100", "fp8", "nemo"});
  EXPECT_EQ(p.group, "all dense runs");
  EXPECT_EQ(p.runs, 9);
  EXPECT_FALSE(p.hardware_validated);
  EXPECT_NE(p.note.find("too few dense validation runs on h100 hardware"), std::string::npos);
  // A family with no runs at all.
  const PredictionInterval b = IntervalFor(Set(rows), {"b200", "bf16/fp16", "megatron"});
  // All nine: [e_(1), e_(9)] = [0, 0.2]; a100's groups (six runs, k = 1: [0, 0.05]) lie inside
  // it, so the widening leaves it as it is.
  EXPECT_EQ(b.note,
            "no dense validation runs on b200 hardware: wider interval from all 9 dense "
            "validation runs (+0% to +20.0%), widened to span every validated dense group's "
            "interval");
  EXPECT_DOUBLE_EQ(b.error_low, 0.0);
  EXPECT_DOUBLE_EQ(b.error_high, 0.2);
  // a100 bf16 fsdp: no fsdp runs, so (a100, bf16/fp16).
  const PredictionInterval a = IntervalFor(Set(rows), {"a100", "bf16/fp16", "fsdp"});
  EXPECT_EQ(a.group, "a100 bf16/fp16");
  EXPECT_EQ(a.runs, 6);
  // Leaving a run out.
  EXPECT_EQ(IntervalFor(Set(rows), {"a100", "bf16/fp16", "megatron"}, "a0").runs, 5);
}

// Hardware without validation runs is never given a tighter interval than a validated family:
// the pooled interval is widened to span each family's own (every family of kMinGroupRuns runs).
TEST(Interval, UnvalidatedHardwareIsNeverNarrowerThanAValidatedFamily) {
  std::vector<ResidualRow> rows;
  // 20 a100 runs near zero and 9 h100 runs spread -0.1 .. +0.3: the 29 pooled are dominated by
  // the tight a100 runs.
  for (int i = 0; i < 20; ++i) {
    rows.push_back({"a" + std::to_string(i), "a100", "bf16/fp16", "megatron", 0.001 * (i - 10)});
  }
  for (int i = 0; i < 9; ++i) {
    rows.push_back({"h" + std::to_string(i), "h100", "bf16/fp16", "megatron", -0.1 + 0.05 * i});
  }
  const ResidualSet set = Set(rows);
  const PredictionInterval h = IntervalFor(set, {"h100", "bf16/fp16", "megatron"});
  ASSERT_EQ(h.group, "h100 bf16/fp16 megatron");
  // h100: n = 9, k = max(1, floor(10 x 0.1)) = 1: [-0.1, +0.3].
  EXPECT_DOUBLE_EQ(h.error_low, -0.1);
  EXPECT_DOUBLE_EQ(h.error_high, 0.3);
  const PredictionInterval a = IntervalFor(set, {"a100", "bf16/fp16", "megatron"});
  const PredictionInterval u = IntervalFor(set, {"h200", "bf16/fp16", "megatron"});
  EXPECT_FALSE(u.hardware_validated);
  EXPECT_EQ(u.runs, 29);
  // Pooled alone: n = 29, k = 3: [e_(3), e_(27)] = [-0.01, +0.2], narrower than h100's.
  EXPECT_NE(u.note.find("(-1.00% to +20.0%), widened"), std::string::npos) << u.note;
  for (const PredictionInterval* f : {&h, &a}) {
    EXPECT_LE(u.error_low, f->error_low) << f->group;
    EXPECT_GE(u.error_high, f->error_high) << f->group;
  }
  EXPECT_DOUBLE_EQ(u.error_low, -0.1);
  EXPECT_DOUBLE_EQ(u.error_high, 0.3);
  // The shipped residuals: every family with its own interval is inside the unvalidated one.
  Result<ResidualSet> shipped =
      ReadResiduals(std::string(SHARDSIM_SOURCE_DIR) + "/" + kResidualsPath);
  ASSERT_TRUE(shipped.ok()) << shipped.status().ToString();
  const PredictionInterval v = IntervalFor(*shipped, {"h200", "bf16/fp16", "megatron"});
  EXPECT_NE(v.note.find("high +47.1% from gb300"), std::string::npos) << v.note;
  for (const ResidualRow& r : shipped->rows) {
    if (r.kind != "dense") continue;
    for (const IntervalKey& k : {IntervalKey{r.hardware_family, r.precision, r.framework},
                                 IntervalKey{r.hardware_family, r.precision, "none"},
                                 IntervalKey{r.hardware_family, "none", "none"}}) {
      const PredictionInterval g = IntervalFor(*shipped, k);
      if (!g.hardware_validated) continue;
      EXPECT_LE(v.error_low, g.error_low) << g.group;
      EXPECT_GE(v.error_high, g.error_high) << g.group;
    }
  }
}

// Dense and MoE runs are two populations: a scenario's interval is drawn from runs of its kind,
// the fallback pools runs of its kind and widens to that kind's groups only, and only a kind
// without any run falls back to every run.
TEST(Interval, RunsOfTheOtherKindAreLeftOut) {
  std::vector<ResidualRow> rows;
  for (int i = 0; i < 6; ++i) {
    rows.push_back({"d" + std::to_string(i), "gb300", "fp8", "nemo", -0.3 + 0.01 * i, "dense"});
  }
  for (int i = 0; i < 5; ++i) {
    rows.push_back({"m" + std::to_string(i), "gb300", "fp8", "nemo", 0.5 * i, "moe"});
  }
  for (int i = 0; i < 5; ++i) {
    rows.push_back({"a" + std::to_string(i), "a100", "bf16/fp16", "megatron", 0.01 * i, "dense"});
  }
  const ResidualSet set = Set(rows);
  const PredictionInterval d = IntervalFor(set, {"gb300", "fp8", "nemo", "dense"});
  EXPECT_EQ(d.group, "gb300 fp8 nemo");
  EXPECT_EQ(d.runs, 6);
  EXPECT_DOUBLE_EQ(d.error_low, -0.3);  // n = 6, k = 1: [e_(1), e_(6)]
  EXPECT_DOUBLE_EQ(d.error_high, -0.25);
  const PredictionInterval m = IntervalFor(set, {"gb300", "fp8", "nemo", "moe"});
  EXPECT_EQ(m.group, "gb300 fp8 nemo moe");
  EXPECT_EQ(m.kind, "moe");
  EXPECT_EQ(m.runs, 5);
  EXPECT_DOUBLE_EQ(m.error_low, 0.0);
  EXPECT_DOUBLE_EQ(m.error_high, 2.0);
  // A MoE scenario on a100 (no MoE runs there): all five MoE runs, labelled as such, widened to
  // the MoE groups only (gb300's, the same five runs); the a100 dense runs do not enter.
  const PredictionInterval am = IntervalFor(set, {"a100", "bf16/fp16", "megatron", "moe"});
  EXPECT_EQ(am.group, "all moe runs");
  EXPECT_EQ(am.runs, 5);
  EXPECT_FALSE(am.hardware_validated);
  EXPECT_EQ(am.note,
            "no moe validation runs on a100 hardware: wider interval from all 5 moe validation "
            "runs (+0% to +200%), widened to span every validated moe group's interval");
  // A dense scenario on hardware without runs: the eleven dense runs, widened to gb300's and
  // a100's dense groups (a100: [0, 0.04] inside the pooled [-0.3, +0.04]), never to +200%.
  const PredictionInterval u = IntervalFor(set, {"mi355x", "fp8", "megatron", "dense"});
  EXPECT_EQ(u.group, "all dense runs");
  EXPECT_EQ(u.runs, 11);
  EXPECT_DOUBLE_EQ(u.error_low, -0.3);
  EXPECT_DOUBLE_EQ(u.error_high, 0.04);
  // A kind the file holds no run of: every run.
  std::vector<ResidualRow> dense_only(rows.begin(), rows.begin() + 6);
  const PredictionInterval none = IntervalFor(Set(dense_only), {"gb300", "fp8", "nemo", "moe"});
  EXPECT_EQ(none.group, "all runs");
  EXPECT_EQ(none.kind, "any");
  EXPECT_EQ(none.runs, 6);
  EXPECT_NE(none.note.find("no moe validation runs on gb300 hardware: wider interval from all 6 "
                           "validation runs"),
            std::string::npos)
      << none.note;
}

TEST(Interval, KeysOfAScenario) {
  EXPECT_EQ(HardwareFamily("a100-sxm4-80gb"), "a100");
  EXPECT_EQ(HardwareFamily("mi300x"), "mi300x");
  EXPECT_EQ(PrecisionClass(DType::kFp16), "bf16/fp16");
  EXPECT_EQ(PrecisionClass(DType::kFp8), "fp8");
}

TEST(Interval, FileRoundTripsAndBadFilesAreLocated) {
  const std::vector<ResidualRow> rows = {{"x", "h100", "fp8", "nemo", 0.123456789},
                                         {"y", "gb200", "mxfp8", "nemo", -0.5, "moe"}};
  const std::string text = ResidualsJson(rows);
  Result<ResidualSet> back = ParseResiduals(text, "r.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->rows.size(), 2u);
  EXPECT_DOUBLE_EQ(back->rows[0].error, 0.123457);
  EXPECT_EQ(back->rows[1].kind, "moe");
  EXPECT_EQ(ResidualsJson(back->rows), text);
  // A file written before `kind`: its runs are dense.
  Result<ResidualSet> old = ParseResiduals(
      "{\"runs\": [{\"id\": \"x\", \"hardware_family\": \"h100\", \"precision\": \"fp8\", "
      "\"framework\": \"nemo\", \"error\": 0.1}]}",
      "r.json");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->rows[0].kind, "dense");
  Result<ResidualSet> bad_kind = ParseResiduals(
      "{\"runs\": [{\"id\": \"x\", \"hardware_family\": \"h100\", \"precision\": \"fp8\", "
      "\"framework\": \"nemo\", \"error\": 0.1, \"kind\": \"sparse\"}]}",
      "r.json");
  ASSERT_FALSE(bad_kind.ok());
  EXPECT_NE(bad_kind.status().ToString().find("runs[0].kind: expected \"dense\" or \"moe\""),
            std::string::npos)
      << bad_kind.status().ToString();
  Result<ResidualSet> bad = ParseResiduals("{\n  \"runs\": [1,\n", "r.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().diagnostics()[0].loc.file, "r.json");
  EXPECT_EQ(bad.status().diagnostics()[0].loc.line, 3);
  Result<ResidualSet> wrong = ParseResiduals("{\"runs\": [{\"id\": 1}]}", "r.json");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().ToString().find("runs[0]: expected"), std::string::npos);
}

}  // namespace
}  // namespace shardsim
