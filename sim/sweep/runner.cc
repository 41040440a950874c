#include "sim/sweep/runner.h"

#include <sys/stat.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <memory>

#include "sim/config/value_reader.h"
#include "sim/schedule/schedule.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/point_space.h"
#include "sim/sweep/result_file.h"
#include "sim/sweep/top_k.h"

namespace shardsim {
namespace {

// Rows in flight per thread: enough to keep threads busy while an expensive point holds the
// head of the reorder buffer.
constexpr size_t kTokensPerJob = 8;

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

struct Output {
  Output(RowFormat f, std::string p) : format(std::move(f)), path(std::move(p)) {}
  RowFormat format;
  std::string path;
  ScannedFile scan;
  ResultWriter writer;
};

}  // namespace

Result<Shard> ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  Result<int64_t> k = slash == std::string::npos ? Result<int64_t>(Status::Invalid(""))
                                                 : ParseInteger(text.substr(0, slash));
  Result<int64_t> n = slash == std::string::npos ? Result<int64_t>(Status::Invalid(""))
                                                 : ParseInteger(text.substr(slash + 1));
  if (!k.ok() || !n.ok() || *n < 1 || *k < 1 || *k > *n) {
    return Status::Invalid("--shard: expected K/N with 1 <= K <= N (e.g. 3/8), got \"" + text +
                           "\"");
  }
  return Shard{*k - 1, *n};
}

Result<std::optional<Shard>> ShardFromSlurm(const std::optional<std::string>& task_id,
                                            const std::optional<std::string>& task_count,
                                            const std::optional<std::string>& task_min) {
  if (!task_id) return std::optional<Shard>();
  if (!task_count) {
    return Status::Invalid(
        "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not; pass "
        "--shard K/N");
  }
  Result<int64_t> id = ParseInteger(*task_id);
  Result<int64_t> count = ParseInteger(*task_count);
  Result<int64_t> min = task_min ? ParseInteger(*task_min) : Result<int64_t>(int64_t{0});
  if (!id.ok() || !count.ok() || !min.ok() || *count < 1 || *id < *min || *id - *min >= *count) {
    return Status::Invalid("SLURM_ARRAY_TASK_ID=" + *task_id +
                           " with SLURM_ARRAY_TASK_COUNT=" + *task_count +
                           " and SLURM_ARRAY_TASK_MIN=" + task_min.value_or("(unset)") +
                           " is not a task of a contiguous array (--array=0-N or 1-N); pass "
                           "--shard K/N");
  }
  return std::optional<Shard>(Shard{*id - *min, *count});
}

int64_t ShardSize(const Shard& shard, int64_t total) {
  if (total <= shard.index) return 0;
  return (total - shard.index + shard.count - 1) / shard.count;
}

Result<SweepRun> RunSweep(const PointSpace& space, const SweepRunOptions& o,
                          const LoadOptions& load) {
  SweepRun run;
  if (o.prune_to_top > 0 && o.resume) {
    return Status::Invalid(
        "--prune-to-top does not resume: its rows are written once every point is decided; "
        "run it again with --overwrite");
  }
  if (o.prune_to_top > 0 && !TopKSupports(o.rank_by)) {
    return Status::Invalid(std::string("--prune-to-top bounds tokens_per_s, time_to_train and "
                                       "time_to_train_ideal, not --rank-by ") +
                           RankByName(o.rank_by));
  }
  if (o.keep_all_rows) run.summary = SweepSummary(SweepSummary::Keep::kAllRows);
  run.space_points = space.size();
  run.shard_points = ShardSize(o.shard, space.size());
  auto point_of = [&](int64_t k) { return o.shard.index + k * o.shard.count; };
  auto expected = [&](int64_t k) { return ExpectedRow{point_of(k), space.Inputs(point_of(k))}; };

  std::vector<std::unique_ptr<Output>> outputs;
  auto add = [&](RowFormatKind kind, const std::string& path) {
    if (path.empty()) return;
    outputs.push_back(std::make_unique<Output>(RowFormat(kind, space.input_columns()), path));
  };
  add(RowFormatKind::kCsv, o.csv_path);
  add(RowFormatKind::kJsonl, o.jsonl_path);

  // Resume from the rows every file holds (files cut at different rows agree on the shorter).
  int64_t keep = 0;
  if (o.resume) {
    keep = run.shard_points;
    for (auto& out : outputs) {
      Result<ScannedFile> scan = ScanResultFile(out->path, out->format, expected, run.shard_points);
      if (!scan.ok()) return scan.status();
      out->scan = std::move(*scan);
      keep = std::min<int64_t>(keep, static_cast<int64_t>(out->scan.rows.size()));
    }
    if (outputs.empty()) keep = 0;
  } else if (!o.overwrite) {
    for (auto& out : outputs) {
      if (Exists(out->path)) {
        return Status::Invalid("'" + out->path +
                               "' exists; pass --resume to continue the sweep "
                               "it holds, or --overwrite to start again");
      }
    }
  }
  for (auto& out : outputs) {
    const uint64_t bytes = keep == 0 ? 0 : out->scan.ends[static_cast<size_t>(keep - 1)];
    const bool header_kept = keep > 0 || out->scan.header_ok;
    Status s = out->writer.Open(out->path, header_kept ? std::max(bytes, out->scan.header_end) : 0,
                                out->format.Header());
    if (!s.ok()) return s;
  }
  run.resumed = keep;
  SweepProgress progress{0, run.shard_points, keep, 0};
  auto account = [&](const Row& row) {
    run.summary.Add(row);
    ++progress.done;
    if (Feasible(row.status)) ++progress.feasible;
  };
  for (int64_t k = 0; k < keep; ++k) account(outputs.front()->scan.rows[static_cast<size_t>(k)]);
  if (o.progress) o.progress(progress);

  std::atomic<int64_t> next{keep};
  std::atomic<bool> failed{false};
  Status failure;  // written by the serial output stage only
  const int jobs = std::max(1, o.jobs);
  const auto write = [&](const Row& row) {
    if (failed.load()) return;
    for (auto& out : outputs) {
      Status s = out->writer.Append(out->format.Format(row));
      if (!s.ok()) {
        failure = s;
        failed.store(true);
        return;
      }
    }
    account(row);
  };
  if (o.prune_to_top > 0) {
    std::vector<int64_t> points;
    for (int64_t k = 0; k < run.shard_points; ++k) points.push_back(point_of(k));
    TopKOptions top{o.prune_to_top, o.rank_by, o.memory_limit, jobs};
    SweepProgress decided{0, run.shard_points, 0, 0};
    TopKStats stats;
    std::vector<Row> rows = EvaluateTopK(
        space, points, top, load,
        [&](int64_t n) {
          decided.done = n;
          if (o.progress) o.progress(decided);
        },
        &stats);
    run.simulated = stats.simulated;
    for (const Row& row : rows) write(row);
    if (o.progress) o.progress(progress);
  } else {
    tbb::task_arena arena(jobs);
    OrderCache orders;  // the run orders of the points of one pipeline shape
    arena.execute([&] {
      tbb::parallel_pipeline(
          static_cast<size_t>(jobs) * kTokensPerJob,
          tbb::make_filter<void, int64_t>(tbb::filter_mode::serial_in_order,
                                          [&](tbb::flow_control& fc) -> int64_t {
                                            const int64_t k = next.fetch_add(1);
                                            if (k >= run.shard_points || failed.load()) {
                                              fc.stop();
                                              return 0;
                                            }
                                            return point_of(k);
                                          }) &
              tbb::make_filter<int64_t, Row>(tbb::filter_mode::parallel,
                                             [&](int64_t point) {
                                               Row row = EvaluatePoint(space, point, load, &orders);
                                               ApplyMemoryLimit(o.memory_limit, &row);
                                               return row;
                                             }) &
              tbb::make_filter<Row, void>(tbb::filter_mode::serial_in_order, [&](const Row& row) {
                write(row);
                if (!failed.load() && o.progress) o.progress(progress);
              }));
    });
  }
  for (auto& out : outputs) {
    Status s = out->writer.Close();
    if (failure.ok() && !s.ok()) failure = s;
  }
  if (!failure.ok()) return failure;
  return run;
}

}  // namespace shardsim
