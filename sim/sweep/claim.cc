// CheckClaim: the claim under each FLOPs convention, the physical ceiling, the best layout a
// sweep finds, and the verdict.
#include "sim/sweep/claim.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/base/strings.h"
#include "sim/base/units.h"
#include "sim/model/flops.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/layout_space.h"
#include "sim/sweep/point_space.h"
#include "sim/sweep/ranking.h"
#include "sim/sweep/spec_check.h"

namespace shardsim {
namespace {

// Context parallelism is searched only for sequences at least this long: below it the layout
// space grows without a plausible winner (Llama 3 used CP only for its 128K-token stage;
// Dubey et al. 2024, arXiv 2407.21783, §3.3.2).
constexpr int64_t kMinSeqForCp = 16384;

Axis MakeAxis(const std::string& key, const std::vector<std::string>& values) {
  Axis a;
  a.key = key;
  for (const std::string& v : values) a.values.push_back(AxisValue{v, v, {}});
  return a;
}

// The search: every valid layout with TP inside a node, every micro-batch, recompute mode and
// ZeRO-1 / ZeRO-3 (FSDP).
SweepSpec SearchSpec(const ScenarioDocument& base, const Scenario& probe) {
  SweepSpec spec;
  spec.file = base.path();
  spec.base = base;
  spec.dims.push_back(SweepDim{{MakeAxis("training.recompute", {"none", "selective", "full"})}});
  spec.dims.push_back(SweepDim{{MakeAxis("parallel.zero_stage", {"1", "3"})}});
  spec.layout.enabled = true;
  for (int64_t tp = 1; tp <= probe.topology.gpus_per_node; tp *= 2) spec.layout.tp.push_back(tp);
  if (probe.training.seq_len < kMinSeqForCp) spec.layout.cp = {1};
  spec.micro_batch_auto = true;
  return spec;
}

std::string Tok(double v) { return FormatSig(v, 4); }

void Judge(ClaimCheck& c) {
  // A stated layout that cannot run (it does not fit in memory): the claim cannot be run as
  // stated, whatever the best layout reaches.
  if (c.runs_as_stated.has_value() && !*c.runs_as_stated) {
    c.verdict = Verdict::kImpossible;
    if (c.given->status == PointStatus::kCannotFinish) {
      // It fits and its step is simulated, but the job fails faster than it restarts or saves
      // its work (Goodput::feasible): simulate of it exits 1 the same way.
      const Row& g = *c.given;
      c.reasons.push_back("the stated layout (" + c.layout_text + ") runs a step of " +
                          FormatSeconds(Seconds(g[Metric::kStepTime])) + " (" +
                          Tok(g[Metric::kTokensPerSPerGpu]) + " tokens/s per GPU) on " +
                          std::to_string(c.gpus) + " " + c.hardware +
                          ", but the run of training.tokens cannot finish (" + g.reason +
                          "): the claim cannot be run as stated");
      c.assumptions.push_back(
          "a job that fails less often, or restarts and checkpoints faster, than the figures "
          "above: the scenario's reliability.* and storage.* keys (docs/goodput.md)");
      if (c.best) {
        c.assumptions.push_back(
            "or a layout other than the stated one: the best layout found reaches " +
            Tok((*c.best)[Metric::kTokensPerSPerGpu]) + " tokens/s per GPU and can finish");
      }
      return;
    }
    c.reasons.push_back("the stated layout (" + c.layout_text + ") does not fit in memory on " +
                        std::to_string(c.gpus) + " " + c.hardware + " (" + c.given->reason +
                        "): the claim cannot be run as stated");
    if (c.best) {
      c.assumptions.push_back("a layout other than the stated one: the best layout found reaches " +
                              Tok((*c.best)[Metric::kTokensPerSPerGpu]) +
                              " tokens/s per GPU (check-claim without --layout judges the "
                              "claim against it)");
    } else {
      c.assumptions.push_back("more memory per GPU than " + c.hardware +
                              " has: no layout searched fits either");
    }
    return;
  }
  // The actual throughput of the best layout lies in [best x low, best x high]: ±15%, or, from
  // the validation residuals, best / (1 + e_high) to best / (1 + e_low) (actual step time =
  // predicted x (1 + e)).
  const PredictionInterval& pi = c.interval;
  const double low = pi.available ? 1.0 / (1.0 + pi.error_high) : 1.0 - kStatedUncertainty;
  const double high = pi.available ? 1.0 / (1.0 + pi.error_low) : 1.0 + kStatedUncertainty;
  const std::string range = pi.available ? "prediction interval (x" + FormatSig(low, 3) + " to x" +
                                               FormatSig(high, 3) + " of its throughput, from " +
                                               pi.note + ")"
                                         : "±" + FormatSig(kStatedUncertainty * 100.0, 2) + "%";
  const std::string unc = pi.available ? range : "stated uncertainty of " + range;
  const std::string within_unc = pi.available ? "the " + range : range;
  const bool flops_claim = c.claim.kind == ClaimKind::kFlopsPerGpu ||
                           c.claim.kind == ClaimKind::kFlopsTotal ||
                           c.claim.kind == ClaimKind::kMfu;
  const double claimed_flops =
      c.conventions.empty() ? 0.0 : c.conventions.front().tflops_per_gpu * kTera;
  if (flops_claim ? claimed_flops > c.peak_flops * (1.0 + 1e-12) : c.claimed_low > c.ceiling) {
    c.verdict = Verdict::kImpossible;
    if (flops_claim) {
      c.reasons.push_back("the claim is " + FormatRate(claimed_flops, "FLOP/s") +
                          " per GPU, above the dense " + c.precision + " peak of " + c.hardware +
                          " (" + FormatRate(c.peak_flops, "FLOP/s") + ")");
    } else {
      c.reasons.push_back(Tok(c.claimed_low) +
                          " tokens/s per GPU is above the physical ceiling "
                          "of " +
                          Tok(c.ceiling) + ": every GPU at its dense " + c.precision + " peak (" +
                          FormatRate(c.peak_flops, "FLOP/s") +
                          ") doing nothing but "
                          "the matmuls and the causal half of attention");
    }
    if (c.fp8_peak_flops > c.peak_flops &&
        (flops_claim ? claimed_flops <= c.fp8_peak_flops
                     : c.claimed_low <= c.ceiling * c.fp8_peak_flops / c.peak_flops)) {
      c.assumptions.push_back("the matmuls run in FP8 (dense peak " +
                              FormatRate(c.fp8_peak_flops, "FLOP/s") +
                              "), which the claim does not say: check again with precision fp8");
    } else {
      c.assumptions.push_back(
          "none: no counting of FLOPs or tokens makes it fit under the peak; "
          "the figure is per-step-inflated, aggregated over more GPUs than "
          "stated, or wrong");
    }
    return;
  }
  if (!c.best && !c.judged_against_given && c.cannot_finish > 0) {
    // Layouts fit, but none of them can finish the run of training.tokens (Goodput::feasible).
    c.verdict = Verdict::kImplausible;
    c.reasons.push_back("no layout of " + std::to_string(c.gpus) + " " + c.hardware +
                        " among the " + std::to_string(c.searched) +
                        " points searched can finish the run of training.tokens: " +
                        std::to_string(c.cannot_finish) + " fit in memory and cannot finish (" +
                        c.cannot_finish_reason + ")");
    c.assumptions.push_back(
        "a job that fails less often, or restarts and checkpoints faster, than the figures "
        "above: the scenario's reliability.* and storage.* keys (docs/goodput.md)");
    return;
  }
  if (!c.best && !c.judged_against_given) {
    c.verdict = Verdict::kImplausible;
    c.reasons.push_back("no layout of " + std::to_string(c.gpus) + " " + c.hardware +
                        " fits the model in memory among the " + std::to_string(c.searched) +
                        " points searched");
    c.assumptions.push_back("more memory per GPU than " + c.hardware +
                            " has, or a memory-saving technique shardsim does not model "
                            "(CPU offload, activation offload)");
    return;
  }
  // Against the stated layout when --layout gave one that fits, else the best one found.
  const Row& b = c.judged_against_given ? *c.given : *c.best;
  const std::string ref = c.judged_against_given ? "the stated layout (" + c.layout_text + ")"
                                                 : "the best layout shardsim finds";
  const std::string ref_short = c.judged_against_given ? "stated layout" : "best layout";
  const double best = b[Metric::kTokensPerSPerGpu];
  const std::string best_text =
      Tok(best) + " tokens/s per GPU (MFU " + FormatSig(100.0 * b[Metric::kMfu], 3) + "%)";
  if (c.claimed_low > best * high) {
    c.verdict = Verdict::kImplausible;
    c.reasons.push_back("the claim (" + Tok(c.claimed_low) +
                        (c.claimed_high > c.claimed_low ? " to " + Tok(c.claimed_high) : "") +
                        " tokens/s per GPU) is " +
                        FormatSig(100.0 * (c.claimed_low / best - 1.0), 3) + "% above " + ref +
                        ", " + best_text + ", beyond its " + unc);
    const double tokens_per_step = b[Metric::kTokensPerStep];
    const double step_needed = tokens_per_step / (c.claimed_low * static_cast<double>(c.gpus));
    const double compute = b[Metric::kCompute] + b[Metric::kRecompute];
    c.assumptions.push_back("a step of " + Tok(tokens_per_step) + " tokens in " +
                            FormatSeconds(Seconds(step_needed)) + " (" + ref_short + ": " +
                            FormatSeconds(Seconds(b[Metric::kStepTime])) + ", of which " +
                            FormatSeconds(Seconds(compute)) + " is kernel time)");
    if (step_needed < compute) {
      c.assumptions.push_back(
          "kernels " + FormatSig(compute / step_needed, 3) +
          "x faster than shardsim's "
          "kernel-efficiency model of " +
          c.hardware +
          " (fitted to measured GEMM and attention "
          "kernels, hardware/calibration/): even with all communication and the pipeline bubble "
          "hidden, the GPUs would have to run closer to peak than those kernels do");
    } else {
      c.assumptions.push_back(
          "communication and pipeline bubble almost entirely hidden: the " + ref_short + " loses " +
          FormatSeconds(Seconds(b[Metric::kStepTime] - compute)) + " per step to them");
    }
    if (c.fp8_peak_flops > c.peak_flops) {
      c.assumptions.push_back("or FP8 matmuls (peak " + FormatRate(c.fp8_peak_flops, "FLOP/s") +
                              ") where the claim's setup says " + c.precision);
    }
    c.assumptions.push_back("or tokens counted differently: shorter sequences than " +
                            std::to_string(c.seq_len) +
                            " (less attention work per token), "
                            "padding counted as tokens, or a larger global batch than " +
                            std::to_string(c.global_batch) + " (a smaller pipeline bubble)");
    return;
  }
  if (c.claimed_high < best * low) {
    c.verdict = Verdict::kConservative;
    c.reasons.push_back("the claim is " + FormatSig(100.0 * (1.0 - c.claimed_high / best), 3) +
                        "% below " + ref + ", " + best_text + ", by more than its " + unc);
    c.assumptions.push_back(
        c.judged_against_given
            ? "nothing unusual: a less tuned batch or software stack than the one modeled for "
              "the stated layout reaches this"
            : "nothing unusual: a less tuned layout, batch or software stack than "
              "the best one found reaches this");
    return;
  }
  c.verdict = Verdict::kPlausible;
  // A FLOP/s or MFU claim reads as different token rates under different conventions; say under
  // which it is within the uncertainty and under which it is not (a "50% MFU" claim can be within
  // under 6·N·D and 22% below under model FLOPs with attention).
  std::vector<std::string> within, outside;
  for (const FlopsConvention& k : c.conventions) {
    const double gap = k.tokens_per_s_per_gpu / best - 1.0;
    const std::string text = k.name + " " + (gap >= 0 ? "+" : "") + FormatSig(100.0 * gap, 3) + "%";
    if (std::find(within.begin(), within.end(), text) != within.end() ||
        std::find(outside.begin(), outside.end(), text) != outside.end()) {
      continue;
    }
    const double ratio = k.tokens_per_s_per_gpu / best;
    (ratio >= low && ratio <= high ? within : outside).push_back(text);
  }
  std::string reason;
  if (within.empty()) {
    // Above the best layout under one convention, below it under another, within the
    // uncertainty under none of them.
    reason = "no FLOPs convention listed reads the claim within " + within_unc + " of " + ref +
             ", " + best_text + ": " + Join(outside, ", ") +
             "; it is plausible only under a FLOPs count between those conventions";
  } else {
    reason = "the claim is within " + within_unc + " of " + ref + ", " + best_text;
    if (!outside.empty()) {
      reason += ", read under " + Join(within, ", ") + "; not under " + Join(outside, ", ");
    }
  }
  c.reasons.push_back(reason);
  c.assumptions.push_back(c.judged_against_given
                              ? "the stated layout, with its communication overlapped as "
                                "shardsim models it"
                              : "a layout close to the best one found, with its communication "
                                "overlapped as shardsim models it");
}

}  // namespace

int64_t ClaimDefaultGlobalBatch(int64_t seq, int64_t gpus) {
  const double target = 4.0 * 1024 * 1024 / static_cast<double>(std::max<int64_t>(1, seq));
  const double g = static_cast<double>(std::max<int64_t>(1, gpus));
  if (target >= g) return std::max<int64_t>(1, std::llround(target / g)) * gpus;
  int64_t best = 1;
  for (int64_t d = 1; d * d <= gpus; ++d) {
    if (gpus % d != 0) continue;
    for (int64_t v : {d, gpus / d}) {
      if (static_cast<double>(v) <= target) best = std::max(best, v);
    }
  }
  return best;
}

Result<ClaimCheck> CheckClaim(const ScenarioDocument& given_base, const Claim& claim,
                              const ClaimOptions& options, const LoadOptions& load) {
  // Sequence parallelism wherever tp > 1 unless the scenario says otherwise: NeMo's and
  // torchtitan's default with TP (Megatron-LM's --sequence-parallel is what their recipes
  // run); without it the search pays the TP all-reduces on unsplit activations and
  // under-rates every TP layout. With tp 1 the key has no effect (sim/model/op_builders.cc).
  ScenarioDocument base = given_base;
  {
    SweepSpec probe_spec;
    probe_spec.file = base.path();
    probe_spec.base = base;
    if (!SpecSetsKey(probe_spec, "parallel.sequence_parallel", load)) {
      Status set = base.Set("parallel.sequence_parallel", "true");
      if (!set.ok()) return set;
    }
  }
  Result<ScenarioDocument> probe_doc = ProbeDocument(base, {});
  if (!probe_doc.ok()) return probe_doc.status();
  Result<Scenario> probe = probe_doc->Build(load);
  if (!probe.ok()) return probe.status();
  const Scenario& s = *probe;
  Result<PointSpace> space = PointSpace::Enumerate(SearchSpec(base, s), load);
  if (!space.ok()) return space.status();

  ClaimCheck c;
  c.claim = claim;
  if (options.residuals) c.interval = IntervalFor(*options.residuals, IntervalKeyOf(s));
  c.model = s.model.name;
  c.hardware = s.hardware.name;
  c.topology = s.topology.name;
  c.precision = Name(s.training.precision);
  c.gpus = space->Gpus(0);
  c.num_layers = s.model.num_layers;
  c.split_keys_given = SplitKeysGiven(s);
  c.embedding_in_split = s.parallel.account_for_embedding_in_pipeline_split;
  c.loss_in_split = s.parallel.account_for_loss_in_pipeline_split;
  // The search's points take the GPU count as given: a count the cluster cannot hold would make
  // every point invalid, and the verdict would blame memory.
  const std::string cluster = s.topology.GpusProblem(c.gpus);
  if (!cluster.empty()) return Status::Invalid("check-claim: " + cluster);
  c.seq_len = s.training.seq_len;
  c.global_batch = s.training.global_batch;
  c.sequence_parallel = s.parallel.sequence_parallel;
  c.layout_text = options.layout_text;
  const auto peak = s.hardware.peak_flops.find(s.training.precision);
  if (peak == s.hardware.peak_flops.end() || !(peak->second > 0.0)) {
    return Status::Invalid("hardware " + c.hardware + " has no " + c.precision +
                           " peak (peak_flops." + c.precision + "): cannot judge a claim");
  }
  c.peak_flops = peak->second;
  const auto fp8 = s.hardware.peak_flops.find(DType::kFp8);
  c.fp8_peak_flops = fp8 != s.hardware.peak_flops.end() ? fp8->second : 0.0;

  // FLOPs per token under each convention (docs/reference.md §5 "FLOPs").
  TrainingSpec t = s.training;
  t.recompute = Recompute::kSelective;
  Result<FlopsSummary> sel = SummarizeFlops(s.model, t);
  t.recompute = Recompute::kFull;
  Result<FlopsSummary> full = SummarizeFlops(s.model, t);
  if (!sel.ok()) return sel.status();
  if (!full.ok()) return full.status();
  const FlopsSummary& f = *sel;
  const double model = f.model_fwd_per_token + f.model_bwd_per_token;
  const double head_dim = static_cast<double>(s.model.head_dim);
  c.conventions = {
      {"6·N", "6 x parameters per token (Kaplan 2020; the C = 6ND rule)", 6.0 * f.params_6nd},
      {"6·N + attention", "PaLM (Chowdhery 2022, App. B): 6N + 12·L·H·Q·T",
       PalmFlopsPerToken(f.params_6nd, static_cast<double>(s.model.num_layers),
                         static_cast<double>(s.model.num_heads), head_dim,
                         static_cast<double>(s.training.seq_len))},
      {"model FLOPs", "operator level, attention as the full s·s square (Megatron-LM, MFU)", model},
      {"with selective recompute", "model FLOPs + the attention core again (HFU)",
       model + f.recompute_per_token},
      {"with full recompute", "model FLOPs + one more forward of the layers (HFU)",
       model + full->recompute_per_token},
  };
  const double gpus = static_cast<double>(std::max<int64_t>(1, c.gpus));
  for (FlopsConvention& k : c.conventions) {
    double tps = 0.0, flops = 0.0;  // per GPU
    switch (claim.kind) {
      case ClaimKind::kTokensPerS:
        tps = claim.value / gpus;
        break;
      case ClaimKind::kTokensPerSPerGpu:
        tps = claim.value;
        break;
      case ClaimKind::kTimeToTrain:
        tps = claim.train_tokens / claim.value / gpus;
        break;
      case ClaimKind::kFlopsPerGpu:
        flops = claim.value;
        break;
      case ClaimKind::kFlopsTotal:
        flops = claim.value / gpus;
        break;
      case ClaimKind::kMfu:
        flops = claim.value * c.peak_flops;
        break;
    }
    if (flops > 0.0) tps = flops / k.flops_per_token;
    if (flops == 0.0) flops = tps * k.flops_per_token;
    k.tokens_per_s_per_gpu = tps;
    k.tflops_per_gpu = flops / kTera;
    k.mfu = flops / c.peak_flops;
  }
  c.claimed_low = c.claimed_high = c.conventions.front().tokens_per_s_per_gpu;
  for (const FlopsConvention& k : c.conventions) {
    c.claimed_low = std::min(c.claimed_low, k.tokens_per_s_per_gpu);
    c.claimed_high = std::max(c.claimed_high, k.tokens_per_s_per_gpu);
  }
  c.min_flops_per_token =
      3.0 * (f.fwd_layer_matmuls + f.fwd_head + f.fwd_mtp) + 3.0 * f.fwd_attention / 2.0;
  c.ceiling = c.peak_flops / c.min_flops_per_token;

  if (options.simulate_given_layout || !options.layout.empty()) {
    SweepSpec own;
    own.file = base.path();
    own.base = base;
    bool dp_given = false;
    int64_t others = 1;  // tp * pp * cp as stated (1 where not stated)
    for (const auto& [key, value] : options.layout) {
      Status set = own.base->Set(key, value);
      if (!set.ok()) return set;
      dp_given = dp_given || key == "parallel.dp";
      if (key == "parallel.tp" || key == "parallel.pp" || key == "parallel.cp") {
        others *= std::max<int64_t>(1, std::atoll(value.c_str()));
      }
    }
    // dp: what the GPUs leave (a count that does not divide is reported by the validator).
    if (!options.layout.empty() && !dp_given) {
      for (const char* k : {"parallel.tp", "parallel.pp", "parallel.cp"}) {
        bool stated = false;
        for (const auto& kv : options.layout) stated = stated || kv.first == k;
        if (!stated) {
          Status set = own.base->Set(k, "1");
          if (!set.ok()) return set;
        }
      }
      Status set = own.base->Set("parallel.dp", std::to_string(std::max<int64_t>(
                                                    1, c.gpus / std::max<int64_t>(1, others))));
      if (!set.ok()) return set;
    }
    Result<PointSpace> one = PointSpace::Enumerate(own, load);
    if (!one.ok()) return one.status();
    c.given = EvaluatePoint(*one, 0, load);
    // A stated layout the run cannot use at all is bad input, not a layout to judge against:
    // every reason the reader and validator give, then what would be valid.
    if (!options.layout.empty() && c.given->status == PointStatus::kError) {
      return Status::Internal("check-claim: simulating --layout " + options.layout_text +
                              " failed: " + c.given->reason);
    }
    if (!options.layout.empty() && c.given->status == PointStatus::kInvalid) {
      DiagnosticSink sink;
      const std::string head = "--layout: " + options.layout_text + ": ";
      Result<ScenarioDocument> doc = one->Document(0);
      Result<Scenario> built = !one->Problem(0).empty() || !doc.ok()
                                   ? Result<Scenario>(Status::Invalid(c.given->reason))
                                   : doc->Build(load);
      if (built.ok()) {
        sink.Add(SourceLoc{}, head + c.given->reason);
      } else {
        for (const Diagnostic& d : built.status().diagnostics())
          sink.Add(SourceLoc{}, head + d.message);
      }
      sink.Add(SourceLoc{}, "--layout: valid: a layout simulate accepts for " + c.model + " on " +
                                std::to_string(c.gpus) +
                                " GPUs (dp x tp x pp x cp = the GPUs, dp the rest where not "
                                "stated; tp dividing the heads and tp x cp the sequence), or no "
                                "--layout to judge against the best layout found");
      return sink.ToStatus();
    }
    c.given_label = options.layout.empty() ? "The scenario's own layout"
                                           : "The stated layout (" + options.layout_text + ")";
    c.judged_against_given = !options.layout.empty();
    if (!options.layout.empty()) c.runs_as_stated = Feasible(c.given->status);
  }
  SweepRunOptions run_options;
  run_options.jobs = options.jobs;
  run_options.progress = options.progress;
  Result<SweepRun> run = RunSweep(*space, run_options, load);
  if (!run.ok()) return run.status();
  c.searched = run->shard_points;
  c.feasible = run->summary.feasible();
  c.cannot_finish = run->summary.count(PointStatus::kCannotFinish);
  for (const InfeasibleGroup& g : run->summary.groups()) {
    if (g.status == PointStatus::kCannotFinish && c.cannot_finish_reason.empty()) {
      c.cannot_finish_reason = g.example_reason;
    }
  }
  c.best_columns = space->input_columns();
  const std::vector<Row>& rows = run->summary.feasible_rows();
  if (!rows.empty()) {
    Result<std::vector<size_t>> order = Rank(rows, RankOptions{});
    if (!order.ok()) return order.status();
    c.best = rows[order->front()];
  }
  Judge(c);
  return c;
}

}  // namespace shardsim
