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
  EXPECT_EQ(p.group, "all runs");
  EXPECT_EQ(p.runs, 9);
  EXPECT_FALSE(p.hardware_validated);
  EXPECT_NE(p.note.find("too few validation runs on h100 hardware"), std::string::npos);
  // A family with no runs at all.
  const PredictionInterval b = IntervalFor(Set(rows), {"b200", "bf16/fp16", "megatron"});
  EXPECT_EQ(b.note,
            "no validation runs on b200 hardware: wider interval from all 9 validation runs");
  // a100 bf16 fsdp: no fsdp runs, so (a100, bf16/fp16).
  const PredictionInterval a = IntervalFor(Set(rows), {"a100", "bf16/fp16", "fsdp"});
  EXPECT_EQ(a.group, "a100 bf16/fp16");
  EXPECT_EQ(a.runs, 6);
  // Leaving a run out.
  EXPECT_EQ(IntervalFor(Set(rows), {"a100", "bf16/fp16", "megatron"}, "a0").runs, 5);
}

TEST(Interval, KeysOfAScenario) {
  EXPECT_EQ(HardwareFamily("a100-sxm4-80gb"), "a100");
  EXPECT_EQ(HardwareFamily("mi300x"), "mi300x");
  EXPECT_EQ(PrecisionClass(DType::kFp16), "bf16/fp16");
  EXPECT_EQ(PrecisionClass(DType::kFp8), "fp8");
}

TEST(Interval, FileRoundTripsAndBadFilesAreLocated) {
  const std::vector<ResidualRow> rows = {{"x", "h100", "fp8", "nemo", 0.123456789}};
  const std::string text = ResidualsJson(rows);
  Result<ResidualSet> back = ParseResiduals(text, "r.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(back->rows[0].error, 0.123457);
  EXPECT_EQ(ResidualsJson(back->rows), text);
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
