// Sweep reports for the tests: a small real sweep (every point simulated through the loader and
// Simulate, as `shardsim sweep` does) and a large synthetic one that only measures the report.
#ifndef SHARDSIM_TESTS_HTML_SWEEP_POINTS_H_
#define SHARDSIM_TESTS_HTML_SWEEP_POINTS_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/units.h"
#include "sim/config/loader.h"
#include "sim/report/html_report.h"
#include "sim/report/html_sweep.h"
#include "sim/report/simulate.h"

namespace shardsim::testing {

// Llama-3-8B on 8 to 128 H100s (tests/html/data/sweep_base.yaml): every gpus x tp x pp x
// recompute, dp = gpus / (tp * pp). Layouts the loader rejects and layouts that do not fit are
// infeasible with the loader's message or the memory they need as the reason.
inline SweepHtmlInput SmallRealSweep() {
  SweepHtmlInput report;
  report.title = "llama3-8b on H100: GPUs x layout x recompute";
  report.description =
      "llama3-8b, h100-sxm (dgx-h100), seq 8192, global batch 256; gpus 8-128, "
      "tp 1-8, pp 1-4, recompute none/selective/full";
  report.input_keys = {"gpus", "parallel.tp", "parallel.pp", "parallel.dp", "training.recompute"};
  report.top_k = 10;
  Result<ScenarioDocument> base = ScenarioDocument::Parse(std::string(SHARDSIM_SOURCE_DIR) +
                                                          "/tests/html/data/sweep_base.yaml");
  if (!base.ok()) return report;
  LoadOptions lib;
  lib.library_dirs.push_back(SHARDSIM_SOURCE_DIR);
  for (int64_t gpus : {8, 16, 32, 64, 128}) {
    for (int64_t tp : {1, 2, 4, 8}) {
      for (int64_t pp : {1, 2, 4}) {
        for (const char* rc : {"none", "selective", "full"}) {
          const int64_t dp = std::max<int64_t>(1, gpus / (tp * pp));
          ScenarioDocument doc = *base;
          (void)doc.Set("gpus", std::to_string(gpus));
          (void)doc.Set("parallel.tp", std::to_string(tp));
          (void)doc.Set("parallel.pp", std::to_string(pp));
          (void)doc.Set("parallel.dp", std::to_string(dp));
          (void)doc.Set("training.recompute", rc);
          SweepHtmlPoint p;
          p.inputs = {std::to_string(gpus), std::to_string(tp), std::to_string(pp),
                      std::to_string(dp), rc};
          p.gpus = gpus;
          Result<Scenario> sc = doc.Build(lib);
          if (!sc.ok()) {
            p.reason = "invalid layout: " + sc.status().diagnostics().front().message;
            report.points.push_back(p);
            continue;
          }
          p.capacity_bytes = sc->hardware.memory_capacity;
          Result<SimResult> r = Simulate(*sc);
          if (!r.ok()) {
            p.reason = "not simulated: " + r.status().diagnostics().front().message;
            report.points.push_back(p);
            continue;
          }
          p.simulated = true;
          p.feasible = r->fits;
          p.step_time_s = r->step_time.value();
          p.tokens_per_s = r->tokens_per_s;
          p.tokens_per_s_per_gpu = r->tokens_per_s_per_gpu;
          p.mfu = r->mfu;
          p.peak_memory_bytes = r->peak_memory.value();
          p.time_to_train_s = r->time_to_train_s;
          p.bottleneck = BottleneckInWords(*r);
          if (!r->fits) p.reason = "does not fit in memory";
          report.points.push_back(p);
        }
      }
    }
  }
  return report;
}

// `n` synthetic points shaped like a layout sweep of a 70B model on 64 to 4,096 GPUs (throughput
// that grows with GPUs and falls with pipeline depth and recompute, memory that falls with
// sharding), about a third infeasible for one of four reasons. Deterministic. Its figures mean
// nothing: it measures the size and drawing time of the report, not the simulator.
inline SweepHtmlInput SyntheticSweep(size_t n) {
  SweepHtmlInput report;
  report.title = "synthetic sweep of " + std::to_string(n) + " points";
  report.description = "synthetic points (tests/html/sweep_points.h) to measure the report";
  report.input_keys = {"gpus",
                       "parallel.tp",
                       "parallel.pp",
                       "parallel.cp",
                       "parallel.zero_stage",
                       "training.micro_batch",
                       "training.recompute"};
  const char* kRecompute[] = {"none", "selective", "full"};
  const double gib = 1073741824.0;
  uint64_t state = 12345;
  auto noise = [&state]() {  // xorshift64: the same points on every machine
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return static_cast<double>(state % 10000) / 10000.0;
  };
  for (size_t i = 0; report.points.size() < n; ++i) {
    const int64_t gpus = int64_t{64} << (i % 7);
    const int64_t tp = int64_t{1} << ((i / 7) % 4);
    const int64_t pp = int64_t{1} << ((i / 28) % 5);
    const int64_t cp = int64_t{1} << ((i / 140) % 2);
    const int64_t zero = static_cast<int64_t>((i / 280) % 4);
    const int64_t mb = int64_t{1} << ((i / 1120) % 3);
    const int64_t rc = static_cast<int64_t>((i / 3360) % 3);
    SweepHtmlPoint p;
    p.inputs = {std::to_string(gpus), std::to_string(tp), std::to_string(pp), std::to_string(cp),
                std::to_string(zero), std::to_string(mb), kRecompute[rc]};
    p.gpus = gpus;
    p.capacity_bytes = 80.0 * gib;
    const double states =
        70e9 * (4.0 + 12.0 / (zero >= 1 ? 8.0 : 1.0)) / static_cast<double>(tp * pp);
    const double acts = 12.0 * gib * static_cast<double>(mb) / static_cast<double>(tp * cp) *
                        (rc == 0   ? 1.0
                         : rc == 1 ? 0.4
                                   : 0.1);
    p.peak_memory_bytes = states + acts + 3.0 * gib;
    if (tp * pp * cp > gpus) {
      p.reason = "gpus is not dp*tp*pp*cp";
      p.peak_memory_bytes = 0;
    } else if (tp == 8 && cp == 2) {
      p.reason = "tp*cp spans more than one node";
      p.peak_memory_bytes = 0;
    } else {
      p.simulated = true;
      const double eff = 0.55 * (1.0 - 0.04 * std::log2(static_cast<double>(pp))) *
                         (rc == 2   ? 0.78
                          : rc == 1 ? 0.96
                                    : 1.0) *
                         (1.0 - 0.03 * std::log2(static_cast<double>(gpus) / 64.0)) *
                         (0.9 + 0.1 * noise());
      p.tokens_per_s_per_gpu = eff * 989e12 / (6.0 * 70e9);
      p.tokens_per_s = p.tokens_per_s_per_gpu * static_cast<double>(gpus);
      p.mfu = eff;
      p.step_time_s = 4.0 * 1024 * 8192 / p.tokens_per_s;
      p.feasible = p.peak_memory_bytes <= p.capacity_bytes;
      if (!p.feasible) p.reason = "does not fit in memory";
    }
    report.points.push_back(p);
  }
  return report;
}

}  // namespace shardsim::testing

#endif  // SHARDSIM_TESTS_HTML_SWEEP_POINTS_H_
