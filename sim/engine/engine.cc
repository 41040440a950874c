#include "sim/engine/engine.h"

#include <cmath>
#include <string>
#include <utility>

#include "sim/engine/simulation.h"

namespace shardsim {

void Engine::Reserve(int32_t tasks, int64_t dependencies) {
  const auto n = static_cast<size_t>(tasks > 0 ? tasks : 0);
  kind_.reserve(n);
  stream_.reserve(n);
  fixed_ps_.reserve(n);
  flow_of_.reserve(n);
  label_.reserve(n);
  category_.reserve(n);
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
  if (stream.valid() && !IsResource(stream, ResourceKind::kStream)) {
    Error("task " + std::to_string(id.v) + ": resource " + std::to_string(stream.v) +
          " is not a stream");
  }
  if (duration < SimTime::Zero()) {
    Error("task " + std::to_string(id.v) + ": negative duration " +
          std::to_string(duration.picos()) + " ps");
  }
  kind_.push_back(TaskKind::kDelay);
  stream_.push_back(IsResource(stream, ResourceKind::kStream) ? stream.v : -1);
  fixed_ps_.push_back(duration.picos());
  flow_of_.push_back(-1);
  label_.push_back(label);
  category_.push_back(category);
  return id;
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
  const auto flow = static_cast<int32_t>(flow_task_.size());
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
    const double w = weights.size() == links.size() ? weights[i] : 1.0;
    if (!(w > 0.0) || !std::isfinite(w)) {
      Error(where() + "weight " + FormatSig(w) + " on link '" + resource_name_[Index(l)] +
            "' must be finite and > 0");
      continue;
    }
    flow_links_.push_back(l);
    flow_weight_.push_back(w);
  }
  flow_begin_.push_back(static_cast<int32_t>(flow_links_.size()));
  flow_task_.push_back(id.v);
  flow_bytes_.push_back(bytes.value());
  flow_cap_.push_back(std::isfinite(cap) && cap > 0.0 ? cap : 0.0);

  kind_.push_back(TaskKind::kFlow);
  stream_.push_back(IsResource(stream, ResourceKind::kStream) ? stream.v : -1);
  fixed_ps_.push_back(latency.picos());
  flow_of_.push_back(flow);
  label_.push_back(label);
  category_.push_back(category);
  return id;
}

void Engine::AddDependency(TaskId before, TaskId after) {
  const bool ok_before = before.valid() && before.v < num_tasks();
  const bool ok_after = after.valid() && after.v < num_tasks();
  if (!ok_before || !ok_after) {
    Error("dependency " + std::to_string(before.v) + " -> " + std::to_string(after.v) +
          ": unknown task " + std::to_string(ok_before ? after.v : before.v));
    return;
  }
  edges_.emplace_back(before.v, after.v);
}

SimTime Engine::fixed_time(TaskId t) const { return SimTime::FromPicos(fixed_ps_[Index(t)]); }

Bytes Engine::flow_bytes(TaskId t) const {
  const int32_t f = flow_of_[Index(t)];
  return Bytes(f < 0 ? 0.0 : flow_bytes_[static_cast<size_t>(f)]);
}

std::span<const ResourceId> Engine::flow_links(TaskId t) const {
  const int32_t f = flow_of_[Index(t)];
  if (f < 0) {
    return {};
  }
  const auto begin = static_cast<size_t>(flow_begin_[static_cast<size_t>(f)]);
  const auto end = static_cast<size_t>(flow_begin_[static_cast<size_t>(f) + 1]);
  return std::span<const ResourceId>(flow_links_).subspan(begin, end - begin);
}

std::span<const double> Engine::flow_weights(TaskId t) const {
  const int32_t f = flow_of_[Index(t)];
  if (f < 0) {
    return {};
  }
  const auto begin = static_cast<size_t>(flow_begin_[static_cast<size_t>(f)]);
  const auto end = static_cast<size_t>(flow_begin_[static_cast<size_t>(f) + 1]);
  return std::span<const double>(flow_weight_).subspan(begin, end - begin);
}

std::string Engine::TaskName(TaskId t) const {
  if (namer_) {
    return namer_(t);
  }
  return "task " + std::to_string(t.v);
}

Result<RunResult> Engine::Run() const {
  if (!errors_.empty()) {
    return errors_.ToStatus(StatusCode::kInternal);
  }
  Simulation sim(*this);
  return sim.Run();
}

}  // namespace shardsim
