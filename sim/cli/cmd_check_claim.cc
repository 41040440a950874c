// `shardsim check-claim "CLAIM" (--scenario FILE | --model M --hardware H --gpus N)`: the claim
// under each FLOPs convention, the physical ceiling, the best layout a sweep finds, and a verdict
// (sim/sweep/claim.h).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/strings.h"
#include "sim/cli/commands.h"
#include "sim/cli/sweep_cli.h"
#include "sim/config/loader.h"
#include "sim/sweep/claim.h"
#include "sim/sweep/progress.h"

namespace shardsim {
namespace {

// The usual cluster of each library accelerator, when --topology is not given.
std::string DefaultTopology(const std::string& hardware) {
  if (hardware.rfind("a100", 0) == 0) return "dgx-a100";
  if (hardware == "h100-sxm") return "dgx-h100";
  if (hardware == "h200-sxm") return "dgx-h200";
  if (hardware == "h800-sxm") return "h800-deepseek";
  return "";
}

struct ClaimArgs {
  std::string claim, scenario, model, hardware, topology, precision = "bf16", progress = "auto";
  int64_t gpus = 0, seq_len = 0, global_batch = 0;
  int jobs = 0;
};

// Usage errors, found before anything is loaded. `given`: the options of the scenario's keys
// that the command line gives ("--model", "--seq-len", ...). A scenario gives them all, so none
// may come with --scenario; without it, --model, --hardware and --gpus are needed, and the
// counts given must be positive.
Status CheckClaimUsage(const ClaimArgs& a, const std::vector<std::string>& given) {
  Status jobs = CheckJobs(a.jobs);
  if (!jobs.ok()) return jobs;
  const auto is_given = [&](const char* name) {
    return std::find(given.begin(), given.end(), name) != given.end();
  };
  if (!a.scenario.empty()) {
    if (given.empty()) return Status::Ok();
    return Status::Invalid("check-claim: " + Join(given) +
                           " cannot be combined with --scenario, which gives the model, hardware, "
                           "topology, GPU count and training; give --scenario alone, or --model, "
                           "--hardware and --gpus");
  }
  if (a.model.empty() || a.hardware.empty() || !is_given("--gpus")) {
    return Status::Invalid("check-claim: give --scenario FILE, or --model, --hardware and --gpus");
  }
  const std::pair<const char*, int64_t> counts[] = {
      {"--gpus", a.gpus}, {"--seq-len", a.seq_len}, {"--global-batch", a.global_batch}};
  for (const auto& [name, value] : counts) {
    if (is_given(name) && value < 1) {
      return Status::Invalid("check-claim: " + std::string(name) +
                             " must be a positive integer, got " + std::to_string(value));
    }
  }
  return Status::Ok();
}

}  // namespace

void AddCheckClaimCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<ClaimArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check-claim", "judge a throughput claim: FLOPs conventions, ceiling, best layout, verdict");
  cmd->add_option("claim", args->claim,
                  "\"1200 tokens/s/GPU\", \"3.2M tokens/s\", \"400 TFLOP/s per GPU\", "
                  "\"45% MFU\", \"15T tokens in 54 days\"")
      ->required();
  cmd->add_option("--scenario", args->scenario,
                  "scenario giving model, hardware, topology, gpus and training (its layout is "
                  "also simulated)");
  // The options a scenario gives: with --scenario, any of them is a usage error.
  const std::vector<CLI::Option*> scenario_gives = {
      cmd->add_option("--model", args->model, "model name or path (without --scenario)"),
      cmd->add_option("--hardware", args->hardware, "accelerator name or path"),
      cmd->add_option("--topology", args->topology, "cluster (default: the accelerator's DGX/HGX)"),
      cmd->add_option("--gpus", args->gpus, "GPU count"),
      cmd->add_option("--seq-len", args->seq_len,
                      "sequence length (default: the model's max_seq_len)"),
      cmd->add_option("--global-batch", args->global_batch,
                      "sequences per step (default: about 4M tokens, a multiple of the GPU count)"),
      cmd->add_option("--precision", args->precision, "bf16 (default), fp16, fp8")};
  cmd->add_option("-j,--jobs", args->jobs, "threads for the layout search (default: all cores)");
  cmd->add_option("--progress", args->progress, "auto (default), bar, plain or none");
  cmd->callback([&ctx, args, scenario_gives]() {
    TuneAllocatorForManySimulations();
    const LoadOptions load = ctx.load_options();
    Result<Claim> claim = ParseClaim(args->claim);
    if (!claim.ok()) {
      ctx.exit_code = ReportStatus(claim.status());
      return;
    }
    std::vector<std::string> given;
    for (const CLI::Option* opt : scenario_gives) {
      if (opt->count() > 0) given.push_back(opt->get_name());
    }
    Status usage = CheckClaimUsage(*args, given);
    if (!usage.ok()) {
      ctx.exit_code = ReportStatus(usage);
      return;
    }
    std::optional<ScenarioDocument> base;
    if (!args->scenario.empty()) {
      Result<ScenarioDocument> doc = ScenarioDocument::Parse(args->scenario);
      if (!doc.ok()) {
        ctx.exit_code = ReportStatus(doc.status());
        return;
      }
      base.emplace(std::move(*doc));
    } else {
      std::string topology = args->topology;
      if (topology.empty()) {
        // An unknown accelerator is reported as such (with close names), not as lacking a cluster.
        Result<HardwareSpec> hw = LoadHardware(args->hardware, load);
        if (!hw.ok()) {
          ctx.exit_code = ReportStatus(hw.status());
          return;
        }
        topology = DefaultTopology(args->hardware);
      }
      if (topology.empty()) {
        ctx.exit_code =
            ReportStatus(Status::Invalid("check-claim: no default cluster for hardware '" +
                                         args->hardware + "'; give --topology"));
        return;
      }
      int64_t seq = args->seq_len;
      if (seq <= 0) {
        Result<ModelSpec> m = LoadModel(args->model, load);
        if (!m.ok()) {
          ctx.exit_code = ReportStatus(m.status());
          return;
        }
        seq = m->max_seq_len;
      }
      // About 4M tokens per step (Llama 3 pre-training's first stage; Dubey et al. 2024,
      // arXiv 2407.21783, §3.4.1), a multiple of the GPU count so that every dp divides it.
      const int64_t target = 4 * 1024 * 1024;
      const int64_t per_gpu = std::max<int64_t>(1, (target / seq + args->gpus - 1) / args->gpus);
      const int64_t gb = args->global_batch > 0 ? args->global_batch : per_gpu * args->gpus;
      const std::string text =
          "name: check-claim\nmodel: " + args->model + "\nhardware: " + args->hardware +
          "\ntopology: " + topology + "\ngpus: " + std::to_string(args->gpus) +
          "\ntraining: {seq_len: " + std::to_string(seq) + ", global_batch: " + std::to_string(gb) +
          ", precision: " + args->precision + "}\n";
      Result<ScenarioDocument> doc = ScenarioDocument::ParseText(text, "<check-claim>");
      if (!doc.ok()) {
        ctx.exit_code = ReportStatus(doc.status());
        return;
      }
      base.emplace(std::move(*doc));
    }
    Result<ProgressStyle> style = ParseProgressStyle(args->progress, isatty(STDERR_FILENO) != 0);
    if (!style.ok()) {
      ctx.exit_code = ReportStatus(style.status());
      return;
    }
    ClaimOptions o;
    o.jobs = ThreadsToUse(args->jobs);
    o.simulate_given_layout = !args->scenario.empty();
    Result<std::optional<ResidualSet>> residuals = LibraryResiduals(load);
    if (!residuals.ok()) {
      ctx.exit_code = ReportStatus(residuals.status());
      return;
    }
    o.residuals = std::move(*residuals);
    StderrProgress progress(*style, "layout search");
    o.progress = progress.Callback();
    Result<ClaimCheck> check = CheckClaim(*base, *claim, o, load);
    if (!check.ok()) {  // no "done" line for a search refused before it started
      ctx.exit_code = ReportStatus(check.status());
      return;
    }
    progress.Finish();
    std::fputs(ClaimReport(*check).c_str(), stdout);
  });
}

}  // namespace shardsim
