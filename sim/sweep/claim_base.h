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
  int64_t claim_seq_len = 0;  // the sequence the claim's text states (0: none); wins over seq_len
};

// The base scenario of the search: `setup`'s model, hardware, topology (default: the hardware
// file's default_topology) and GPUs; the sequence the claim states, else seq_len, else
// kClaimDefaultSeqLen (or a learned position table's shorter length) with a warning written to
// `*warning`; about 4M tokens per step unless global_batch is given (ClaimDefaultGlobalBatch).
// Errors: an unknown accelerator or model, an accelerator naming no default_topology.
Result<ScenarioDocument> ClaimBaseScenario(const ClaimSetup& setup, const LoadOptions& load,
                                           std::string* warning);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_CLAIM_BASE_H_
