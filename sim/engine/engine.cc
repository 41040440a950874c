#include "sim/engine/engine.h"

#include <cmath>
#include <string>
#include <utility>

#include "sim/engine/simulation.h"

namespace shardsim {

void Engine::Reserve(int32_t tasks, int64_t dependencies) {
  const auto n = static_cast<size_t>(tasks > 0 ? tasks : 0);
  tasks_.reserve(n);
  flows_.reserve(n);  // at most one per task
  edges_.reserve(static_cast<size_t>(dependencies > 0 ? dependencies : 0));
}

// inline: a hot check of every AddFlow link (private, used only in this file).
inline bool Engine::IsResource(ResourceId r, ResourceKind kind) const {
  return r.valid() && r.v < num_resources() && resource_kind_[Index(r)] == kind;
}

ResourceId Engine::AddStream(std::string name) {
  const ResourceId id(num_resources());
  resource_kind_.push_back(ResourceKind::kStream);
  resource_name_.push_back(std::move(name));
  capacity_.push_back(0.0);
  return id;
}

ResourceId Engine::AddLink(std::string name, BytesPerSec capacity) {
  const ResourceId id(num_resources());
  resource_kind_.push_back(ResourceKind::kLink);
  resource_name_.push_back(std::move(name));
  capacity_.push_back(0.0);
  SetLinkCapacity(id, capacity);
  return id;
}

void Engine::SetLinkCapacity(ResourceId link, BytesPerSec capacity) {
  if (!IsResource(link, ResourceKind::kLink)) {
    Error("SetLinkCapacity: resource " + std::to_string(link.v) + " is not a link");
    return;
  }
  const double c = capacity.value();
  if (!(c > 0.0) || !std::isfinite(c)) {
    Error("link '" + resource_name_[Index(link)] + "': capacity must be positive and finite, got " +
          FormatSig(c) + " B/s");
  }
  capacity_[Index(link)] = c;
}

TaskId Engine::AddDelay(ResourceId stream, SimTime duration, uint32_t label, uint8_t category) {
  const TaskId id(num_tasks());
  const bool on_stream = IsResource(stream, ResourceKind::kStream);
  // The checks in one branch; the messages out of line (the builder adds thousands of tasks).
  if ((stream.valid() && !on_stream) || duration < SimTime::Zero()) [[unlikely]] {
    DelayErrors(id, stream, duration);
  }
  tasks_.push_back(
      {duration.picos(), on_stream ? stream.v : -1, -1, label, TaskKind::kDelay, category});
  return id;
}

void Engine::DelayErrors(TaskId id, ResourceId stream, SimTime duration) {
  if (stream.valid() && !IsResource(stream, ResourceKind::kStream)) {
    Error("task " + std::to_string(id.v) + ": resource " + std::to_string(stream.v) +
          " is not a stream");
  }
  if (duration < SimTime::Zero()) {
    Error("task " + std::to_string(id.v) + ": negative duration " +
          std::to_string(duration.picos()) + " ps");
  }
}

TaskId Engine::AddFlow(ResourceId stream, Bytes bytes, SimTime latency,
                       std::span<const ResourceId> links, uint32_t label, uint8_t category,
                       BytesPerSec rate_cap, std::span<const double> weights) {
  const TaskId id(num_tasks());
  const auto where = [&id] { return "task " + std::to_string(id.v) + ": "; };  // errors only
  if (stream.valid() && !IsResource(stream, ResourceKind::kStream)) {
    Error(where() + "resource " + std::to_string(stream.v) + " is not a stream");
  }
  if (!(bytes.value() >= 0.0) || !std::isfinite(bytes.value())) {
    Error(where() + "flow bytes must be finite and >= 0, got " + FormatSig(bytes.value()));
  }
  if (latency < SimTime::Zero()) {
    Error(where() + "negative latency " + std::to_string(latency.picos()) + " ps");
  }
  const double cap = rate_cap.value();
  if (!(cap >= 0.0)) {
    Error(where() + "negative rate cap " + FormatSig(cap) + " B/s");
  }

  if (!weights.empty() && weights.size() != links.size()) {
    Error(where() + std::to_string(weights.size()) + " weights for " +
          std::to_string(links.size()) + " links");
  }
  const auto flow = static_cast<int32_t>(flows_.size());
  const auto path_begin = static_cast<int32_t>(flow_links_.size());
  // One pass over the links when all are good (the builder's case): each a link, none seen
  // before in this flow (link_seen_), each weight finite and > 0; then one bulk copy.
  const bool weighted = weights.size() == links.size();
  bool good = weighted || weights.empty();
  if (link_seen_.size() < resource_kind_.size()) link_seen_.resize(resource_kind_.size(), 0);
  for (size_t i = 0; good && i < links.size(); ++i) {
    const ResourceId l = links[i];
    const double w = weighted ? weights[i] : 1.0;
    good = IsResource(l, ResourceKind::kLink) && link_seen_[Index(l)] != flow + 1 && w > 0.0 &&
           std::isfinite(w);
    if (good) link_seen_[Index(l)] = flow + 1;
  }
  if (good) {
    flow_links_.insert(flow_links_.end(), links.begin(), links.end());
    if (weighted) {
      flow_weight_.insert(flow_weight_.end(), weights.begin(), weights.end());
    } else {
      flow_weight_.resize(flow_weight_.size() + links.size(), 1.0);
    }
  } else {
    // Some link or weight is bad: record each problem, keep the good links.
    for (size_t i = 0; i < links.size(); ++i) {
      const ResourceId l = links[i];
      if (!IsResource(l, ResourceKind::kLink)) {
        Error(where() + "resource " + std::to_string(l.v) + " is not a link");
        continue;
      }
      bool repeated = false;
      for (size_t j = 0; j < i; ++j) {
        repeated = repeated || links[j] == l;
      }
      if (repeated) {
        Error(where() + "link '" + resource_name_[Index(l)] + "' listed twice");
        continue;
      }
      const double w = weighted ? weights[i] : 1.0;
      if (!(w > 0.0) || !std::isfinite(w)) {
        Error(where() + "weight " + FormatSig(w) + " on link '" + resource_name_[Index(l)] +
              "' must be finite and > 0");
        continue;
      }
      flow_links_.push_back(l);
      flow_weight_.push_back(w);
    }
  }
  flows_.push_back({bytes.value(), std::isfinite(cap) && cap > 0.0 ? cap : 0.0, id.v, path_begin,
                    static_cast<int32_t>(flow_links_.size())});

  tasks_.push_back({latency.picos(), IsResource(stream, ResourceKind::kStream) ? stream.v : -1,
                    flow, label, TaskKind::kFlow, category});
  return id;
}

TaskId Engine::AddFlowLike(TaskId like, ResourceId stream, Bytes bytes, SimTime latency,
                           uint32_t label, uint8_t category) {
  const TaskId id(num_tasks());
  const bool known = like.valid() && like.v < num_tasks() && tasks_[Index(like)].flow >= 0;
  const bool on_stream = IsResource(stream, ResourceKind::kStream);
  // The checks in one branch; the messages out of line (the builder adds thousands of flows).
  if (!known || (stream.valid() && !on_stream) || !(bytes.value() >= 0.0) ||
      !std::isfinite(bytes.value()) || latency < SimTime::Zero()) [[unlikely]] {
    if (!FlowLikeErrors(id, known, like, stream, bytes, latency)) {
      return AddFlow(stream, bytes, latency, {}, label, category);
    }
  }
  const auto flow = static_cast<int32_t>(flows_.size());
  Flow f = flows_[static_cast<size_t>(tasks_[Index(like)].flow)];
  f.bytes = bytes.value();
  f.task = id.v;
  flows_.push_back(f);
  tasks_.push_back(
      {latency.picos(), on_stream ? stream.v : -1, flow, label, TaskKind::kFlow, category});
  return id;
}

TaskId Engine::AppendCopies(TaskId first, int32_t count, uint32_t label,
                            std::span<const std::pair<int32_t, int32_t>> deps) {
  const TaskId id(num_tasks());
  if (!first.valid() || count < 0 || first.v > num_tasks() - count) [[unlikely]] {
    Error("AppendCopies: tasks " + std::to_string(first.v) + " .. " +
          std::to_string(static_cast<int64_t>(first.v) + count - 1) + " are not all tasks");
    return id;
  }
  for (int32_t k = 0; k < count; ++k) {
    Task t = tasks_[Index(first) + static_cast<size_t>(k)];  // a copy: push_back may move tasks_
    t.label = label + static_cast<uint32_t>(k);
    if (t.flow >= 0) {
      Flow f = flows_[static_cast<size_t>(t.flow)];
      f.task = id.v + k;
      t.flow = static_cast<int32_t>(flows_.size());
      flows_.push_back(f);
    }
    tasks_.push_back(t);
  }
  for (const auto& [before, after] : deps) {
    if (before < 0 || before >= count || after < 0 || after >= count) [[unlikely]] {
      Error("AppendCopies: dependency " + std::to_string(before) + " -> " + std::to_string(after) +
            " is outside the " + std::to_string(count) + " copies");
      continue;
    }
    edges_.emplace_back(id.v + before, id.v + after);
  }
  return id;
}

bool Engine::FlowLikeErrors(TaskId id, bool known, TaskId like, ResourceId stream, Bytes bytes,
                            SimTime latency) {
  if (!known) {
    Error("task " + std::to_string(id.v) + ": AddFlowLike of task " + std::to_string(like.v) +
          ", which is not a flow");
    return false;
  }
  if (stream.valid() && !IsResource(stream, ResourceKind::kStream)) {
    Error("task " + std::to_string(id.v) + ": resource " + std::to_string(stream.v) +
          " is not a stream");
  }
  if (!(bytes.value() >= 0.0) || !std::isfinite(bytes.value())) {
    Error("task " + std::to_string(id.v) + ": flow bytes must be finite and >= 0, got " +
          FormatSig(bytes.value()));
  }
  if (latency < SimTime::Zero()) {
    Error("task " + std::to_string(id.v) + ": negative latency " + std::to_string(latency.picos()) +
          " ps");
  }
  return true;
}

void Engine::BadDependency(TaskId before, TaskId after) {
  const bool ok_before = before.valid() && before.v < num_tasks();
  Error("dependency " + std::to_string(before.v) + " -> " + std::to_string(after.v) +
        ": unknown task " + std::to_string(ok_before ? after.v : before.v));
}

SimTime Engine::fixed_time(TaskId t) const { return SimTime::FromPicos(tasks_[Index(t)].fixed_ps); }

Bytes Engine::flow_bytes(TaskId t) const {
  const int32_t f = tasks_[Index(t)].flow;
  return Bytes(f < 0 ? 0.0 : flows_[static_cast<size_t>(f)].bytes);
}

std::span<const ResourceId> Engine::flow_links(TaskId t) const {
  const int32_t f = tasks_[Index(t)].flow;
  if (f < 0) {
    return {};
  }
  const auto begin = static_cast<size_t>(flows_[static_cast<size_t>(f)].path_begin);
  const auto end = static_cast<size_t>(flows_[static_cast<size_t>(f)].path_end);
  return std::span<const ResourceId>(flow_links_).subspan(begin, end - begin);
}

std::span<const double> Engine::flow_weights(TaskId t) const {
  const int32_t f = tasks_[Index(t)].flow;
  if (f < 0) {
    return {};
  }
  const auto begin = static_cast<size_t>(flows_[static_cast<size_t>(f)].path_begin);
  const auto end = static_cast<size_t>(flows_[static_cast<size_t>(f)].path_end);
  return std::span<const double>(flow_weight_).subspan(begin, end - begin);
}

std::string Engine::TaskName(TaskId t) const {
  if (namer_) {
    return namer_(t);
  }
  return "task " + std::to_string(t.v);
}

void Engine::SetCounterparts(std::vector<int32_t> counterpart) {
  if (!counterpart.empty() && counterpart.size() != tasks_.size()) {
    Error("SetCounterparts: " + std::to_string(counterpart.size()) + " counterparts for " +
          std::to_string(tasks_.size()) + " tasks");
    return;
  }
  counterpart_ = std::move(counterpart);
}

Result<RunResult> Engine::Run() const {
  if (!errors_.empty()) {
    return errors_.ToStatus(StatusCode::kInternal);
  }
  Simulation sim(*this);
  return sim.Run();
}

}  // namespace shardsim
