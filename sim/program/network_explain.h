// What the step's network did (`simulate --explain`): per kind of communication (category, group
// and op), the algorithm NCCL runs, its phases, the links each phase crosses with the bytes it and
// its replicas put on each (sim/program/step_links.h), and from the run: how many instances ran,
// their time, the class of the link that bounded them (RunResult::BoundBy) and the most flows
// that crossed that link at once.
#ifndef SHARDSIM_PROGRAM_NETWORK_EXPLAIN_H_
#define SHARDSIM_PROGRAM_NETWORK_EXPLAIN_H_

#include <string>

#include "sim/engine/run_result.h"
#include "sim/program/step_program.h"

namespace shardsim {

std::string ExplainNetwork(const StepProgram& program, const RunResult& run);

}  // namespace shardsim

#endif  // SHARDSIM_PROGRAM_NETWORK_EXPLAIN_H_
