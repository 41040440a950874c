#include "sim/report/html_simulate_data.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "sim/memory/budget.h"
#include "sim/topology/link_class.h"

namespace shardsim {

using Json = nlohmann::ordered_json;

namespace {

// Task kinds the timeline colours apart: the TaskCategory names (sim/program/step_program.h)
// but kJoin, whose index is taken by "idle", the gaps of a compute stream.
static_assert(static_cast<int>(TaskCategory::kJoin) == kNumTaskCategories - 1);
constexpr int kIdle = static_cast<int>(TaskCategory::kJoin);

int64_t Nanos(SimTime t) { return t.picos() / 1000; }
int64_t Nanos(Seconds s) { return static_cast<int64_t>(std::llround(s.value() * 1e9)); }

// Columns of the timeline's tasks.
struct Columns {
  std::vector<int32_t> row, kind, mb, chunk, link;
  std::vector<int64_t> start, end, compute, recompute, tp, cp, ep;
  std::vector<double> bytes;

  void Add(int32_t r, int k, int64_t s, int64_t e) {
    row.push_back(r);
    kind.push_back(k);
    start.push_back(s);
    end.push_back(e);
    mb.push_back(-1);
    chunk.push_back(-1);
    link.push_back(-1);
    for (auto* c : {&compute, &recompute, &tp, &cp, &ep}) c->push_back(0);
    bytes.push_back(0.0);
  }
};

Json TimelineJson(const SimResult& r) {
  const StepProgram& prog = *r.program;
  const RunResult& run = *r.run;
  // Devices drawn: data- and context-parallel rank 0 of each stage (every replica of a stage
  // does the same work; in representative mode these are all the devices there are).
  struct Shown {
    TaskId id;
    int64_t stage;
    int stream;
  };
  std::vector<Shown> shown;
  std::map<std::pair<int64_t, int>, int32_t> row_of;  // (stage, stream) -> row, rows in order
  std::map<int64_t, int32_t> device_of;               // stage -> its shown device
  for (const Device& d : prog.devices) {
    if (d.coords.dp != 0 || d.coords.cp != 0) continue;
    device_of[d.coords.pp] = d.index;
    row_of[{d.coords.pp, 0}] = 0;  // a compute row even for an idle stage
  }
  for (int32_t i = 0; i < run.num_tasks(); ++i) {
    const TaskId id(i);
    const TaskInfo& t = (*prog.tasks)[static_cast<size_t>(prog.engine.label(id))];
    if (t.category == TaskCategory::kJoin) continue;
    // An in-layer flow beside its compute window (program/step_in_layer.cc AddPass) runs under
    // the window's task, which is drawn.
    if ((t.category == TaskCategory::kForward || t.category == TaskCategory::kBackward) &&
        !prog.engine.stream(id).valid()) {
      continue;
    }
    const Device& d = prog.devices[static_cast<size_t>(t.device)];
    if (d.coords.dp != 0 || d.coords.cp != 0) continue;
    shown.push_back({id, d.coords.pp, d.StreamIndex(prog.engine.stream(id))});
    row_of[{d.coords.pp, shown.back().stream}] = 0;
  }
  Json rows = Json::array();
  for (auto& [stage_stream, row] : row_of) {
    const auto [stage, stream] = stage_stream;
    row = static_cast<int32_t>(rows.size());
    rows.push_back({{"label", "stage " + std::to_string(stage) + " " +
                                  kStreamNames[static_cast<size_t>(stream)]},
                    {"stage", stage},
                    {"device", device_of[stage]},
                    {"stream", kStreamNames[static_cast<size_t>(stream)]}});
  }

  Columns c;
  const int64_t step_ns = Nanos(run.makespan());
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> busy;  // compute row -> intervals
  for (const Shown& sh : shown) {
    const TaskInfo& t = (*prog.tasks)[static_cast<size_t>(prog.engine.label(sh.id))];
    const int32_t row = row_of.at({sh.stage, sh.stream});
    const int64_t s = Nanos(run.start(sh.id)), e = Nanos(run.end(sh.id));
    c.Add(row, static_cast<int>(t.category), s, e);
    c.mb.back() = t.microbatch;
    c.chunk.back() = t.chunk;
    if (t.category == TaskCategory::kForward || t.category == TaskCategory::kBackward) {
      c.compute.back() = Nanos(t.parts.compute - t.recompute);
      c.recompute.back() = Nanos(t.recompute);
      c.tp.back() = Nanos(t.parts.tp);
      c.cp.back() = Nanos(t.parts.cp);
      c.ep.back() = Nanos(t.parts.ep);
    } else if (t.category != TaskCategory::kOptimizer) {
      c.bytes.back() = t.bytes.value();
      c.link.back() = static_cast<int32_t>(t.link);
    }
    if (sh.stream == 0) busy[row].push_back({s, e});
  }
  // Idle: the gaps of each compute row between zero, its tasks and the end of the step.
  for (const auto& [stage_stream, row] : row_of) {
    if (stage_stream.second != 0) continue;
    std::vector<std::pair<int64_t, int64_t>>& iv = busy[row];
    std::sort(iv.begin(), iv.end());
    int64_t t = 0;
    for (const auto& [s, e] : iv) {
      if (s > t) c.Add(row, kIdle, t, s);
      t = std::max(t, e);
    }
    if (step_ns > t) c.Add(row, kIdle, t, step_ns);
  }

  Json links = Json::array();
  for (int k = 0; k < kNumLinkClasses; ++k) links.push_back(Name(static_cast<LinkClass>(k)));
  Json kinds = Json::array();
  for (int k = 0; k < kIdle; ++k) kinds.push_back(Name(static_cast<TaskCategory>(k)));
  kinds.push_back("idle");
  Json tasks = {
      {"row", c.row},  {"start", c.start}, {"end", c.end},         {"kind", c.kind},
      {"mb", c.mb},    {"chunk", c.chunk}, {"compute", c.compute}, {"recompute", c.recompute},
      {"tp", c.tp},    {"cp", c.cp},       {"ep", c.ep},           {"bytes", c.bytes},
      {"link", c.link}};
  return {
      {"step_ns", step_ns}, {"kinds", kinds}, {"links", links}, {"rows", rows}, {"tasks", tasks}};
}

Json MemoryJson(const Scenario& sc, const SimResult& r) {
  const double frag = sc.hardware.reserve_fragmentation;
  Json stages = Json::array();
  for (size_t p = 0; p < r.memory.stages.size(); ++p) {
    const StageMemory& s = r.memory.stages[p];
    const DeviceStats* dev = nullptr;
    for (const DeviceStats& d : r.devices) {
      if (d.coords.pp == static_cast<int64_t>(p) &&
          (dev == nullptr || d.peak_memory > dev->peak_memory))
        dev = &d;
    }
    if (dev == nullptr) continue;
    const Bytes buffers =
        s.zero3_buffers + s.recompute_buffer + s.loss_buffers + s.moe_buffers + s.comm_buffers;
    const Bytes fragmentation = s.Allocated(dev->peak_activations) * frag;
    stages.push_back({{"stage", p},
                      {"device", dev->device},
                      {"total", dev->peak_memory.value()},
                      {"values",
                       {s.weights.value(), s.gradients.value(), s.optimizer.value(),
                        dev->peak_activations.value(), buffers.value(),
                        (s.cuda_context + fragmentation + s.stream_pools).value()}},
                      {"detail",
                       {{"buffers",
                         {{"zero3 gathered weights", s.zero3_buffers.value()},
                          {"recompute buffer", s.recompute_buffer.value()},
                          {"loss buffers", s.loss_buffers.value()},
                          {"MoE dispatch buffers", s.moe_buffers.value()},
                          {"communication buffers", s.comm_buffers.value()}}},
                        {"reserve",
                         {{"CUDA context", s.cuda_context.value()},
                          {"allocator fragmentation", fragmentation.value()}}}}},
                      {"in_flight", s.in_flight}});
    if (s.stream_pools.value() > 0) {  // FSDP2's collective streams' segments (reserved)
      stages.back()["detail"]["reserve"]["FSDP2 stream pools"] = s.stream_pools.value();
    }
  }
  const DeviceStats& wd = r.devices[static_cast<size_t>(r.worst_device)];
  const StageMemory& ws = r.memory.stages[static_cast<size_t>(wd.coords.pp)];
  std::vector<int64_t> t_ns;
  std::vector<double> bytes;
  for (const auto& [sec, act] : wd.activation_timeline) {
    t_ns.push_back(Nanos(Seconds(sec)));
    bytes.push_back(ws.DeviceTotal(Bytes(act), frag).value());
  }
  const Json over = {{"device", wd.device},
                     {"stage", wd.coords.pp},
                     {"base", ws.DeviceTotal(Bytes(0.0), frag).value()},
                     {"step_ns", Nanos(r.step_time)},
                     {"t_ns", t_ns},
                     {"bytes", bytes}};
  return {{"capacity", sc.hardware.memory_capacity},
          {"parts", {"weights", "gradients", "optimizer", "activations", "buffers", "reserve"}},
          {"stages", stages},
          {"worst_stage", wd.coords.pp},
          {"over_time", over}};
}

Json BreakdownJson(const SimResult& r) {
  Json out = Json::array();
  for (const Breakdown::Part& p : r.breakdown.Parts()) {
    if (p.seconds.value() > 0.0) {
      out.push_back({{"part", p.kind}, {"label", p.label}, {"seconds", p.seconds.value()}});
    }
  }
  return out;
}

Json ExposedJson(const SimResult& r) {
  Json bn = Json::array();
  for (const Bottleneck& b : r.bottlenecks) {
    std::string label = b.collective;
    if (label.empty()) {
      label = b.kind == "pipeline_bubble" ? "pipeline bubble"
              : b.kind == "optimizer"     ? "optimizer step"
                                          : b.kind;
    }
    bn.push_back({{"label", label},
                  {"kind", b.kind},
                  {"resource", b.resource},
                  {"exposed_s", b.exposed.value()},
                  {"share", b.share}});
  }
  Json links = Json::array();
  for (const auto& [name, s] : r.exposed_by_link)
    links.push_back({{"link", name}, {"exposed_s", s.value()}});
  return {{"bottlenecks", bn}, {"by_link", links}};
}

}  // namespace

std::string SimulateReportData(const Scenario& sc, const SimResult& r) {
  Json j;
  j["scenario"] = sc.name;
  j["step_s"] = r.step_time.value();
  if (r.program && r.run) j["timeline"] = TimelineJson(r);
  if (!r.devices.empty()) j["memory"] = MemoryJson(sc, r);
  j["breakdown"] = BreakdownJson(r);
  j["exposed"] = ExposedJson(r);
  // Names come from users' files: bytes that are not UTF-8 become U+FFFD instead of throwing.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace shardsim
