// Predicted vs published for every complete run of tests/reference/runs.yaml (scenarios in this
// folder, published figures and each source's FLOPs convention in published.json and
// CONVENTIONS.md). Prints the table the README shows and holds the tolerance of the issue: the
// median absolute error at most 10%, no row off by more than 25% except the known outliers named
// in published.json with a reason found in their source (at most one run in ten).
//
// Each source reports a throughput (TFLOP/s under its own FLOPs formula, MFU, or tokens/s) that
// is its formula's FLOPs over the step time, so predicted and published compare through the step
// time: error = published step time / predicted step time - 1 (positive: shardsim predicts a
// faster step). The source-convention figure is printed beside it, computed from the predicted
// step time with the source's formula; ConventionsReproducePublished checks those formulas
// against the published numbers themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/model/flops.h"
#include "sim/report/simulate.h"

namespace shardsim {
namespace {

const std::string kDir = std::string(SHARDSIM_SOURCE_DIR) + "/tests/validation/";

nlohmann::json Runs() {
  std::ifstream in(kDir + "published.json");
  return nlohmann::json::parse(in)["runs"];
}

double Value(const nlohmann::json& field) {
  return field.is_null() ? NAN : field["value"].get<double>();
}

// Per-optimizer-step FLOPs as the run's source counts them (CONVENTIONS.md), from the scenario.
double SourceFlops(const std::string& convention, const Scenario& sc) {
  const double b = static_cast<double>(sc.training.global_batch);
  const double s = static_cast<double>(sc.training.seq_len);
  const double l = static_cast<double>(sc.model.num_layers);
  const double h = static_cast<double>(sc.model.hidden_size);
  const ModelSpec& m = sc.model;
  if (convention == "megatron_hfu_full_recompute")
    return MegatronFullRecomputeFlops(b, s, l, h, 51200);
  if (convention == "bloom_megatron_tflops") return MegatronFullRecomputeFlops(b, s, l, h, 250880);
  if (convention == "korthikanti_mfu_hfu") return MegatronModelFlops(b, s, l, h, 51200);
  if (convention == "nemo_model_tflops") {
    if (m.activation != Activation::kSwiglu) return MegatronModelFlops(b, s, l, h, 51200);
    // NeMo flops_formulas.py (Llama): s·L·h²·(12 + 12·G/H + 18·F/h + 12·s/h + 6·V/(L·h)).
    const double v = m.vocab_size == 128256 ? 128256 : 32000;
    const double g = static_cast<double>(m.num_kv_heads) / static_cast<double>(m.num_heads);
    const double f = static_cast<double>(m.ffn_hidden_size) / h;
    return b * s * l * h * h * (12 + 12 * g + 18 * f + 12 * s / h + 6 * v / (l * h));
  }
  return NAN;  // mosaic_mfu, tokens_only: compared through tokens/s
}

struct Row {
  std::string id, convention, metric;
  double published_metric = NAN, predicted_metric = NAN;
  double t_pub = 0, t_pred = 0, err = 0;
  std::string outlier;
};

// Every run of published.json, simulated.
std::vector<Row> SimulatedRows() {
  std::vector<Row> rows;
  for (const auto& r : Runs()) {
    Row row;
    row.id = r["id"];
    row.convention = r["convention"];
    if (!r["known_outlier"].is_null()) row.outlier = r["known_outlier"];
    auto sc = LoadScenario(kDir + r["scenario"].get<std::string>(), LoadOptions{});
    EXPECT_TRUE(sc.ok()) << row.id << ": " << sc.status().ToString();
    if (!sc.ok()) return {};
    auto sim = Simulate(*sc);
    EXPECT_TRUE(sim.ok()) << row.id << ": " << sim.status().ToString();
    if (!sim.ok()) return {};
    row.t_pred = sim->step_time.value();
    const double tokens = sim->tokens_per_step;
    row.t_pub = Value(r["step_time_s"]);
    if (std::isnan(row.t_pub)) {
      row.t_pub = tokens / (Value(r["tokens_per_s_per_gpu"]) * static_cast<double>(sc->gpus));
    }
    row.err = row.t_pub / row.t_pred - 1.0;
    // The source's own figure: TFLOP/s, else MFU, else tokens/s per GPU.
    for (const char* k : {"tflops_per_gpu", "mfu", "tokens_per_s_per_gpu"}) {
      if (r[k].is_null()) continue;
      row.metric = k;
      row.published_metric = Value(r[k]);
      row.predicted_metric = row.published_metric * row.t_pub / row.t_pred;
      break;
    }
    rows.push_back(row);
  }
  return rows;
}

TEST(ReferenceRuns, PredictedVsPublished) {
  const std::vector<Row> rows = SimulatedRows();
  ASSERT_FALSE(rows.empty());
  std::printf("\n%-46s %-28s %-13s %10s %10s %9s %9s %7s\n", "run", "convention", "metric",
              "published", "predicted", "t pub", "t pred", "error");
  std::vector<double> errs, all;
  int outliers = 0;
  for (const Row& r : rows) {
    std::printf("%-46s %-28s %-13s %10.4g %10.4g %8.3gs %8.3gs %+6.1f%%%s\n", r.id.c_str(),
                r.convention.c_str(), r.metric.c_str(), r.published_metric, r.predicted_metric,
                r.t_pub, r.t_pred, r.err * 100.0, r.outlier.empty() ? "" : "  [known outlier]");
    all.push_back(std::fabs(r.err));
    if (!r.outlier.empty()) {
      ++outliers;
      continue;
    }
    errs.push_back(std::fabs(r.err));
    EXPECT_LE(std::fabs(r.err), 0.25) << r.id;
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  std::printf(
      "\n%zu runs, %d known outliers; median |error| %.1f%% (all rows %.1f%%), worst %.1f%%\n",
      rows.size(), outliers, median(errs) * 100, median(all) * 100,
      *std::max_element(errs.begin(), errs.end()) * 100);
  std::string last;
  for (const Row& r : rows) {
    if (r.outlier.empty()) continue;
    if (r.outlier != last) std::printf("known outlier, because: %s\n", r.outlier.c_str());
    std::printf("  - %s\n", r.id.c_str());
    last = r.outlier;
  }
  EXPECT_LE(median(errs), 0.10);
  EXPECT_LE(outliers * 10, static_cast<int>(rows.size()));
  EXPECT_EQ(rows.size(), 60u);  // every complete run of runs.yaml
}

// The README's "Training runs" table is this test's table: each run's line there must be the
// line printed here (so a change that moves a figure updates the README with it). On a mismatch
// the expected line is printed; tests/validation/update_readme_table.py applies them.
std::string MarkdownRow(const Row& r) {
  char line[512];
  std::snprintf(line, sizeof line, "| %s%s | %s | %s | %.4g | %.4g | %.3gs | %.3gs | %+.1f%% |",
                r.id.c_str(), r.outlier.empty() ? "" : " (known outlier)", r.convention.c_str(),
                r.metric.c_str(), r.published_metric, r.predicted_metric, r.t_pub, r.t_pred,
                r.err * 100.0);
  return line;
}

TEST(ReferenceRuns, ReadmeTableIsCurrent) {
  std::ifstream in(std::string(SHARDSIM_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in.good());
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  const std::vector<Row> rows = SimulatedRows();
  ASSERT_FALSE(rows.empty());
  for (const Row& r : rows) {
    const std::string prefix = "| " + r.id + " ";
    auto it = std::find_if(lines.begin(), lines.end(),
                           [&](const std::string& l) { return l.rfind(prefix, 0) == 0; });
    ASSERT_NE(it, lines.end()) << "README.md has no row for " << r.id;
    EXPECT_EQ(*it, MarkdownRow(r)) << "README.md's row for " << r.id << " is stale";
  }
}

// The published figures are consistent with the formulas CONVENTIONS.md says each source used:
// the formula at the published step time gives the published TFLOP/s or MFU (within 2%).
TEST(ReferenceRuns, ConventionsReproducePublished) {
  int checked = 0;
  for (const auto& r : Runs()) {
    const std::string conv = r["convention"];
    auto sc = LoadScenario(kDir + r["scenario"].get<std::string>(), LoadOptions{});
    ASSERT_TRUE(sc.ok());
    const double flops = SourceFlops(conv, *sc);
    const double t = Value(r["step_time_s"]);
    if (std::isnan(flops) || std::isnan(t)) continue;
    const double per_gpu = flops / t / static_cast<double>(sc->gpus);
    if (!r["tflops_per_gpu"].is_null()) {
      EXPECT_NEAR(per_gpu / 1e12 / Value(r["tflops_per_gpu"]), 1.0, 0.02) << r["id"];
    } else if (!r["mfu"].is_null()) {
      EXPECT_NEAR(per_gpu / 312e12 / Value(r["mfu"]), 1.0, 0.02) << r["id"];
    } else {
      continue;
    }
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

}  // namespace
}  // namespace shardsim
