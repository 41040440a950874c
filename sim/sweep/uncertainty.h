// The accuracy shardsim states for its throughput predictions, shared by check-claim (its
// verdicts) and the sweep ranking (points within it of the best are ties).
#ifndef SHARDSIM_SWEEP_UNCERTAINTY_H_
#define SHARDSIM_SWEEP_UNCERTAINTY_H_

namespace shardsim {

// The validation table of tests/validation/ (predicted vs published step time of every
// reference run) is where the lead publishes the median and worst error; 15% until that
// table's figures replace it.
inline constexpr double kStatedUncertainty = 0.15;
inline constexpr const char* kUncertaintySource =
    "the validation table of tests/validation/ (predicted vs published runs)";

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_UNCERTAINTY_H_
