// `shardsim budget SCENARIO [--json] [--explain]`: parameters, FLOPs and memory per device.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "sim/cli/commands.h"
#include "sim/config/loader.h"
#include "sim/report/budget_report.h"

namespace shardsim {

void AddBudgetCommand(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::string scenario;
    bool json = false;
    bool explain = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "budget", "parameters, FLOPs (operator-level next to 6·N·D) and memory per device");
  cmd->add_option("scenario", args->scenario, "scenario YAML file")->required();
  CLI::Option* json = cmd->add_flag("--json", args->json, "print JSON (keys: README)");
  cmd->add_flag("--explain", args->explain, "also print the per-op table behind the figures (text)")
      ->excludes(json);
  cmd->callback([&ctx, args]() {
    Result<Scenario> sc = LoadScenario(args->scenario, ctx.load_options());
    if (!sc.ok()) {
      ctx.exit_code = ReportStatus(sc.status());
      return;
    }
    Result<BudgetReport> r = BuildBudget(*sc);
    if (!r.ok()) {
      ctx.exit_code = ReportStatus(r.status());
      return;
    }
    const std::string out = args->json ? BudgetJson(*sc, *r) : BudgetText(*sc, *r);
    std::fputs(out.c_str(), stdout);
    if (args->explain) std::fputs(("\n" + ExplainOps(r->graph, sc->training)).c_str(), stdout);
    ctx.exit_code = BudgetFits(*sc, *r) ? 0 : 1;  // docs/reference.md §7: 1 = ran, does not fit
  });
}

}  // namespace shardsim
