// Pruning drops only points the simulation would also reject: every simulated peak is at least
// the activation-free bound the pruning uses, and pruned points do not fit when simulated. The
// whole closed-form estimate is not such a bound (ZeRO-3 activations simulate below it).
#include <gtest/gtest.h>

#include "sim/memory/budget.h"
#include "sim/report/simulate.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/point_space.h"
#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

// Varied layouts, schedules, recompute modes and ZeRO stages (memory-relevant settings).
const char* kSpace = R"(name: prune
model: gpt3-6.7b
hardware: a100-sxm4-40gb
topology: dgx-a100
gpus: 16
training: {seq_len: 2048, global_batch: 32, precision: bf16}
sweep:
  parallel: {auto: true, cp: [1, 2]}
  training.micro_batch: auto
  training.recompute: [none, selective, full]
  parallel.zero_stage: [0, 3]
)";

TEST(SweepPrune, TheBoundIsBelowEverySimulatedPeak) {
  const LoadOptions lib = sweep_test::Lib();
  Result<SweepSpec> spec = ParseSweepSpec(kSpace, "tests/sweep/data/inline.yaml", lib);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  Result<PointSpace> space = PointSpace::Enumerate(*spec, lib);
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  int64_t simulated = 0, pruned_checked = 0;
  // Every 3rd point keeps the test short; the space mixes every setting along the way.
  for (int64_t i = 0; i < space->size(); i += 3) {
    Result<Scenario> sc = space->Document(i)->Build(lib);
    if (!sc.ok()) continue;
    Result<MemoryBudget> m = EstimateMemory(sc->model, sc->training, sc->parallel, sc->hardware);
    ASSERT_TRUE(m.ok());
    const double bound = MemoryLowerBound(*m, sc->hardware).bytes.value();
    const Row row = EvaluatePoint(*space, i, lib);
    if (row.status == PointStatus::kPruned) {
      EXPECT_GT(bound, sc->hardware.memory_capacity);
      if (pruned_checked++ % 10 != 0) continue;
      // The simulation agrees that it does not fit.
      Result<SimResult> r = Simulate(*sc);
      if (r.ok()) {
        EXPECT_FALSE(r->fits) << "point " << i;
      }
      continue;
    }
    if (row.status != PointStatus::kOk && row.status != PointStatus::kNoFit) continue;
    ++simulated;
    EXPECT_GE(row[Metric::kPeakMemory], bound * (1.0 - 1e-12))
        << "point " << i << ": simulated peak below the bound; pruning would drop points that "
        << "fit";
  }
  EXPECT_GT(simulated, 100);
  EXPECT_GT(pruned_checked, 10);
}

}  // namespace
}  // namespace shardsim
