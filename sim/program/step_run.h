// The step as it ran: the plan's step priced (sim/program/step_costs.h), its memory
// (sim/memory), its task graph (step_program.h) and the engine's run of it. What the run means
// (step time, MFU, where the time went) is sim/report's (step_metrics.h).
#ifndef SHARDSIM_PROGRAM_STEP_RUN_H_
#define SHARDSIM_PROGRAM_STEP_RUN_H_

#include <memory>
#include <optional>

#include "sim/base/status.h"
#include "sim/config/spec.h"
#include "sim/engine/run_result.h"
#include "sim/memory/budget.h"
#include "sim/model/flops.h"
#include "sim/parallel/plan.h"
#include "sim/program/step_costs.h"
#include "sim/program/step_program.h"

namespace shardsim {

struct StepRun {
  std::shared_ptr<const Plan> plan;
  StepCosts costs;
  MemoryBudget memory;  // closed form (sim/memory)
  FlopsSummary flops;
  std::shared_ptr<const StepProgram> program;  // the task graph that ran
  std::shared_ptr<const RunResult> run;
};

// Prices `plan`'s step, estimates its memory, builds its task graph and runs it. Errors: those
// of each step; a step longer than the engine's clock names the inputs behind the resource
// that overflowed it (the topology's bandwidth, the GPU's rates), located. `memory`, when given,
// is the plan's budget as EstimateMemory gave it to the caller (a sweep prunes on it first): used
// as is instead of estimated again.
Result<StepRun> RunStep(const Scenario& scenario, std::shared_ptr<const Plan> plan,
                        const ProgramOptions& options,
                        std::optional<MemoryBudget> memory = std::nullopt);

}  // namespace shardsim

#endif  // SHARDSIM_PROGRAM_STEP_RUN_H_
