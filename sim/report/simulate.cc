#include "sim/report/simulate.h"

#include <utility>

#include "sim/program/step_run.h"
#include "sim/report/step_metrics.h"

namespace shardsim {

Result<SimResult> Simulate(const Scenario& sc, const SimOptions& options) {
  Result<Plan> plan = MakePlan(sc);  // parallel
  if (!plan.ok()) return plan.status();
  return Simulate(sc, std::make_shared<const Plan>(std::move(*plan)), options);
}

Result<SimResult> Simulate(const Scenario& sc, std::shared_ptr<const Plan> plan,
                           const SimOptions& options) {
  ProgramOptions po;
  po.every_rank = options.every_rank;
  Result<StepRun> step = RunStep(sc, std::move(plan), po);  // program, memory, engine
  if (!step.ok()) return step.status();
  return MeasureStep(sc, std::move(*step), options.straggler_expected_max);  // report
}

Result<SimResult> Simulate(const Scenario& sc, std::shared_ptr<const Plan> plan,
                           MemoryBudget memory, const SimOptions& options) {
  ProgramOptions po;
  po.every_rank = options.every_rank;
  Result<StepRun> step = RunStep(sc, std::move(plan), po, std::move(memory));
  if (!step.ok()) return step.status();
  return MeasureStep(sc, std::move(*step), options.straggler_expected_max);
}

}  // namespace shardsim
