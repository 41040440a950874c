// The HTML report of a sweep (`shardsim sweep ... --html FILE`): throughput against GPUs or
// against memory headroom as a scatter with the Pareto front, infeasible points greyed with
// their reason on hover, the top-k table, the infeasible points grouped by reason, and the layout
// of any point on a click. One self-contained file like the simulate report (html_report.h).
//
// The sweep (sim/sweep, a higher module) fills a SweepHtmlInput from its results: one point per
// evaluated scenario, in point order, with the inputs it varied and the outputs of simulate. The
// report ranks the points and finds the fronts of its two charts itself (2-D: throughput vs GPUs,
// throughput vs headroom; the sweep's own front is 3-D), so it needs nothing else of the sweep.
// From a sweep result row (sim/sweep/rows.h, Row): inputs = row.inputs; gpus = kGpus;
// feasible = status ok; simulated = status ok, no_fit or cannot_finish (Simulated); reason =
// row.reason (e.g. "does not fit: ..."); step_time_s, tokens_per_s, tokens_per_s_per_gpu, mfu =
// kStepTime, kTokensPerS, kTokensPerSPerGpu, kMfu; executed_fraction, convention_over_executed =
// kExecutedFractionOfPeak, kFlopsConventionOverExecuted; peak_memory_bytes = kPeakMemory when known
// (pruned points may carry the memory check's estimate); capacity_bytes = kMemoryCapacity;
// time_to_train_s = kTimeToTrain; time_to_train_ideal_s = kTimeToTrainIdeal; goodput = kGoodput;
// cost from the price per GPU-hour; bottleneck = row.bottleneck.
#ifndef SHARDSIM_REPORT_HTML_SWEEP_H_
#define SHARDSIM_REPORT_HTML_SWEEP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardsim {

struct SweepHtmlPoint {
  std::vector<std::string>
      inputs;  // values of SweepHtmlInput::input_keys, as written ("8", "full")
  int64_t gpus = 0;
  bool feasible = false;   // simulated and fits in memory
  std::string reason;      // why not, when infeasible ("does not fit: 92.1 GiB of 79.0 GiB")
  bool simulated = false;  // the outputs below are set (a point can be simulated and not fit)
  double step_time_s = 0.0;
  double tokens_per_s = 0.0;
  double tokens_per_s_per_gpu = 0.0;
  double mfu = 0.0;
  // What the kernels executed over the dense peak (0..1), and HFU's FLOPs over those executed
  // (above 1: the published conventions count work the kernels skip; sim/report/flops_note.h).
  // 0: not known.
  double executed_fraction = 0.0;
  double convention_over_executed = 0.0;
  double peak_memory_bytes = 0.0;  // simulated peak, or the memory check's estimate; 0: unknown
  double capacity_bytes = 0.0;     // memory per GPU
  std::optional<double> time_to_train_s;        // as booked
  std::optional<double> time_to_train_ideal_s;  // at goodput 1
  std::optional<double> goodput;                // ideal over booked (sim/goodput)
  std::optional<double> cost;  // of the whole run, when a price per GPU-hour was given
  std::string bottleneck;      // the largest exposed cost in words, if known

  bool HasMemory() const { return peak_memory_bytes > 0.0 && capacity_bytes > 0.0; }
  double HeadroomBytes() const { return capacity_bytes - peak_memory_bytes; }
};

enum class SweepRankBy { kTokensPerS, kTimeToTrain, kCost, kTimeToTrainIdeal, kGoodput };

struct SweepHtmlInput {
  std::string title;        // the sweep's name or file
  std::string description;  // the base scenario in one line: model, hardware, what is swept
  std::vector<std::string> input_keys;  // dotted keys the sweep varied ("parallel.tp")
  std::vector<SweepHtmlPoint> points;   // in point order
  SweepRankBy rank_by = SweepRankBy::kTokensPerS;
  size_t top_k = 20;
  // Points of the top table within this fraction of the best on the ranking figure are marked
  // as ties (shardsim's stated uncertainty, sim/sweep/uncertainty.h); 0: not marked.
  double tie_fraction = 0.0;
};

// The group of an infeasible point's reason: the text up to its first ": " ("parallel.tp: 3
// does not divide ..." -> "parallel.tp"), as the sweep's text output groups them
// (sim/sweep/ranking.h ReasonGroup).
std::string ReasonGroupOf(const std::string& reason);

// The axes of a Pareto front: throughput (higher is better) against GPUs (fewer is better) or
// against memory headroom (more is better).
enum class ParetoAxes { kThroughputVsGpus, kThroughputVsHeadroom };

// Indices of the feasible points that no other feasible point dominates (at least as good on
// both axes, better on one), ordered by the x axis. Equal points are all on the front. Points
// without a memory estimate take no part in kThroughputVsHeadroom.
std::vector<size_t> ParetoFront(const std::vector<SweepHtmlPoint>& points, ParetoAxes axes);

// Indices of the feasible points, best first by `rank_by` (tokens/s descending, time to train or
// cost ascending; points without the figure last; ties in point order), at most `top_k`.
std::vector<size_t> RankPoints(const SweepHtmlInput& report);

std::string SweepHtml(const SweepHtmlInput& report);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_HTML_SWEEP_H_
