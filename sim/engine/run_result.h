// What one engine run produced: when each task ran, how busy each stream and link was, and the
// critical path. Engine::Run() returns it; the report module reads it (with the Engine that ran,
// which knows each task's stream, label and category) to build tables and Chrome traces.
#ifndef SHARDSIM_ENGINE_RUN_RESULT_H_
#define SHARDSIM_ENGINE_RUN_RESULT_H_

#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/ids.h"
#include "sim/base/units.h"

namespace shardsim {

// An allocator whose value-less construct leaves a trivial element uninitialized, so that
// resize(n) of a vector that is written before it is read costs no fill (the engine's per-task
// times are written when each task starts and ends).
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}  // NOLINT: rebinding
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class T>
using UninitVector = std::vector<T, DefaultInitAllocator<T>>;

// Why a task started when it did: the last of its start conditions to be met.
enum class Release : uint8_t {
  kAtStart,      // nothing held it: it started at time zero
  kDependency,   // its last dependency finished
  kStreamOrder,  // the task ahead of it on its stream finished
};

// One step of the critical path: a task, its times, and what released it (the previous step).
struct CriticalStep {
  TaskId task;
  SimTime start;
  SimTime end;
  Release released_by = Release::kAtStart;
};

// Counters of the run itself, for benchmarks and for explaining slow simulations.
struct RunStats {
  int64_t events = 0;            // events popped from the queue (stale flow events included)
  int64_t reshares = 0;          // max-min recomputations
  int64_t reshared_flows = 0;    // flows those recomputations touched, summed
  int64_t max_active_flows = 0;  // most flows transferring at once
  int64_t max_queue = 0;         // most events pending at once
  // Engine::SetCounterparts: the periods the run filled in instead of simulating, and the tasks
  // they held (events, reshares and reshared_flows above count those periods' too).
  int64_t periods_skipped = 0;
  int64_t tasks_skipped = 0;
};

class RunResult {
 public:
  // The time the last task finished (zero for an empty graph).
  SimTime makespan() const { return makespan_; }
  int32_t num_tasks() const { return static_cast<int32_t>(start_.size()); }

  // When task `t` started (a flow: when its latency began) and finished.
  SimTime start(TaskId t) const { return SimTime::FromPicos(start_[Index(t)]); }
  SimTime end(TaskId t) const { return SimTime::FromPicos(end_[Index(t)]); }
  // What released task `t` and, unless kAtStart, which task did.
  Release released_by(TaskId t) const { return released_by_[Index(t)]; }
  TaskId released_by_task(TaskId t) const { return TaskId(trigger_[Index(t)]); }

  // The tasks of stream `s` in the order they ran (the order they were added). Empty for a link.
  std::span<const TaskId> StreamTasks(ResourceId s) const;
  // Time stream `s` spent running tasks (its tasks never overlap: the sum of their durations).
  SimTime StreamBusy(ResourceId s) const { return SimTime::FromPicos(busy_[Index(s)]); }
  // Bytes that crossed link `l`, and the time it had at least one flow transferring (latency
  // phases excluded).
  Bytes LinkBytes(ResourceId l) const { return Bytes(bytes_[Index(l)]); }
  SimTime LinkBusy(ResourceId l) const { return SimTime::FromPicos(busy_[Index(l)]); }
  // The link that bounded flow `t`'s rate (the first of its links to saturate in the max-min
  // sharing) for the most of its bytes; invalid for a delay, and for a flow that its own cap
  // bounded or that moved nothing.
  ResourceId BoundBy(TaskId t) const { return ResourceId(bound_[Index(t)]); }

  // The chain that set the makespan, first task first: from the task that finished last, walk back
  // through whatever released each task (its last dependency, or the task ahead of it on its
  // stream). Each step starts when the previous one ends; the first starts at zero.
  const std::vector<CriticalStep>& critical_path() const { return critical_path_; }

  const RunStats& stats() const { return stats_; }

  // One line per critical step: "  [start, end) task 3 (dependency)", for debugging and tests.
  std::string CriticalPathToString() const;

 private:
  friend class Simulation;

  template <class Tag>
  static size_t Index(Id<Tag> id) {
    return static_cast<size_t>(id.v);
  }

  SimTime makespan_;
  UninitVector<int64_t> start_;        // per task, picoseconds
  UninitVector<int64_t> end_;          // per task, picoseconds
  UninitVector<int32_t> trigger_;      // per task: the task that released it, or -1
  UninitVector<Release> released_by_;  // per task
  std::vector<int32_t> stream_begin_;  // per resource + 1: CSR into stream_tasks_
  std::vector<TaskId> stream_tasks_;
  std::vector<int64_t> busy_;   // per resource, picoseconds
  std::vector<double> bytes_;   // per resource (links), bytes
  std::vector<int32_t> bound_;  // per task: BoundBy, or -1
  std::vector<CriticalStep> critical_path_;
  RunStats stats_;
};

}  // namespace shardsim

#endif  // SHARDSIM_ENGINE_RUN_RESULT_H_
