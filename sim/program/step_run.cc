#include "sim/program/step_run.h"

#include <string>
#include <utility>
#include <vector>

#include "sim/hardware/op_cost.h"
#include "sim/schedule/schedule.h"

namespace shardsim {
namespace {

// The engine knows tasks and links, not files: when a step outgrows its clock, the error it
// returns names the task and its links. Here it gets the place to change: the key of the input
// behind that resource (a link's bandwidth in the topology, or the GPU's rates in the hardware),
// located at where that value was written, with the value as read.
Status WithInputsBehindClock(const Scenario& sc, const Status& status) {
  if (status.ok() ||
      status.message().find("longer than the engine's clock holds") == std::string::npos) {
    return status;
  }
  const std::string& m = status.message();
  struct Input {
    const Origins* origins;
    std::string key;
    std::string value;
  };
  std::vector<Input> inputs;
  const auto on = [&](LinkClass c) { return m.find(Name(c)) != std::string::npos; };
  if (on(LinkClass::kNvlink)) {
    inputs.push_back({&sc.topology.origins, "intra_node.bandwidth",
                      FormatRate(sc.topology.intra_bandwidth, "B/s")});
  }
  if (on(LinkClass::kNic) || on(LinkClass::kPcie) || on(LinkClass::kLeafUplink) ||
      on(LinkClass::kPodUplink)) {
    inputs.push_back({&sc.topology.origins, "inter_node.nic_bandwidth",
                      FormatRate(sc.topology.nic_bandwidth, "B/s")});
  }
  if (inputs.empty()) {  // a compute task: the GPU's own rates
    const auto peak = sc.hardware.peak_flops.find(sc.training.precision);
    if (peak != sc.hardware.peak_flops.end()) {
      inputs.push_back({&sc.hardware.origins,
                        std::string("peak_flops.") + Name(sc.training.precision),
                        FormatRate(peak->second, "FLOP/s")});
    }
    inputs.push_back({&sc.hardware.origins, "memory.bandwidth",
                      FormatRate(sc.hardware.memory_bandwidth, "B/s")});
  }
  std::string where;
  for (const Input& in : inputs) {
    const KeyOrigin o = in.origins->Get(in.key);
    where += (where.empty() ? "" : ", ") + in.key + " (" + in.value + ", " +
             (o.loc.ToString().empty() ? std::string("default") : o.loc.ToString()) + ")";
  }
  const KeyOrigin first = inputs.front().origins->Get(inputs.front().key);
  return Status::Invalid(m + "; the inputs behind it: " + where, first.loc, first.source_line);
}

}  // namespace

Result<StepRun> RunStep(const Scenario& sc, std::shared_ptr<const Plan> plan,
                        const ProgramOptions& options, std::optional<MemoryBudget> given) {
  const OpCostModel hw(sc.hardware);
  Result<StepCosts> costs = PriceStep(sc, *plan, hw);
  if (!costs.ok()) return costs.status();
  // The run orders the budget walks (a split backward's) and the program runs, built once.
  OrderCache orders;
  ProgramOptions po = options;
  if (po.orders == nullptr) po.orders = &orders;
  Result<MemoryBudget> memory = given.has_value()
                                    ? Result<MemoryBudget>(std::move(*given))
                                    : EstimateMemory(*plan, sc.model, sc.training, sc.parallel,
                                                     sc.hardware, sc.framework, po.orders);
  if (!memory.ok()) return memory.status();
  Result<FlopsSummary> flops = SummarizeFlops(sc.model, sc.training);
  if (!flops.ok()) return flops.status();
  Result<StepProgram> prog = BuildStepProgram(sc, *plan, *costs, hw, *memory, po);
  if (!prog.ok()) return prog.status();
  auto program = std::make_shared<StepProgram>(std::move(*prog));
  Result<RunResult> run = program->engine.Run();
  if (!run.ok()) return WithInputsBehindClock(sc, run.status());
  StepRun out;
  out.plan = std::move(plan);
  out.costs = std::move(*costs);
  out.memory = std::move(*memory);
  out.flops = *flops;
  out.program = std::move(program);
  out.run = std::make_shared<RunResult>(std::move(*run));
  ApplyBounds(*out.program, *out.run);
  return out;
}

}  // namespace shardsim
