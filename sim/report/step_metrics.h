// What a step's run means: step time, throughput, MFU and HFU (model and hardware FLOPs over the
// dense peak of the training precision), the pipeline bubble, memory at the simulated peak of
// each device, the critical path split by what it was doing (Breakdown), the exposed time per
// link class and the bottleneck rows, and with training.tokens the time to train over the
// goodput (sim/goodput).
#ifndef SHARDSIM_REPORT_STEP_METRICS_H_
#define SHARDSIM_REPORT_STEP_METRICS_H_

#include <optional>

#include "sim/base/status.h"
#include "sim/config/spec.h"
#include "sim/program/step_run.h"
#include "sim/report/simulate.h"

namespace shardsim {

// Errors: the goodput's (EstimateGoodput) with training.tokens. `straggler_expected_max`: as
// SimOptions::straggler_expected_max.
Result<SimResult> MeasureStep(const Scenario& scenario, StepRun step,
                              std::optional<double> straggler_expected_max = std::nullopt);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_STEP_METRICS_H_
