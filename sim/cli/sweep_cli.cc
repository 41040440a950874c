#include "sim/cli/sweep_cli.h"

#include <cstdio>
#include <string>
#include <thread>
#include <utility>

#include "sim/cli/commands.h"

namespace shardsim {

int ThreadsToUse(int jobs) {
  if (jobs > 0) return jobs;
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(cores > 0 ? cores : 1);
}

Status CheckJobs(int jobs) {
  if (jobs >= 0) return Status::Ok();
  return Status::Invalid("--jobs must be a positive thread count, or 0 for every core; got " +
                         std::to_string(jobs));
}

StderrProgress::StderrProgress(ProgressStyle style, std::string label)
    : meter_(style, std::move(label)), start_(std::chrono::steady_clock::now()) {}

double StderrProgress::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::function<void(const SweepProgress&)> StderrProgress::Callback() {
  return [this](const SweepProgress& p) {
    last_ = p;
    const std::string text = meter_.Update(p, elapsed_s());
    if (!text.empty()) std::fputs(text.c_str(), stderr);
  };
}

void StderrProgress::Finish() { std::fputs(meter_.Finish(last_, elapsed_s()).c_str(), stderr); }

int NoFeasiblePointExit(const SweepSummary& summary) {
  if (summary.total() == 0 || summary.feasible() > 0) return 0;
  std::printf("\nno feasible point: all %lld points are infeasible (reasons above)\n",
              static_cast<long long>(summary.total()));
  return 1;
}

int PrintSweepReport(const SweepSummary& summary, const std::vector<std::string>& columns,
                     const RankOptions& rank) {
  Result<std::string> report = SweepReport(summary, columns, rank);
  if (!report.ok()) return ReportStatus(report.status());
  std::fputs(report->c_str(), stdout);
  return NoFeasiblePointExit(summary);
}

}  // namespace shardsim
