// `shardsim merge -o OUT SHARD_FILES...`: the result files of a sharded sweep combined into
// exactly the file an unsharded run writes, then ranked like `shardsim sweep`.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/cli/sweep_cli.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/merge.h"
#include "sim/sweep/point_space.h"
#include "sim/sweep/ranking.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/sweep/uncertainty.h"

namespace shardsim {

void AddMergeCommand(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::vector<std::string> inputs;
    std::string output, sweep, rank_by = "tokens_per_s";
    int64_t top = 10;
    double price = 0.0;
    bool overwrite = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "combine the result files of a sharded sweep into the unsharded result");
  cmd->add_option("shards", args->inputs, "result files of the shards (all CSV or all JSON Lines)")
      ->required();
  cmd->add_option("-o,--output", args->output, "merged result file")->required();
  cmd->add_option("--sweep", args->sweep,
                  "the sweep spec the shards ran: also checks the point count and every row's "
                  "inputs");
  cmd->add_flag("--overwrite", args->overwrite, "replace an existing output file");
  cmd->add_option("--top", args->top, "rows of the ranking table (default 10)");
  cmd->add_option(
      "--rank-by", args->rank_by,
      "tokens_per_s (default), time_to_train (booked), cost, time_to_train_ideal or goodput");
  CLI::Option* price = cmd->add_option("--price-per-gpu-hour", args->price,
                                       "dollars per GPU-hour: adds a cost column");
  cmd->callback([&ctx, args, price]() {
    Result<RankOptions> rank =
        ParseRankOptions(args->rank_by, args->top,
                         price->count() > 0 ? std::optional<double>(args->price) : std::nullopt);
    if (!rank.ok()) {
      ctx.exit_code = ReportStatus(rank.status());
      return;
    }
    MergeOptions o;
    o.overwrite = args->overwrite;
    std::optional<PointSpace> space;
    if (!args->sweep.empty()) {
      Result<SweepSpec> spec = LoadSweepSpec(args->sweep, ctx.load_options());
      if (!spec.ok()) {
        ctx.exit_code = ReportStatus(spec.status());
        return;
      }
      Result<PointSpace> s = PointSpace::Enumerate(*spec, ctx.load_options());
      if (!s.ok()) {
        ctx.exit_code = ReportStatus(s.status());
        return;
      }
      space.emplace(std::move(*s));
      o.space = &*space;
    }
    Result<MergeResult> merged = MergeResultFiles(args->inputs, args->output, o);
    if (!merged.ok()) {
      ctx.exit_code = ReportStatus(merged.status());
      return;
    }
    std::printf("shardsim merge: %lld points from %zu files into %s\n",
                static_cast<long long>(merged->points), args->inputs.size(), args->output.c_str());
    // Ranked as `sweep` ranks: ties within the stated uncertainty, each point's hardware price
    // where the flag gives none (that needs --sweep, which names the points' hardware).
    rank->tie_fraction = kStatedUncertainty;
    if (price->count() == 0 && space) {
      rank->point_price =
          HardwarePrices(*space, merged->summary.feasible_rows(), ctx.load_options());
    }
    ctx.exit_code = PrintSweepReport(merged->summary, merged->input_columns, *rank);
  });
}

}  // namespace shardsim
