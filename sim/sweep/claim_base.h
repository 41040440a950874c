// The scenario `check-claim` searches when it is given a model, an accelerator and a GPU count
// instead of a scenario file (`--model M --hardware H --gpus N`): the CLI and the Python module
// build it the same way.
#ifndef SHARDSIM_SWEEP_CLAIM_BASE_H_
#define SHARDSIM_SWEEP_CLAIM_BASE_H_

#include <cstdint>
#include <string>

#include "sim/base/status.h"
#include "sim/config/loader.h"

namespace shardsim {

struct ClaimSetup {
  std::string model, hardware, topology, precision = "bf16";
  int64_t gpus = 0, seq_len = 0, global_batch = 0;  // 0 = the default
};

// The usual cluster of each library accelerator, when --topology is not given ("" when none).
std::string DefaultTopology(const std::string& hardware);

// The base scenario of the search: `setup`'s model, hardware, topology (default:
// DefaultTopology) and GPUs, the model's max_seq_len unless seq_len is given, and about 4M tokens
// per step unless global_batch is given. Errors: an unknown accelerator or model, no default
// cluster for the accelerator.
Result<ScenarioDocument> ClaimBaseScenario(const ClaimSetup& setup, const LoadOptions& load);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_CLAIM_BASE_H_
