#include "sim/report/step_metrics.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/goodput/goodput.h"
#include "sim/parallel/layout.h"

namespace shardsim {
namespace {

// Splits the step as the reference device (the one with the most work) lived it: its own tasks
// count by their parts (compute, recompute, exposed TP/CP/EP); each idle gap before one of its
// tasks goes to what released that task — a transfer (up to its duration; the rest of the wait
// is the pipeline) or another rank's compute (pipeline bubble); the tail after its last task
// follows the critical path. The parts sum to the step time.
// `by_kind` gets the exposed seconds of each communication category on each engine link class
// its tasks ran on (what the bottleneck rows name).
Breakdown Attribute(const StepProgram& prog, const RunResult& run, const Device& ref,
                    std::map<LinkClass, Seconds>& by_link,
                    std::map<TaskCategory, std::map<LinkClass, Seconds>>& by_kind) {
  Breakdown b;
  const auto info = [&](TaskId t) -> const TaskInfo& {
    return (*prog.tasks)[static_cast<size_t>(prog.engine.label(t))];
  };
  const auto comm = [&](const TaskInfo& t, Seconds d) {
    switch (t.category) {
      case TaskCategory::kPpSend:
        b.pp += d;
        break;
      case TaskCategory::kGradReduce:
      case TaskCategory::kEmbeddingSync:
        b.dp += d;
        break;
      case TaskCategory::kParamGather:
      case TaskCategory::kZero3Gather:
        b.gather += d;
        break;
      default:
        return false;
    }
    by_link[t.link] += d;
    by_kind[t.category][t.link] += d;
    return true;
  };
  // A wait released by task `t`: a pipeline transfer accounts for (at most) its own duration,
  // the rest of the wait (and waits on other ranks' compute) is the pipeline bubble; a wait for a
  // gradient reduction or parameter gather is that collective's, queueing included (with no
  // pipeline there is no bubble to put it in). Joins (every-rank mode) pass through to the member
  // that released them.
  const auto wait = [&](TaskId t, Seconds gap) {
    while (info(t).category == TaskCategory::kJoin && run.released_by(t) == Release::kDependency) {
      t = run.released_by_task(t);
    }
    const TaskInfo& i = info(t);
    // An in-layer flow beside its compute window (program/step_in_layer.cc AddPass): what it
    // takes beyond the window is that class's exposed communication.
    if (prog.engine.kind(t) == TaskKind::kFlow &&
        (i.category == TaskCategory::kForward || i.category == TaskCategory::kBackward)) {
      (i.group == CommGroup::kCp ? b.cp : i.group == CommGroup::kEp ? b.ep : b.tp) += gap;
      return;
    }
    const Seconds dur = (run.end(t) - run.start(t)).seconds();
    const Seconds c = i.category == TaskCategory::kPpSend ? std::min(gap, dur) : gap;
    if (comm(i, c)) {
      b.bubble += gap - c;
    } else if (i.category == TaskCategory::kOptimizer) {
      b.optimizer += gap;
    } else {
      b.bubble += gap;
    }
  };
  SimTime at = SimTime::Zero();
  for (TaskId t : run.StreamTasks(ref.compute)) {
    const Seconds gap = (run.start(t) - at).seconds();
    if (gap.value() > 0.0) {
      if (run.released_by(t) == Release::kDependency) {
        wait(run.released_by_task(t), gap);
      } else {
        b.bubble += gap;
      }
    }
    const TaskInfo& i = info(t);
    const Seconds d = (run.end(t) - run.start(t)).seconds();
    if (i.category == TaskCategory::kOptimizer) {
      b.optimizer += d;
    } else if (prog.engine.kind(t) == TaskKind::kFlow) {
      // An in-layer flow on the compute stream (program/step_in_layer.cc AddPass): its compute
      // window, then what it takes beyond is that class's exposed communication.
      const Seconds c = std::min(d, i.parts.compute);
      const double r = i.parts.compute.value() > 0.0 ? i.recompute / i.parts.compute : 0.0;
      b.compute += c * (1.0 - r);
      b.recompute += c * r;
      (i.group == CommGroup::kCp ? b.cp : i.group == CommGroup::kEp ? b.ep : b.tp) += d - c;
    } else {
      const double total = i.parts.total().value();
      const double f = total > 0.0 ? d.value() / total : 0.0;
      b.compute += (i.parts.compute - i.recompute) * f;
      b.recompute += i.recompute * f;
      b.tp += i.parts.tp * f;
      b.cp += i.parts.cp * f;
      b.ep += i.parts.ep * f;
    }
    at = run.end(t);
  }
  // The tail: whatever on the critical path runs after the reference device's last task.
  for (const CriticalStep& step : run.critical_path()) {
    if (step.end <= at) continue;
    const SimTime from = std::max(step.start, at);
    const Seconds d = (step.end - from).seconds();
    const TaskInfo& i = info(step.task);
    if (!comm(i, d)) {
      if (i.category == TaskCategory::kOptimizer) {
        b.optimizer += d;
      } else {
        b.bubble += d;
      }
    }
  }
  return b;
}

void Stats(const StepProgram& prog, const RunResult& run, SimResult& r) {
  r.devices.resize(prog.devices.size());
  std::vector<std::vector<std::pair<int64_t, double>>> deltas(prog.devices.size());
  for (size_t i = 0; i < prog.devices.size(); ++i) {
    r.devices[i].device = prog.devices[i].index;
    r.devices[i].coords = prog.devices[i].coords;
    r.devices[i].busy = run.StreamBusy(prog.devices[i].compute).seconds();
    // At most one event per compute task of the device: a share of the tasks, grown if not.
    deltas[i].reserve(static_cast<size_t>(run.num_tasks()) / prog.devices.size() + 1);
  }
  // The engine keeps each task's category beside its label (the builder passes TaskInfo's):
  // only forward and backward tasks are looked up in the program's table.
  const int32_t num_tasks = run.num_tasks();
  for (int32_t t = 0; t < num_tasks; ++t) {
    const TaskId id(t);
    const auto category = static_cast<TaskCategory>(prog.engine.category(id));
    if (category != TaskCategory::kForward && category != TaskCategory::kBackward) continue;
    const TaskInfo& info = (*prog.tasks)[static_cast<size_t>(prog.engine.label(id))];
    if (info.activation_delta.value() != 0.0) {
      deltas[static_cast<size_t>(info.device)].push_back(
          {run.end(id).picos(), info.activation_delta.value()});
    }
  }
  for (size_t i = 0; i < deltas.size(); ++i) {
    auto& ev = deltas[i];
    // Frees before allocations at the same instant: a backward ending as a forward ends. The
    // order is total on (time, delta) (deltas are finite and nonzero), so pairs it ties are equal
    // and an unstable sort gives the same sequence. A device's passes are added in the order its
    // compute stream runs them, so the events usually come sorted: checked in one pass first.
    const auto before = [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second < b.second;
    };
    if (!std::is_sorted(ev.begin(), ev.end(), before)) std::sort(ev.begin(), ev.end(), before);
    double live = 0.0, peak = 0.0;
    DeviceStats& d = r.devices[i];
    d.activation_timeline.reserve(ev.size() + 1);
    d.activation_timeline.push_back({0.0, 0.0});
    for (const auto& [ps, delta] : ev) {
      live += delta;
      peak = std::max(peak, live);
      d.activation_timeline.push_back({static_cast<double>(ps) * 1e-12, live});
    }
    d.peak_activations = Bytes(peak);
  }
}

std::string CollectiveName(const char* group, bool sp) {
  return std::string(group) + (sp ? " all_gather+reduce_scatter" : " all_reduce");
}

}  // namespace

Result<SimResult> MeasureStep(const Scenario& sc, StepRun step,
                              std::optional<double> straggler_expected_max) {
  const std::shared_ptr<const StepProgram> program = step.program;
  const std::shared_ptr<const RunResult> result = step.run;
  const Layout* layout = &step.plan->layout;
  SimResult r;
  r.costs = std::move(step.costs);
  r.memory = std::move(step.memory);
  r.flops = step.flops;
  r.tasks = program->engine.num_tasks();
  r.step_time = result->makespan().seconds();
  const double t = r.step_time.value();
  const double gpus = static_cast<double>(sc.gpus);
  r.tokens_per_step = static_cast<double>(r.flops.tokens_per_step);
  r.tokens_per_s = t > 0.0 ? r.tokens_per_step / t : 0.0;
  r.tokens_per_s_per_gpu = r.tokens_per_s / gpus;
  r.tflops_per_gpu = t > 0.0 ? r.flops.model_per_step / t / gpus / kTera : 0.0;
  const auto peak = sc.hardware.peak_flops.find(sc.training.precision);
  r.peak_flops_per_gpu = peak != sc.hardware.peak_flops.end() ? peak->second : 0.0;
  if (r.peak_flops_per_gpu > 0.0 && t > 0.0) {
    r.mfu = r.flops.model_per_step / t / gpus / r.peak_flops_per_gpu;
    r.hfu = r.flops.hardware_per_step / t / gpus / r.peak_flops_per_gpu;
    r.executed_fraction = r.flops.executed_per_step / t / gpus / r.peak_flops_per_gpu;
  }
  r.executed_tflops_per_gpu = t > 0.0 ? r.flops.executed_per_step / t / gpus / kTera : 0.0;

  Stats(*program, *result, r);
  for (const DeviceStats& d : r.devices) {
    if (d.busy > r.devices[static_cast<size_t>(r.reference_device)].busy)
      r.reference_device = d.device;
  }
  // Memory at the simulated peak: the closed-form stage budget with its activations replaced by
  // the live activations at their peak on the timeline.
  for (DeviceStats& d : r.devices) {
    const StageMemory& s = r.memory.stages[static_cast<size_t>(d.coords.pp)];
    d.peak_memory = s.DeviceTotal(d.peak_activations, sc.hardware.reserve_fragmentation);
    if (d.peak_memory > r.peak_memory) {
      r.peak_memory = d.peak_memory;
      r.worst_device = d.device;
    }
  }
  r.fits = r.peak_memory.value() <= sc.hardware.memory_capacity;

  std::map<LinkClass, Seconds> by_link;
  std::map<TaskCategory, std::map<LinkClass, Seconds>> by_kind;
  r.breakdown =
      Attribute(*program, *result, program->devices[static_cast<size_t>(r.reference_device)],
                by_link, by_kind);
  // The pipeline bubble as Narayanan 2021 §2.2 defines it: the time the busiest rank waits on
  // the pipeline (warm-up and flush) over the time it works, (p-1)/m for 1F1B and (p-1)/(v·m)
  // interleaved when communication is free. Both come from the step as that rank lived it
  // (Attribute): its bubble is its wait before its first forward plus the flush on the critical
  // path after its last task, so on the last stage it too is (p-1)·(F+B). No pipeline, no bubble.
  if (sc.parallel.pp > 1) {
    const Breakdown& b = r.breakdown;
    const Seconds work = b.compute + b.recompute + b.tp + b.cp + b.ep;
    if (work.value() > 0.0) r.bubble_fraction = b.bubble.value() / work.value();
  }
  // In-layer TP communication: the link class that bounds the layer's TP collective at the size
  // it was priced at (one micro-batch's activation, pp_message * tp).
  const bool sp = step.plan->rules.sequence_parallel;
  LinkClass tp_link = LinkClass::kNvlink;
  if (sc.parallel.tp > 1) {
    Result<CollectiveCost> c =
        layout->Cost(CommGroup::kTp, sp ? CollectiveOp::kAllGather : CollectiveOp::kAllReduce,
                     r.costs.pp_message * static_cast<double>(sc.parallel.tp), RankCoords{});
    if (c.ok()) tp_link = c->bottleneck_class;
  }
  // DP, gather and PP transfers: the engine link their exposed tasks ran on (most seconds).
  auto ran_on = [&](std::initializer_list<TaskCategory> kinds) {
    std::map<LinkClass, Seconds> sum;
    for (TaskCategory k : kinds) {
      const auto it = by_kind.find(k);
      if (it == by_kind.end()) continue;
      for (const auto& [cls, sec] : it->second) sum[cls] += sec;
    }
    LinkClass best = LinkClass::kNvlink;
    Seconds most(-1.0);
    for (const auto& [cls, sec] : sum) {
      if (sec > most) {
        most = sec;
        best = cls;
      }
    }
    return best;
  };
  if (r.breakdown.tp.value() > 0) by_link[tp_link] += r.breakdown.tp;
  // Ring attention: the link of the ring's slowest hop, as priced (StepCosts, CpHop).
  LinkClass cp_link = LinkClass::kNvlink;
  for (const BlockCost& k : r.costs.layer_kinds) {
    if (k.cp_hop.rounds > 0) {
      cp_link = k.cp_hop.link;
      break;
    }
  }
  if (r.breakdown.cp.value() > 0) by_link[cp_link] += r.breakdown.cp;
  if (r.breakdown.ep.value() > 0) by_link[r.costs.ep.bottleneck] += r.breakdown.ep;
  for (const auto& [cls, s] : by_link) r.exposed_by_link.push_back({Name(cls), s});

  const Breakdown& b = r.breakdown;
  auto add = [&](const std::string& kind, const std::string& coll, const std::string& res,
                 Seconds s) {
    if (s.value() <= 0.0) return;
    r.bottlenecks.push_back(Bottleneck{kind, coll, res, s, t > 0 ? s.value() / t : 0.0});
  };
  add("communication", CollectiveName("tp", sp), Name(tp_link), b.tp);
  add("communication", "cp send_recv (ring attention)", Name(cp_link), b.cp);
  add("communication", "ep all_to_all", Name(r.costs.ep.bottleneck), b.ep);
  add("communication", "pp send_recv", Name(ran_on({TaskCategory::kPpSend})), b.pp);
  add("communication",
      std::string("dp ") + (sc.parallel.zero_stage == 0 ? "all_reduce" : "reduce_scatter"),
      Name(ran_on({TaskCategory::kGradReduce, TaskCategory::kEmbeddingSync})), b.dp);
  add("communication",
      sc.parallel.zero_stage == 3 ? "zero3 all_gather" : "dp all_gather (parameters)",
      Name(ran_on({TaskCategory::kParamGather, TaskCategory::kZero3Gather})), b.gather);
  add("pipeline_bubble", "", "pipeline", b.bubble);
  add("recompute", "", "compute", b.recompute);
  add("optimizer", "", "hbm", b.optimizer);
  std::stable_sort(r.bottlenecks.begin(), r.bottlenecks.end(),
                   [](const Bottleneck& x, const Bottleneck& y) { return x.exposed > y.exposed; });

  // Time to train: the ideal one at this step time, and as booked, over the goodput of the run
  // (interruptions, checkpoints, restarts, stragglers: sim/goodput).
  if (sc.training.tokens && r.tokens_per_s > 0.0) {
    Result<Goodput> g = EstimateGoodput(sc, r.memory, t, straggler_expected_max);
    if (!g.ok()) return g.status();
    r.time_to_train_ideal_s = *sc.training.tokens / r.tokens_per_s;
    if (g->feasible) {  // an infeasible run (Goodput::feasible) has no booked time
      r.time_to_train_s = *r.time_to_train_ideal_s / g->fraction;
      r.gpu_hours = *r.time_to_train_s * gpus / 3600.0;
    }
    r.goodput = std::move(*g);
  }
  r.plan = step.plan;
  r.program = program;
  r.run = result;
  return r;
}

}  // namespace shardsim
