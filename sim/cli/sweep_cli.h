// What the commands that run or report sweeps (sweep, merge, check-claim) share: the thread
// count, progress on stderr, and the closing report.
#ifndef SHARDSIM_CLI_SWEEP_CLI_H_
#define SHARDSIM_CLI_SWEEP_CLI_H_

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/sweep/progress.h"
#include "sim/sweep/ranking.h"

namespace shardsim {

// --jobs when given (> 0), else every core the machine reports (at least 1).
int ThreadsToUse(int jobs);
// --jobs: 0 (the default) means every core; a negative count is a usage error.
Status CheckJobs(int jobs);

// A ProgressMeter writing to stderr, timed from construction.
class StderrProgress {
 public:
  StderrProgress(ProgressStyle style, std::string label);
  // For SweepOptions::progress / ClaimOptions::progress; valid while this object lives.
  std::function<void(const SweepProgress&)> Callback();
  // Writes the last state (ends the bar's line).
  void Finish();
  double elapsed_s() const;

 private:
  ProgressMeter meter_;
  std::chrono::steady_clock::time_point start_;
  SweepProgress last_;
};

// Prints SweepReport on stdout, then, when every point was infeasible, says so. Returns the exit
// code: 2 (reported) when the report cannot be made, 1 when no point is feasible, else 0.
int PrintSweepReport(const SweepSummary& summary, const std::vector<std::string>& columns,
                     const RankOptions& rank);
// The closing line alone, for a command that writes more between the report and it: 1 and a
// line when every point of `summary` is infeasible, else 0.
int NoFeasiblePointExit(const SweepSummary& summary);

}  // namespace shardsim

#endif  // SHARDSIM_CLI_SWEEP_CLI_H_
