// Prediction intervals for the step time, drawn from the validation residuals.
//
// The residuals are the errors of the validation table (tests/validation/reference_runs_test.cc:
// error = published step time / predicted - 1, positive when shardsim predicts a faster step),
// one per held run, with what each depends on: the hardware family (the hardware name up to its
// first '-': a100, h100, ...), the precision class (bf16 and fp16 share one: same tensor-core
// rate; fp8; mxfp8; nvfp4; fp32), the framework that ran it (published.json's `framework`) and
// the model kind (dense, or moe for a mixture of experts: the out-of-sample runs show errors of
// another spread there, tests/validation/oos/). The shipped file is
// hardware/calibration/residuals.json, written by the validation test (Residuals.FileIsCurrent,
// which fails when it is stale) from the reference runs and the out-of-sample runs.
//
// An interval for a scenario comes from the most specific group of runs of its kind that holds
// at least kMinGroupRuns: (family, precision, framework), then (family, precision), then
// (family), then every run of the kind, the last labelled as hardware without validation runs
// (every run, whatever its kind, when the file holds none of the kind). Within the group, the
// split-conformal interval (Vovk et al. 2005; Lei et al. 2018, "Distribution-free predictive
// inference for regression", JASA, §2.2): with the n errors sorted, [e_(k), e_(n+1-k)] where
// k = floor((n + 1) * (1 - kIntervalCoverage) / 2), at least 1. It covers a new run of the group
// with probability (n + 1 - 2k) / (n + 1) when the runs are exchangeable; that nominal coverage
// is part of the basis. The step time then lies in [t (1 + e_low), t (1 + e_high)].
// Tested in tests/report/interval_test.cc (closed form) and tests/validation/ (leave-one-out
// coverage on the validation runs).
#ifndef SHARDSIM_REPORT_INTERVAL_H_
#define SHARDSIM_REPORT_INTERVAL_H_

#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/spec.h"

namespace shardsim {

inline constexpr double kIntervalCoverage = 0.8;  // the nominal coverage aimed at
inline constexpr int kMinGroupRuns = 5;           // fewer runs: the next, wider group

struct ResidualRow {
  std::string id;
  std::string hardware_family;  // "a100", "h100", ...
  std::string precision;        // PrecisionClass: "bf16/fp16", "fp8", "mxfp8", "nvfp4", "fp32"
  std::string framework;        // "megatron", "nemo", "torchtitan", "fsdp", ...
  double error = 0.0;           // published step time / predicted - 1
  std::string kind = "dense";   // ModelKind: "dense" or "moe"
};

struct ResidualSet {
  std::string file;  // where it was read from ("" when built in memory)
  std::vector<ResidualRow> rows;
};

// What an interval depends on.
struct IntervalKey {
  std::string hardware_family, precision, framework;
  std::string kind = "dense";
};
std::string HardwareFamily(const std::string& hardware_name);  // "h100-sxm" -> "h100"
std::string PrecisionClass(DType precision);                   // kBf16, kFp16 -> "bf16/fp16"
// The scenario's framework (its `framework:` key; megatron, DESIGN.md §6's default, without one),
// as hardware/calibration/residuals.json names the groups.
std::string ScenarioFramework(const Scenario& scenario);
// "moe" for a model with routed experts (`model.moe`), else "dense".
std::string ModelKind(const Scenario& scenario);
IntervalKey IntervalKeyOf(const Scenario& scenario);

struct PredictionInterval {
  bool available = false;                    // false: no residuals (the basis' note says why)
  double error_low = 0.0, error_high = 0.0;  // e_(k), e_(n+1-k)
  double median_error = 0.0;
  double coverage = 0.0;  // nominal: (n + 1 - 2k) / (n + 1)
  int runs = 0;
  std::string group;                // "h100 fp8 nemo", "h100", "gb300 moe", "all dense runs"
  std::string kind;                 // the kind of the runs drawn on: "dense", "moe", or "any"
  bool hardware_validated = false;  // the group holds runs of the scenario's hardware family
  std::string note;                 // one line for people: the group and what it lacks
  std::string source;               // the residuals file

  // The step time (seconds) within the interval: [t (1 + e_low), t (1 + e_high)].
  double StepLow(double t) const { return t * (1.0 + error_low); }
  double StepHigh(double t) const { return t * (1.0 + error_high); }
};

// The interval for `key` from `set`, leaving out the run `exclude_id` (leave-one-out checks).
PredictionInterval IntervalFor(const ResidualSet& set, const IntervalKey& key,
                               const std::string& exclude_id = "");

// The residuals file: {"about": ..., "runs": [{id, hardware_family, precision, framework,
// error, kind}, ...]}; a run without `kind` is dense (files written before it). Parse errors are
// located (file:line:col).
Result<ResidualSet> ParseResiduals(const std::string& text, const std::string& file);
Result<ResidualSet> ReadResiduals(const std::string& path);
// The bytes of the shipped file for `rows` (errors rounded to 1e-6; same rows, same bytes).
std::string ResidualsJson(const std::vector<ResidualRow>& rows);
// Where the residuals live in a library folder.
inline constexpr const char* kResidualsPath = "hardware/calibration/residuals.json";

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_INTERVAL_H_
