#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "sim/base/strings.h"
#include "sim/base/units.h"
#include "sim/model/params.h"
#include "sim/report/html_page.h"
#include "sim/report/html_report.h"
#include "sim/report/html_simulate_data.h"
#include "sim/report/summary.h"

namespace shardsim {
namespace {

std::string Esc(std::string_view s) { return HtmlEscape(s); }
std::string Num(double v) { return JsonNumber(v); }
std::string I(int64_t v) { return std::to_string(v); }

std::string Row(std::string_view name, std::string_view value) {
  return "<tr><th>" + Esc(name) + "</th><td>" + Esc(value) + "</td></tr>\n";
}

std::string Card(std::string_view id, std::string_view label, const std::string& value_html,
                 const std::string& note_html) {
  return "<div class=\"card\" id=\"card-" + Esc(id) + "\"><div class=\"label\">" + Esc(label) +
         "</div><div class=\"value\">" + value_html + "</div><div class=\"note\">" + note_html +
         "</div></div>\n";
}

std::string Headline(const Scenario& sc, const SimResult& r) {
  const int64_t mbs = r.program ? r.program->microbatches : 0;
  const double cap = sc.hardware.memory_capacity;
  std::string out = "<section class=\"cards\" id=\"headline\">\n";
  out += Card("step", "step time",
              KeyedValue("step_time_s", Num(r.step_time.value()), FormatSeconds(r.step_time)),
              Esc(I(mbs) + " micro-batches of " + I(sc.training.micro_batch) + " x " +
                  I(sc.training.seq_len) + " tokens per pipeline"));
  out += Card("tokens", "tokens/s",
              KeyedValue("tokens_per_s", Num(r.tokens_per_s), GroupedNumber(r.tokens_per_s)),
              KeyedValue("tokens_per_s_per_gpu", Num(r.tokens_per_s_per_gpu),
                         GroupedNumber(r.tokens_per_s_per_gpu)) +
                  " per GPU, " + Esc(GroupedNumber(r.tokens_per_step)) + " tokens per step");
  out += Card(
      "mfu", "MFU", KeyedValue("mfu", Num(r.mfu), Percent(r.mfu)),
      "HFU " + KeyedValue("hfu", Num(r.hfu), Percent(r.hfu)) + ", " +
          KeyedValue("tflops_per_gpu", Num(r.tflops_per_gpu), FormatSig(r.tflops_per_gpu, 4)) +
          " model TFLOP/s per GPU of " +
          KeyedValue("peak_flops_per_gpu", Num(r.peak_flops_per_gpu),
                     FormatRate(r.peak_flops_per_gpu, "FLOP/s")) +
          " " + Esc(Name(sc.training.precision)) + "; executed " +
          KeyedValue("executed_tflops_per_gpu", Num(r.executed_tflops_per_gpu),
                     FormatSig(r.executed_tflops_per_gpu, 4)) +
          " TFLOP/s per GPU (" +
          KeyedValue("executed_fraction_of_peak", Num(r.executed_fraction),
                     Percent(r.executed_fraction)) +
          " of peak)" +
          // As the text report's `flops:` note (step_report.cc ConventionNote): MFU/HFU
          // above what ran are never shown without the reason.
          (r.flops.hardware_per_step > r.flops.executed_per_step && r.flops.executed_per_step > 0.0
               ? Esc("; MFU / HFU count causal attention as the full s x s square, HFU " +
                     FormatSig(r.flops.hardware_per_step / r.flops.executed_per_step, 3) +
                     "x the FLOPs executed")
               : std::string()));
  const double used = cap > 0.0 ? r.peak_memory.value() / cap : 0.0;
  out +=
      Card("memory", "peak memory",
           KeyedValue("memory.peak_bytes", Num(r.peak_memory.value()), FormatBytes(r.peak_memory)),
           "of " + KeyedValue("memory.capacity_bytes", Num(cap), FormatBytes(Bytes(cap))) + " (" +
               Esc(Percent(used)) + "), stage " +
               I(r.devices.empty() ? 0 : r.devices[static_cast<size_t>(r.worst_device)].coords.pp) +
               "<div class=\"meter" + std::string(r.fits ? "" : " over") +
               "\"><div style=\"width:" + FormatSig(std::min(used, 1.0) * 100.0, 3) +
               "%\"></div></div>");
  out += Card(
      "bubble", "pipeline bubble",
      KeyedValue("bubble_fraction", Num(r.bubble_fraction), Percent(r.bubble_fraction)),
      // SimResult::bubble_fraction: the busiest rank's wait on the pipeline over its own
      // work (sim/report/step_metrics.cc), which the label says.
      "waiting over working time on the busiest pipeline rank (stage " +
          I(r.devices.empty() ? 0 : r.devices[static_cast<size_t>(r.reference_device)].coords.pp) +
          ")");
  if (r.time_to_train_s && r.gpu_hours) {
    out += Card("train", "time to train",
                KeyedValue("time_to_train_s", Num(*r.time_to_train_s),
                           FormatSeconds(Seconds(*r.time_to_train_s))),
                KeyedValue("gpu_hours", Num(*r.gpu_hours), GroupedNumber(*r.gpu_hours)) +
                    " GPU-hours booked for " + Esc(FormatCount(*sc.training.tokens)) +
                    " tokens; ideal " +
                    KeyedValue("time_to_train_ideal_s", Num(*r.time_to_train_ideal_s),
                               FormatSeconds(Seconds(*r.time_to_train_ideal_s))));
  }
  if (r.goodput && !r.goodput->feasible) {
    out += Card("goodput", "goodput", "INFEASIBLE", Esc(r.goodput->infeasible_reason));
  } else if (r.goodput) {
    const Goodput& g = *r.goodput;
    out += Card("goodput", "goodput",
                KeyedValue("goodput.fraction", Num(g.fraction), Percent(g.fraction)),
                KeyedValue("goodput.interruptions_per_day", Num(g.interruptions_per_day),
                           FormatSig(g.interruptions_per_day, 3)) +
                    " interruptions/day, checkpoint " +
                    KeyedValue("goodput.checkpoint_write_s", Num(g.checkpoint_write_s),
                               FormatSeconds(Seconds(g.checkpoint_write_s))) +
                    ", stragglers x" +
                    KeyedValue("goodput.straggler_factor", Num(g.straggler_factor),
                               FormatSig(g.straggler_factor, 4)));
  }
  return out + "</section>\n";
}

std::string Verdict(const Scenario& sc, const SimResult& r) {
  const std::string need = FormatBytes(r.peak_memory) + " of " +
                           FormatBytes(Bytes(sc.hardware.memory_capacity)) + " per GPU";
  std::string out = "<section id=\"verdict\" class=\"verdict " +
                    std::string(r.fits ? "ok" : "bad") + "\"><strong>" +
                    KeyedValue("fits", r.fits ? "true" : "false",
                               r.fits ? "Fits in memory" : "Does not fit in memory") +
                    "</strong>: " + Esc(need) + ". ";
  out += "<span id=\"bottleneck-words\">" + Esc(BottleneckInWords(r)) + "</span></section>\n";
  return out;
}

std::string Chart(std::string_view id, std::string_view title, std::string_view hint,
                  std::string_view extra = "") {
  return "<section class=\"panel\" id=\"" + Esc(id) + "\"><h2>" + Esc(title) + "</h2>" +
         (hint.empty() ? "" : "<p class=\"hint\">" + Esc(hint) + "</p>") + std::string(extra) +
         "<div class=\"chart\" id=\"chart-" + Esc(id) +
         "\"></div>"
         "<div class=\"legend\" id=\"legend-" +
         Esc(id) + "\"></div></section>\n";
}

std::string Inputs(const Scenario& sc, const SimResult& r) {
  const ModelSpec& m = sc.model;
  const HardwareSpec& h = sc.hardware;
  const TopologySpec& t = sc.topology;
  const TrainingSpec& tr = sc.training;
  const ParallelSpec& p = sc.parallel;
  std::string model = Row("name", m.name);
  if (Result<ParamCount> pc = CountParams(m); pc.ok()) {
    model += Row("parameters",
                 FormatCount(static_cast<double>(pc->total)) +
                     (pc->active != pc->total
                          ? " (" + FormatCount(static_cast<double>(pc->active)) + " active)"
                          : ""));
  }
  model += Row("layers, hidden", I(m.num_layers) + ", " + I(m.hidden_size));
  model += Row("heads (kv), head dim",
               I(m.num_heads) + " (" + I(m.num_kv_heads) + "), " + I(m.head_dim));
  model += Row("ffn hidden, vocabulary", I(m.ffn_hidden_size) + ", " + I(m.vocab_size));
  model += Row("activation, norm, positions", std::string(Name(m.activation)) + ", " +
                                                  Name(m.norm) + ", " + Name(m.position_embedding));
  if (m.moe) {
    model += Row("experts", I(m.moe->num_experts) + " routed (top " + I(m.moe->top_k) + "), " +
                                I(m.moe->num_shared_experts) + " shared");
  }
  std::string hw = Row("name", h.name);
  for (const auto& [dtype, flops] : h.peak_flops)
    hw += Row(std::string("peak ") + Name(dtype), FormatRate(flops, "FLOP/s"));
  hw += Row("memory",
            FormatBytes(Bytes(h.memory_capacity)) + " at " + FormatRate(h.memory_bandwidth, "B/s"));
  std::string topo = Row("name", t.name);
  topo += Row("GPUs per node", I(t.gpus_per_node));
  topo += Row("intra-node", std::string(Name(t.intra_kind)) + " " +
                                FormatRate(t.intra_bandwidth, "B/s") + " per GPU per direction, " +
                                FormatSeconds(Seconds(t.intra_latency)));
  if (t.has_inter_node) {
    topo += Row("inter-node", I(t.nics_per_node) + " x " + Name(t.inter_kind) + " " +
                                  FormatRate(t.nic_bandwidth, "B/s") + " per node, " +
                                  FormatSeconds(Seconds(t.inter_latency)));
    topo += Row("fabric", std::string(Name(t.fabric)) + ", oversubscription " +
                              FormatSig(t.oversubscription, 3));
  }
  std::string train = Row("GPUs", I(sc.gpus));
  train += Row("sequence, global batch", I(tr.seq_len) + ", " + I(tr.global_batch));
  train += Row("micro-batch", I(tr.micro_batch) + " (" +
                                  I(r.program ? r.program->microbatches : 0) + " per step)");
  train +=
      Row("precision, grad dtype", std::string(Name(tr.precision)) + ", " + Name(tr.grad_dtype));
  train += Row("optimizer", Name(tr.optimizer));
  train += Row("recompute, flash attention",
               std::string(Name(tr.recompute)) + ", " + (tr.flash_attention ? "on" : "off"));
  if (tr.tokens) train += Row("tokens to train", FormatCount(*tr.tokens));
  std::string par = Row("layout", LayoutSummary(sc));
  par += Row("dp, tp, pp, cp, ep",
             I(p.dp) + ", " + I(p.tp) + ", " + I(p.pp) + ", " + I(p.cp) + ", " + I(p.ep));
  par += Row("placement order", Join(p.order));
  par +=
      Row("overlap grad reduce, param gather", std::string(p.overlap_grad_reduce ? "on" : "off") +
                                                   ", " + (p.overlap_param_gather ? "on" : "off"));
  par += Row("TP comm overlap, EP comm overlap", std::string(p.tp_comm_overlap ? "on" : "off") +
                                                     ", " + (p.ep_comm_overlap ? "on" : "off"));
  std::string assumptions;
  for (const std::string& a : r.memory.assumptions)
    assumptions += "<li>memory: " + Esc(a) + "</li>\n";
  const bool every_rank = r.devices.size() > static_cast<size_t>(p.pp);
  assumptions += "<li>simulation: " +
                 Esc(every_rank ? "every (dp, cp, pp) rank simulated; the timeline shows data- and "
                                  "context-parallel rank 0 of each stage"
                                : "one representative pipeline simulated; every data- and "
                                  "context-parallel replica does the same work and loads the "
                                  "shared links (docs/reference.md §2)") +
                 " (" + I(r.tasks) + " tasks)</li>\n";
  assumptions +=
      "<li>FLOPs: model FLOPs count the matmuls with attention as the full s x s square, "
      "backward 2x forward, no recompute (Megatron-LM / PaLM convention); HFU adds the "
      "recompute forward. Per step: model " +
      FormatSci(r.flops.model_per_step) + ", hardware " + FormatSci(r.flops.hardware_per_step) +
      ", 6·N·D " + FormatSci(r.flops.six_nd) + " (" +
      Esc(Percent(r.flops.six_nd > 0 ? r.flops.model_per_step / r.flops.six_nd - 1.0 : 0.0)) +
      " apart)</li>\n";
  auto table = [](const char* title, const std::string& rows) {
    return "<div class=\"inputs-table\"><h3>" + std::string(title) + "</h3><table>" + rows +
           "</table></div>\n";
  };
  return "<section class=\"panel\" id=\"inputs\"><h2>Inputs and assumptions</h2>\n<div "
         "class=\"inputs-grid\">" +
         table("Model", model) + table("Hardware", hw) + table("Topology", topo) +
         table("Training", train) + table("Parallel layout", par) +
         "</div>\n<h3>Assumptions</h3><ul class=\"assumptions\">" + assumptions +
         "</ul></section>\n";
}

}  // namespace

std::string BottleneckInWords(const SimResult& r) {
  const double step = r.step_time.value();
  auto share = [&](Seconds s) { return Percent(step > 0.0 ? s.value() / step : 0.0); };
  const Seconds kernels = r.breakdown.compute;
  std::string out = "Kernels take " + FormatSeconds(kernels) + " (" + share(kernels) + ") of the " +
                    FormatSeconds(r.step_time) + " step";
  if (r.bottlenecks.empty()) return out + "; nothing else is exposed: the step is compute-bound.";
  const Bottleneck& b = r.bottlenecks.front();
  const std::string exposed = FormatSeconds(b.exposed) + " (" + Percent(b.share) + ")";
  if (b.kind == "communication") {
    return out + "; the bottleneck is " + b.collective + " communication on " + b.resource +
           ", exposed for " + exposed + ".";
  }
  if (b.kind == "pipeline_bubble") {
    return out + "; the bottleneck is the pipeline bubble: ranks wait for one another for " +
           exposed + ".";
  }
  if (b.kind == "recompute")
    return out + "; the bottleneck is recompute, which adds " + exposed + ".";
  if (b.kind == "optimizer")
    return out + "; the bottleneck is the optimizer step, " + exposed + ".";
  return out + "; the bottleneck is " + b.kind + ", " + exposed + ".";
}

std::string SimulateHtml(const Scenario& sc, const SimResult& r) {
  std::string body =
      "<header><p class=\"kicker\">shardsim simulate</p><h1>" + Esc(sc.name) + "</h1>";
  body +=
      "<p class=\"sub\">" +
      Esc(sc.model.name + " on " + I(sc.gpus) + " x " + sc.hardware.name + " (" + sc.topology.name +
          "), " + LayoutSummary(sc) + "; seq " + I(sc.training.seq_len) + ", global batch " +
          I(sc.training.global_batch) + ", micro-batch " + I(sc.training.micro_batch) + ", " +
          Name(sc.training.precision) + ", recompute " + RecomputeText(sc.training)) +
      "</p></header>\n<main>\n";
  body += Verdict(sc, r);
  body += Headline(sc, r);
  body += Chart(
      "breakdown", "Where the step goes",
      "The critical path of the step by what it was doing (pipeline rank " +
          I(r.devices.empty() ? 0 : r.devices[static_cast<size_t>(r.reference_device)].coords.pp) +
          " has the most work).");
  body += Chart("timeline", "Timeline of the step",
                "One row per pipeline stage and stream. Scroll to zoom, drag to pan, double-click "
                "to reset; hover a bar for its details.",
                "<div class=\"toolbar\"><button type=\"button\" data-zoom=\"in\">zoom in</button>"
                "<button type=\"button\" data-zoom=\"out\">zoom out</button>"
                "<button type=\"button\" data-zoom=\"reset\">reset</button>"
                "<span class=\"view-label\" id=\"timeline-view\"></span></div>");
  body += "<div class=\"two\">";
  body += Chart("memory-stages", "Memory per pipeline stage",
                "Each stage's device at its simulated peak, against the capacity line.");
  body += Chart("memory-time", "Memory over the step",
                "The worst device: model states, buffers and reserve, plus the activations live "
                "at each moment.");
  body += "</div>";
  body += Chart("communication", "Exposed time by cause",
                "What the critical path spends beyond kernels, largest first; the bar chart below "
                "sums the exposed communication by link class.");
  body += Chart("links", "Exposed communication by link class", "");
  body += Inputs(sc, r);
  body += "</main>\n<footer>Written by shardsim simulate from " + Esc(sc.file) +
          ". A self-contained report: its scripts and data are inline and nothing is fetched "
          "when it opens.</footer>\n";
  HtmlPage page;
  page.title = "shardsim simulate: " + sc.name;
  page.kind = "simulate";
  page.body = std::move(body);
  page.data_json = SimulateReportData(sc, r);
  page.scripts = {"charts.js", "simulate.js"};
  return RenderHtmlPage(page);
}

}  // namespace shardsim
