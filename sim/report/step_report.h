// `shardsim simulate` output: a compact table for people, JSON with the keys of docs/reference.md
// §4 for programs, and a Chrome/Perfetto trace of the step (one process per simulated device, one
// track per stream).
#ifndef SHARDSIM_REPORT_STEP_REPORT_H_
#define SHARDSIM_REPORT_STEP_REPORT_H_

#include <string>

#include "sim/config/spec.h"
#include "sim/report/interval.h"
#include "sim/report/simulate.h"

namespace shardsim {

// `interval` (optional): the step time's prediction interval (sim/report/interval.h), printed
// beside the step time and MFU, and in JSON as step_time_interval_s, mfu_interval and
// step_time_interval_basis.
std::string SimulateText(const Scenario& scenario, const SimResult& result,
                         const PredictionInterval* interval = nullptr);
std::string SimulateJson(const Scenario& scenario, const SimResult& result,
                         const PredictionInterval* interval = nullptr);
// Chrome trace event format (JSON object with "traceEvents"); opens in chrome://tracing and
// ui.perfetto.dev. Times in microseconds.
std::string ChromeTrace(const Scenario& scenario, const SimResult& result);
// The per-layer pricing behind the step: each layer kind's forward/backward times with their
// parts, and each op's time and cost model (`--explain`).
std::string ExplainStep(const Scenario& scenario, const SimResult& result);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_STEP_REPORT_H_
