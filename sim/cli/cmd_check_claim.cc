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
#include "sim/report/library_residuals.h"
#include "sim/sweep/claim.h"
#include "sim/sweep/claim_base.h"
#include "sim/sweep/claim_json.h"
#include "sim/sweep/progress.h"

namespace shardsim {
namespace {

struct ClaimArgs {
  std::string claim, scenario, model, hardware, topology, precision = "bf16", progress = "auto";
  std::string layout;
  int64_t gpus = 0, seq_len = 0, global_batch = 0;
  int jobs = 0;
  bool json = false;
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
      cmd->add_option("--topology", args->topology,
                      "cluster (default: the hardware's default_topology)"),
      cmd->add_option("--gpus", args->gpus, "GPU count"),
      cmd->add_option("--seq-len", args->seq_len,
                      "sequence length (default: the claim's \"at seq N\", else 8192 with a "
                      "warning)"),
      cmd->add_option("--global-batch", args->global_batch,
                      "sequences per step (default: about 4M tokens, a multiple of the GPU count "
                      "where it can be)"),
      cmd->add_option("--precision", args->precision, "bf16 (default), fp16, fp8")};
  cmd->add_option("--layout", args->layout,
                  "a stated recipe to check, e.g. \"tp=4,pp=4,vp=5,mb=1\" (keys dp tp pp cp ep vp "
                  "schedule zero sp mb recompute; dp: the rest); the verdict is judged against it");
  cmd->add_option("-j,--jobs", args->jobs, "threads for the layout search (default: all cores)");
  cmd->add_option("--progress", args->progress, "auto (default), bar, plain or none");
  cmd->add_flag("--json", args->json, "print JSON (keys: sim/sweep/claim_json.h)");
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
    if (usage.ok() && claim->seq_len > 0 && args->seq_len > 0 && claim->seq_len != args->seq_len) {
      usage = Status::Invalid("check-claim: the claim says seq " + std::to_string(claim->seq_len) +
                              " and --seq-len says " + std::to_string(args->seq_len) +
                              "; give one of them");
    }
    ClaimOptions o;
    if (usage.ok() && !args->layout.empty()) {
      Result<std::vector<std::pair<std::string, std::string>>> layout =
          ParseLayoutOption(args->layout);
      if (layout.ok()) {
        o.layout = std::move(*layout);
        o.layout_text = args->layout;
      } else {
        usage = layout.status();
      }
    }
    if (!usage.ok()) {
      ctx.exit_code = ReportStatus(usage);
      return;
    }
    std::string warning;  // printed with the report (the search may still refuse the inputs)
    std::optional<ScenarioDocument> base;
    if (!args->scenario.empty()) {
      Result<ScenarioDocument> doc = ScenarioDocument::Parse(args->scenario);
      if (!doc.ok()) {
        ctx.exit_code = ReportStatus(doc.status());
        return;
      }
      base.emplace(std::move(*doc));
      if (claim->seq_len > 0) {
        // The scenario gives the training; a claim at another sequence is about another run.
        Result<Scenario> sc = base->Build(load);
        if (sc.ok() && sc->training.seq_len != claim->seq_len) {
          ctx.exit_code = ReportStatus(
              Status::Invalid("check-claim: the claim says seq " + std::to_string(claim->seq_len) +
                              " and " + args->scenario + " trains at training.seq_len " +
                              std::to_string(sc->training.seq_len) + "; make them agree"));
          return;
        }
      }
    } else {
      ClaimSetup setup;
      setup.model = args->model;
      setup.hardware = args->hardware;
      setup.topology = args->topology;
      setup.precision = args->precision;
      setup.gpus = args->gpus;
      setup.seq_len = args->seq_len;
      setup.global_batch = args->global_batch;
      setup.claim_seq_len = claim->seq_len;
      Result<ScenarioDocument> doc = ClaimBaseScenario(setup, load, &warning);
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
    if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
    std::fputs((args->json ? ClaimJson(*check) : ClaimReport(*check)).c_str(), stdout);
    // The stated layout does not fit: the run as stated is infeasible (exit 1, as simulate).
    if (check->runs_as_stated.has_value() && !*check->runs_as_stated) ctx.exit_code = 1;
  });
}

}  // namespace shardsim
