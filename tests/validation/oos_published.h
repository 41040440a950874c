// The out-of-sample runs (tests/validation/oos/): their published figures (published.csv) and
// each one simulated, once per test binary, for the out-of-sample table (out_of_sample_test.cc)
// and the residuals behind the prediction intervals (residuals_test.cc).
//
// error = published step time / predicted step time - 1 (positive: shardsim predicts a faster
// step), the published step time being global batch x sequence / (tokens/s/GPU x GPUs).
#ifndef SHARDSIM_TESTS_VALIDATION_OOS_PUBLISHED_H_
#define SHARDSIM_TESTS_VALIDATION_OOS_PUBLISHED_H_

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/base/units.h"
#include "sim/config/loader.h"
#include "sim/report/interval.h"
#include "sim/report/simulate.h"

namespace shardsim {

inline const std::string kOosDir = std::string(SHARDSIM_SOURCE_DIR) + "/tests/validation/oos/";

struct OosPublished {
  std::string id, system, kind;  // kind: dense or moe
  std::string source;            // Megatron-Bridge, MLPerf Training v5.0 or v5.1
  double tokens_per_s_per_gpu = 0.0;
  double model_tflops_per_gpu = 0.0;  // 0 where the source prints none (MLPerf)
};

inline std::vector<OosPublished> ReadOosPublished() {
  std::ifstream in(kOosDir + "published.csv");
  EXPECT_TRUE(in.good()) << kOosDir << "published.csv";
  std::vector<OosPublished> rows;
  bool header = false;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      header = true;  // id,system,tokens_per_s_per_gpu,model_tflops_per_gpu,kind,source
      continue;
    }
    std::stringstream s(line);
    OosPublished p;
    std::string tokens, tflops;
    std::getline(s, p.id, ',');
    std::getline(s, p.system, ',');
    std::getline(s, tokens, ',');
    std::getline(s, tflops, ',');
    std::getline(s, p.kind, ',');
    std::getline(s, p.source, ',');
    EXPECT_TRUE(p.kind == "dense" || p.kind == "moe") << p.id << ": kind '" << p.kind << "'";
    // A misspelt source would open a summary line of its own.
    EXPECT_TRUE(p.source == "Megatron-Bridge" || p.source == "MLPerf Training v5.0" ||
                p.source == "MLPerf Training v5.1")
        << p.id << ": source '" << p.source
        << "': expected Megatron-Bridge, MLPerf Training v5.0 or MLPerf Training v5.1";
    p.tokens_per_s_per_gpu = std::stod(tokens);
    p.model_tflops_per_gpu = tflops.empty() ? 0.0 : std::stod(tflops);
    rows.push_back(p);
  }
  return rows;
}

// One out-of-sample run, simulated.
struct OosRun {
  OosPublished pub;
  IntervalKey key;  // what its residual depends on (sim/report/interval.h)
  double tokens_pred = 0.0;
  double step_pub = 0.0, step_pred = 0.0;
  double error = 0.0;
  bool fits = true;
  double peak_gib = 0.0, capacity_gib = 0.0;
};

// Every row of published.csv simulated from its scenario (a row that does not load or simulate
// fails the calling test and is left out). Simulated on the first call; the same rows after.
inline const std::vector<OosRun>& OosRuns() {
  static const std::vector<OosRun> runs = [] {
    std::vector<OosRun> out;
    for (const OosPublished& p : ReadOosPublished()) {
      Result<Scenario> sc = LoadScenario(kOosDir + p.id + ".yaml", LoadOptions{});
      EXPECT_TRUE(sc.ok()) << p.id << ": " << (sc.ok() ? "" : sc.status().message());
      if (!sc.ok()) continue;
      Result<SimResult> sim = Simulate(*sc);
      EXPECT_TRUE(sim.ok()) << p.id << ": " << (sim.ok() ? "" : sim.status().message());
      if (!sim.ok()) continue;
      OosRun r;
      r.pub = p;
      r.key = IntervalKeyOf(*sc);
      EXPECT_EQ(r.key.kind, p.kind) << p.id << ": published.csv's kind against the model's";
      r.tokens_pred = sim->tokens_per_s_per_gpu;
      r.step_pred = sim->step_time.value();
      r.step_pub = sim->tokens_per_step / (p.tokens_per_s_per_gpu * static_cast<double>(sc->gpus));
      r.error = r.step_pub / r.step_pred - 1.0;
      r.fits = sim->fits;
      r.peak_gib = sim->peak_memory.value() / kGiB;
      r.capacity_gib = sc->hardware.memory_capacity / kGiB;
      out.push_back(r);
    }
    return out;
  }();
  return runs;
}

}  // namespace shardsim

#endif  // SHARDSIM_TESTS_VALIDATION_OOS_PUBLISHED_H_
