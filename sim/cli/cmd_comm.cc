// `shardsim comm`: collective cost on a topology (placeholder until sim/collective lands).
#include <CLI/CLI.hpp>

#include "sim/cli/commands.h"

namespace shardsim {

void AddCommCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* cmd = app.add_subcommand("comm", "time of one collective on a topology (nccl-tests terms)");
  cmd->callback([&ctx]() { ctx.exit_code = ReportStatus(Status::Internal("comm: not implemented yet")); });
}

}  // namespace shardsim
