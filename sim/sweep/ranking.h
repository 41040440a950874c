// What a sweep found: feasible points ranked, the Pareto front of throughput vs GPUs vs memory
// headroom, and the infeasible points counted and grouped by reason.
//
// Rows arrive one at a time (in point order, from a run, a resumed file or merged shards) into a
// SweepSummary, which keeps the feasible rows for ranking, counts the others with one example per
// reason group, and keeps every row only when asked (the HTML report plots them all; a sweep of
// millions of points without one need not hold them).
// Ranking is deterministic: ties go to the lower point index.
#ifndef SHARDSIM_SWEEP_RANKING_H_
#define SHARDSIM_SWEEP_RANKING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/sweep/rows.h"

namespace shardsim {

// Infeasible points sharing a status and a reason group (the reason up to its first ": ").
struct InfeasibleGroup {
  PointStatus status = PointStatus::kInvalid;
  std::string group;
  int64_t count = 0;
  int64_t example_point = 0;
  std::string example_reason;
};

class SweepSummary {
 public:
  enum class Keep { kFeasibleRows, kAllRows };
  explicit SweepSummary(Keep keep = Keep::kFeasibleRows) : keep_(keep) {}

  void Add(const Row& row);

  int64_t total() const { return total_; }
  int64_t feasible() const { return static_cast<int64_t>(feasible_.size()); }
  int64_t count(PointStatus s) const;
  const std::vector<Row>& feasible_rows() const { return feasible_; }
  // Every row added, in the order added (point order): what the HTML report plots. Only for a
  // summary made with Keep::kAllRows (empty otherwise).
  const std::vector<Row>& rows() const { return rows_; }
  bool keeps_all_rows() const { return keep_ == Keep::kAllRows; }
  // Largest groups first (ties: earlier first example).
  std::vector<InfeasibleGroup> groups() const;

 private:
  Keep keep_;
  int64_t total_ = 0;
  std::map<PointStatus, int64_t> by_status_;
  std::vector<Row> feasible_;
  std::vector<Row> rows_;
  std::map<std::pair<PointStatus, std::string>, InfeasibleGroup> groups_;
};

// The reason group of a reason text: "parallel.tp: 3 does not divide ..." -> "parallel.tp".
std::string ReasonGroup(const std::string& reason);

// time_to_train: as booked (over the goodput); time_to_train_ideal: at goodput 1; goodput:
// highest fraction of the booked time spent training at full speed first.
enum class RankBy { kTokensPerS, kTimeToTrain, kCost, kTimeToTrainIdeal, kGoodput };

// The --rank-by name of `by`, and whether it needs training.tokens (a time to train).
const char* RankByName(RankBy by);
bool RankNeedsTokens(RankBy by);

struct RankOptions {
  RankBy by = RankBy::kTokensPerS;
  int64_t top_k = 10;
  double price_per_gpu_hour = 0.0;  // > 0 (--price-per-gpu-hour): one price for every point
  // Per point (Row::point), the price per GPU-hour its hardware file (or a sweep axis) gives:
  // hardware.price_per_gpu_hour. Used where price_per_gpu_hour is 0 (the flag wins).
  std::map<int64_t, double> point_price;
  // Points whose ranking figure is within this fraction of the best are ties (marked "~"):
  // shardsim's stated uncertainty (sim/sweep/uncertainty.h). 0: no ties marked.
  double tie_fraction = 0.0;
};

// The price per GPU-hour of `row` under `options` (the flag, else its hardware's; 0: none).
double PriceOf(const RankOptions& options, const Row& row);
// Whether any cost can be shown: the flag, or some point with a price.
bool HasPrices(const RankOptions& options);

// A feasibility bound on memory (`sweep --min-headroom 8GiB`, `--max-memory-fraction 0.9`): a
// point that fits but leaves less headroom, or uses more of the capacity, becomes no_fit with a
// reason grouped under "headroom" or "memory fraction". 0: no bound.
struct MemoryLimit {
  double min_headroom_bytes = 0.0;
  double max_fraction = 0.0;  // (0, 1]
};
void ApplyMemoryLimit(const MemoryLimit& limit, Row* row);

// How far `row` is from the best row `best` on the ranking figure, as a signed fraction of the
// best (-0.04: 4% fewer tokens/s; +0.04: 4% longer or dearer), and whether that is a tie.
double VsBest(const Row& row, const Row& best, const RankOptions& options);
bool IsTie(const Row& row, const Row& best, const RankOptions& options);

// Every feasible row, best first, as CSV: rank, point, the input columns, tokens_per_s,
// tokens_per_s_per_gpu, mfu, step_time_s, peak_memory_bytes, memory_headroom_bytes, cost (when
// priced: to train, else per million tokens), vs_best, tie, pareto (`sweep --ranking FILE`).
Result<std::string> RankedCsv(const SweepSummary& summary, const std::vector<std::string>& columns,
                              const RankOptions& options);

// From the command line: "tokens_per_s", "time_to_train", "cost", "time_to_train_ideal" or
// "goodput"; rows of the table; dollars
// per GPU-hour when given (a positive finite number; without it, no cost column).
Result<RankOptions> ParseRankOptions(const std::string& rank_by, int64_t top_k,
                                     std::optional<double> price_per_gpu_hour);

// Indices into `rows` of the Pareto front: no other row has at least the tokens/s, at most the
// GPUs and at least the memory headroom, and strictly better in one. Ascending index order.
std::vector<size_t> ParetoFront(const std::vector<Row>& rows);

// Indices of `rows` best first under `options` (ties: lower point). Errors: ranking by time to
// train or cost to train when rows lack it (training.tokens not set) — kInvalidInput.
Result<std::vector<size_t>> Rank(const std::vector<Row>& rows, const RankOptions& options);

// The dollars of a row: to train (training.tokens set) or per million tokens.
double CostToTrain(const Row& row, double price_per_gpu_hour);
double CostPerMillionTokens(const Row& row, double price_per_gpu_hour);

// The text printed after a sweep: top-k table with the Pareto members marked, the Pareto front,
// and the infeasible groups. `columns` are the sweep's input columns.
Result<std::string> SweepReport(const SweepSummary& summary,
                                const std::vector<std::string>& columns,
                                const RankOptions& options);
// "Infeasible: 120 of 400 points" and one line per group with an example.
std::string InfeasibleReport(const SweepSummary& summary);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_RANKING_H_
