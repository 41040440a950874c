// Ranking, the Pareto front, costs, and the grouping of infeasible points.
#include "sim/sweep/ranking.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

namespace shardsim {
namespace {

Row Feasible(int64_t point, double tps, double gpus, double headroom) {
  Row r;
  r.point = point;
  r.status = PointStatus::kOk;
  r[Metric::kTokensPerS] = tps;
  r[Metric::kGpus] = gpus;
  r[Metric::kMemoryHeadroom] = headroom;
  return r;
}

TEST(SweepRanking, ParetoFrontOfThroughputGpusAndHeadroom) {
  const std::vector<Row> rows = {
      Feasible(0, 100, 8, 10),  // front
      Feasible(1, 90, 8, 20),   // front: more headroom
      Feasible(2, 80, 8, 5),    // dominated by 0
      Feasible(3, 50, 4, 1),    // front: fewer GPUs
      Feasible(4, 100, 8, 10),  // equal to 0: not dominated (nothing strictly better)
      Feasible(5, 50, 8, 1),    // dominated by 3 (and 0)
  };
  EXPECT_EQ(ParetoFront(rows), (std::vector<size_t>{0, 1, 3, 4}));
}

TEST(SweepRanking, TiesGoToTheLowerPoint) {
  const std::vector<Row> rows = {Feasible(7, 100, 8, 1), Feasible(3, 100, 8, 1),
                                 Feasible(9, 200, 8, 1)};
  Result<std::vector<size_t>> order = Rank(rows, RankOptions{});
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(*order, (std::vector<size_t>{2, 1, 0}));
}

TEST(SweepRanking, CostPerMillionTokensAndToTrain) {
  Row r = Feasible(0, 100, 8, 1);
  // 8 GPUs at $2/h: $16/h for 360,000 tokens/h -> $44.44 per million tokens.
  EXPECT_NEAR(CostPerMillionTokens(r, 2.0), 16.0 / 0.36, 1e-9);
  r[Metric::kGpuHours] = 1000;
  EXPECT_DOUBLE_EQ(CostToTrain(r, 2.0), 2000.0);
  Row cheap = Feasible(1, 60, 4, 1);  // $8/h for 216,000 tokens/h: $37.04 per million
  RankOptions o;
  o.by = RankBy::kCost;
  o.price_per_gpu_hour = 2.0;
  Result<std::vector<size_t>> order = Rank({Feasible(0, 100, 8, 1), cheap}, o);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(order->front(), 1u);
}

TEST(SweepRanking, OptionsFromTheCommandLine) {
  // Without the flag, cost takes each point's hardware price (hardware.price_per_gpu_hour);
  // ranking refuses a point that has none.
  EXPECT_TRUE(ParseRankOptions("cost", 10, std::nullopt).ok());
  {
    RankOptions o = *ParseRankOptions("cost", 10, std::nullopt);
    EXPECT_EQ(Rank({Feasible(0, 100, 8, 1)}, o).status().message(),
              "--rank-by cost needs --price-per-gpu-hour or hardware.price_per_gpu_hour (point 0's "
              "hardware gives no price)");
    o.point_price[0] = 2.0;
    EXPECT_TRUE(Rank({Feasible(0, 100, 8, 1)}, o).ok());
  }
  EXPECT_EQ(ParseRankOptions("speed", 10, std::nullopt).status().message(),
            "--rank-by: expected tokens_per_s, time_to_train, cost, time_to_train_ideal or "
            "goodput, got \"speed\"");
  EXPECT_EQ(ParseRankOptions("time_to_train", 5, std::nullopt)->by, RankBy::kTimeToTrain);
  EXPECT_EQ(ParseRankOptions("cost", 10, 2.5)->price_per_gpu_hour, 2.5);
  // A price given but not positive said "--rank-by cost needs --price-per-gpu-hour"; nan ran
  // with no cost column and inf printed "-" for every cost.
  for (double bad : {-2.0, 0.0, std::nan(""), HUGE_VAL}) {
    const Result<RankOptions> r = ParseRankOptions("cost", 10, bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message().rfind(
                  "--price-per-gpu-hour: must be a positive number of dollars, got ", 0),
              0u)
        << r.status().message();
  }
  RankOptions o;
  o.by = RankBy::kTimeToTrain;
  EXPECT_EQ(Rank({Feasible(0, 1, 1, 1)}, o).status().message(),
            "--rank-by time_to_train needs training.tokens in the scenario (the tokens to train "
            "on)");
}

TEST(SweepRanking, InfeasibleGroupsLargestFirst) {
  SweepSummary s;
  auto bad = [&](int64_t point, PointStatus st, const std::string& reason) {
    Row r;
    r.point = point;
    r.status = st;
    r.reason = reason;
    s.Add(r);
  };
  bad(0, PointStatus::kInvalid, "parallel.schedule: interleaved 1F1B needs ... (3) ... (2)");
  bad(1, PointStatus::kPruned, "memory before activations over capacity: 90 GiB of 80 GiB");
  bad(2, PointStatus::kInvalid, "parallel.schedule: interleaved 1F1B needs ... (5) ... (4)");
  s.Add(Feasible(3, 1, 1, 1));
  EXPECT_EQ(s.total(), 4);
  EXPECT_EQ(s.feasible(), 1);
  EXPECT_EQ(s.count(PointStatus::kInvalid), 2);
  const std::vector<InfeasibleGroup> g = s.groups();
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].group, "parallel.schedule");
  EXPECT_EQ(g[0].count, 2);
  EXPECT_EQ(g[0].example_point, 0);
  EXPECT_EQ(g[1].group, "memory before activations over capacity");
  EXPECT_EQ(InfeasibleReport(s).rfind("\nInfeasible: 3 of 4 points (pruned 1, simulated and not "
                                      "fitting 0, invalid 2, failed 0)\n",
                                      0),
            0u);
}

// A summary keeps the feasible rows for ranking; every row only when asked (the HTML report), so
// a sweep of millions of points does not hold them all twice.
TEST(SweepRanking, SummaryKeepsEveryRowOnlyWhenAsked) {
  Row invalid;
  invalid.point = 0;
  invalid.status = PointStatus::kInvalid;
  invalid.reason = "parallel.tp: 3 does not divide 8";
  for (const SweepSummary::Keep keep :
       {SweepSummary::Keep::kFeasibleRows, SweepSummary::Keep::kAllRows}) {
    SweepSummary s(keep);
    s.Add(invalid);
    s.Add(Feasible(1, 10, 8, 1));
    EXPECT_EQ(s.total(), 2);
    EXPECT_EQ(s.feasible(), 1);
    ASSERT_EQ(s.feasible_rows().size(), 1u);
    EXPECT_EQ(s.feasible_rows()[0].point, 1);
    EXPECT_EQ(s.keeps_all_rows(), keep == SweepSummary::Keep::kAllRows);
    EXPECT_EQ(s.rows().size(), keep == SweepSummary::Keep::kAllRows ? 2u : 0u);
  }
}

}  // namespace
}  // namespace shardsim

namespace shardsim {
namespace {

// Points within the stated uncertainty of the best are ties: 0.85 x best and above for tokens/s.
// Before, nothing said that the second point (4% behind) was as likely to be the best.
// The same points tie whether the sweep ranks by throughput or by time to train (the review's
// case: a point 1.16 x the best's time is 0.862 x its tokens/s, a tie by neither).
TEST(SweepRanking, TiesAreTheSameUnderThroughputAndTime) {
  const double tokens = 1e12;
  const auto row = [&](int64_t point, double tps) {
    Row r = Feasible(point, tps, 8, 1);
    r[Metric::kTimeToTrain] = tokens / tps;
    return r;
  };
  const Row best = row(0, 100);
  RankOptions by_tps, by_time;
  by_tps.tie_fraction = by_time.tie_fraction = 0.15;
  by_time.by = RankBy::kTimeToTrain;
  for (double tps : {99.0, 90.0, 87.0, 86.95, 86.2, 85.0, 80.0}) {
    const Row r = row(1, tps);
    EXPECT_EQ(IsTie(r, best, by_tps), IsTie(r, best, by_time)) << tps;
  }
  EXPECT_TRUE(IsTie(row(1, 87.0), best, by_time));
  EXPECT_FALSE(IsTie(row(1, 86.2), best, by_tps));
}

TEST(SweepRanking, PointsWithinTheUncertaintyOfTheBestAreTies) {
  RankOptions o;
  o.tie_fraction = 0.15;
  const Row best = Feasible(0, 100, 8, 1);
  // The uncertainty is on time: a tie needs a step at most 1.15 x the best's, so tokens/s at
  // least 100 / 1.15 = 86.96 (85 would be a step 1.176 x the best's).
  EXPECT_TRUE(IsTie(Feasible(1, 96, 8, 1), best, o));
  EXPECT_TRUE(IsTie(Feasible(2, 87, 8, 1), best, o));
  EXPECT_FALSE(IsTie(Feasible(3, 86.9, 8, 1), best, o));
  EXPECT_FALSE(IsTie(Feasible(4, 85, 8, 1), best, o));
  EXPECT_NEAR(VsBest(Feasible(1, 96, 8, 1), best, o), -0.04, 1e-12);
  o.tie_fraction = 0.0;
  EXPECT_FALSE(IsTie(Feasible(1, 99, 8, 1), best, o));

  SweepSummary s;
  for (const Row& r : {Feasible(0, 100, 8, 1), Feasible(1, 50, 8, 2), Feasible(2, 90, 8, 1)}) {
    s.Add(r);
  }
  o.tie_fraction = 0.15;
  Result<std::string> text = SweepReport(s, {}, o);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("~ = a tie: within ±15% of the best, shardsim's stated uncertainty; 1 "
                       "point ties with the best"),
            std::string::npos)
      << *text;
  EXPECT_NE(text->find("2~ "), std::string::npos) << *text;
  EXPECT_EQ(text->find("3~"), std::string::npos) << *text;
  Result<std::string> csv = RankedCsv(s, {}, o);
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(*csv,
            "rank,point,tokens_per_s,tokens_per_s_per_gpu,mfu,step_time_s,peak_memory_bytes,"
            "memory_headroom_bytes,vs_best,tie,pareto\n"
            "1,0,100,,,,,1,0,false,true\n"
            "2,2,90,,,,,1,-0.09999999999999998,true,false\n"
            "3,1,50,,,,,2,-0.5,false,true\n");
}

// --min-headroom / --max-memory-fraction: a point that fits with 228 MiB to spare is not usable.
TEST(SweepRanking, MemoryLimitTurnsTightPointsIntoNoFit) {
  Row r = Feasible(0, 100, 8, 0);
  r[Metric::kMemoryCapacity] = 80.0 * 1073741824.0;
  r[Metric::kPeakMemory] = 80.0 * 1073741824.0 - 228.0 * 1048576.0;
  Row a = r;
  ApplyMemoryLimit(MemoryLimit{8.0 * 1073741824.0, 0.0}, &a);
  EXPECT_EQ(a.status, PointStatus::kNoFit);
  EXPECT_EQ(a.reason,
            "headroom: 228 MiB left of 80.0 GiB (peak 79.8 GiB), below --min-headroom 8.00 GiB");
  EXPECT_EQ(ReasonGroup(a.reason), "headroom");
  Row b = r;
  ApplyMemoryLimit(MemoryLimit{0.0, 0.9}, &b);
  EXPECT_EQ(b.status, PointStatus::kNoFit);
  EXPECT_EQ(ReasonGroup(b.reason), "memory fraction");
  Row c = r;
  ApplyMemoryLimit(MemoryLimit{100.0 * 1048576.0, 0.0}, &c);  // 228 MiB left is enough here
  EXPECT_EQ(c.status, PointStatus::kOk);
}

// Each point takes its hardware's price unless --price-per-gpu-hour is given, which wins.
TEST(SweepRanking, PricePerPointFromTheHardwareTheFlagWins) {
  RankOptions o;
  const Row r = Feasible(4, 100, 8, 1);
  EXPECT_EQ(PriceOf(o, r), 0.0);
  EXPECT_FALSE(HasPrices(o));
  o.point_price[4] = 3.0;
  EXPECT_EQ(PriceOf(o, r), 3.0);
  EXPECT_TRUE(HasPrices(o));
  o.price_per_gpu_hour = 2.0;
  EXPECT_EQ(PriceOf(o, r), 2.0);
}

}  // namespace
}  // namespace shardsim

namespace shardsim {
namespace {

// The text report's top table: an MFU above 100% comes with simulate's note (for the row with the
// highest such MFU); below 100%, no note (the output of other sweeps is unchanged).
TEST(SweepReport, MfuAbove100PercentIsExplained) {
  SweepSummary s;
  for (int64_t p = 0; p < 2; ++p) {
    Row r;
    r.point = p;
    r.status = PointStatus::kOk;
    r[Metric::kGpus] = 8;
    r[Metric::kTokensPerS] = 1000.0 * static_cast<double>(p + 1);
    r[Metric::kTokensPerSPerGpu] = 125.0 * static_cast<double>(p + 1);
    r[Metric::kStepTime] = 1.0;
    r[Metric::kPeakMemory] = 1e10;
    r[Metric::kMemoryHeadroom] = 1e10;
    r[Metric::kMfu] = p == 0 ? 1.04 : 0.9;
    r[Metric::kExecutedFractionOfPeak] = p == 0 ? 0.61 : 0.55;
    r[Metric::kFlopsConventionOverExecuted] = p == 0 ? 1.75 : 1.7;
    s.Add(r);
  }
  Result<std::string> out = SweepReport(s, {}, RankOptions{});
  ASSERT_TRUE(out.ok());
  EXPECT_NE(out->find("\n  flops: MFU above 100% (point 0): MFU / HFU count causal attention as "
                      "the full s x s square (the published convention); the kernels ran its "
                      "unmasked half: HFU's FLOPs are 1.75x those executed, 61.0% of peak was "
                      "executed\n"),
            std::string::npos)
      << *out;
  SweepSummary below;
  for (const Row& r : s.feasible_rows()) {
    Row q = r;
    q[Metric::kMfu] = 0.5;
    below.Add(q);
  }
  Result<std::string> plain = SweepReport(below, {}, RankOptions{});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->find("flops:"), std::string::npos) << *plain;
}

}  // namespace
}  // namespace shardsim
