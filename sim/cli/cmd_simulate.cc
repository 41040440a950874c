// `shardsim simulate SCENARIO [--json] [--trace FILE] [--html FILE] [--explain] [--every-rank]`:
// one training step through the discrete-event engine.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "sim/base/file_io.h"
#include "sim/cli/commands.h"
#include "sim/config/loader.h"
#include "sim/report/html_report.h"
#include "sim/report/library_residuals.h"
#include "sim/report/simulate.h"
#include "sim/report/step_report.h"

namespace shardsim {

void AddSimulateCommand(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string scenario;
    std::string trace;
    std::string html;
    bool json = false;
    bool explain = false;
    bool every_rank = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "simulate one training step: step time, tokens/s, MFU, memory, bottlenecks");
  cmd->add_option("scenario", args->scenario, "scenario YAML file")->required();
  CLI::Option* json = cmd->add_flag("--json", args->json, "print JSON (keys: README)");
  cmd->add_option("--trace", args->trace, "write a Chrome/Perfetto trace of the step to FILE");
  cmd->add_option("--html", args->html,
                  "write a self-contained HTML report (timeline, memory, bottlenecks) to FILE");
  cmd->add_flag("--explain", args->explain, "also print the per-layer and per-op pricing (text)")
      ->excludes(json);
  cmd->add_flag("--every-rank", args->every_rank,
                "simulate every (dp, cp, pp) rank instead of one representative pipeline");
  cmd->callback([&ctx, args]() {
    Result<Scenario> sc = LoadScenario(args->scenario, ctx.load_options());
    if (!sc.ok()) {
      ctx.exit_code = ReportStatus(sc.status());
      return;
    }
    SimOptions opts;
    opts.every_rank = args->every_rank;
    Result<SimResult> r = Simulate(*sc, opts);
    if (!r.ok()) {
      ctx.exit_code = ReportStatus(r.status());
      return;
    }
    // A --trace or --html file that cannot be written is an error, and nothing is printed.
    // Through a temporary file renamed over the target: a full disk leaves no truncated file.
    const auto write = [](const char* option, const std::string& path, const std::string& text) {
      Status s = WriteFileAtomic(path, text);
      return s.ok() ? s : Status::Invalid(std::string(option) + ": " + s.message());
    };
    Status written = Status::Ok();
    if (!args->trace.empty()) written = write("--trace", args->trace, ChromeTrace(*sc, *r));
    if (written.ok() && !args->html.empty()) {
      written = write("--html", args->html, SimulateHtml(*sc, *r));
    }
    if (!written.ok()) {
      ctx.exit_code = ReportStatus(written);
      return;
    }
    Result<PredictionInterval> interval = LibraryInterval(*sc, ctx.load_options());
    if (!interval.ok()) {
      ctx.exit_code = ReportStatus(interval.status());
      return;
    }
    std::string text =
        args->json ? SimulateJson(*sc, *r, &*interval) : SimulateText(*sc, *r, &*interval);
    if (args->explain) text += "\n" + ExplainStep(*sc, *r);
    if (args->explain && r->goodput) {
      text += "\n" + ExplainGoodput(*sc, *r->goodput, *r->time_to_train_ideal_s);
    }
    if (args->explain) {
      // Where bare names (models/, hardware/, topologies/) were looked up, in order.
      const LoadOptions load = ctx.load_options();
      std::string dirs;
      for (const std::string& d : LibraryDirs(load)) dirs += (dirs.empty() ? "" : ", ") + d;
      text += "\nLibrary folders (" +
              std::string(!load.library_dirs.empty() ? "--library"
                          : std::getenv("SHARDSIM_LIBRARY") != nullptr
                              ? "$SHARDSIM_LIBRARY, then the default"
                              : "the default") +
              "): " + dirs + "\n";
    }
    std::fputs(text.c_str(), stdout);
    // Ran, but infeasible: the layout does not fit in memory, or the run cannot finish
    // (Goodput::feasible): exit 1 (docs/reference.md §7).
    ctx.exit_code = r->fits && (!r->goodput || r->goodput->feasible) ? 0 : 1;
  });
}

}  // namespace shardsim
