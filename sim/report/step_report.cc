#include "sim/report/step_report.h"

#include <nlohmann/json.hpp>

#include "sim/base/units.h"
#include "sim/config/loader.h"
#include "sim/hardware/op_cost.h"
#include "sim/hardware/peaks.h"
#include "sim/memory/allocator.h"
#include "sim/model/op_graph.h"
#include "sim/program/network_explain.h"
#include "sim/report/flops_note.h"
#include "sim/report/goodput_report.h"
#include "sim/report/summary.h"
#include "sim/report/text_table.h"

namespace shardsim {

using Json = nlohmann::ordered_json;

namespace {

std::string Sec(Seconds s) { return FormatSeconds(s); }

// "interval: 80% nominal, from 17 validation runs (h100): errors -7.5% to +23.5%, median
// +10.8% (hardware/calibration/residuals.json)".
std::string IntervalText(const PredictionInterval& p) {
  if (!p.available) return "interval: none (" + p.note + ")";
  auto pct = [](double e) { return (e >= 0 ? "+" : "") + FormatSig(100.0 * e, 3) + "%"; };
  return "interval: " + FormatSig(100.0 * p.coverage, 3) + "% nominal, from " + p.note +
         ": published/predicted step " + pct(p.error_low) + " to " + pct(p.error_high) +
         ", median " + pct(p.median_error);
}

Json IntervalBasisJson(const PredictionInterval& p) {
  Json b = {{"available", p.available}, {"note", p.note}};
  if (p.available) {
    b["runs"] = p.runs;
    b["group"] = p.group;
    b["kind"] = p.kind;
    b["hardware_validated"] = p.hardware_validated;
    b["error_low"] = p.error_low;
    b["error_high"] = p.error_high;
    b["median_error"] = p.median_error;
    b["spread"] = 0.5 * (p.error_high - p.error_low);
    b["coverage"] = p.coverage;
    b["method"] =
        "split-conformal order statistics of the group's errors (published step / predicted - 1)";
  }
  b["source"] = p.source;
  return b;
}

// The published conventions (model and hardware FLOPs) over what the kernels ran: above 1 when
// they count causal attention as the full s x s square while the kernel skips the masked half.
double ConventionOverExecuted(const SimResult& r) {
  return shardsim::ConventionOverExecuted(r.flops.hardware_per_step, r.flops.executed_per_step);
}

// Printed whenever the conventions count work that was not executed (ConventionOverExecuted above
// 1): so a utilization above 100% is never printed without it (sim/report/flops_note.h).
std::string ConventionNote(const SimResult& r) {
  return FlopsConventionNote(ConventionOverExecuted(r), r.executed_fraction);
}

void BreakdownRows(const Breakdown& b, Seconds step, TextTable& t) {
  for (const Breakdown::Part& p : b.Parts()) {
    if (p.seconds.value() > 0.0) {
      t.AddRow({p.label, Sec(p.seconds), Percent(p.seconds.value() / step.value())});
    }
  }
}

// The layer split over the pipeline, as the plan made it: each model chunk's decoder layers in
// Megatron-Core's stage order (stage s = chunk s / pp of rank s % pp), runs of equal counts
// written "4 x14", and the key that chose it; the V-shaped and DualPipe schedules, whose ranks
// pair two stages, rank by rank.
std::string PipelineSplitText(const Scenario& sc, const std::vector<PipelineRank>& ranks) {
  const ParallelSpec& p = sc.parallel;
  std::string by = "even";
  if (!p.pipeline_layout.empty()) {
    by = "parallel.pipeline_layout \"" + p.pipeline_layout + "\"";
  } else if (p.first_stage_layers > 0 || p.last_stage_layers > 0) {
    by = "parallel.first_stage_layers " + std::to_string(p.first_stage_layers) +
         ", last_stage_layers " + std::to_string(p.last_stage_layers);
  } else if (p.account_for_embedding_in_pipeline_split || p.account_for_loss_in_pipeline_split) {
    by = "the embedding / loss counted as layers (parallel.account_for_*)";
  }
  const bool paired = p.schedule == PipelineSchedule::kDualPipe ||
                      p.schedule == PipelineSchedule::kDualPipeV ||
                      p.schedule == PipelineSchedule::kZbV;
  std::string out = "  pipeline split (" + by + "): ";
  if (paired) {
    out += "layers per rank's two chunks:";
    for (const PipelineRank& r : ranks) {
      out += " " + std::to_string(r.chunks.front().size()) + "+" +
             std::to_string(r.chunks.back().size());
    }
    return out + "\n";
  }
  std::vector<int64_t> counts;
  const size_t v = ranks.empty() ? 0 : ranks.front().chunks.size();
  for (size_t c = 0; c < v; ++c) {
    for (const PipelineRank& r : ranks) counts.push_back(r.chunks[c].size());
  }
  out += "layers per chunk in stage order:";
  for (size_t i = 0; i < counts.size();) {
    size_t j = i;
    while (j < counts.size() && counts[j] == counts[i]) ++j;
    out += " " + std::to_string(counts[i]) + (j - i > 1 ? " x" + std::to_string(j - i) : "");
    if (j < counts.size()) out += ",";
    i = j;
  }
  return out + " (embedding with the first, loss with the last)\n";
}

std::string GradBucketText(const Scenario& sc, const GradBuckets& b) {
  std::string out = FormatBytes(Bytes(sc.parallel.dp_bucket_bytes)) + " asks for " +
                    (b.requested < 1000000 ? std::to_string(b.requested)
                                           : FormatCount(static_cast<double>(b.requested))) +
                    (b.requested == 1 ? " bucket" : " buckets") + " of the largest chunk's " +
                    FormatBytes(b.grads) + " of gradients; simulated " +
                    std::to_string(b.simulated) + (b.simulated == 1 ? " bucket" : " buckets") +
                    " of " + FormatBytes(b.simulated_size());
  if (b.capped()) {
    out += " (at most " + std::to_string(kMaxGradBuckets) +
           " per chunk, a cap that bounds the task count: the reduction after the last backward "
           "waits for a bucket of " +
           FormatBytes(b.simulated_size()) + ", not " +
           FormatBytes(Bytes(sc.parallel.dp_bucket_bytes)) + ")";
  }
  return out;
}

}  // namespace

std::string SimulateText(const Scenario& sc, const SimResult& r,
                         const PredictionInterval* interval) {
  std::string out = "shardsim simulate: " + sc.name + "\n  " + sc.model.name + " on " +
                    std::to_string(sc.gpus) + " x " + sc.hardware.name + " (" + sc.topology.name +
                    "), " + LayoutSummary(sc) + "\n  seq " + std::to_string(sc.training.seq_len) +
                    ", global batch " + std::to_string(sc.training.global_batch) +
                    ", micro-batch " + std::to_string(sc.training.micro_batch) + " (" +
                    std::to_string(r.program ? r.program->microbatches : 0) + " per step), " +
                    Name(sc.training.precision) + ", recompute " + RecomputeText(sc.training) +
                    "\n\n";
  TextTable head({"", ""});
  const bool ranged = interval != nullptr && interval->available;
  const double step_s = r.step_time.value();
  head.AddRow({"step time",
               Sec(r.step_time) + (ranged ? " [" + Sec(Seconds(interval->StepLow(step_s))) + ", " +
                                                Sec(Seconds(interval->StepHigh(step_s))) + "]"
                                          : "")});
  head.AddRow({"tokens/s", FormatSig(r.tokens_per_s, 4) + " (" +
                               FormatSig(r.tokens_per_s_per_gpu, 4) + " per GPU)"});
  head.AddRow({"model TFLOP/s per GPU", FormatSig(r.tflops_per_gpu, 4)});
  head.AddRow({"MFU / HFU", Percent(r.mfu) + " / " + Percent(r.hfu) + " of " +
                                FormatRate(r.peak_flops_per_gpu, "FLOP/s") + " " +
                                Name(sc.training.precision)});
  if (ranged) {
    head.AddRow({"MFU interval", Percent(r.mfu / (1.0 + interval->error_high)) + " to " +
                                     Percent(r.mfu / (1.0 + interval->error_low))});
  }
  head.AddRow({"executed TFLOP/s", FormatSig(r.executed_tflops_per_gpu, 4) + " per GPU (" +
                                       Percent(r.executed_fraction) + " of peak)"});
  head.AddRow({"pipeline bubble", Percent(r.bubble_fraction) + " of busy time"});
  const double cap = sc.hardware.memory_capacity;
  head.AddRow({"peak memory", FormatBytes(r.peak_memory) + " of " + FormatBytes(Bytes(cap)) +
                                  (r.fits ? " (fits)" : " (DOES NOT FIT)")});
  if (!r.devices.empty()) {
    const DeviceStats& wd = r.devices[static_cast<size_t>(r.worst_device)];
    const MemoryFigures fig = DeviceMemoryFigures(
        r.memory.stages[static_cast<size_t>(wd.coords.pp)], wd.peak_activations, sc.hardware);
    head.AddRow(
        {"allocated / reserved", FormatBytes(fig.allocated) + " / " + FormatBytes(fig.reserved)});
    head.AddRow({"device (nvidia-smi)", FormatBytes(fig.device)});
  }
  if (r.time_to_train_s) {
    head.AddRow({"time to train", FormatSeconds(Seconds(*r.time_to_train_s)) + " booked (ideal " +
                                      FormatSeconds(Seconds(*r.time_to_train_ideal_s)) + ")"});
    head.AddRow({"GPU-hours booked", FormatCount(*r.gpu_hours)});
  } else if (r.time_to_train_ideal_s) {  // the goodput is infeasible: nothing is booked
    head.AddRow({"time to train",
                 "never (ideal " + FormatSeconds(Seconds(*r.time_to_train_ideal_s)) + ")"});
  }
  if (r.goodput) {
    for (const auto& [label, text] : GoodputRows(*r.goodput)) head.AddRow({label, text});
  }
  out += head.ToString();
  if (interval != nullptr) out += "  " + IntervalText(*interval) + "\n";
  if (const std::string note = ConventionNote(r); !note.empty()) out += "  flops: " + note + "\n";
  if (r.goodput && !r.goodput->feasible) {
    out += "  INFEASIBLE " + r.goodput->infeasible_reason + "\n";
  }
  // A dp_bucket_size the scenario set but the simulation did not honour (kMaxGradBuckets).
  const KeyOrigin bucket_key = sc.origins.Get("parallel.dp_bucket_size");
  if (r.program && r.program->grad_buckets.capped() && bucket_key.loc.known()) {
    out += "  warning: " + bucket_key.loc.ToString() + ": parallel.dp_bucket_size " +
           GradBucketText(sc, r.program->grad_buckets) + "\n";
  }
  out += "\nWhere the step goes (critical path of pipeline rank " +
         std::to_string(
             r.devices.empty() ? 0 : r.devices[static_cast<size_t>(r.reference_device)].coords.pp) +
         ")\n";
  TextTable t({"", "time", "share"});
  BreakdownRows(r.breakdown, r.step_time, t);
  out += t.ToString();
  if (!r.bottlenecks.empty()) {
    out += "\nBottlenecks (largest first)\n";
    TextTable bt({"", "resource", "exposed", "share"});
    bt.SetLeftAligned({1});
    for (const Bottleneck& b : r.bottlenecks) {
      bt.AddRow({b.collective.empty() ? b.kind : b.collective, b.resource, Sec(b.exposed),
                 Percent(b.share)});
    }
    out += bt.ToString();
  }
  out += "\nFLOPs per step: model " + FormatSci(r.flops.model_per_step) +
         " (matmuls, attention as the full s x s square), hardware " +
         FormatSci(r.flops.hardware_per_step) + " (with recompute), 6·N·D " +
         FormatSci(r.flops.six_nd) + "\n";
  out += "Executed FLOPs per step: " + FormatSci(r.flops.executed_per_step) +
         " (what the kernels ran: causal attention's unmasked half, flash backward, "
         "elementwise)\n";
  return out;
}

std::string SimulateJson(const Scenario& sc, const SimResult& r,
                         const PredictionInterval* interval) {
  Json j;
  j["scenario"] = sc.name;
  j["model"] = sc.model.name;
  j["hardware"] = sc.hardware.name;
  j["topology"] = sc.topology.name;
  j["gpus"] = sc.gpus;
  j["layout"] = {{"dp", sc.parallel.dp},
                 {"tp", sc.parallel.tp},
                 {"pp", sc.parallel.pp},
                 {"cp", sc.parallel.cp},
                 {"ep", sc.parallel.ep},
                 {"zero_stage", sc.parallel.zero_stage},
                 {"sequence_parallel", sc.parallel.sequence_parallel},
                 {"schedule", Name(sc.parallel.schedule)},
                 {"virtual_stages", SimulatedVirtualStages(sc.parallel)},
                 {"micro_batch", sc.training.micro_batch},
                 {"microbatches_per_step", r.program ? r.program->microbatches : 0},
                 {"recompute", Name(sc.training.recompute)}};
  // Written only when set (interleaved_1f1b; left out, the group is pp).
  if (sc.parallel.schedule == PipelineSchedule::kInterleaved1F1B &&
      sc.parallel.microbatch_group_size_per_vp_stage > 0) {
    j["layout"]["microbatch_group_size_per_vp_stage"] =
        sc.parallel.microbatch_group_size_per_vp_stage;
  }
  j["step_time_s"] = r.step_time.value();
  j["tokens_per_s"] = r.tokens_per_s;
  j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
  j["tflops_per_gpu"] = r.tflops_per_gpu;
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  j["executed_tflops_per_gpu"] = r.executed_tflops_per_gpu;
  j["executed_fraction_of_peak"] = r.executed_fraction;
  j["flops_convention_over_executed"] = ConventionOverExecuted(r);
  if (const std::string note = ConventionNote(r); !note.empty()) j["flops_convention_note"] = note;
  if (interval != nullptr) {
    const double t = r.step_time.value();
    if (interval->available) {
      j["step_time_interval_s"] = {interval->StepLow(t), interval->StepHigh(t)};
      j["mfu_interval"] = {r.mfu / (1.0 + interval->error_high),
                           r.mfu / (1.0 + interval->error_low)};
    }
    j["step_time_interval_basis"] = IntervalBasisJson(*interval);
  }
  j["peak_flops_per_gpu"] = r.peak_flops_per_gpu;
  j["flops_convention"] =
      "model FLOPs: matmuls with attention as the full s x s square, backward 2x forward, no "
      "recompute (Megatron-LM / PaLM); HFU adds the recompute forward";
  j["bubble_fraction"] = r.bubble_fraction;
  const StageMemory& s =
      r.memory
          .stages[static_cast<size_t>(r.devices[static_cast<size_t>(r.worst_device)].coords.pp)];
  const DeviceStats& wd = r.devices[static_cast<size_t>(r.worst_device)];
  const MemoryFigures fig = DeviceMemoryFigures(s, wd.peak_activations, sc.hardware);
  j["memory"] = {
      {"peak_bytes", r.peak_memory.value()},
      {"allocated_peak_bytes", fig.allocated.value()},
      {"reserved_peak_bytes", fig.reserved.value()},
      {"device_peak_bytes", fig.device.value()},
      {"capacity_bytes", sc.hardware.memory_capacity},
      {"stage", wd.coords.pp},
      {"breakdown",
       {{"weights", s.weights.value()},
        {"gradients", s.gradients.value()},
        {"optimizer", s.optimizer.value()},
        {"activations", wd.peak_activations.value()},
        {"zero3_buffers", s.zero3_buffers.value()},
        {"recompute_buffer", s.recompute_buffer.value()},
        {"loss_buffers", s.loss_buffers.value()},
        {"moe_buffers", s.moe_buffers.value()},
        {"cuda_context", s.cuda_context.value()},
        {"comm_buffers", s.comm_buffers.value()},
        {"fragmentation",
         (s.Allocated(wd.peak_activations) * sc.hardware.reserve_fragmentation).value()}}},
      {"figures",
       {{"allocated",
         "torch.cuda.max_memory_allocated: tensors, cuBLAS workspace, 512 B block "
         "rounding; the loss buffers and a full-recompute rebuild never live at once"},
        {"reserved",
         "torch.cuda.max_memory_reserved: allocated + caching-allocator segment "
         "rounding (2 MiB / 20 MiB pools) + fragmentation"},
        {"device", "nvidia-smi: reserved + CUDA context + NCCL buffers"},
        {"peak",
         "peak_bytes (fits): allocated x (1 + fragmentation) + CUDA context + NCCL "
         "buffers, loss and recompute buffers both counted"}}}};
  if (sc.framework.name != Framework::kMegatron) {
    // The framework's own figure (its logs' memory line) and the mechanisms it ran with.
    j["memory"]["framework_figure"] = Name(sc.framework.memory_figure);
    j["memory"]["framework_reported_bytes"] =
        FrameworkFigure(fig, sc.framework.memory_figure).value();
    if (s.unsharded_grads.value() > 0) {
      j["memory"]["breakdown"]["unsharded_grads"] = s.unsharded_grads.value();
    }
    if (s.stream_pools.value() > 0) {  // FSDP2's collective streams' segments (in reserved)
      j["memory"]["breakdown"]["stream_pools"] = s.stream_pools.value();
      j["memory"]["breakdown"]["root_gathered"] = s.root_gathered.value();
    }
    j["framework"] = {{"name", Name(sc.framework.name)},
                      {"mechanisms", MechanismLines(sc.framework)}};
  }
  j["fits"] = r.fits;
  Json bn = Json::array();
  for (const Bottleneck& b : r.bottlenecks) {
    bn.push_back({{"kind", b.kind},
                  {"collective", b.collective},
                  {"resource", b.resource},
                  {"exposed_s", b.exposed.value()},
                  {"share", b.share}});
  }
  j["bottlenecks"] = bn;
  // The step's network as the engine ran it (docs/architecture.md, "How a flow gets its rate").
  if (r.program && r.run) {
    const NetworkSummary net = SummarizeNetwork(*r.program, *r.run);
    Json kinds = Json::array();
    for (const NetworkKind& k : net.kinds) {
      Json phases = Json::array();
      for (const NetworkPhase& ph : k.phases) {
        Json links = Json::array();
        for (const NetworkLinkUse& l : ph.links) {
          links.push_back({{"link", l.link},
                           {"class", Name(l.link_class)},
                           {"bytes", l.bytes},
                           {"multiplicity", l.multiplicity}});
        }
        phases.push_back({{"latency_s", ph.latency.value()},
                          {"bytes_per_rank", ph.bytes_per_rank.value()},
                          {"links", links}});
      }
      kinds.push_back({{"category", k.category},
                       {"group", k.group},
                       {"op", k.op},
                       {"algorithm", k.algorithm},
                       {"largest_bytes", k.largest.value()},
                       {"phases", phases},
                       {"instances", k.instances},
                       {"flow_time_s", k.flow_time.value()},
                       {"bounded_by", k.bounded_by},
                       {"busiest_link", k.busiest_link},
                       {"most_flows_at_once", k.most_flows_at_once}});
    }
    Json link_counts = Json::object();
    for (const auto& [name, n] : net.link_counts) link_counts[name] = n;
    j["network"] = {{"links", link_counts}, {"kinds", kinds}};
  }
  Json breakdown = Json::object();
  for (const Breakdown::Part& p : r.breakdown.Parts()) breakdown[p.key] = p.seconds.value();
  j["breakdown_s"] = breakdown;
  Json links = Json::object();
  for (const auto& [name, sec] : r.exposed_by_link) links[name] = sec.value();
  j["exposed_by_link_s"] = links;
  j["flops"] = {{"model_per_step", r.flops.model_per_step},
                {"hardware_per_step", r.flops.hardware_per_step},
                {"executed_per_step", r.flops.executed_per_step},
                {"six_nd", r.flops.six_nd},
                {"tokens_per_step", r.flops.tokens_per_step}};
  Json devs = Json::array();
  for (const DeviceStats& d : r.devices) {
    devs.push_back({{"device", d.device},
                    {"pp", d.coords.pp},
                    {"dp", d.coords.dp},
                    {"cp", d.coords.cp},
                    {"compute_busy_s", d.busy.value()},
                    {"peak_activations_bytes", d.peak_activations.value()},
                    {"peak_memory_bytes", d.peak_memory.value()}});
  }
  j["devices"] = devs;
  if (r.time_to_train_s) {
    j["time_to_train_s"] = *r.time_to_train_s;
    j["time_to_train_ideal_s"] = *r.time_to_train_ideal_s;
    j["gpu_hours"] = *r.gpu_hours;
  } else if (r.time_to_train_ideal_s) {  // infeasible goodput: never booked
    j["time_to_train_s"] = nullptr;
    j["time_to_train_ideal_s"] = *r.time_to_train_ideal_s;
    j["gpu_hours"] = nullptr;
  }
  if (r.goodput) j["goodput"] = GoodputJson(*r.goodput);
  j["simulated_tasks"] = r.tasks;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string ChromeTrace(const Scenario& sc, const SimResult& r) {
  Json events = Json::array();
  const StepProgram& prog = *r.program;
  const RunResult& run = *r.run;
  for (const Device& d : prog.devices) {
    events.push_back(
        {{"name", "process_name"},
         {"ph", "M"},
         {"pid", d.index},
         {"args",
          {{"name", "pp" + std::to_string(d.coords.pp) + " dp" + std::to_string(d.coords.dp) +
                        " cp" + std::to_string(d.coords.cp)}}}});
    for (size_t k = 0; k < kStreamNames.size(); ++k) {
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", d.index},
                        {"tid", k},
                        {"args", {{"name", kStreamNames[k]}}}});
    }
  }
  for (int32_t i = 0; i < run.num_tasks(); ++i) {
    const TaskId id(i);
    const TaskInfo& t = (*prog.tasks)[static_cast<size_t>(prog.engine.label(id))];
    if (t.category == TaskCategory::kJoin) continue;
    const Device& d = prog.devices[static_cast<size_t>(t.device)];
    const int tid = d.StreamIndex(prog.engine.stream(id));
    std::string name;
    switch (t.category) {
      case TaskCategory::kForward:
      case TaskCategory::kBackward:
        name = std::string(t.category == TaskCategory::kForward ? "F"
                           : t.part == BackwardPart::kWeight    ? "W"
                                                                : "B") +
               " mb" + std::to_string(t.microbatch) + " chunk" + std::to_string(t.chunk) +
               (t.layer >= 0 ? " layer" + std::to_string(t.layer) : "") +
               (t.buckets > 1
                    ? " bucket" + std::to_string(t.bucket + 1) + "/" + std::to_string(t.buckets)
                    : "");
        break;
      default:
        name =
            std::string(Name(t.category)) + (t.bytes.value() > 0 ? " " + FormatBytes(t.bytes) : "");
    }
    const double ts = run.start(id).seconds().value() * 1e6;
    const double dur = (run.end(id) - run.start(id)).seconds().value() * 1e6;
    Json args = {{"chunk", t.chunk}, {"microbatch", t.microbatch}};
    if (t.category == TaskCategory::kForward || t.category == TaskCategory::kBackward) {
      args["compute_us"] = (t.parts.compute - t.recompute).value() * 1e6;
      args["recompute_us"] = t.recompute.value() * 1e6;
      args["tp_comm_us"] = t.parts.tp.value() * 1e6;
      args["cp_comm_us"] = t.parts.cp.value() * 1e6;
      args["ep_comm_us"] = t.parts.ep.value() * 1e6;
      // A split backward (zero-bubble schedules, DualPipe): which half this task is.
      if (t.part != BackwardPart::kWhole) {
        args["pass"] = t.part == BackwardPart::kInput ? "input_gradient" : "weight_gradient";
      }
      if (t.buckets > 1) {
        args["gradient_bucket"] = t.bucket + 1;  // this piece releases bucket k of n for reduction
        args["gradient_buckets"] = t.buckets;
      }
    } else if (t.category != TaskCategory::kOptimizer) {
      args["bytes"] = t.bytes.value();
      args["link"] = Name(t.link);
      args["group"] = Name(t.group);
      args["op"] = Name(t.op);
    }
    events.push_back({{"name", name},
                      {"cat", Name(t.category)},
                      {"ph", "X"},
                      {"ts", ts},
                      {"dur", dur},
                      {"pid", t.device},
                      {"tid", tid},
                      {"args", args}});
  }
  Json j;
  j["traceEvents"] = events;
  j["displayTimeUnit"] = "ms";
  j["otherData"] = {{"scenario", sc.name}, {"step_time_s", r.step_time.value()}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string ExplainStep(const Scenario& sc, const SimResult& r) {
  if (!r.plan) return "no plan: the result did not come from Simulate\n";
  const OpGraph* g = &r.plan->graph;  // the plan the step ran
  const OpCostModel hw(sc.hardware);
  std::string out;
  if (sc.framework.name != Framework::kMegatron || !sc.framework.overridden.empty()) {
    out += "Framework mechanisms behind these figures\n";
    for (const std::string& line : MechanismLines(sc.framework)) out += "  " + line + "\n";
    out += "\n";
  }
  // What MFU, HFU and the executed figure count (sim/model/flops.h).
  const double per_gpu_s = r.step_time.value() * static_cast<double>(sc.gpus);
  const auto of_peak = [&](double flops) {
    return per_gpu_s > 0.0 && r.peak_flops_per_gpu > 0.0
               ? Percent(flops / per_gpu_s / r.peak_flops_per_gpu)
               : std::string("n/a");
  };
  out += "FLOPs per step (what each utilization counts, over " +
         FormatRate(r.peak_flops_per_gpu, "FLOP/s") + " per GPU)\n";
  out += "  model " + FormatSci(r.flops.model_per_step) +
         ": matmuls, attention as the full s x s square, backward 2x forward, no recompute "
         "(Megatron-LM / PaLM): MFU " +
         of_peak(r.flops.model_per_step) + "\n";
  out += "  hardware " + FormatSci(r.flops.hardware_per_step) +
         ": model + the recompute forward: HFU " + of_peak(r.flops.hardware_per_step) + "\n";
  out += "  executed " + FormatSci(r.flops.executed_per_step) +
         ": what the kernels ran (causal attention's unmasked half, flash backward recomputing "
         "the scores, elementwise): " +
         of_peak(r.flops.executed_per_step) + " of peak, at most the sustained fraction " +
         FormatSig(MaxSustainedFraction(sc.hardware), 3) + "\n";
  if (const std::string note = ConventionNote(r); !note.empty()) out += "  " + note + "\n";
  out += "\n";
  out += "Per-layer pricing (one micro-batch on one device)\n";
  TextTable t(
      {"block", "pass", "total", "kernels", "tp exposed", "cp exposed", "ep exposed", "recompute"});
  auto rows = [&](const std::string& name, const BlockCost& b) {
    t.AddRow({name, "fwd", Sec(b.fwd.total()), Sec(b.fwd.compute), Sec(b.fwd.tp), Sec(b.fwd.cp),
              Sec(b.fwd.ep), ""});
    t.AddRow({"", "bwd", Sec(b.bwd.total()), Sec(b.bwd.compute), Sec(b.bwd.tp), Sec(b.bwd.cp),
              Sec(b.bwd.ep), Sec(b.recompute.total())});
  };
  // The layer kinds the model has, with how many layers of each (a kind with none is not shown).
  std::vector<int64_t> layers_of(g->layer_kinds.size(), 0);
  for (int kind : g->layer_kind_of) ++layers_of[static_cast<size_t>(kind)];
  const auto kind_name = [&](size_t k) {
    return g->layer_kinds[k].kind + " layer x" + std::to_string(layers_of[k]);
  };
  const std::string head_name = g->mtp.empty() ? "head + loss" : "head + loss + MTP";
  rows("embedding", r.costs.embedding);
  for (size_t k = 0; k < r.costs.layer_kinds.size(); ++k) {
    if (layers_of[k] > 0) rows(kind_name(k), r.costs.layer_kinds[k]);
  }
  rows(head_name, r.costs.head);
  out += t.ToString();
  if (sc.parallel.pp > 1) out += PipelineSplitText(sc, r.plan->stages);
  if (!r.costs.pp_send.empty()) {
    out += "  pipeline transfer: " + FormatBytes(r.costs.pp_message) + " in " +
           Sec(r.costs.pp_send.front().total()) + " (" + Name(r.costs.pp_send.front().algo) + ", " +
           Name(r.costs.pp_send.front().bottleneck) + ")\n";
  }
  // Context parallelism: each layer kind's ring-attention hop, on the ring's slowest pair.
  for (size_t k = 0; k < r.costs.layer_kinds.size(); ++k) {
    const CpHop& h = r.costs.layer_kinds[k].cp_hop;
    if (layers_of[k] == 0 || h.rounds == 0) continue;
    const auto exposed = [&](Seconds x, Seconds block) {
      return Sec(std::max(Seconds(0), x - block) * static_cast<double>(h.rounds));
    };
    out += "  cp ring hop (" + kind_name(k) + "): cp rank " + std::to_string(h.from_cp) + " -> " +
           std::to_string(h.to_cp) + " on " + Name(h.link) + "; per round fwd " +
           FormatBytes(h.fwd_bytes) + " K/V in " + Sec(h.fwd) + " against a " + Sec(h.block_fwd) +
           " attention block, bwd " + FormatBytes(h.bwd_bytes) + " in " + Sec(h.bwd) + " against " +
           Sec(h.block_bwd) + "; " + std::to_string(h.rounds) + " rounds: exposed " +
           exposed(h.fwd, h.block_fwd) + " fwd, " + exposed(h.bwd, h.block_bwd) +
           " bwd per layer\n";
  }
  if (r.program && r.program->grad_buckets.requested > 0) {
    out += "  gradient buckets (parallel.dp_bucket_size): " +
           GradBucketText(sc, r.program->grad_buckets) + "\n";
  }
  // How much of the step the engine simulated event by event, and how much it filled in from
  // repeating periods (sim/engine/periods.cc): the figures are the same either way.
  if (r.program && r.run) {
    const RunStats& st = r.run->stats();
    out += "  simulation (sim/engine): " + std::to_string(r.run->num_tasks()) + " tasks";
    if (st.tasks_skipped > 0) {
      out += ", " + std::to_string(st.tasks_skipped) + " of them filled in from " +
             std::to_string(st.periods_skipped) +
             (st.periods_skipped == 1 ? " schedule period that repeats"
                                      : " schedule periods that repeat") +
             " an earlier one's whole run state exactly (the same figures as simulating them; "
             "sim/engine/periods.cc)\n";
    } else {
      out += ", every one simulated\n";
    }
  }
  // The network as the engine ran it: per kind of communication, its phases, links and bounds.
  if (r.program && r.run) out += "\n" + ExplainNetwork(*r.program, *r.run);
  out += "\nPer-op costs (" + sc.hardware.name + ")\n";
  auto ops = [&](const std::string& section, const std::vector<Op>& list) {
    out += "  " + section + "\n";
    for (const Op& op : list) {
      for (Pass p : {Pass::kForward, Pass::kBackwardInput, Pass::kBackwardWeight}) {
        const OpCost c = hw.Cost(op, p);
        if (c.source == CostSource::kNone) continue;
        out += "    " + op.name + " " + Name(p) + ": " + ExplainCost(c) + "\n";
      }
    }
  };
  ops("embedding", g->embedding);
  for (size_t k = 0; k < g->layer_kinds.size(); ++k) {
    if (layers_of[k] > 0) ops(kind_name(k), g->layer_kinds[k].ops);
  }
  ops("head", g->head);
  if (!g->mtp.empty()) ops("multi-token prediction (priced with the head)", g->mtp);
  return out;
}

}  // namespace shardsim
