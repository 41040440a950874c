// The accuracy shardsim states for its throughput predictions, shared by check-claim (its
// verdicts) and the sweep ranking (points within it of the best are ties).
#ifndef SHARDSIM_SWEEP_UNCERTAINTY_H_
#define SHARDSIM_SWEEP_UNCERTAINTY_H_

namespace shardsim {

// The fallback when no validation residuals are given: ±15%, between the validation table's
// median and worst held error. With residuals (hardware/calibration/residuals.json), check-claim
// uses the prediction interval of the scenario's group of runs (sim/report/interval.h) instead.
inline constexpr double kStatedUncertainty = 0.15;
inline constexpr const char* kUncertaintySource =
    "the validation table of tests/validation/ (predicted vs published runs)";

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_UNCERTAINTY_H_
