// Running a sweep: the points of one shard evaluated in parallel (oneTBB, the only user of it in
// shardsim) and written in point order.
//
// A oneTBB pipeline reads point indices in order, evaluates them on `jobs` threads, and hands
// rows back in order (its serial in-order stage is the reorder buffer): each row is appended to
// the result files and flushed as soon as every row before it is written. Rows depend only on
// their point, so the files are the same bytes at any --jobs, and a run killed at any moment
// leaves a prefix that --resume continues (result_file.h).
#ifndef SHARDSIM_SWEEP_RUNNER_H_
#define SHARDSIM_SWEEP_RUNNER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/loader.h"
#include "sim/sweep/ranking.h"

namespace shardsim {

class PointSpace;

// Shard `index` (0-based) of `count`: the points i with i % count == index.
struct Shard {
  int64_t index = 0;
  int64_t count = 1;
};
// "K/N" with 1 <= K <= N (as `--shard 2/8` is written).
Result<Shard> ParseShard(const std::string& text);
// SLURM job arrays: SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN (task
// ids may start at 0 or 1; the shard is id - min). Values as read from the environment, absent
// = nullopt. Returns nullopt when no array task is described.
Result<std::optional<Shard>> ShardFromSlurm(const std::optional<std::string>& task_id,
                                            const std::optional<std::string>& task_count,
                                            const std::optional<std::string>& task_min);
// The points of `shard` among `total`, ascending.
int64_t ShardSize(const Shard& shard, int64_t total);

struct SweepProgress {
  int64_t done = 0;      // rows of this shard written (resumed included)
  int64_t total = 0;     // points of this shard
  int64_t resumed = 0;   // rows found in the result files
  int64_t feasible = 0;  // rows that fit
};

struct SweepRunOptions {
  int jobs = 1;
  Shard shard;
  std::string csv_path;        // "" = no CSV file
  std::string jsonl_path;      // "" = no JSON Lines file
  bool resume = false;         // continue the files (they must hold this sweep's rows)
  bool overwrite = false;      // start the files again (else existing files are an error)
  bool keep_all_rows = false;  // the summary keeps every row (the HTML report), not only feasible
  // A feasibility bound on memory applied to every evaluated row (rows resumed from a file
  // keep what they say).
  MemoryLimit memory_limit;
  // Called after each row is written, from one thread at a time.
  std::function<void(const SweepProgress&)> progress;
  // > 0 (`--prune-to-top K`): simulate only the points that can enter the top K by `rank_by`
  // (sim/sweep/top_k.h); the others are `outranked` rows. The rows are written once all are
  // known (in point order, the same files as ever otherwise); not with `resume`.
  int64_t prune_to_top = 0;
  RankBy rank_by = RankBy::kTokensPerS;
};

struct SweepRun {
  int64_t space_points = 0;  // points of the whole sweep
  int64_t shard_points = 0;  // points of this shard
  int64_t resumed = 0;       // rows read back from the result files
  SweepSummary summary;      // the rows of this shard (every one with keep_all_rows)
  int64_t simulated = 0;     // with prune_to_top: rows evaluated (the others outranked)
};

// Errors (kInvalidInput): an existing result file without --resume or --overwrite, a result file
// of another sweep, a file that cannot be written, prune_to_top with resume or with a ranking it
// cannot bound (TopKSupports).
Result<SweepRun> RunSweep(const PointSpace& space, const SweepRunOptions& options,
                          const LoadOptions& load);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_RUNNER_H_
