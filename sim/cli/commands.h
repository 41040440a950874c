// The subcommands of the `shardsim` CLI. Each lives in its own cmd_<name>.cc and registers itself
// on the CLI11 app through one Add*Command function listed here and called from cli.cc.
#ifndef SHARDSIM_CLI_COMMANDS_H_
#define SHARDSIM_CLI_COMMANDS_H_

#include <optional>
#include <string>

#include "sim/base/status.h"
#include "sim/config/loader.h"
#include "sim/report/interval.h"

namespace CLI {
class App;
}

namespace shardsim {

// State shared by the subcommands of one invocation.
struct CliContext {
  int exit_code = 0;        // what main returns
  std::string library_dir;  // --library: where bare names (models/, hardware/, ...) resolve

  LoadOptions load_options() const {
    LoadOptions o;
    if (!library_dir.empty()) o.library_dirs.push_back(library_dir);
    return o;
  }
};

// Prints every diagnostic of `s` to stderr and returns the exit code for it
// (2 bad input / usage / internal error, 1 infeasible, 0 ok).
int ReportStatus(const Status& s);

void AddBudgetCommand(CLI::App& app, CliContext& ctx);
void AddCommCommand(CLI::App& app, CliContext& ctx);
void AddSimulateCommand(CLI::App& app, CliContext& ctx);
void AddSweepCommand(CLI::App& app, CliContext& ctx);
void AddMergeCommand(CLI::App& app, CliContext& ctx);
void AddCheckClaimCommand(CLI::App& app, CliContext& ctx);
void AddCalibrateCommand(CLI::App& app, CliContext& ctx);
// Allocator settings for processes that run thousands of simulations (cmd_sweep.cc).
void TuneAllocatorForManySimulations();

}  // namespace shardsim

#endif  // SHARDSIM_CLI_COMMANDS_H_
