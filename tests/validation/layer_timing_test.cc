// One transformer layer's forward and backward time against Korthikanti et al. 2022 Table 4
// (22B model: h 6144, 64 heads, TP 8, s 2048, micro-batch 4, A100 80 GB), for each of its five
// configurations (tests/reference/runs.yaml korthikanti2022_table4_22b_layer): the kernel and
// TP-communication model behind every step, held against a profiled measurement. Predictions
// run 6-14% slow here: the A100 file carries the power-limited clock of a long training step
// (sustained_compute_fraction 0.84, measured on our H200), which the end-to-end rows of the same
// paper need (tests/validation/reference_runs_test.cc); this per-layer profile sits closer to
// burst clocks. Held within 15%.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "sim/config/loader.h"
#include "sim/hardware/op_cost.h"
#include "sim/model/op_graph.h"
#include "sim/parallel/layout.h"
#include "sim/program/step_costs.h"

namespace shardsim {
namespace {

TEST(LayerTiming, Korthikanti22bTable4) {
  struct Row {
    const char* config;
    Recompute recompute;
    bool sp;
    double fwd_ms, bwd_ms;
  };
  const Row rows[] = {{"baseline (TP, no recompute)", Recompute::kNone, false, 7.7, 11.9},
                      {"sequence parallel", Recompute::kNone, true, 7.2, 11.8},
                      {"full recompute", Recompute::kFull, false, 7.7, 19.5},
                      {"selective recompute", Recompute::kSelective, false, 7.7, 13.2},
                      {"selective recompute + SP", Recompute::kSelective, true, 7.2, 13.1}};
  auto base = LoadScenario(std::string(SHARDSIM_SOURCE_DIR) +
                               "/tests/validation/korthikanti2022_22b_full_recompute.yaml",
                           LoadOptions{});
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  std::printf("\n%-30s %9s %9s %7s %9s %9s %7s\n", "configuration", "fwd pred", "fwd meas", "error",
              "bwd pred", "bwd meas", "error");
  for (const Row& r : rows) {
    Scenario sc = *base;
    sc.training.recompute = r.recompute;
    sc.parallel.sequence_parallel = r.sp;
    auto plan = MakePlan(sc);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    const OpCostModel hw(sc.hardware);
    auto costs = PriceStep(sc, *plan, hw);
    ASSERT_TRUE(costs.ok()) << costs.status().ToString();
    const double fwd = costs->layer_kinds[0].fwd.total().value() * 1e3;
    const double bwd = costs->layer_kinds[0].bwd.total().value() * 1e3;
    std::printf("%-30s %7.2fms %7.2fms %+6.1f%% %7.2fms %7.2fms %+6.1f%%\n", r.config, fwd,
                r.fwd_ms, (fwd / r.fwd_ms - 1) * 100, bwd, r.bwd_ms, (bwd / r.bwd_ms - 1) * 100);
    EXPECT_NEAR(fwd / r.fwd_ms, 1.0, 0.15) << r.config;
    EXPECT_NEAR(bwd / r.bwd_ms, 1.0, 0.15) << r.config;
  }
}

}  // namespace
}  // namespace shardsim
