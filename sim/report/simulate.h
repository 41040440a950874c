// `shardsim simulate`: one training step of a scenario, through the data flow of
// docs/architecture.md — the plan (sim/parallel/plan.h), the step priced, its memory, task graph
// and discrete-event run (sim/program/step_run.h) — and what came out (step_metrics.h): step
// time, throughput, MFU/HFU, bubble, memory over the step, and where the time went.
#ifndef SHARDSIM_REPORT_SIMULATE_H_
#define SHARDSIM_REPORT_SIMULATE_H_

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/base/units.h"
#include "sim/config/spec.h"
#include "sim/engine/run_result.h"
#include "sim/goodput/goodput.h"
#include "sim/memory/budget.h"
#include "sim/model/flops.h"
#include "sim/parallel/plan.h"
#include "sim/program/step_costs.h"
#include "sim/program/step_program.h"

namespace shardsim {

struct SimOptions {
  bool every_rank = false;  // simulate every (dp, cp, pp) rank instead of one pipeline
  // ExpectedMaxStdNormal(scenario.gpus) for the goodput's straggler factor, when the caller has
  // it (a sweep computes it once per GPU count); computed per step otherwise.
  std::optional<double> straggler_expected_max;
};

// The step's critical path by what it was doing; the fields sum to the step time.
struct Breakdown {
  Seconds compute;     // kernels of the reference device (the one with the most work)
  Seconds recompute;   // recompute forwards inside its backward passes
  Seconds tp, cp, ep;  // exposed communication inside its layers
  Seconds pp;          // pipeline transfers on the critical path
  Seconds dp;          // gradient reductions (and tied-embedding sync) on the critical path
  Seconds gather;      // parameter all-gathers (ZeRO-1/2 after the step, ZeRO-3 per layer)
  Seconds optimizer;
  Seconds bubble;  // waiting for other pipeline ranks' compute
  Seconds total() const {
    return compute + recompute + tp + cp + ep + pp + dp + gather + optimizer + bubble;
  }

  // The parts in the order every report lists them, with their names in each.
  struct Part {
    const char* key;    // `breakdown_s` key of the JSON output
    const char* label;  // as the text and HTML reports print it
    const char* kind;   // the HTML report's colour class (its timeline task kinds)
    Seconds seconds;
  };
  std::array<Part, 10> Parts() const {
    return {{{"compute", "compute", "compute", compute},
             {"recompute", "recompute", "recompute", recompute},
             {"tp_comm", "tp communication (exposed)", "tp", tp},
             {"cp_comm", "cp communication (exposed)", "cp", cp},
             {"ep_comm", "ep all-to-all (exposed)", "ep", ep},
             {"pp_comm", "pipeline transfers", "pp_send", pp},
             {"pipeline_bubble", "pipeline bubble", "idle", bubble},
             {"dp_comm", "gradient reduction (exposed)", "grad_reduce", dp},
             {"param_gather", "parameter gathers (exposed)", "param_gather", gather},
             {"optimizer", "optimizer step", "optimizer", optimizer}}};
  }
};

struct Bottleneck {
  std::string kind;        // "communication", "pipeline_bubble", "recompute", "optimizer"
  std::string collective;  // "tp all_reduce", "dp reduce_scatter", "pp send_recv", or ""
  std::string resource;  // link class ("nvlink (intra-node)", "nic (inter-node)"), "pipeline", ...
  Seconds exposed;
  double share = 0.0;  // exposed / step time
};

struct DeviceStats {
  int32_t device = 0;
  RankCoords coords;
  Seconds busy;            // compute stream busy time
  Bytes peak_activations;  // live activations at their peak, from the simulated timeline
  Bytes peak_memory;       // everything at that peak (model states, buffers, reserve)
  // (seconds, live activation bytes) at each change, for plots of memory over the step.
  std::vector<std::pair<double, double>> activation_timeline;
};

struct SimResult {
  Seconds step_time;
  double tokens_per_step = 0.0;
  double tokens_per_s = 0.0;
  double tokens_per_s_per_gpu = 0.0;
  double tflops_per_gpu = 0.0;      // model FLOPs (MFU convention) per second per GPU, in TFLOP/s
  double peak_flops_per_gpu = 0.0;  // the MFU denominator: dense peak of the training precision
  double mfu = 0.0;
  double hfu = 0.0;
  // What the kernels ran (FlopsSummary::executed_per_step: causal attention's unmasked half,
  // flash backward, elementwise) per second per GPU, in TFLOP/s, and over the peak. Unlike MFU
  // and HFU (published conventions that count attention as the full s x s square) it cannot
  // exceed peak x the largest sustained fraction (MaxSustainedFraction).
  double executed_tflops_per_gpu = 0.0;
  double executed_fraction = 0.0;
  double bubble_fraction = 0.0;  // breakdown.bubble over the busiest rank's own work (0: pp 1)
  FlopsSummary flops;
  MemoryBudget memory;  // closed form (sim/memory)
  StepCosts costs;
  Bytes peak_memory;  // worst device, from the simulated timeline
  int32_t worst_device = 0;
  bool fits = true;
  Breakdown breakdown;
  std::vector<Bottleneck> bottlenecks;                           // largest first
  std::vector<std::pair<std::string, Seconds>> exposed_by_link;  // link class -> seconds
  std::vector<DeviceStats> devices;
  int32_t reference_device = 0;
  // With training.tokens: the time to train as booked (the ideal time over the goodput), the
  // ideal one (steps x step time), the GPU-hours booked, and how the goodput was derived.
  std::optional<double> time_to_train_s;
  std::optional<double> time_to_train_ideal_s;
  std::optional<double> gpu_hours;
  std::optional<Goodput> goodput;
  int64_t tasks = 0;
  std::shared_ptr<const Plan> plan;            // the plan it ran (sim/parallel/plan.h)
  std::shared_ptr<const StepProgram> program;  // the task graph that ran (for traces)
  std::shared_ptr<const RunResult> run;
};

// The data flow of docs/architecture.md: the plan (MakePlan), then the step's prices, memory,
// task graph and run, then what came out.
Result<SimResult> Simulate(const Scenario& scenario, const SimOptions& options = {});
// The same on a plan already made of `scenario` (the sweep makes it to prune on memory first).
Result<SimResult> Simulate(const Scenario& scenario, std::shared_ptr<const Plan> plan,
                           const SimOptions& options = {});
// The same with the plan's memory budget already estimated (EstimateMemory of `plan` and the
// scenario's specs): the sweep's, which it prunes on before simulating.
Result<SimResult> Simulate(const Scenario& scenario, std::shared_ptr<const Plan> plan,
                           MemoryBudget memory, const SimOptions& options = {});

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_SIMULATE_H_
