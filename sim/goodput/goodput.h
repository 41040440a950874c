// Goodput: the time to train as booked, from the ideal one. A long run loses time to
// interruptions (the work since the last checkpoint is redone, the job restarts and reads its
// checkpoint back), to the checkpoints themselves, and to slow ranks that every synchronized step
// waits for. This module turns a scenario's `reliability:` and `storage:` blocks (or the defaults
// below) and the model state each rank holds (sim/memory's budget) into those costs.
//
// Sources, and the defaults derived from them:
// - Interruptions. Llama 3 (Dubey et al. 2024, arXiv 2407.21783 §3.3.4): 466 job interruptions
//   in a 54-day snapshot of pre-training on 16,384 H100: 419 unexpected, 47 planned; effective
//   training time above 90%. Per GPU-hour: 419 / (54 · 24 · 16,384) = 1.973e-5 unexpected and
//   47 / (54 · 24 · 16,384) = 2.21e-6 planned. A job's rate is that times its GPUs (independent
//   components: the job stops when any of them fails); its MTBF the inverse.
// - Checkpoint storage. Llama 3 §3.3.1: Tectonic sustains 2 TB/s (7 TB/s peak) of checkpoint
//   writes: the default aggregate limit. Per node: 25 GB/s (one 200 Gb/s storage port), an
//   assumption; device-to-host copy (async checkpoints): 25 GB/s per GPU (PCIe Gen5 x16, 64 GB/s
//   per direction, shared by two GPUs on an HGX H100 board, at 80%), an assumption.
// - Checkpoint contents: weights and optimizer state (not gradients), each byte once: a fully
//   parallel save (Megatron-Core's distributed checkpoint, --ckpt-fully-parallel-save) spreads the
//   replicas' copies over the data-parallel ranks, so each rank writes its ZeRO shard of the
//   stage's model state whatever the ZeRO stage.
// - Restart. 10 minutes before the checkpoint is read (detection, rescheduling onto spares,
//   process and communicator start-up): an assumption (Llama 3 does not publish it); the read
//   then runs at the write bandwidths.
// - Checkpoint interval and expected wall time. Young 1974 (CACM 17(9), "A first order
//   approximation to the optimum checkpoint interval"): tau = sqrt(2 · delta · M) for a write of
//   delta seconds and a job MTBF of M. Daly 2006 (FGCS 22(3), "A higher order estimate of the
//   optimum checkpoint interval for restart dumps"), its higher-order optimum: tau = sqrt(2 delta
//   M) · (1 + (1/3) sqrt(delta / (2M)) + (1/9) (delta / (2M))) - delta for delta < 2M, else M; its
//   expected wall time (exponential failures, restart R): wall time per tau of work = M e^(R/M)
//   (e^((tau + delta)/M) - 1), whose first order is (tau + delta)(1 + (R + (tau + delta)/2) / M):
//   each interruption loses half a period and a restart. Tests: tests/goodput/goodput_test.cc.
// - Stragglers. PRISM (Golden et al. 2025, arXiv 2510.15596): 9% GPU-time variability at 64K
//   GPUs. Model: each rank's step time is normal with mean 1 and standard deviation cv; a step
//   synchronizes all ranks (the data-parallel reduction and the pipeline flush), so it lasts the
//   expected maximum of n = gpus samples, 1 + cv · E[max of n standard normals] (Gumbel 1958;
//   computed exactly by quadrature of x · n phi(x) Phi(x)^(n-1)). The default cv makes the slowest
//   of 65,536 ranks 9% slower than the mean: cv = 0.09 / E_65536 = 0.0219.
#ifndef SHARDSIM_GOODPUT_GOODPUT_H_
#define SHARDSIM_GOODPUT_GOODPUT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "sim/base/status.h"
#include "sim/config/spec.h"
#include "sim/memory/budget.h"

namespace shardsim {

// Defaults (sources above).
inline constexpr double kLlama3Gpus = 16384.0;
inline constexpr double kLlama3SnapshotHours = 54.0 * 24.0;
inline constexpr double kDefaultInterruptionsPerGpuHour =
    419.0 / (kLlama3SnapshotHours * kLlama3Gpus);
inline constexpr double kDefaultPlannedPerGpuHour = 47.0 / (kLlama3SnapshotHours * kLlama3Gpus);
inline constexpr double kDefaultRestartSeconds = 600.0;
inline constexpr double kDefaultNodeWriteBandwidth = 25e9;       // bytes/s
inline constexpr double kDefaultAggregateWriteBandwidth = 2e12;  // bytes/s (Tectonic, sustained)
inline constexpr double kDefaultHostCopyBandwidth = 25e9;        // bytes/s per GPU
inline constexpr double kPrismSlowdown = 0.09;  // the slowest of kPrismGpus ranks over the mean
inline constexpr double kPrismGpus = 65536.0;
// ExpectedMaxStdNormal(kPrismGpus), the same double (tests/goodput/goodput_test.cc holds it to the
// integral): a constant, so that the first simulation of a process does not pay for the integral
// twice.
inline constexpr double kPrismExpectedMax = 0x1.12a1dcdaaba7cp+2;  // 4.2911293158964519

// Closed forms (seconds). Young 1974's optimum interval; Daly 2006's higher-order one; Daly
// 2006's fraction of wall time that is work, tau / (M e^(R/M) (e^((tau + delta)/M) - 1)); the
// work lost per interruption to first order, R + (tau + delta) / 2.
double YoungInterval(double write_s, double mtbf_s);
double DalyInterval(double write_s, double mtbf_s);
double DalyEfficiency(double interval_s, double write_s, double mtbf_s, double restart_s);
double LostPerInterruption(double interval_s, double write_s, double restart_s);
// E[max of n independent standard normals] (0 for n = 1; 1/sqrt(pi) for n = 2). The integral
// costs 0.3-0.6 M instructions (the fewer for large n, whose zero left tail is skipped), as much
// as a small step: a caller that needs it for the same GPU count many times (a sweep) computes
// it once and passes it to EstimateGoodput.
double ExpectedMaxStdNormal(double n);
// 1 + cv · ExpectedMaxStdNormal(n): the step of n synchronized ranks over one rank's mean.
double StragglerFactor(double cv, double n);
// The default straggler_cv: kPrismSlowdown / ExpectedMaxStdNormal(kPrismGpus) (kPrismExpectedMax).
double DefaultStragglerCv();

// What the model state a checkpoint holds weighs: per GPU (the busiest pipeline stage), per node
// (gpus_per_node GPUs of that stage) and for the whole job, in bytes.
struct CheckpointSize {
  double per_gpu = 0.0;
  double per_node = 0.0;
  double total = 0.0;
};
CheckpointSize CheckpointBytes(const MemoryBudget& memory, const Scenario& sc);

struct Goodput {
  double fraction = 1.0;                 // ideal time / booked time
  double effective_training_time = 1.0;  // of that, interruptions and checkpoints only (the
                                         // Llama 3 paper's "effective training time")
  double interruptions_per_day = 0.0;    // unexpected, for the job
  double planned_interruptions_per_day = 0.0;
  std::optional<double> job_mtbf_s;  // mean time between unexpected interruptions (none: 0 rate)
  CheckpointSize checkpoint;
  double checkpoint_write_s = 0.0;     // one checkpoint to storage
  double checkpoint_blocking_s = 0.0;  // training paused per checkpoint (the write, or async: the
                                       // device-to-host copy)
  std::optional<double> checkpoint_interval_s;  // training between checkpoints (none: no failures
                                                // and no interval set)
  int64_t checkpoint_interval_steps = 0;
  bool interval_from_scenario = false;
  double restart_s = 0.0;                // restart_time + reading the checkpoint back
  double lost_per_interruption_s = 0.0;  // restart + half a period (+ an async write in flight)
  double lost_s_per_day = 0.0;           // 86,400 · (1 - fraction)
  double straggler_factor = 1.0;
  double straggler_cv = 0.0;
  int64_t straggler_ranks = 0;          // ranks each step synchronizes
  double straggler_expected_max = 0.0;  // ExpectedMaxStdNormal(straggler_ranks)
  // Where each input came from, for --explain ("scenario", "topology", "default (Llama 3 ...)").
  std::string rate_source, restart_source, storage_source, straggler_source;
  // Whether the run can finish (FeasibleGoodput): false when the job MTBF is not longer than a
  // restart, or than the least work a checkpoint can save (one step and its checkpoint pause).
  // Then `fraction` is 0, and `infeasible_reason` names the figures and where each came from.
  bool feasible = true;
  std::string infeasible_reason;
};

// The rule behind Goodput::feasible, one for every scenario: a job whose MTBF M is not longer
// than its restart R (restart time + reading the checkpoint back) expects to be interrupted again
// before it runs (Daly 2006's wall time grows as e^(R/M)); one whose M is not longer than a step
// plus its checkpoint pause (the least work a checkpoint can save) expects to lose every period
// it works (e^((tau + delta)/M) with tau >= one step). Either way the run does not finish.
bool FeasibleGoodput(double mtbf_s, double restart_s, double step_s, double checkpoint_pause_s);

// The goodput of `sc` with steps of `step_time_s` (> 0) and its memory budget. `expected_max`:
// ExpectedMaxStdNormal(sc.gpus) when the caller has it (computed here otherwise). Errors: none
// today beyond an invalid step time (kInvalidInput); the reader bounds every input. A run that
// cannot finish is not an error: the result says so (Goodput::feasible).
Result<Goodput> EstimateGoodput(const Scenario& sc, const MemoryBudget& memory, double step_time_s,
                                std::optional<double> expected_max = std::nullopt);

// How each figure was derived, one line each (`simulate --explain`).
std::string ExplainGoodput(const Scenario& sc, const Goodput& g, double ideal_time_to_train_s);

}  // namespace shardsim

#endif  // SHARDSIM_GOODPUT_GOODPUT_H_
