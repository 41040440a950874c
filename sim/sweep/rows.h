// One result row per sweep point, as CSV or JSON Lines, and back.
//
// A row holds the point's index (its place in the unsharded enumeration), every input the sweep
// varies, the outcome (ok, no_fit, pruned, invalid, error, outranked, cannot_finish), every
// scalar output of `simulate`
// (docs/reference.md §4 keys, flattened: breakdown_s.tp_comm -> tp_comm_s, memory.breakdown.weights
// -> weights_bytes), the largest bottleneck and, for infeasible points, the reason; then the
// metrics added since (kFirstTrailingMetric on), so that earlier columns keep their places. Numbers
// are written in their shortest round-trip form (std::to_chars), so a row formatted, parsed and
// formatted again is the same bytes, and equal results give equal files at any thread count.
// A row never contains a line break: files are read back line by line (resume, merge).
#ifndef SHARDSIM_SWEEP_ROWS_H_
#define SHARDSIM_SWEEP_ROWS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/status.h"

namespace shardsim {

enum class PointStatus {
  kOk,       // simulated, fits in memory
  kNoFit,    // simulated, its peak memory exceeds the capacity
  kPruned,   // not simulated: memory it needs before any activation already exceeds the capacity
  kInvalid,  // not simulated: the scenario reader or ValidateScenario refused it
  kError,    // the simulation failed
  // not simulated (`sweep --prune-to-top K`): the bound of its ranking figure is worse than the
  // K-th best simulated point's, so it cannot enter the top K (sim/sweep/top_k.h)
  kOutranked,
  // simulated and fits, but with training.tokens the run cannot finish (Goodput::feasible false,
  // sim/goodput/goodput.h): simulate reports the step and exits 1. The row has the step's
  // outputs (no booked time to train or GPU-hours; goodput 0) and the reason "goodput: ...".
  kCannotFinish,
};
// "ok", "no_fit", "pruned", "invalid", "error", "outranked", "cannot_finish"
const char* Name(PointStatus s);
bool Feasible(PointStatus s);   // kOk: the only status ranked
bool Simulated(PointStatus s);  // kOk, kNoFit, kCannotFinish: the row has the step's outputs

// The numeric outputs, in column order.
enum class Metric {
  kGpus,
  kStepTime,
  kTokensPerS,
  kTokensPerSPerGpu,
  kTflopsPerGpu,
  kMfu,
  kHfu,
  kPeakFlopsPerGpu,
  kBubbleFraction,
  kMicrobatchesPerStep,
  kPeakMemory,
  kMemoryCapacity,
  kMemoryHeadroom,
  kWeights,
  kGradients,
  kOptimizer,
  kActivations,
  kCompute,
  kRecompute,
  kTpComm,
  kCpComm,
  kEpComm,
  kPpComm,
  kPipelineBubble,
  kDpComm,
  kParamGather,
  kOptimizerStep,
  kModelFlops,
  kHardwareFlops,
  kSixNd,
  kTokensPerStep,
  kTimeToTrain,       // as booked (over the goodput)
  kGpuHours,          // as booked
  kTimeToTrainIdeal,  // goodput 1 (sim/goodput)
  kGoodput,
  kInterruptionsPerDay,
  kJobMtbf,
  kCheckpointWrite,
  kCheckpointInterval,
  kLostPerDay,
  kStragglerFactor,
  kSimulatedTasks,
  kBottleneckShare,
  // Written after `reason` (added after the columns above; a file's earlier columns keep their
  // places): what the kernels executed (simulate's executed_tflops_per_gpu and
  // executed_fraction_of_peak) and HFU's FLOPs over them (flops_convention_over_executed: above
  // 1, an MFU or HFU counts work the kernels skip; sim/report/flops_note.h).
  kExecutedTflopsPerGpu,
  kExecutedFractionOfPeak,
  kFlopsConventionOverExecuted,
  kCount
};
inline constexpr size_t kMetricCount = static_cast<size_t>(Metric::kCount);
// The first metric written after `bottleneck` and `reason`.
inline constexpr size_t kFirstTrailingMetric = static_cast<size_t>(Metric::kExecutedTflopsPerGpu);
const char* ColumnName(Metric m);  // "tokens_per_s", "tp_comm_s", ...

struct Row {
  int64_t point = 0;
  std::vector<std::string> inputs;  // parallel to the sweep's input columns
  PointStatus status = PointStatus::kOk;
  std::array<double, kMetricCount> metrics;  // NaN: not known for this point
  std::string bottleneck;                    // the largest, "tp all_reduce", "pipeline_bubble", ...
  std::string reason;                        // infeasible points: "<group>: <details>"

  Row() { metrics.fill(kAbsent); }
  double operator[](Metric m) const { return metrics[static_cast<size_t>(m)]; }
  double& operator[](Metric m) { return metrics[static_cast<size_t>(m)]; }
  bool has(Metric m) const;
  static const double kAbsent;
};

enum class RowFormatKind { kCsv, kJsonl };
// How RowFormat::Parse's message starts for a JSON Lines row of an older shardsim: every key in
// order but the ones added at the end of a row since.
inline constexpr std::string_view kOlderRowMessage =
    "the row lacks the fields added at the end of a row since it was written";
// The format a result file's name promises: .csv, or .jsonl / .json / .ndjson; none otherwise.
std::optional<RowFormatKind> FormatOfName(const std::string& path);

class RowFormat {
 public:
  RowFormat(RowFormatKind kind, std::vector<std::string> input_columns);

  RowFormatKind kind() const { return kind_; }
  const std::vector<std::string>& input_columns() const { return inputs_; }
  // CSV: the header line (with its line break); JSON Lines: "".
  std::string Header() const;
  // One line, with its line break.
  std::string Format(const Row& row) const;
  // What a line formatted for point `point` with `inputs` starts with: a resumed file must hold
  // exactly these inputs at each point.
  std::string Prefix(int64_t point, const std::vector<std::string>& inputs) const;
  // A line without its line break. Errors: malformed lines, unknown status, wrong columns.
  Result<Row> Parse(std::string_view line) const;

 private:
  RowFormatKind kind_;
  std::vector<std::string> inputs_;
  std::vector<std::string> names_;  // every column, in order
  // Per metric: the input column that already holds it (a `gpus` axis), written once; -1 none.
  std::array<int, kMetricCount> metric_input_;
};

// Shortest text that reads back as exactly `v` ("0.6053", "1.7e+19", "1024").
std::string FormatNumber(double v);

// The input columns a result file was written with, read from its first line (the CSV header or
// the keys of the first JSON line): the names between "point" and "status". nullopt when the line
// is not of this format.
std::optional<std::vector<std::string>> InputColumnsOf(std::string_view first_line,
                                                       RowFormatKind kind);

// The note simulate prints beside MFU / HFU (sim/report/flops_note.h) for a row: "" unless its
// flops_convention_over_executed is above 1.
std::string FlopsNoteOf(const Row& row);

// The reason text of a failed status, for a row: its first diagnostic, and how many more.
std::string StatusReason(const Status& s);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_ROWS_H_
