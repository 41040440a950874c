// Checking a sweep spec against the scenario reader before any point runs, and the "probe"
// documents that make those checks (and the layout enumeration) independent of the base layout.
//
// A probe is the base scenario with a permissive layout (gpus = dp*tp*pp*cp, every degree 1,
// schedule 1f1b, micro-batch 1, even pipeline split) under the values being checked, adjusted so
// that the layout itself cannot be what fails: a GPU count gets dp = gpus, an expert-parallel
// degree gets dp = ep, an interleaved schedule gets pp = virtual_stages = 2. What still fails at
// a checked value is the value's own fault: a wrong type, unit or enum, an unknown key or name,
// or a conflict no layout can fix (tp not dividing the heads, pp not dividing the layers).
// Layout combinations a framework refuses are not spec errors: they are counted infeasible
// points of the sweep.
#ifndef SHARDSIM_SWEEP_SPEC_CHECK_H_
#define SHARDSIM_SWEEP_SPEC_CHECK_H_

#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/loader.h"

namespace shardsim {

struct SweepSpec;

// A scenario key set to a YAML value.
struct Assignment {
  std::string key;
  std::string yaml;
};

// Where ScenarioDocument::Set locates a value it set: diagnostics about it carry this file name.
std::string SetLocation(const std::string& key);

// The base under `assignments` with a permissive layout for every layout key they leave open.
// Fails only when a Set fails (a key path through a scalar).
Result<ScenarioDocument> ProbeDocument(const ScenarioDocument& base,
                                       const std::vector<Assignment>& assignments);

// Every axis value and the base checked as described above; kInvalidInput with each problem
// located in the sweep file (or the library file at fault).
Status CheckSweepSpec(const SweepSpec& spec, const LoadOptions& options);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_SPEC_CHECK_H_
