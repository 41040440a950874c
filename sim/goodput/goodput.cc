#include "sim/goodput/goodput.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "sim/base/units.h"

namespace shardsim {
namespace {

constexpr double kSecondsPerDay = 86400.0;

// log Phi(x), the standard normal CDF, accurate in both tails.
double LogNormalCdf(double x) {
  const double t = x / std::numbers::sqrt2;
  return x < 0.0 ? std::log(0.5 * std::erfc(-t)) : std::log1p(-0.5 * std::erfc(t));
}

double Or(const std::optional<double>& v, double fallback) { return v ? *v : fallback; }

std::string Sec(double s) { return FormatSeconds(Seconds(s)); }

double ExpectedMaxByIntegration(double n) {
  // E[max] = integral of x · n phi(x) Phi(x)^(n-1) dx; Simpson's rule on [-10, 10] (the density
  // of the maximum of up to 2^40 samples lies well inside) in steps of 0.01, which agree with
  // steps of 0.002 to 1e-14 for n from 2 to 2^24.
  constexpr double kLo = -10.0, kHi = 10.0;
  constexpr int kSteps = 2000;
  constexpr double h = (kHi - kLo) / kSteps;
  const double log_n = std::log(n);
  const double log_norm = -0.5 * std::log(2.0 * std::numbers::pi);
  const auto log_density = [&](int i) {  // log of the integrand over x at x_i
    const double x = kLo + h * i;
    return log_n + log_norm - 0.5 * x * x + (n - 1.0) * LogNormalCdf(x);
  };
  // The left tail adds nothing: where the log density is below -800, exp() is +0 exactly (it
  // underflows below about -745.13), so the term is -0 and leaves the sum as it is. On x <= 0 the
  // log density increases with x (-x^2/2 and log Phi(x) both do), so the points to skip are the
  // first ones: found by bisection (11 evaluations instead of up to 1,001; n = 16,384 skips the
  // points below x = 1.7). The sum is the same double as over every point
  // (tests/goodput/goodput_test.cc holds it to the full loop).
  constexpr double kNegligible = -800.0;
  int first = 0;
  for (int hi = kSteps / 2 + 1; first < hi;) {  // the first point at or above kNegligible
    const int mid = first + (hi - first) / 2;
    if (log_density(mid) < kNegligible) {
      first = mid + 1;
    } else {
      hi = mid;
    }
  }
  double sum = 0.0;
  for (int i = first; i <= kSteps; ++i) {
    const double x = kLo + h * i;
    const double f = x * std::exp(log_density(i));
    const double w = (i == 0 || i == kSteps) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
    sum += w * f;
  }
  return sum * h / 3.0;
}

// The storage and restart figures EstimateGoodput resolved (the scenario's or the defaults).
struct Resolved {
  double rate = 0.0;          // unexpected interruptions per GPU-hour
  double node_bw = 0.0;       // checkpoint write bandwidth per node, B/s
  double aggregate_bw = 0.0;  // the file system's, B/s
  double restart_time = 0.0;  // s, before the checkpoint is read back
};

// Why `g` (FeasibleGoodput false) cannot finish: the figures that decide it and where each came
// from (the scenario's keys or the defaults).
std::string InfeasibleReason(const Scenario& sc, const Goodput& g, const Resolved& f,
                             double step_s) {
  const ReliabilitySpec& rel = sc.reliability;
  const StorageSpec& st = sc.storage;
  const double mtbf = *g.job_mtbf_s;
  std::string o =
      "goodput: the run cannot finish: the job MTBF, " + Sec(mtbf) + " = 1 / (" +
      FormatSci(f.rate) + " unexpected interruptions per GPU-hour (" +
      (rel.interruptions_per_gpu_hour ? std::string("reliability.interruptions_per_gpu_hour")
                                      : std::string("default: Llama 3, arXiv 2407.21783 §3.3.4")) +
      ") x " + std::to_string(sc.gpus) + " GPUs), is ";
  const bool node_bound = g.checkpoint.per_node / f.node_bw >= g.checkpoint.total / f.aggregate_bw;
  const std::string read =
      node_bound ? FormatBytes(Bytes(g.checkpoint.per_node)) + " per node at " +
                       FormatRate(f.node_bw, "B/s") + " (" +
                       (st.write_bandwidth_per_node ? "storage.write_bandwidth_per_node"
                                                    : "default node write bandwidth") +
                       ")"
                 : FormatBytes(Bytes(g.checkpoint.total)) + " at " +
                       FormatRate(f.aggregate_bw, "B/s") + " (" +
                       (st.aggregate_write_bandwidth ? "storage.aggregate_write_bandwidth"
                                                     : "default aggregate write bandwidth") +
                       ")";
  if (mtbf <= g.restart_s) {
    o += "not longer than a restart, " + Sec(g.restart_s) + " = restart time " +
         Sec(f.restart_time) + " (" +
         (rel.restart_time ? std::string("reliability.restart_time")
                           : std::string("default, an assumption")) +
         ") + reading the checkpoint back " + Sec(g.checkpoint_write_s) + " (" + read +
         "): each interruption expects another before training resumes";
  } else {
    o += "not longer than one step and its checkpoint, " + Sec(step_s) + " + " +
         Sec(g.checkpoint_blocking_s) + " (checkpoint write: " + read +
         "): no checkpoint period expects to end before an interruption";
  }
  return o;
}

}  // namespace

double YoungInterval(double write_s, double mtbf_s) { return std::sqrt(2.0 * write_s * mtbf_s); }

double DalyInterval(double write_s, double mtbf_s) {
  if (write_s >= 2.0 * mtbf_s) return mtbf_s;
  const double r = write_s / (2.0 * mtbf_s);
  return YoungInterval(write_s, mtbf_s) * (1.0 + std::sqrt(r) / 3.0 + r / 9.0) - write_s;
}

double DalyEfficiency(double interval_s, double write_s, double mtbf_s, double restart_s) {
  const double wall =
      mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((interval_s + write_s) / mtbf_s);
  return wall > 0.0 ? interval_s / wall : 1.0;
}

double LostPerInterruption(double interval_s, double write_s, double restart_s) {
  return restart_s + 0.5 * (interval_s + write_s);
}

double ExpectedMaxStdNormal(double n) {
  if (n <= 1.0) return 0.0;
  return ExpectedMaxByIntegration(n);
}

double StragglerFactor(double cv, double n) { return 1.0 + cv * ExpectedMaxStdNormal(n); }

double DefaultStragglerCv() { return kPrismSlowdown / kPrismExpectedMax; }

CheckpointSize CheckpointBytes(const MemoryBudget& memory, const Scenario& sc) {
  CheckpointSize c;
  const double bytes_per_param = memory.weight_bytes_per_param + memory.optimizer_bytes_per_param;
  const double ranks_per_stage =
      static_cast<double>(sc.gpus) / static_cast<double>(std::max<size_t>(1, memory.stages.size()));
  for (const StageMemory& s : memory.stages) {
    const double dense = static_cast<double>(s.params - s.expert_params);
    const double expert = static_cast<double>(s.expert_params);
    const double per_gpu =
        bytes_per_param *
        (dense / static_cast<double>(std::max<int64_t>(1, memory.zero_shards)) +
         expert / static_cast<double>(std::max<int64_t>(1, memory.expert_zero_shards)));
    c.per_gpu = std::max(c.per_gpu, per_gpu);
    c.total += per_gpu * ranks_per_stage;
  }
  c.per_node = c.per_gpu * static_cast<double>(std::min(sc.gpus, sc.topology.gpus_per_node));
  return c;
}

Result<Goodput> EstimateGoodput(const Scenario& sc, const MemoryBudget& memory, double step_time_s,
                                std::optional<double> expected_max) {
  if (!(step_time_s > 0.0) || !std::isfinite(step_time_s)) {
    return Status::Invalid("goodput: the step time must be positive, got " +
                           FormatSig(step_time_s, 4));
  }
  const ReliabilitySpec& rel = sc.reliability;
  const StorageSpec& st = sc.storage;
  const double gpus = static_cast<double>(sc.gpus);
  Goodput g;
  const double rate = Or(rel.interruptions_per_gpu_hour, kDefaultInterruptionsPerGpuHour);
  const double planned = Or(rel.planned_interruptions_per_gpu_hour, kDefaultPlannedPerGpuHour);
  g.rate_source = rel.interruptions_per_gpu_hour || rel.planned_interruptions_per_gpu_hour
                      ? "reliability block"
                      : "default: Llama 3 (arXiv 2407.21783 §3.3.4), 419 unexpected and 47 planned "
                        "in 54 days on 16,384 GPUs";
  g.interruptions_per_day = rate * gpus * 24.0;
  g.planned_interruptions_per_day = planned * gpus * 24.0;
  if (rate > 0.0) g.job_mtbf_s = 3600.0 / (rate * gpus);

  // The checkpoint: written at the slower of the busiest node's and the file system's bandwidth.
  g.checkpoint = CheckpointBytes(memory, sc);
  const double node_bw = Or(st.write_bandwidth_per_node, kDefaultNodeWriteBandwidth);
  const double aggregate_bw = Or(st.aggregate_write_bandwidth, kDefaultAggregateWriteBandwidth);
  const double host_bw = Or(st.host_copy_bandwidth, kDefaultHostCopyBandwidth);
  const auto from = [](const std::optional<double>& v, const char* fallback) {
    return std::string(v ? "storage block" : fallback);
  };
  g.storage_source = FormatRate(node_bw, "B/s") + " per node (" +
                     from(st.write_bandwidth_per_node, "default, an assumption") + "), " +
                     FormatRate(aggregate_bw, "B/s") + " aggregate (" +
                     from(st.aggregate_write_bandwidth, "default: Llama 3 §3.3.1, Tectonic") + ")";
  if (rel.async_checkpoint) {
    g.storage_source += ", " + FormatRate(host_bw, "B/s") + " device to host per GPU (" +
                        from(st.host_copy_bandwidth, "default, an assumption") + ")";
  }
  g.checkpoint_write_s =
      std::max(g.checkpoint.per_node / node_bw, g.checkpoint.total / aggregate_bw);
  g.checkpoint_blocking_s =
      rel.async_checkpoint ? g.checkpoint.per_gpu / host_bw : g.checkpoint_write_s;
  const double restart_time = Or(rel.restart_time, kDefaultRestartSeconds);
  g.restart_s = restart_time + g.checkpoint_write_s;
  g.restart_source = rel.restart_time ? "reliability block" : "default: 10 min, an assumption";
  // An async checkpoint is durable only once its background write ends: an interruption during
  // that write loses the period before it as well, about one write more per interruption.
  const double extra_lost = rel.async_checkpoint ? g.checkpoint_write_s : 0.0;
  const double restart_cost = g.restart_s + extra_lost;

  // The interval: the scenario's, or Daly's optimum; whole steps, and (async) no shorter than a
  // write, which must end before the next checkpoint starts.
  std::optional<double> interval = rel.checkpoint_interval;
  g.interval_from_scenario = interval.has_value();
  if (!interval && g.job_mtbf_s) interval = DalyInterval(g.checkpoint_blocking_s, *g.job_mtbf_s);
  if (interval) {
    if (rel.async_checkpoint) interval = std::max(*interval, g.checkpoint_write_s);
    g.checkpoint_interval_steps = std::max<int64_t>(1, std::llround(*interval / step_time_s));
    g.checkpoint_interval_s = static_cast<double>(g.checkpoint_interval_steps) * step_time_s;
  }

  double eff = 1.0;
  if (g.job_mtbf_s) {
    eff = DalyEfficiency(*g.checkpoint_interval_s, g.checkpoint_blocking_s, *g.job_mtbf_s,
                         restart_cost);
  } else if (g.checkpoint_interval_s) {
    eff = *g.checkpoint_interval_s / (*g.checkpoint_interval_s + g.checkpoint_blocking_s);
  }
  if (g.checkpoint_interval_s) {
    g.lost_per_interruption_s =
        LostPerInterruption(*g.checkpoint_interval_s, g.checkpoint_blocking_s, restart_cost);
  }
  // Planned interruptions checkpoint first: each costs a restart, no work.
  eff /= 1.0 + planned * gpus / 3600.0 * g.restart_s;
  g.effective_training_time = eff;

  g.straggler_cv = rel.straggler_cv ? *rel.straggler_cv : DefaultStragglerCv();
  g.straggler_source = rel.straggler_cv ? "reliability block"
                                        : "default: PRISM (arXiv 2510.15596), the slowest of "
                                          "65,536 GPUs 9% slower than the mean";
  g.straggler_ranks = sc.gpus;
  g.straggler_expected_max = expected_max ? *expected_max : ExpectedMaxStdNormal(gpus);
  g.straggler_factor = 1.0 + g.straggler_cv * g.straggler_expected_max;
  g.fraction = eff / g.straggler_factor;
  if (g.job_mtbf_s &&
      !FeasibleGoodput(*g.job_mtbf_s, g.restart_s, step_time_s, g.checkpoint_blocking_s)) {
    g.feasible = false;
    g.fraction = 0.0;
    g.effective_training_time = 0.0;  // as the fraction: no time trains
    g.infeasible_reason =
        InfeasibleReason(sc, g, Resolved{rate, node_bw, aggregate_bw, restart_time}, step_time_s);
  }
  g.lost_s_per_day = kSecondsPerDay * (1.0 - g.fraction);
  return g;
}

bool FeasibleGoodput(double mtbf_s, double restart_s, double step_s, double checkpoint_pause_s) {
  return mtbf_s > restart_s && mtbf_s > step_s + checkpoint_pause_s;
}

std::string ExplainGoodput(const Scenario& sc, const Goodput& g, double ideal_s) {
  std::string o = "Goodput (sim/goodput; docs/goodput.md)\n";
  const auto line = [&](const std::string& s) { o += "  " + s + "\n"; };
  line("interruptions: " + FormatSig(g.interruptions_per_day, 4) + " unexpected and " +
       FormatSig(g.planned_interruptions_per_day, 4) + " planned per day on " +
       std::to_string(sc.gpus) + " GPUs (" + g.rate_source + ")");
  line("job MTBF: " + (g.job_mtbf_s ? Sec(*g.job_mtbf_s) + " = 1 / (rate per GPU-hour x GPUs)"
                                    : std::string("none (no unexpected interruptions)")));
  line("checkpoint: weights + optimizer state, " + FormatBytes(Bytes(g.checkpoint.total)) +
       " in all, " + FormatBytes(Bytes(g.checkpoint.per_gpu)) + " per GPU, " +
       FormatBytes(Bytes(g.checkpoint.per_node)) + " per node (fully parallel save)");
  line("checkpoint write: " + Sec(g.checkpoint_write_s) +
       " = max(per node / node bandwidth, total / aggregate): " + g.storage_source);
  if (sc.reliability.async_checkpoint) {
    line("async: training pauses " + Sec(g.checkpoint_blocking_s) +
         " per checkpoint (device-to-host copy); the write runs behind it");
  }
  if (g.checkpoint_interval_s) {
    line("checkpoint interval: " + Sec(*g.checkpoint_interval_s) + " (" +
         std::to_string(g.checkpoint_interval_steps) + " steps; " +
         (g.interval_from_scenario
              ? std::string("reliability.checkpoint_interval")
              : "Daly 2006 (higher-order optimum) from the pause and the MTBF; Young 1974: " +
                    Sec(YoungInterval(g.checkpoint_blocking_s, g.job_mtbf_s.value_or(0.0)))) +
         ")");
  } else {
    line("checkpoint interval: none needed (no interruptions to recover from)");
  }
  line("restart: " + Sec(g.restart_s) + " = restart time + reading the checkpoint back (" +
       g.restart_source + ")");
  if (g.job_mtbf_s) {
    line("lost per interruption: " + Sec(g.lost_per_interruption_s) +
         " = restart + half a checkpoint period" +
         (sc.reliability.async_checkpoint ? " + the write in flight" : ""));
  }
  line("effective training time: " + FormatSig(100.0 * g.effective_training_time, 4) +
       "% (Daly 2006's expected wall time, planned restarts included)");
  line("stragglers: x" + FormatSig(g.straggler_factor, 5) + " = 1 + cv " +
       FormatSig(g.straggler_cv, 4) + " x E[max of " + std::to_string(g.straggler_ranks) +
       " standard normals] " + FormatSig(g.straggler_expected_max, 4) + " (" + g.straggler_source +
       ")");
  line("goodput: " + FormatSig(100.0 * g.fraction, 4) + "% = effective time / straggler factor; " +
       Sec(g.lost_s_per_day) + " lost per day");
  if (!g.feasible) {
    line(
        "infeasible (FeasibleGoodput: the MTBF must exceed the restart and one step + its "
        "checkpoint pause): " +
        g.infeasible_reason);
    return o;
  }
  line("time to train: " + Sec(ideal_s / g.fraction) + " booked = " + Sec(ideal_s) +
       " ideal / goodput");
  return o;
}

}  // namespace shardsim
