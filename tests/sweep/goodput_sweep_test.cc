// scenarios/sweeps/llama3-405b-gpus-goodput.yaml: the Llama 3 405B layout on 4,096 to 131,072
// H100. The ideal time to train falls with every doubling, but interruptions grow with the GPUs:
// the booked time turns up (sim/goodput, docs/goodput.md). Also: ranking by goodput and by the
// ideal time.
#include <gtest/gtest.h>

#include <cstdio>

#include "sim/sweep/point_space.h"
#include "sim/sweep/ranking.h"
#include "sim/sweep/runner.h"
#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

TEST(GoodputSweep, BookedTimeTurnsUpWhereFailuresOutgrowTheSpeedUp) {
  const LoadOptions lib = sweep_test::Lib();
  Result<SweepSpec> spec = LoadSweepSpec("scenarios/sweeps/llama3-405b-gpus-goodput.yaml", lib);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  Result<PointSpace> space = PointSpace::Enumerate(*spec, lib);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  SweepRunOptions o;
  o.jobs = 2;
  Result<SweepRun> run = RunSweep(*space, o, lib);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const std::vector<Row>& rows = run->summary.feasible_rows();
  ASSERT_EQ(rows.size(), 6u);
  size_t best = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::printf(
        "%6.0f GPUs: ideal %6.1f days, goodput %5.1f%%, %5.1f interruptions/day, booked "
        "%6.1f days\n",
        r[Metric::kGpus], r[Metric::kTimeToTrainIdeal] / 86400.0, 100.0 * r[Metric::kGoodput],
        r[Metric::kInterruptionsPerDay], r[Metric::kTimeToTrain] / 86400.0);
    EXPECT_NEAR(r[Metric::kTimeToTrain], r[Metric::kTimeToTrainIdeal] / r[Metric::kGoodput],
                1e-6 * r[Metric::kTimeToTrain]);
    if (i > 0) {
      EXPECT_LT(r[Metric::kTimeToTrainIdeal], rows[i - 1][Metric::kTimeToTrainIdeal]);
      EXPECT_LT(r[Metric::kGoodput], rows[i - 1][Metric::kGoodput]);
    }
    if (r[Metric::kTimeToTrain] < rows[best][Metric::kTimeToTrain]) best = i;
  }
  // The booked optimum is inside the range, and the largest cluster books more time than it.
  EXPECT_GT(best, 0u);
  EXPECT_LT(best, rows.size() - 1);
  EXPECT_GT(rows.back()[Metric::kTimeToTrain], rows[best][Metric::kTimeToTrain]);

  // Ranked by the ideal time the largest cluster wins; by goodput the smallest; booked: neither.
  RankOptions by;
  by.by = RankBy::kTimeToTrainIdeal;
  EXPECT_EQ(Rank(rows, by)->front(), rows.size() - 1);
  by.by = RankBy::kGoodput;
  EXPECT_EQ(Rank(rows, by)->front(), 0u);
  by.by = RankBy::kTimeToTrain;
  EXPECT_EQ(Rank(rows, by)->front(), best);
}

TEST(GoodputSweep, RankNamesAndTheTokensTheyNeed) {
  EXPECT_EQ(ParseRankOptions("goodput", 5, std::nullopt)->by, RankBy::kGoodput);
  EXPECT_EQ(ParseRankOptions("time_to_train_ideal", 5, std::nullopt)->by,
            RankBy::kTimeToTrainIdeal);
  Row no_tokens;
  no_tokens[Metric::kTokensPerS] = 1.0;
  RankOptions by;
  by.by = RankBy::kGoodput;
  Result<std::vector<size_t>> r = Rank({no_tokens}, by);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "--rank-by goodput needs training.tokens in the scenario (the tokens to train on)");
}

// The reliability keys are sweep axes: a longer restart books more time for the same ideal one.
TEST(GoodputSweep, ReliabilityKeysAreAxes) {
  const LoadOptions lib = sweep_test::Lib();
  sweep_test::TempDir dir;
  sweep_test::WriteFile(dir / "restart.yaml",
                        std::string("base: ") + SHARDSIM_SOURCE_DIR +
                            "/scenarios/llama3-405b-h100x16k.yaml\n"
                            "sweep:\n  reliability.restart_time: [5 min, 30 min]\n");
  Result<SweepSpec> spec = LoadSweepSpec(dir / "restart.yaml", lib);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  Result<PointSpace> space = PointSpace::Enumerate(*spec, lib);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  SweepRunOptions o;
  o.jobs = 1;
  Result<SweepRun> run = RunSweep(*space, o, lib);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const std::vector<Row>& rows = run->summary.feasible_rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][Metric::kTimeToTrainIdeal], rows[1][Metric::kTimeToTrainIdeal]);
  EXPECT_GT(rows[1][Metric::kTimeToTrain], rows[0][Metric::kTimeToTrain]);
  EXPECT_LT(rows[1][Metric::kGoodput], rows[0][Metric::kGoodput]);
}

}  // namespace
}  // namespace shardsim
