// The text of `shardsim check-claim`.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "sim/base/strings.h"
#include "sim/base/units.h"
#include "sim/report/summary.h"
#include "sim/report/text_table.h"
#include "sim/sweep/claim.h"
#include "sim/sweep/layout_space.h"

namespace shardsim {
namespace {

// 4.818e+10: FLOP counts are read by their magnitude.
std::string Sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// The layout's inputs, and which of the embedding and the loss count as layers of its pipeline
// split: the scenario's own keys when it gives them, else both where its pp does not divide
// the layers (the search's rule, sim/sweep/layout_space.h).
std::string LayoutOf(const Row& r, const std::vector<std::string>& columns, const ClaimCheck& c) {
  std::vector<std::string> parts;
  int64_t pp = 1;
  for (size_t i = 0; i < columns.size() && i < r.inputs.size(); ++i) {
    const size_t dot = columns[i].rfind('.');
    parts.push_back((dot == std::string::npos ? columns[i] : columns[i].substr(dot + 1)) + " " +
                    r.inputs[i]);
    if (columns[i] == "parallel.pp") pp = std::atoll(r.inputs[i].c_str());
  }
  bool embedding = false, loss = false;
  if (pp > 1 && c.split_keys_given) {
    embedding = c.embedding_in_split;
    loss = c.loss_in_split;
  } else if (c.num_layers > 0 && SearchCountsEdges(c.num_layers, pp)) {
    embedding = loss = true;
  }
  if (embedding && loss) {
    parts.emplace_back("embedding and loss counted as layers of the pipeline split");
  } else if (embedding || loss) {
    parts.emplace_back(std::string(embedding ? "embedding" : "loss") +
                       " counted as a layer of the pipeline split");
  }
  return Join(parts);
}

// The row's figures, with what the kernels executed as simulate prints it.
std::string Prediction(const Row& r) {
  std::string out = FormatSig(r[Metric::kTokensPerSPerGpu], 4) + " tokens/s per GPU, " +
                    FormatSig(r[Metric::kTflopsPerGpu], 4) +
                    " TFLOP/s per GPU (model FLOPs), MFU " + Percent(r[Metric::kMfu]);
  if (r.has(Metric::kExecutedTflopsPerGpu) && r.has(Metric::kExecutedFractionOfPeak)) {
    out += ", executed " + FormatSig(r[Metric::kExecutedTflopsPerGpu], 4) + " TFLOP/s per GPU (" +
           Percent(r[Metric::kExecutedFractionOfPeak]) + " of peak)";
  }
  out += ", step " + FormatSeconds(Seconds(r[Metric::kStepTime])) + ", peak memory " +
         FormatBytes(Bytes(r[Metric::kPeakMemory]));
  return out;
}

// simulate's `flops:` note for the row, on a line of its own ("" when it needs none).
std::string NoteLine(const Row& r) {
  const std::string note = FlopsNoteOf(r);
  return note.empty() ? "" : "  flops: " + note + "\n";
}

}  // namespace

std::string ClaimReport(const ClaimCheck& c) {
  std::string out = "shardsim check-claim: \"" + c.claim.text + "\"\n  " + c.model + " on " +
                    std::to_string(c.gpus) + " x " + c.hardware + " (" + c.topology + "), seq " +
                    std::to_string(c.seq_len) + ", global batch " + std::to_string(c.global_batch) +
                    ", " + c.precision + " (dense peak " + FormatRate(c.peak_flops, "FLOP/s") +
                    " per GPU)\n  sequence parallelism " +
                    (c.sequence_parallel ? "on where tp > 1" : "off") + "\n\n";
  out += "The claim under each FLOPs convention\n";
  TextTable t({"convention", "FLOPs/token", "tokens/s/GPU", "TFLOP/s/GPU", "of peak", "source"});
  t.SetLeftAligned({5});
  for (const FlopsConvention& k : c.conventions) {
    t.AddRow({k.name, Sci(k.flops_per_token), FormatSig(k.tokens_per_s_per_gpu, 4),
              FormatSig(k.tflops_per_gpu, 4), Percent(k.mfu), k.source});
  }
  out += t.ToString();
  out += "\nPhysical ceiling: " + FormatSig(c.ceiling, 4) +
         " tokens/s per GPU (dense peak, only the matmuls and the causal half of attention: " +
         Sci(c.min_flops_per_token) + " FLOPs per token)";
  if (c.fp8_peak_flops > c.peak_flops) {
    out += "; " + FormatSig(c.ceiling * c.fp8_peak_flops / c.peak_flops, 4) + " in FP8";
  }
  out += "\n";
  out += "Best layout found: ";
  if (c.best) {
    out += Prediction(*c.best) + "\n  " + LayoutOf(*c.best, c.best_columns, c) + " (" +
           std::to_string(c.feasible) + " feasible of " + std::to_string(c.searched) +
           " points searched)\n" + NoteLine(*c.best);
  } else if (c.cannot_finish > 0) {
    out += "none can finish the run (" + std::to_string(c.searched) + " points searched, " +
           std::to_string(c.cannot_finish) + " fit and cannot finish)\n";
  } else {
    out += "none fits (" + std::to_string(c.searched) + " points searched)\n";
  }
  if (c.given) {
    out += c.given_label + ": ";
    out += Feasible(c.given->status) ? Prediction(*c.given)
                                     : std::string(Name(c.given->status)) + ": " + c.given->reason;
    out += "\n";
    if (Feasible(c.given->status)) out += NoteLine(*c.given);
    // Simulated, but its run cannot finish: the step is still reported, as simulate reports it.
    if (c.given->status == PointStatus::kCannotFinish) {
      out += "  its step: " + Prediction(*c.given) + "\n" + NoteLine(*c.given);
    }
  }
  out += "\nVerdict: " + std::string(Name(c.verdict)) + "\n";
  for (const std::string& r : c.reasons) out += "  - " + r + "\n";
  out += c.verdict == Verdict::kImpossible || c.verdict == Verdict::kImplausible
             ? "For the claim to be true, it would need:\n"
             : "Assumptions behind this verdict:\n";
  for (const std::string& a : c.assumptions) out += "  - " + a + "\n";
  if (c.interval.available) {
    const PredictionInterval& p = c.interval;
    auto pct = [](double e) { return (e >= 0 ? "+" : "") + FormatSig(100.0 * e, 3) + "%"; };
    out += "Uncertainty: published/predicted step time " + pct(p.error_low) + " to " +
           pct(p.error_high) + " (" + FormatSig(100.0 * p.coverage, 3) + "% nominal), from " +
           p.note + " in " + kResidualsPath + "\n";
  } else {
    out += "Stated uncertainty: ±" + FormatSig(kStatedUncertainty * 100.0, 2) + "%, from " +
           kUncertaintySource + (c.interval.note.empty() ? "" : " (" + c.interval.note + ")") +
           "\n";
  }
  return out;
}

}  // namespace shardsim
