// `sweep --prune-to-top K`: the step-time bound never exceeds a simulated step (so no point that
// could enter the top K is skipped), and the pruned run's top K is the unpruned run's, row for
// row, at any thread count.
#include "sim/sweep/top_k.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <vector>

#include "sim/memory/budget.h"
#include "sim/parallel/plan.h"
#include "sim/schedule/schedule.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/point_space.h"
#include "sim/sweep/price_cache.h"
#include "sim/sweep/runner.h"
#include "sim/sweep/sweep_spec.h"
#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

using sweep_test::ReadFile;
using sweep_test::TempDir;

// Every schedule, recompute mode, ZeRO stage and CP degree the search takes on 16 GPUs, and an
// MoE model with expert parallelism.
const char* kDense = R"(name: bound
model: gpt3-6.7b
hardware: a100-sxm4-80gb
topology: dgx-a100
gpus: 16
training: {seq_len: 2048, global_batch: 32, precision: bf16, tokens: 1e9}
sweep:
  parallel: {auto: true, cp: [1, 2]}
  training.micro_batch: auto
  training.recompute: [none, selective, full]
  parallel.zero_stage: [1, 3]
)";
const char* kMoe = R"(name: bound-moe
model: mixtral-8x7b
hardware: h100-sxm
topology: dgx-h100
gpus: 32
training: {seq_len: 4096, global_batch: 64, precision: bf16}
sweep:
  parallel: {auto: true, ep: [1, 2, 8]}
  training.micro_batch: auto
)";

PointSpace Space(const char* text) {
  const LoadOptions lib = sweep_test::Lib();
  Result<SweepSpec> spec = ParseSweepSpec(text, "tests/sweep/data/inline.yaml", lib);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  Result<PointSpace> space = PointSpace::Enumerate(*spec, lib);
  EXPECT_TRUE(space.ok()) << space.status().ToString();
  return std::move(*space);
}

void ExpectBoundBelowSimulated(const PointSpace& space, int64_t stride, int64_t min_checked) {
  const LoadOptions lib = sweep_test::Lib();
  int64_t checked = 0, tight = 0;
  std::set<std::string> schedules;
  const size_t schedule_column = [&] {
    for (size_t c = 0; c < space.input_columns().size(); ++c) {
      if (space.input_columns()[c] == "parallel.schedule") return c;
    }
    return size_t{0};
  }();
  for (int64_t i = 0; i < space.size(); i += stride) {
    const Row row = EvaluatePoint(space, i, lib);
    if (row.status != PointStatus::kOk && row.status != PointStatus::kNoFit) continue;
    const PointBound b = BoundPoint(space, i, lib);
    ++checked;
    schedules.insert(row.inputs[schedule_column]);
    EXPECT_LE(b.step.seconds, row[Metric::kStepTime])
        << "point " << i << ": the bound is above the simulated step; pruning could drop it";
    if (b.step.seconds > 0.5 * row[Metric::kStepTime]) ++tight;
  }
  EXPECT_GE(checked, min_checked);
  // Not vacuous: the bound is within 2x of most simulated steps.
  EXPECT_GT(tight, checked / 2) << tight << " of " << checked;
  EXPECT_GE(schedules.size(), 4u);
}

TEST(SweepTopK, StepBoundIsBelowEverySimulatedStepDense) {
  ExpectBoundBelowSimulated(Space(kDense), 2, 300);
}

TEST(SweepTopK, StepBoundIsBelowEverySimulatedStepMoe) {
  ExpectBoundBelowSimulated(Space(kMoe), 3, 100);
}

// The prices shared by the points that differ only in schedule and virtual stages
// (sim/sweep/price_cache.h) give every point the bound its own prices give, bit for bit, whichever
// point of a key is priced first (point order and its reverse); and they are shared.
void ExpectCachedBoundsEqualOwn(const PointSpace& space) {
  const LoadOptions lib = sweep_test::Lib();
  PriceCache forward, backward;
  std::vector<PointBound> own;
  for (int64_t i = 0; i < space.size(); ++i) own.push_back(BoundPoint(space, i, lib));
  for (int pass = 0; pass < 2; ++pass) {
    PriceCache& cache = pass == 0 ? forward : backward;
    for (int64_t j = 0; j < space.size(); ++j) {
      const int64_t i = pass == 0 ? j : space.size() - 1 - j;
      const PointBound b = BoundPoint(space, i, lib, &cache);
      const PointBound& o = own[static_cast<size_t>(i)];
      EXPECT_EQ(b.step.seconds, o.step.seconds) << "point " << i;
      EXPECT_EQ(b.step.stage, o.step.stage) << "point " << i;
      EXPECT_EQ(b.tokens_per_step, o.tokens_per_step) << "point " << i;
      EXPECT_EQ(b.settled.has_value(), o.settled.has_value()) << "point " << i;
    }
  }
  EXPECT_GT(forward.hits(), forward.misses()) << "shared by the schedules of a layout";
  EXPECT_EQ(forward.hits() + forward.misses(), backward.hits() + backward.misses());
}

TEST(SweepTopK, SharedPricesGiveEachPointItsOwnBoundDense) {
  ExpectCachedBoundsEqualOwn(Space(kDense));
}

TEST(SweepTopK, SharedPricesGiveEachPointItsOwnBoundMoe) {
  ExpectCachedBoundsEqualOwn(Space(kMoe));
}

// The memory estimate with a sweep's shared run orders (sim/schedule OrderCache) is the one that
// builds its own, stage for stage, on every point of the space (every schedule).
TEST(SweepTopK, SharedOrdersGiveEachPointItsOwnBudget) {
  const LoadOptions lib = sweep_test::Lib();
  const PointSpace space = Space(kDense);
  OrderCache orders;
  int64_t compared = 0;
  for (int64_t i = 0; i < space.size(); ++i) {
    Result<ScenarioDocument> doc = space.Document(i);
    if (!doc.ok()) continue;
    Result<Scenario> sc = doc->Build(lib);
    if (!sc.ok()) continue;
    Result<Sharding> sharding = ShardModel(sc->model, sc->training, sc->parallel);
    if (!sharding.ok()) continue;
    Result<MemoryBudget> own = EstimateMemory(*sharding, sc->model, sc->training, sc->parallel,
                                              sc->hardware, sc->framework);
    Result<MemoryBudget> shared = EstimateMemory(*sharding, sc->model, sc->training, sc->parallel,
                                                 sc->hardware, sc->framework, &orders);
    ASSERT_EQ(own.ok(), shared.ok()) << "point " << i;
    if (!own.ok()) continue;
    ASSERT_EQ(own->stages.size(), shared->stages.size());
    for (size_t s = 0; s < own->stages.size(); ++s) {
      EXPECT_EQ(own->stages[s].activations, shared->stages[s].activations) << "point " << i;
      EXPECT_EQ(own->stages[s].in_flight, shared->stages[s].in_flight) << "point " << i;
      EXPECT_EQ(own->stages[s].total(), shared->stages[s].total()) << "point " << i;
    }
    ++compared;
  }
  EXPECT_GT(compared, 300);
}

// The bound of 1F1B with equal stages is the pipeline's ideal makespan, (m + p - 1) (F + B):
// below the simulated step, and above its compute-only part.
TEST(SweepTopK, OneF1BBoundIsTheBubbleFormula) {
  const LoadOptions lib = sweep_test::Lib();
  const PointSpace space = Space(R"(name: f1b
model: gpt3-6.7b
hardware: a100-sxm4-80gb
topology: dgx-a100
gpus: 8
training: {seq_len: 2048, global_batch: 16, micro_batch: 1, precision: bf16}
parallel: {dp: 1, tp: 2, pp: 4, schedule: 1f1b, sequence_parallel: true}
sweep:
  training.recompute: [none]
)");
  ASSERT_EQ(space.size(), 1);
  const PointBound b = BoundPoint(space, 0, lib);
  const Row row = EvaluatePoint(space, 0, lib);
  ASSERT_EQ(row.status, PointStatus::kOk) << row.reason;
  EXPECT_LE(b.step.seconds, row[Metric::kStepTime]);
  // m = 16, p = 4: the compute alone is 16/19 of the bound, the bubble 3/19.
  EXPECT_GT(b.step.seconds, row[Metric::kCompute] + row[Metric::kRecompute]);
  EXPECT_GT(b.step.seconds, 0.8 * row[Metric::kStepTime]);
}

std::string Top(const SweepRun& run, int64_t k) {
  RankOptions o;
  o.top_k = k;
  Result<std::vector<size_t>> order = Rank(run.summary.feasible_rows(), o);
  EXPECT_TRUE(order.ok());
  RowFormat f(RowFormatKind::kCsv, {});
  std::string out;
  for (size_t n = 0; n < std::min<size_t>(static_cast<size_t>(k), order->size()); ++n) {
    const Row& r = run.summary.feasible_rows()[(*order)[n]];
    out += std::to_string(r.point) + " " + FormatNumber(r[Metric::kTokensPerS]) + "\n";
  }
  return out;
}

TEST(SweepTopK, TopKIsTheUnprunedRunsAtAnyThreadCount) {
  const PointSpace space = Space(kDense);
  TempDir dir;
  SweepRunOptions o;
  o.overwrite = true;
  o.csv_path = dir / "all.csv";
  o.jobs = 2;
  Result<SweepRun> all = RunSweep(space, o, sweep_test::Lib());
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  const std::string all_csv = ReadFile(dir / "all.csv");
  for (int64_t k : {1, 20}) {
    std::string first;
    for (int jobs : {1, 2}) {
      o.prune_to_top = k;
      o.jobs = jobs;
      o.csv_path = dir / "pruned.csv";
      Result<SweepRun> pruned = RunSweep(space, o, sweep_test::Lib());
      ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
      EXPECT_EQ(Top(*pruned, k), Top(*all, k)) << "k " << k;
      EXPECT_LT(pruned->simulated, space.size()) << "k " << k << ": nothing pruned";
      const std::string csv = ReadFile(dir / "pruned.csv");
      if (first.empty()) first = csv;
      EXPECT_EQ(csv, first) << "k " << k << ": jobs " << jobs << " wrote other bytes";
      // Every row not outranked is the unpruned run's row.
      std::istringstream a(all_csv), p(csv);
      std::string la, lp;
      int64_t outranked = 0;
      while (std::getline(a, la) && std::getline(p, lp)) {
        if (lp.find(",outranked,") != std::string::npos) {
          ++outranked;
          continue;
        }
        EXPECT_EQ(lp, la);
      }
      EXPECT_EQ(outranked, pruned->summary.count(PointStatus::kOutranked));
      EXPECT_GT(outranked, 0);
    }
  }
}

// The shipped GPT-3 175B / 1,024 A100 space (a shard of it: every 200th point): the pruned top 10
// is the unpruned one, and most points are not simulated.
TEST(SweepTopK, ShippedGpt3SweepKeepsItsTopTen) {
  const LoadOptions lib = sweep_test::Lib();
  Result<SweepSpec> spec = LoadSweepSpec("scenarios/sweeps/gpt3-175b-a100x1024.yaml", lib);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  Result<PointSpace> space = PointSpace::Enumerate(*spec, lib);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  SweepRunOptions o;
  o.jobs = 2;
  o.shard = Shard{3, 200};
  Result<SweepRun> all = RunSweep(*space, o, lib);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  o.prune_to_top = 10;
  Result<SweepRun> pruned = RunSweep(*space, o, lib);
  ASSERT_TRUE(pruned.ok()) << pruned.status().ToString();
  EXPECT_EQ(Top(*pruned, 10), Top(*all, 10));
  const int64_t simulated_before =
      all->summary.count(PointStatus::kOk) + all->summary.count(PointStatus::kNoFit);
  const int64_t simulated_after =
      pruned->summary.count(PointStatus::kOk) + pruned->summary.count(PointStatus::kNoFit);
  EXPECT_LT(simulated_after * 4, simulated_before) << simulated_after << " of " << simulated_before;
}

TEST(SweepTopK, RefusesResumeAndUnboundedRankings) {
  const PointSpace space = Space(kMoe);
  SweepRunOptions o;
  o.prune_to_top = 3;
  o.resume = true;
  EXPECT_FALSE(RunSweep(space, o, sweep_test::Lib()).ok());
  o.resume = false;
  o.rank_by = RankBy::kCost;
  Result<SweepRun> r = RunSweep(space, o, sweep_test::Lib());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not --rank-by cost"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(TopKSupports(RankBy::kGoodput));
  EXPECT_TRUE(TopKSupports(RankBy::kTimeToTrainIdeal));
}

}  // namespace
}  // namespace shardsim
