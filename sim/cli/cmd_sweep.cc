// `shardsim sweep SPEC`: every point of a sweep spec (sim/sweep/sweep_spec.h) simulated in
// parallel, rows written to CSV / JSON Lines in point order, the best points ranked on stdout,
// progress on stderr. Resumable (--resume), shardable (--shard K/N or a SLURM job array).
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/file_io.h"
#include "sim/base/strings.h"
#include "sim/base/units.h"
#include "sim/cli/commands.h"
#include "sim/cli/sweep_cli.h"
#include "sim/report/html_sweep.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/point_space.h"
#include "sim/sweep/progress.h"
#include "sim/sweep/ranking.h"
#include "sim/sweep/rows.h"
#include "sim/sweep/runner.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/sweep/top_k.h"
#include "sim/sweep/uncertainty.h"

namespace shardsim {
namespace {

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

// The sweep's rows as the HTML report's points (the mapping sim/report/html_sweep.h documents).
SweepHtmlInput HtmlInput(const std::string& spec, const PointSpace& space, const SweepRun& run,
                         const RankOptions& rank) {
  SweepHtmlInput in;
  in.title = spec;  // the page adds "shardsim sweep: " to its <title> and shows it as the kicker
  in.description = std::to_string(space.size()) + " points over " + Join(space.input_columns());
  in.input_keys = space.input_columns();
  in.rank_by = rank.by == RankBy::kTimeToTrain        ? SweepRankBy::kTimeToTrain
               : rank.by == RankBy::kCost             ? SweepRankBy::kCost
               : rank.by == RankBy::kTimeToTrainIdeal ? SweepRankBy::kTimeToTrainIdeal
               : rank.by == RankBy::kGoodput          ? SweepRankBy::kGoodput
                                                      : SweepRankBy::kTokensPerS;
  in.top_k = static_cast<size_t>(std::max<int64_t>(1, rank.top_k));
  in.tie_fraction = rank.tie_fraction;
  const auto value = [](const Row& r, Metric m) { return r.has(m) ? r[m] : 0.0; };
  for (const Row& r : run.summary.rows()) {
    SweepHtmlPoint p;
    p.inputs = r.inputs;
    p.gpus = static_cast<int64_t>(value(r, Metric::kGpus));
    p.feasible = Feasible(r.status);
    p.simulated = Simulated(r.status);
    p.reason = r.reason;
    p.step_time_s = value(r, Metric::kStepTime);
    p.tokens_per_s = value(r, Metric::kTokensPerS);
    p.tokens_per_s_per_gpu = value(r, Metric::kTokensPerSPerGpu);
    p.mfu = value(r, Metric::kMfu);
    p.executed_fraction = value(r, Metric::kExecutedFractionOfPeak);
    p.convention_over_executed = value(r, Metric::kFlopsConventionOverExecuted);
    p.peak_memory_bytes = value(r, Metric::kPeakMemory);
    p.capacity_bytes = value(r, Metric::kMemoryCapacity);
    if (r.has(Metric::kTimeToTrain)) p.time_to_train_s = r[Metric::kTimeToTrain];
    if (r.has(Metric::kTimeToTrainIdeal)) p.time_to_train_ideal_s = r[Metric::kTimeToTrainIdeal];
    if (r.has(Metric::kGoodput)) p.goodput = r[Metric::kGoodput];
    if (PriceOf(rank, r) > 0.0 && r.has(Metric::kGpuHours)) {
      p.cost = CostToTrain(r, PriceOf(rank, r));
    }
    p.bottleneck = r.bottleneck;
    in.points.push_back(std::move(p));
  }
  return in;
}

// Refuses two outputs naming one file (`outputs`: option and path; "" = not given): both would
// write it and leave neither format. Paths are compared canonical; the files may not exist yet.
Status CheckDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::vector<std::string> canonical;
  for (const auto& [option, path] : outputs) {
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
    canonical.push_back(path.empty() ? "" : ec ? path : p.string());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (canonical[i].empty() || canonical[i] != canonical[j]) continue;
      return Status::Invalid(outputs[i].first + " '" + outputs[i].second +
                             "' is the same file as " + outputs[j].first + " '" +
                             outputs[j].second + "'; give each output its own file");
    }
  }
  return Status::Ok();
}

// Whether `path` can be written, tried before the sweep runs rather than after it: opened for
// appending (an existing file is left as it is; one created here is removed again).
Status CheckCanWrite(const std::string& option, const std::string& path) {
  struct stat st;
  const bool existed = ::stat(path.c_str(), &st) == 0;
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) {
    return Status::Invalid(option + ": cannot write '" + path + "': " + std::strerror(errno));
  }
  ::close(fd);
  if (!existed) ::unlink(path.c_str());
  return Status::Ok();
}

Status WriteSweepHtml(const std::string& spec, const PointSpace& space, const SweepRun& run,
                      const RankOptions& rank, const std::string& path) {
  if (!run.summary.keeps_all_rows()) {
    return Status::Internal("--html: the sweep was run without keeping every row");
  }
  // Through a temporary file renamed over the target: a full disk leaves no truncated file.
  Status s = WriteFileAtomic(path, SweepHtml(HtmlInput(spec, space, run, rank)));
  return s.ok() ? s : Status::Invalid("--html: " + s.message());
}

}  // namespace

// Each simulation allocates and frees its task graph (megabytes); with glibc's defaults the large
// blocks are mmap'ed and unmapped every time, and freed heap is trimmed back to the kernel, so a
// sweep spends its time in page faults. Keeping them: GPT-3 175B / 1,024 A100s, every 20th point
// at --jobs 1, 18.1 -> 13.2 CPU-s (system time 3.9 -> 0.2 s), 12 MB more peak memory.
void TuneAllocatorForManySimulations() {
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 256 << 20);
}

void AddSweepCommand(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string spec;
    std::string output, csv, jsonl, shard, html, rank_by = "tokens_per_s", progress = "auto";
    std::string min_headroom, ranking;
    int jobs = 0;
    int64_t top = 10, prune_to_top = 0;
    double price = 0.0, max_memory_fraction = 0.0;
    bool resume = false, overwrite = false, dry_run = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "simulate every point of a sweep spec in parallel; rank, resume, shard");
  cmd->add_option("spec", args->spec, "scenario with a sweep: block, or {base: scenario, sweep:}")
      ->required();
  cmd->add_option("-o,--output", args->output,
                  "result file; .csv for CSV, .jsonl/.json/.ndjson for JSON Lines");
  cmd->add_option("--csv", args->csv, "CSV result file");
  cmd->add_option("--jsonl", args->jsonl, "JSON Lines result file");
  cmd->add_option("-j,--jobs", args->jobs, "threads (default: all cores)");
  cmd->add_flag("--resume", args->resume, "continue the sweep held by the result files");
  cmd->add_flag("--overwrite", args->overwrite, "replace existing result files");
  cmd->add_option("--shard", args->shard,
                  "evaluate shard K of N (1-based; default: SLURM_ARRAY_TASK_ID/COUNT when set)");
  cmd->add_option("--top", args->top, "rows of the ranking table (default 10)");
  CLI::Option* prune = cmd->add_option(
      "--prune-to-top", args->prune_to_top,
      "simulate only the points that can enter the top K by --rank-by (tokens_per_s or a time "
      "to train); the others are written as outranked rows (default: simulate every point)");
  cmd->add_option(
      "--rank-by", args->rank_by,
      "tokens_per_s (default), time_to_train (booked), cost, time_to_train_ideal or goodput");
  CLI::Option* price = cmd->add_option(
      "--price-per-gpu-hour", args->price,
      "dollars per GPU-hour for every point: adds a cost column (default: each hardware's "
      "price_per_gpu_hour, when its file gives one)");
  cmd->add_option("--min-headroom", args->min_headroom,
                  "feasibility bound: a point leaving less free memory per GPU (e.g. 8GiB) is "
                  "no_fit");
  CLI::Option* fraction = cmd->add_option(
      "--max-memory-fraction", args->max_memory_fraction,
      "feasibility bound: a point whose peak memory is above this fraction of the capacity "
      "(e.g. 0.9) is no_fit");
  cmd->add_option("--ranking", args->ranking,
                  "write every feasible point, best first, with ties and the Pareto front, as CSV");
  cmd->add_option("--progress", args->progress, "auto (default), bar, plain or none");
  cmd->add_flag("--dry-run", args->dry_run, "check the spec and count the points; run nothing");
  cmd->add_option("--html", args->html, "write a self-contained HTML report of the sweep to FILE");
  cmd->callback([&ctx, args, price, fraction, prune]() {
    TuneAllocatorForManySimulations();
    const LoadOptions load = ctx.load_options();
    Result<RankOptions> rank =
        ParseRankOptions(args->rank_by, args->top,
                         price->count() > 0 ? std::optional<double>(args->price) : std::nullopt);
    if (!rank.ok()) {
      ctx.exit_code = ReportStatus(rank.status());
      return;
    }
    Status jobs = CheckJobs(args->jobs);
    if (!jobs.ok()) {
      ctx.exit_code = ReportStatus(jobs);
      return;
    }
    rank->tie_fraction = kStatedUncertainty;
    SweepRunOptions o;
    if (prune->count() > 0) {
      if (args->prune_to_top < 1) {
        ctx.exit_code = ReportStatus(
            Status::Invalid("--prune-to-top: expected a positive number of points, got " +
                            std::to_string(args->prune_to_top)));
        return;
      }
      if (!TopKSupports(rank->by)) {
        ctx.exit_code = ReportStatus(Status::Invalid(
            std::string("--prune-to-top bounds --rank-by tokens_per_s, time_to_train and "
                        "time_to_train_ideal, not ") +
            RankByName(rank->by) + "; drop --prune-to-top or rank by one of those"));
        return;
      }
      if (args->resume) {
        ctx.exit_code = ReportStatus(
            Status::Invalid("--prune-to-top does not resume: its rows are written once every "
                            "point is decided; run it again with --overwrite"));
        return;
      }
      o.prune_to_top = args->prune_to_top;
      o.rank_by = rank->by;
    }
    if (!args->min_headroom.empty()) {
      Result<double> bytes = ParseQuantity(args->min_headroom, Dimension::kBytes);
      if (!bytes.ok() || !(*bytes > 0.0)) {
        ctx.exit_code = ReportStatus(Status::Invalid(
            "--min-headroom: expected a positive amount of memory, e.g. 8GiB, got \"" +
            args->min_headroom + "\"" + (bytes.ok() ? "" : " (" + bytes.status().message() + ")")));
        return;
      }
      o.memory_limit.min_headroom_bytes = *bytes;
    }
    if (fraction->count() > 0) {
      if (!(args->max_memory_fraction > 0.0 && args->max_memory_fraction <= 1.0)) {
        ctx.exit_code = ReportStatus(
            Status::Invalid("--max-memory-fraction: expected a fraction in (0, 1], got " +
                            FormatNumber(args->max_memory_fraction)));
        return;
      }
      o.memory_limit.max_fraction = args->max_memory_fraction;
    }
    o.csv_path = args->csv;
    o.jsonl_path = args->jsonl;
    std::string csv_option = "--csv", jsonl_option = "--jsonl";
    if (!args->output.empty()) {
      const std::string& out = args->output;
      const std::optional<RowFormatKind> kind = FormatOfName(out);
      if (kind == RowFormatKind::kCsv) {
        o.csv_path = out;
        csv_option = "--output";
      } else if (kind == RowFormatKind::kJsonl) {
        o.jsonl_path = out;
        jsonl_option = "--output";
      } else {
        ctx.exit_code = ReportStatus(Status::Invalid("--output: cannot tell the format of '" + out +
                                                     "'; name it .csv or .jsonl"));
        return;
      }
    }
    Status distinct = CheckDistinctOutputs({{csv_option, o.csv_path},
                                            {jsonl_option, o.jsonl_path},
                                            {"--html", args->html},
                                            {"--ranking", args->ranking}});
    if (!distinct.ok()) {
      ctx.exit_code = ReportStatus(distinct);
      return;
    }
    for (const auto& [option, path] : {std::pair<const char*, std::string>{"--html", args->html},
                                       {"--ranking", args->ranking}}) {
      if (path.empty()) continue;
      Status writable = CheckCanWrite(option, path);
      if (!writable.ok()) {
        ctx.exit_code = ReportStatus(writable);
        return;
      }
    }
    if (o.csv_path.empty() && o.jsonl_path.empty() && args->resume) {
      ctx.exit_code = ReportStatus(Status::Invalid("--resume needs the result file: --output"));
      return;
    }
    o.resume = args->resume;
    o.overwrite = args->overwrite;
    o.keep_all_rows = !args->html.empty();  // the HTML report plots every point
    o.jobs = ThreadsToUse(args->jobs);
    if (!args->shard.empty()) {
      Result<Shard> s = ParseShard(args->shard);
      if (!s.ok()) {
        ctx.exit_code = ReportStatus(s.status());
        return;
      }
      o.shard = *s;
    } else {
      Result<std::optional<Shard>> s = ShardFromSlurm(
          Env("SLURM_ARRAY_TASK_ID"), Env("SLURM_ARRAY_TASK_COUNT"), Env("SLURM_ARRAY_TASK_MIN"));
      if (!s.ok()) {
        ctx.exit_code = ReportStatus(s.status());
        return;
      }
      if (*s) o.shard = **s;
    }
    Result<ProgressStyle> style = ParseProgressStyle(args->progress, isatty(STDERR_FILENO) != 0);
    if (!style.ok()) {
      ctx.exit_code = ReportStatus(style.status());
      return;
    }

    Result<SweepSpec> spec = LoadSweepSpec(args->spec, load);
    if (!spec.ok()) {
      ctx.exit_code = ReportStatus(spec.status());
      return;
    }
    if (RankNeedsTokens(rank->by) && !SpecSetsKey(*spec, "training.tokens", load)) {
      ctx.exit_code = ReportStatus(Status::Invalid(
          std::string("--rank-by ") + RankByName(rank->by) +
          " needs training.tokens in the scenario (the tokens to train on); " + args->spec +
          " sets it neither in its base scenario nor on a sweep axis"));
      return;
    }
    Result<PointSpace> space = PointSpace::Enumerate(*spec, load);
    if (!space.ok()) {
      ctx.exit_code = ReportStatus(space.status());
      return;
    }
    const int64_t shard_points = ShardSize(o.shard, space->size());
    std::string head =
        "shardsim sweep: " + args->spec + ", " + std::to_string(space->size()) + " points";
    if (o.shard.count > 1) {
      head += ", shard " + std::to_string(o.shard.index + 1) + "/" + std::to_string(o.shard.count) +
              ": " + std::to_string(shard_points) + " points";
    }
    std::printf("%s\n", head.c_str());
    if (args->dry_run) {
      std::printf("  varied inputs: %s\n", Join(space->input_columns()).c_str());
      return;
    }
    StderrProgress progress(*style, "sweep");
    o.progress = progress.Callback();
    Result<SweepRun> run = RunSweep(*space, o, load);
    progress.Finish();
    if (!run.ok()) {
      ctx.exit_code = ReportStatus(run.status());
      return;
    }
    const double seconds = progress.elapsed_s();
    const int64_t evaluated = run->shard_points - run->resumed;
    const std::string resumed =
        run->resumed > 0 ? ", " + std::to_string(run->resumed) + " rows resumed" : "";
    std::fprintf(stderr, "sweep: %lld points evaluated in %s (%s points/s, %d threads)%s\n",
                 static_cast<long long>(evaluated), FormatSeconds(Seconds(seconds)).c_str(),
                 FormatSig(seconds > 0 ? static_cast<double>(evaluated) / seconds : 0.0, 3).c_str(),
                 o.jobs, resumed.c_str());
    if (o.prune_to_top > 0) {
      std::fprintf(stderr, "sweep: --prune-to-top %lld: %lld points evaluated, %lld outranked\n",
                   static_cast<long long>(o.prune_to_top), static_cast<long long>(run->simulated),
                   static_cast<long long>(evaluated - run->simulated));
    }
    // Each point's hardware price where the flag gives none (the flag wins).
    if (price->count() == 0) {
      rank->point_price = HardwarePrices(*space, run->summary.feasible_rows(), load);
      if (!args->html.empty()) {
        std::map<int64_t, double> all = HardwarePrices(*space, run->summary.rows(), load);
        rank->point_price.insert(all.begin(), all.end());
      }
    }
    Result<std::string> report = SweepReport(run->summary, space->input_columns(), *rank);
    if (!report.ok()) {
      ctx.exit_code = ReportStatus(report.status());
      return;
    }
    std::fputs(report->c_str(), stdout);
    if (!args->ranking.empty()) {
      Result<std::string> ranked = RankedCsv(run->summary, space->input_columns(), *rank);
      std::ofstream file(args->ranking, std::ios::binary);
      if (ranked.ok()) file << *ranked;
      if (!ranked.ok() || !file.good()) {
        ctx.exit_code = ReportStatus(
            ranked.ok() ? Status::Invalid("--ranking: cannot write '" + args->ranking + "'")
                        : ranked.status());
        return;
      }
    }
    if (!args->html.empty()) {
      const Status written = WriteSweepHtml(args->spec, *space, *run, *rank, args->html);
      if (!written.ok()) {
        ctx.exit_code = ReportStatus(written);
        return;
      }
    }
    ctx.exit_code = NoFeasiblePointExit(run->summary);
  });
}

}  // namespace shardsim
