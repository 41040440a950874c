#include "sim/report/budget_report.h"

#include <nlohmann/json.hpp>

#include "sim/base/units.h"
#include "sim/memory/allocator.h"
#include "sim/model/recompute.h"
#include "sim/parallel/plan.h"
#include "sim/report/html_page.h"
#include "sim/report/summary.h"
#include "sim/report/text_table.h"
#include "sim/schedule/schedule.h"

namespace shardsim {

using Json = nlohmann::ordered_json;

Result<BudgetReport> BuildBudget(const Scenario& sc) {
  BudgetReport r;
  Result<ParamCount> params = CountParams(sc.model);
  if (!params.ok()) return params.status();
  r.params = std::move(*params);
  Result<FlopsSummary> flops = SummarizeFlops(sc.model, sc.training);
  if (!flops.ok()) return flops.status();
  r.flops = *flops;
  // The layout-free part of the plan: budget needs no cluster.
  Result<Sharding> plan = ShardModel(sc.model, sc.training, sc.parallel);
  if (!plan.ok()) return plan.status();
  Result<MemoryBudget> memory =
      EstimateMemory(*plan, sc.model, sc.training, sc.parallel, sc.hardware, sc.framework);
  if (!memory.ok()) return memory.status();
  r.memory = std::move(*memory);
  r.graph = std::move(plan->graph);
  return r;
}

SixNdGap ExplainSixNd(const ModelSpec& model, const FlopsSummary& f, const ParamCount& params) {
  SixNdGap g;
  g.attention = 3.0 * f.fwd_attention;
  g.mtp = 3.0 * f.fwd_mtp;
  double tables = 0.0;  // token and position tables: parameters read by lookup, not by a matmul
  for (const ParamRow& row : params.rows) {
    if (row.op == "embedding") tables += static_cast<double>(row.params);
  }
  g.lookup_tables = -6.0 * tables;
  g.tied_head = model.tied_embeddings ? 6.0 * static_cast<double>(model.vocab_size) *
                                            static_cast<double>(model.hidden_size)
                                      : 0.0;
  // What remains are parameters without matmul work: norms and biases (MoE routers and
  // experts enter active parameters and FLOPs alike, so they cancel).
  const double op_level = f.model_fwd_per_token * 3.0;
  g.norms_and_biases =
      op_level - 6.0 * f.params_6nd - g.attention - g.lookup_tables - g.tied_head - g.mtp;
  return g;
}

namespace {

std::string B(Bytes b) { return FormatBytes(b); }

void AddParams(const Scenario& sc, const BudgetReport& r, std::string& out) {
  const ParamCount& c = r.params;
  out += "Parameters (summed from matrix shapes)\n";
  TextTable t({"", "count"});
  t.AddRow(
      {"total", FormatCount(static_cast<double>(c.total)) + " (" + std::to_string(c.total) + ")"});
  if (sc.model.moe) t.AddRow({"active per token", FormatCount(static_cast<double>(c.active))});
  t.AddRow({"embedding (token/position tables, untied head)",
            FormatCount(static_cast<double>(c.embedding))});
  t.AddRow({"non-embedding", FormatCount(static_cast<double>(c.non_embedding))});
  if (c.mtp > 0)
    t.AddRow({"multi-token prediction (not in total)", FormatCount(static_cast<double>(c.mtp))});
  std::string kind;
  for (const ParamRow& row : c.rows) {
    const std::string k =
        row.layer_kind + (row.layers > 1 ? " x" + std::to_string(row.layers) : "");
    if (k != kind) {
      t.AddSection("  " + k);
      kind = k;
    }
    t.AddRow({"    " + row.op, FormatCount(static_cast<double>(row.params))});
  }
  out += t.ToString();
}

void AddFlops(const Scenario& sc, const BudgetReport& r, std::string& out) {
  const FlopsSummary& f = r.flops;
  const double tokens = static_cast<double>(f.tokens_per_step);
  out +=
      "\nFLOPs (model FLOPs: matmuls, attention as the full s x s square; backward = 2x forward)\n";
  TextTable t({"", "per token", "per step"});
  auto row = [&](const std::string& name, double per_token) {
    t.AddRow({name, FormatSci(per_token), FormatSci(per_token * tokens)});
  };
  row("forward", f.model_fwd_per_token);
  row("  layer matmuls", f.fwd_layer_matmuls);
  row("  attention (s x s)", f.fwd_attention);
  row("  output head", f.fwd_head);
  if (f.fwd_mtp > 0) row("  multi-token prediction", f.fwd_mtp);
  row("backward", f.model_bwd_per_token);
  row("recompute (" + std::string(Name(sc.training.recompute)) + ")", f.recompute_per_token);
  t.AddRow({"model FLOPs (MFU basis)", "", FormatSci(f.model_per_step)});
  t.AddRow({"hardware FLOPs (HFU basis)", "", FormatSci(f.hardware_per_step)});
  t.AddRow({"6·N·D (N = " + FormatCount(f.params_6nd) + ")", "", FormatSci(f.six_nd)});
  out += t.ToString();
  const SixNdGap g = ExplainSixNd(sc.model, f, r.params);
  const double six = 6.0 * f.params_6nd;
  out += "  op-level / 6ND = " + FormatSig(f.model_per_step / f.six_nd, 4) + ": attention " +
         (g.attention >= 0 ? "+" : "") + Percent(g.attention / six) + ", lookup tables " +
         Percent(g.lookup_tables / six) +
         (g.tied_head != 0 ? ", tied head +" + Percent(g.tied_head / six) : "") +
         ", norms/biases " + Percent(g.norms_and_biases / six) +
         (g.mtp != 0 ? ", MTP +" + Percent(g.mtp / six) : "") + "\n";
}

// Where a stage's in-flight count comes from under the schedules that do not split the backward:
// the warm-up forwards its order runs before its first backward (sim/schedule: Megatron-LM's
// counts), and the one the steady state adds. Empty without a pipeline, or for the split
// schedules, whose count also holds the W passes' inputs.
std::string InFlightHow(const Scenario& sc, const StageMemory& st) {
  const ParallelSpec& p = sc.parallel;
  if (p.pp < 2 || SplitsBackward(p.schedule)) return "";
  const int64_t m = DeriveRules(sc.model, sc.training, p).microbatches;
  if (p.schedule == PipelineSchedule::kGpipe) return " (gpipe: every forward before a backward)";
  const ScheduleShape shape = ShapeOf(p, m);
  const bool interleaved = p.schedule == PipelineSchedule::kInterleaved1F1B;
  const int64_t v = interleaved ? p.virtual_stages : 1;
  const int64_t warmup = WarmupCount(shape, st.stage);
  const std::string passes = interleaved ? "chunk-forwards" : "forwards";
  std::string s = " (" + std::string(Name(p.schedule)) + ": ";
  s += warmup >= m * v
           ? "all " + std::to_string(m * v) + " " + passes + " before a backward"
           : std::to_string(warmup) + " warm-up " + passes + " on this stage, then one more";
  if (interleaved) {
    s += "; " + std::to_string(MicrobatchGroup(shape)) + " micro-batches per chunk group";
    // Chunks that save different bytes (the embedding on the first, the head on the last).
    if (st.in_flight_walked) {
      s += "; its chunks save different bytes, so the count is its peak over one micro-batch's";
    }
  }
  return s + ")";
}

void AddMemory(const Scenario& sc, const BudgetReport& r, std::string& out) {
  const MemoryBudget& m = r.memory;
  const StageMemory& s = m.worst_stage();
  const double cap = sc.hardware.memory_capacity;
  out += "\nMemory per device (worst: pipeline stage " + std::to_string(s.stage) + " of " +
         std::to_string(sc.parallel.pp) + ", " + std::to_string(s.layers) + " layers, " +
         FormatCount(static_cast<double>(s.params)) + " params)\n";
  TextTable t({"", "bytes", "how"});
  t.SetLeftAligned({2});
  const int z = sc.parallel.zero_stage;
  // bytes/param x the stage's parameters over the ZeRO group, as ZeroModelStates computes them
  // (sim/memory/budget.cc): with routed experts, the dense and expert parameters each over their
  // own group (dp x cp, and dp x cp / ep), so that the line reproduces its figure.
  const int64_t dense_params = s.params - s.expert_params;
  auto how = [&](double bytes_per_param, int digits, bool sharded) {
    std::string text = FormatSig(bytes_per_param, digits) + " B/param";
    if (!sharded) return text;
    if (s.expert_params == 0) return text + " / " + std::to_string(m.zero_shards);
    return text + " x (" + GroupedNumber(static_cast<double>(dense_params)) + " dense / " +
           std::to_string(m.zero_shards) + " + " +
           GroupedNumber(static_cast<double>(s.expert_params)) + " expert / " +
           std::to_string(m.expert_zero_shards) + ")";
  };
  t.AddRow({"weights", B(s.weights),
            m.fp32_sharded_params
                ? std::string("no 16-bit shard: FSDP2's fp32 shards are the master (optimizer)")
                : how(m.weight_bytes_per_param, 2, z >= 3)});
  t.AddRow({"gradients", B(s.gradients),
            how(m.grad_bytes_per_param, 2, z >= 2) +
                (s.unsharded_grads.value() > 0 ? " + unsharded below" : "")});
  if (s.unsharded_grads.value() > 0) {
    t.AddRow({"  of which unsharded", B(s.unsharded_grads),
              FormatSig(m.grad_bytes_per_param, 2) +
                  " B/param until the last micro-batch (framework." + Name(sc.framework.grad_sync) +
                  ")"});
  }
  t.AddRow({"optimizer state", B(s.optimizer), how(m.optimizer_bytes_per_param, 3, z >= 1)});
  if (s.zero3_buffers.value() > 0)
    t.AddRow({"ZeRO-3 gathered weights", B(s.zero3_buffers), m.gathered_how});
  if (s.stream_pools.value() > 0)
    t.AddRow({"FSDP2 stream pools", B(s.stream_pools),
              "all-gather / reduce-scatter streams' cached segments (reserved, not allocated)"});
  t.AddRow({"activations", B(s.activations),
            B(s.activations_per_microbatch) + " per micro-batch x " + FormatSig(s.in_flight, 3) +
                " in flight" + InFlightHow(sc, s)});
  if (s.recompute_buffer.value() > 0)
    t.AddRow({"recompute buffer", B(s.recompute_buffer), "one layer rebuilt in backward"});
  if (s.loss_buffers.value() > 0)
    t.AddRow({"loss buffers", B(s.loss_buffers), "fp32 logit gradients (transient)"});
  if (s.moe_buffers.value() > 0)
    t.AddRow({"MoE dispatch buffers", B(s.moe_buffers), "one layer's all-to-all"});
  t.AddRow({"CUDA context", B(s.cuda_context), "runtime reserve"});
  t.AddRow({"communication buffers", B(s.comm_buffers), "runtime reserve"});
  t.AddRow({"fragmentation", B(s.fragmentation),
            Percent(sc.hardware.reserve_fragmentation) + " of allocated"});
  const Bytes total = s.total();
  t.AddRow({"total", B(total),
            "capacity " + B(Bytes(cap)) + (BudgetFits(sc, r) ? ": fits" : ": DOES NOT FIT")});
  out += t.ToString();
  const MemoryFigures fig = DeviceMemoryFigures(s, s.activations, sc.hardware);
  out += "  as profilers print it: allocated " + B(fig.allocated) +
         " (torch.cuda.max_memory_allocated), reserved " + B(fig.reserved) +
         " (max_memory_reserved), device " + B(fig.device) + " (nvidia-smi)\n";
  if (sc.framework.name != Framework::kMegatron) {
    out += std::string("  ") + Name(sc.framework.name) + "'s logs report the " +
           Name(sc.framework.memory_figure) +
           " figure: " + B(FrameworkFigure(fig, sc.framework.memory_figure)) + "\n";
  }
  if (m.stages.size() > 1) {
    out += "  per stage:";
    for (const StageMemory& st : m.stages) out += " " + B(st.total());
    out += "\n";
  }
}

}  // namespace

std::string BudgetText(const Scenario& sc, const BudgetReport& r) {
  std::string out = "shardsim budget: " + sc.name + "\n  " + sc.model.name + " on " +
                    std::to_string(sc.gpus) + " x " + sc.hardware.name + ", " + LayoutSummary(sc) +
                    "\n  seq " + std::to_string(sc.training.seq_len) + ", global batch " +
                    std::to_string(sc.training.global_batch) + ", micro-batch " +
                    std::to_string(sc.training.micro_batch) + "\n\n";
  AddParams(sc, r, out);
  AddFlops(sc, r, out);
  AddMemory(sc, r, out);
  out += "\nAssumptions\n";
  out += "  precision " + std::string(Name(sc.training.precision)) + ", optimizer " +
         Name(sc.training.optimizer) + ", grad dtype " + Name(sc.training.grad_dtype) +
         ", recompute " + RecomputeText(sc.training) + ", flash attention " +
         (sc.training.flash_attention ? "on" : "off") + "\n";
  for (const std::string& a : r.memory.assumptions) out += "  " + a + "\n";
  return out;
}

bool BudgetFits(const Scenario& sc, const BudgetReport& r) {
  return r.memory.worst_stage().total().value() <= sc.hardware.memory_capacity;
}

std::string BudgetJson(const Scenario& sc, const BudgetReport& r) {
  const ParamCount& c = r.params;
  const FlopsSummary& f = r.flops;
  const MemoryBudget& m = r.memory;
  const StageMemory& s = m.worst_stage();
  Json j;
  j["scenario"] = sc.name;
  j["model"] = sc.model.name;
  j["params"] = {{"total", c.total},
                 {"active", c.active},
                 {"embedding", c.embedding},
                 {"non_embedding", c.non_embedding},
                 {"mtp", c.mtp}};
  Json rows = Json::array();
  for (const ParamRow& row : c.rows) {
    rows.push_back({{"layer_kind", row.layer_kind},
                    {"layers", row.layers},
                    {"op", row.op},
                    {"params", row.params}});
  }
  j["params"]["by_matrix"] = rows;
  const SixNdGap g = ExplainSixNd(sc.model, f, c);
  const double tokens = static_cast<double>(f.tokens_per_step);
  j["flops"] = {{"per_step", f.model_per_step},
                {"six_nd", f.six_nd},
                {"hardware_per_step", f.hardware_per_step},
                {"executed_per_step", f.executed_per_step},
                {"tokens_per_step", f.tokens_per_step},
                {"per_token",
                 {{"forward", f.model_fwd_per_token},
                  {"backward", f.model_bwd_per_token},
                  {"recompute", f.recompute_per_token}}},
                {"forward_per_token",
                 {{"layer_matmuls", f.fwd_layer_matmuls},
                  {"attention", f.fwd_attention},
                  {"head", f.fwd_head},
                  {"mtp", f.fwd_mtp}}},
                {"six_nd_gap_per_step",
                 {{"attention", g.attention * tokens},
                  {"lookup_tables", g.lookup_tables * tokens},
                  {"tied_head", g.tied_head * tokens},
                  {"norms_and_biases", g.norms_and_biases * tokens},
                  {"mtp", g.mtp * tokens}}}};
  auto fig_of = [&](const StageMemory& st) {
    return DeviceMemoryFigures(st, st.activations, sc.hardware);
  };
  auto stage_json = [&](const StageMemory& st) {
    return Json{{"stage", st.stage},
                {"layers", st.layers},
                {"params", st.params},
                {"weights", st.weights.value()},
                {"gradients", st.gradients.value()},
                {"optimizer", st.optimizer.value()},
                {"activations", st.activations.value()},
                {"activations_per_microbatch", st.activations_per_microbatch.value()},
                {"microbatches_in_flight", st.in_flight},
                {"zero3_buffers", st.zero3_buffers.value()},
                {"recompute_buffer", st.recompute_buffer.value()},
                {"loss_buffers", st.loss_buffers.value()},
                {"moe_buffers", st.moe_buffers.value()},
                {"reserve",
                 {{"cuda_context", st.cuda_context.value()},
                  {"comm_buffers", st.comm_buffers.value()},
                  {"fragmentation", st.fragmentation.value()}}},
                {"total", st.total().value()},
                {"allocated_peak_bytes", fig_of(st).allocated.value()},
                {"reserved_peak_bytes", fig_of(st).reserved.value()},
                {"device_peak_bytes", fig_of(st).device.value()}};
  };
  j["memory"] = {{"per_device", stage_json(s)},
                 {"capacity", sc.hardware.memory_capacity},
                 {"fits", BudgetFits(sc, r)},
                 {"allocated_peak_bytes", fig_of(s).allocated.value()},
                 {"reserved_peak_bytes", fig_of(s).reserved.value()},
                 {"device_peak_bytes", fig_of(s).device.value()}};
  if (sc.framework.name != Framework::kMegatron) {
    j["memory"]["framework_figure"] = Name(sc.framework.memory_figure);
    j["memory"]["framework_reported_bytes"] =
        FrameworkFigure(fig_of(s), sc.framework.memory_figure).value();
  }
  Json stages = Json::array();
  for (const StageMemory& st : m.stages) {
    stages.push_back(stage_json(st));
    // FSDP gradients held unsharded (framework.grad_sync), part of "gradients".
    if (st.unsharded_grads.value() > 0)
      stages.back()["unsharded_grads"] = st.unsharded_grads.value();
    if (st.stream_pools.value() > 0) stages.back()["stream_pools"] = st.stream_pools.value();
  }
  if (s.unsharded_grads.value() > 0) {
    j["memory"]["per_device"]["unsharded_grads"] = s.unsharded_grads.value();
  }
  if (s.stream_pools.value() > 0) {  // FSDP2 (framework fully_shard): reserved, not allocated
    j["memory"]["per_device"]["stream_pools"] = s.stream_pools.value();
    j["memory"]["per_device"]["root_gathered"] = s.root_gathered.value();
  }
  j["memory"]["stages"] = stages;
  j["assumptions"] = {{"precision", Name(sc.training.precision)},
                      {"optimizer", Name(sc.training.optimizer)},
                      {"grad_dtype", Name(sc.training.grad_dtype)},
                      {"recompute", Name(sc.training.recompute)},
                      {"flash_attention", sc.training.flash_attention},
                      {"fused_kernels", sc.training.fused_kernels},
                      {"notes", m.assumptions}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string ExplainOps(const OpGraph& g, const TrainingSpec& training) {
  // Selective recompute drops part of some ops' saved tensors (sim/model/recompute.h).
  auto kept = [&](const Op& op) { return op.saved - SelectiveDrops(op.dropped_by, training); };
  TextTable t({"op", "kind", "tp split", "shape", "fwd FLOPs", "bwd FLOPs", "fwd bytes", "params",
               "saved", "source"});
  t.SetLeftAligned({1, 2, 3, 9});
  auto add = [&](const Op& op) {
    std::string shape;
    if (op.kind == OpKind::kMatmul) {
      shape = std::to_string(op.matmul.m) + "x" + std::to_string(op.matmul.k) + " . " +
              std::to_string(op.matmul.k) + "x" + std::to_string(op.matmul.n);
      if (op.matmul.batch > 1) shape += " (x" + std::to_string(op.matmul.batch) + ")";
    } else if (op.kind == OpKind::kAttention) {
      const AttentionShape& a = op.attention;
      shape = std::to_string(a.batch_heads) + " heads, " + std::to_string(a.seq_q) + "x" +
              std::to_string(a.seq_kv) + ", d " + std::to_string(a.head_dim) +
              (a.flash ? ", flash" : "");
    }
    t.AddRow({op.name, Name(op.kind), Name(op.tp_split), shape, FormatSci(op.fwd.flops.value()),
              FormatSci((op.bwd_input.flops + op.bwd_weight.flops).value()),
              FormatBytes(op.fwd.bytes), FormatCount(static_cast<double>(op.params)),
              FormatBytes(op.saved) + (kept(op).value() < op.saved.value()
                                           ? " (keeps " + FormatBytes(kept(op)) + ")"
                                           : std::string()),
              op.note});
  };
  t.AddSection("embedding (first stage)");
  for (const Op& op : g.embedding) add(op);
  for (const LayerOps& layer : g.layer_kinds) {
    int64_t n = 0;
    for (size_t i = 0; i < g.layer_kind_of.size(); ++i) {
      if (&g.layer_kinds[static_cast<size_t>(g.layer_kind_of[i])] == &layer) ++n;
    }
    if (n == 0) continue;
    std::string keeps = "full recompute keeps " + FormatBytes(layer.input_bytes);
    if (training.recompute != Recompute::kFull) {
      keeps = "recompute " + RecomputeText(training) + " keeps " +
              FormatBytes(LayerActivationBytes(layer, training)) + "; " + keeps;
    }
    t.AddSection(layer.kind + " layer (x" + std::to_string(n) + "); " + keeps);
    for (const Op& op : layer.ops) add(op);
  }
  t.AddSection("head (last stage)");
  for (const Op& op : g.head) add(op);
  if (!g.mtp.empty()) {
    t.AddSection("multi-token prediction (last stage)");
    for (const Op& op : g.mtp) add(op);
  }
  return "Per-op table (one micro-batch of " + std::to_string(g.tokens_per_microbatch) +
         " tokens on one device; FLOPs as executed, bytes read + written)\n" + t.ToString();
}

}  // namespace shardsim
