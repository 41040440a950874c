// The validation residuals behind simulate's and check-claim's prediction intervals
// (sim/report/interval.h): hardware/calibration/residuals.json must be what the validation run
// gives today, and the intervals drawn from it must cover the validation runs left out of them.
//
// Regenerate the file after a change that moves a validation prediction:
//   SHARDSIM_UPDATE_RESIDUALS=1 ./build/tests/validation_test
//   --gtest_filter=Residuals.FileIsCurrent
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/report/interval.h"
#include "sim/report/simulate.h"
#include "tests/validation/oos_published.h"

namespace shardsim {
namespace {

const std::string kDir = std::string(SHARDSIM_SOURCE_DIR) + "/tests/validation/";
const std::string kFile = std::string(SHARDSIM_SOURCE_DIR) + "/" + kResidualsPath;

// Every held run of published.json (known outliers left out, as the validation table's
// tolerance leaves them out): the error of ReferenceRuns.PredictedVsPublished, and what it
// depends on; then every out-of-sample run (oos/published.csv), the error
// OutOfSample.RowsPredictedVsPublished prints. Nothing is fitted to either: their
// errors only say how far off shardsim has been where a new scenario falls.
std::vector<ResidualRow> ComputeResiduals() {
  std::ifstream in(kDir + "published.json");
  const nlohmann::json runs = nlohmann::json::parse(in)["runs"];
  std::vector<ResidualRow> rows;
  for (const auto& r : runs) {
    if (!r["known_outlier"].is_null()) continue;
    auto sc = LoadScenario(kDir + r["scenario"].get<std::string>(), LoadOptions{});
    EXPECT_TRUE(sc.ok()) << r["id"];
    if (!sc.ok()) continue;
    auto sim = Simulate(*sc);
    EXPECT_TRUE(sim.ok()) << r["id"];
    if (!sim.ok()) continue;
    const double t_pred = sim->step_time.value();
    double t_pub = r["step_time_s"].is_null() ? NAN : r["step_time_s"]["value"].get<double>();
    if (std::isnan(t_pub)) {
      t_pub = sim->tokens_per_step /
              (r["tokens_per_s_per_gpu"]["value"].get<double>() * static_cast<double>(sc->gpus));
    }
    const IntervalKey key = IntervalKeyOf(*sc);
    // The scenario's framework: key (sim/framework) names the software the source ran.
    EXPECT_EQ(key.framework, r["framework"].get<std::string>()) << r["id"];
    rows.push_back(ResidualRow{r["id"], key.hardware_family, key.precision,
                               r["framework"].get<std::string>(), t_pub / t_pred - 1.0, key.kind});
  }
  for (const OosRun& r : OosRuns()) {
    rows.push_back(ResidualRow{r.pub.id, r.key.hardware_family, r.key.precision, r.key.framework,
                               r.error, r.key.kind});
  }
  return rows;
}

TEST(Residuals, FileIsCurrent) {
  const std::string want = ResidualsJson(ComputeResiduals());
  if (std::getenv("SHARDSIM_UPDATE_RESIDUALS") != nullptr) {
    std::ofstream out(kFile, std::ios::binary);
    out << want;
    ASSERT_TRUE(out.good()) << "cannot write " << kFile;
    std::printf("wrote %s\n", kFile.c_str());
    return;
  }
  std::ifstream in(kFile, std::ios::binary);
  ASSERT_TRUE(in.good()) << kFile << " is missing; SHARDSIM_UPDATE_RESIDUALS=1 writes it";
  std::stringstream have;
  have << in.rdbuf();
  EXPECT_EQ(have.str(), want)
      << kFile << " is stale: the validation run gives other residuals. Regenerate it with "
      << "SHARDSIM_UPDATE_RESIDUALS=1 ./build/tests/validation_test "
         "--gtest_filter=Residuals.FileIsCurrent";
}

// Leave-one-out: each run's interval drawn from the other runs (its own group first, as a new
// scenario's would be) must hold its published step time about as often as the intervals
// claim. Prints every run's interval.
TEST(Residuals, LeaveOneOutCoverage) {
  Result<ResidualSet> set = ReadResiduals(kFile);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::printf("\n%-46s %-26s %8s %8s %8s %4s %s\n", "run (left out)", "group", "error", "low",
              "high", "n", "covered");
  int covered = 0;
  double nominal = 0.0;
  for (const ResidualRow& r : set->rows) {
    const PredictionInterval p =
        IntervalFor(*set, IntervalKey{r.hardware_family, r.precision, r.framework, r.kind}, r.id);
    ASSERT_TRUE(p.available);
    const bool in = r.error >= p.error_low && r.error <= p.error_high;
    covered += in ? 1 : 0;
    nominal += p.coverage;
    std::printf("%-46s %-26s %+7.1f%% %+7.1f%% %+7.1f%% %4d %s\n", r.id.c_str(), p.group.c_str(),
                100 * r.error, 100 * p.error_low, 100 * p.error_high, p.runs, in ? "yes" : "NO");
  }
  const double n = static_cast<double>(set->rows.size());
  std::printf("\nleave-one-out coverage %d of %.0f (%.1f%%), nominal %.1f%% on average\n", covered,
              n, 100.0 * covered / n, 100.0 * nominal / n);
  EXPECT_GE(n, 50);
  // Split-conformal intervals cover a left-out exchangeable run with their nominal probability;
  // the runs of one source are not exchangeable with another's, so allow 10 points below it.
  EXPECT_GE(covered / n, nominal / n - 0.10);
}

}  // namespace
}  // namespace shardsim
