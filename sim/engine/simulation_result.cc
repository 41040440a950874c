// The end of a run: the RunResult of a run that finished, or the deadlock diagnosis of one that
// could not.
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include "sim/engine/simulation.h"

namespace shardsim {
namespace {

size_t At(int32_t i) { return static_cast<size_t>(i); }

// How many tasks an error message lists before it says "and N more".
constexpr size_t kMaxListed = 8;

}  // namespace

// Every task that never ran waits for another task that never ran: an unfinished dependency, or
// the task ahead of it on its stream (nothing is in flight once the queue is empty). Following
// these waits from the first stuck task must therefore come back to a task already seen: that
// loop is the wait cycle the message shows, with every stuck task listed after it.
Status Simulation::Deadlock() const {
  const size_t n = At(n_);
  // Predecessors in insertion order, to name the first unfinished dependency of a task.
  std::vector<int32_t> pred_begin(n + 1, 0);
  for (const auto& edge : e_.edges_) {
    ++pred_begin[At(edge.second) + 1];
  }
  for (size_t t = 0; t < n; ++t) {
    pred_begin[t + 1] += pred_begin[t];
  }
  std::vector<int32_t> pred(e_.edges_.size());
  {
    std::vector<int32_t> cursor(pred_begin.begin(), pred_begin.end() - 1);
    for (const auto& [before, after] : e_.edges_) {
      pred[At(cursor[At(after)]++)] = before;
    }
  }
  auto wait_for = [&](int32_t t) -> std::pair<int32_t, bool> {  // (task, is a dependency)
    if (pending_[At(t)] > 0) {
      for (int32_t k = pred_begin[At(t)]; k < pred_begin[At(t) + 1]; ++k) {
        if (pending_[At(pred[At(k)])] != kFinished) {
          return {pred[At(k)], true};
        }
      }
    }
    return {stream_tasks_[At(head_[At(e_.tasks_[At(t)].stream)])].v, false};
  };

  std::vector<int32_t> stuck;
  for (int32_t t = 0; t < n_; ++t) {
    if (pending_[At(t)] != kFinished) {
      stuck.push_back(t);
    }
  }
  std::vector<int32_t> seen_at(n, -1);
  std::vector<int32_t> walk;
  int32_t t = stuck.front();
  while (seen_at[At(t)] < 0) {
    seen_at[At(t)] = static_cast<int32_t>(walk.size());
    walk.push_back(t);
    t = wait_for(t).first;
  }

  std::string msg = "engine: deadlock: " + std::to_string(stuck.size()) + " of " +
                    std::to_string(n_) + " tasks can never start; wait cycle: ";
  const size_t cycle_begin = At(seen_at[At(t)]);
  for (size_t i = cycle_begin; i < walk.size(); ++i) {
    if (i > cycle_begin) {
      msg += ", ";
    }
    if (i - cycle_begin == kMaxListed) {
      msg += "... (" + std::to_string(walk.size() - i) + " more)";
      break;
    }
    const auto [next, is_dependency] = wait_for(walk[i]);
    msg += e_.TaskName(TaskId(walk[i])) + " waits for " + e_.TaskName(TaskId(next));
    msg += is_dependency ? " (its dependency)"
                         : " (ahead of it on stream '" +
                               e_.resource_name_[At(e_.tasks_[At(walk[i])].stream)] + "')";
  }
  msg += "; stuck: ";
  for (size_t i = 0; i < stuck.size(); ++i) {
    if (i > 0) {
      msg += ", ";
    }
    if (i == kMaxListed) {
      msg += "... (" + std::to_string(stuck.size() - i) + " more)";
      break;
    }
    msg += e_.TaskName(TaskId(stuck[i]));
  }
  return Status::Internal(std::move(msg));
}

RunResult Simulation::MakeResult() {
  RunResult r;
  int32_t last = -1;
  for (int32_t t = 0; t < n_; ++t) {
    if (last < 0 || end_[At(t)] > end_[At(last)]) {
      last = t;
    }
  }
  r.makespan_ = SimTime::FromPicos(last < 0 ? 0 : end_[At(last)]);
  for (int32_t t = last; t >= 0; t = trigger_[At(t)]) {
    r.critical_path_.push_back({TaskId(t), SimTime::FromPicos(start_[At(t)]),
                                SimTime::FromPicos(end_[At(t)]), why_[At(t)]});
  }
  std::reverse(r.critical_path_.begin(), r.critical_path_.end());

  // A stream runs one task at a time, so its busy time is the sum of its tasks' durations.
  const size_t num_resources = At(e_.num_resources());
  for (size_t s = 0; s < num_resources; ++s) {
    if (e_.resource_kind_[s] != ResourceKind::kStream) {
      continue;
    }
    for (int32_t k = stream_begin_[s]; k < stream_begin_[s + 1]; ++k) {
      const size_t t = At(stream_tasks_[At(k)].v);
      busy_[s] += end_[t] - start_[t];
    }
  }
  r.start_ = std::move(start_);
  r.end_ = std::move(end_);
  r.trigger_ = std::move(trigger_);
  r.released_by_ = std::move(why_);
  r.stream_begin_ = std::move(stream_begin_);
  r.stream_tasks_ = std::move(stream_tasks_);
  r.busy_ = std::move(busy_);
  r.bytes_ = std::move(bytes_);
  r.bound_ = std::move(bound_);
  r.stats_ = stats_;
  return r;
}

}  // namespace shardsim
