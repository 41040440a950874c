// `shardsim comm`: the time of one collective on a topology, in nccl-tests' terms.
//
//   shardsim comm --topology dgx-h100 --gpus 16 --op all_reduce --size 1GiB [--algo ring]
//                 [--ranks-per-node 4] [--concurrent-groups 8] [--json]
//   shardsim comm --topology dgx-h100 --gpus 8 --sizes 1KiB:8GiB[:2]   (nccl-tests' sweep table,
//                 whole bytes, each size once, at most 200 sizes)
//
// --topology is a name in the library's topologies/ or a YAML path (sim/config's LoadTopology).
// What it computes and prints: sim/report/comm_report.h.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "sim/cli/commands.h"
#include "sim/report/comm_report.h"

namespace shardsim {
namespace {

Status PrintComm(const CommRequest& request, bool json, const CliContext& ctx) {
  Result<CommRun> run = RunComm(request, ctx.load_options());
  if (!run.ok()) return run.status();
  std::fputs((json ? CommJson(*run) : CommText(*run)).c_str(), stdout);
  return Status::Ok();
}

}  // namespace

void AddCommCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* cmd =
      app.add_subcommand("comm", "time of one collective on a topology (nccl-tests terms)");
  struct CommArgs : CommRequest {
    bool json = false;
  };
  auto args = std::make_shared<CommArgs>();
  cmd->add_option("--topology", args->topology, "topology name (topologies/) or YAML path")
      ->required();
  cmd->add_option("--gpus", args->gpus, "GPUs in the group")->required();
  cmd->add_option("--op", args->op,
                  "all_reduce | reduce_scatter | all_gather | all_to_all | broadcast | send_recv");
  auto* size = cmd->add_option("--size", args->size,
                               "message size as nccl-tests counts it "
                               "(default 1GiB)");
  auto* sizes = cmd->add_option("--sizes", args->sizes,
                                "size sweep FROM:TO[:FACTOR], e.g. 1KiB:8GiB (at most 200 sizes)");
  size->excludes(sizes);
  cmd->add_option("--algo", args->algo,
                  "auto | ring | tree | hierarchical | nvls | nvls_tree | direct (default auto)");
  CLI::Option* ranks_per_node =
      cmd->add_option("--ranks-per-node", args->ranks_per_node,
                      "GPUs of the group on each node (default: every GPU of each node)");
  cmd->add_option("--concurrent-groups", args->concurrent_groups,
                  "groups of this shape running at once, sharing NICs and uplinks (default 1)");
  cmd->add_flag("--json", args->json, "print JSON (time_s, algbw_gbps, busbw_gbps, ...)");
  cmd->callback([args, ranks_per_node, &ctx]() {
    args->ranks_per_node_given = ranks_per_node->count() > 0;
    ctx.exit_code = ReportStatus(PrintComm(*args, args->json, ctx));
  });
}

}  // namespace shardsim
