// One run of an Engine's task graph: the event loop and all state that changes while it runs.
// Internal to sim/engine: callers use Engine::Run(). Keeping the run state here (and not in the
// Engine) is what makes Engine::Run() const and repeatable.
//
// Loop (SimGrid's, STYLE.md): pop every event at the earliest time `now`; finish tasks, start
// the tasks they release, put flows whose latency is over onto their links; then, if the set of
// transferring flows changed, recompute the max-min rates of the flows connected (through shared
// links) to a changed link, and reschedule the end of every flow whose rate changed. A flow's end
// is now + remaining / rate, rounded up to the picosecond so it never finishes early; a rate
// change moves the flow's pending end event (the queue holds one event per task).
#ifndef SHARDSIM_ENGINE_SIMULATION_H_
#define SHARDSIM_ENGINE_SIMULATION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/base/status.h"
#include "sim/engine/engine.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/max_min.h"
#include "sim/engine/memo_table.h"
#include "sim/engine/run_result.h"

namespace shardsim {

class Simulation {
 public:
  explicit Simulation(const Engine& engine);
  Result<RunResult> Run();

 private:
  struct ActiveEntry {
    int32_t flow;  // flow index
    int32_t slot;  // this (flow, link) pair's index in slot_pos_
  };

  void Build();
  bool IsHead(int32_t task) const;
  bool Overflows(int64_t now, int64_t delay, int32_t task);
  void Schedule(int64_t now, int64_t delay, EventKind kind, int32_t task);
  void Push(int64_t now, int64_t delay, EventKind kind, int32_t task);
  // kTrack: also keep what periods.cc reads (the touched set, the logs, the anchor).
  template <bool kTrack>
  void Start(int32_t task, int64_t now, int32_t trigger, Release why);
  template <bool kTrack>
  void Finish(int32_t task, int64_t now);
  template <bool kTrack>
  void ActivateFlow(int32_t flow, int64_t now);
  template <bool kTrack>
  void EndFlow(int32_t flow, int64_t now);
  template <bool kTrack>
  void Loop();
  void MarkDirty(int32_t link);
  void Reshare(int64_t now);
  bool ShareAlone(int32_t flow, int64_t now);
  uint64_t BuildProblem();
  int64_t SolveMemo(uint64_t hash);
  void SetRate(int32_t flow, double rate, int64_t now, int32_t bound);
  void Rebound(int32_t flow, int32_t bound, int64_t now);

  // periods.cc (Engine::SetCounterparts)
  void BuildPeriods();
  bool Preserves(int32_t task, int32_t counterpart) const;
  void Touch(int32_t task) {
    if (tpos_[At32(task)] < 0) {
      tpos_[At32(task)] = static_cast<int32_t>(tset_.size());
      tset_.push_back(task);
    }
  }
  void Untouch(int32_t task) {
    const int32_t pos = tpos_[At32(task)];
    if (pos < 0) return;
    const int32_t last = tset_.back();
    tset_[At32(pos)] = last;
    tpos_[At32(last)] = pos;
    tset_.pop_back();
    tpos_[At32(task)] = -1;
  }
  struct Snapshot;
  void AtAnchor(int64_t now);
  void TakeSnapshot(int64_t now);
  bool Repeats(int64_t now, const Snapshot& s, int32_t span);
  int32_t SkippablePeriods(const Snapshot& s, int32_t span);
  int32_t Depth(int32_t task);
  void Skip(int32_t times, int32_t span, const Snapshot& s, int64_t now);
  int32_t Forward(int32_t task, int32_t steps) const {
    for (int32_t i = 0; i < steps && task >= 0; ++i) task = next_[At32(task)];
    return task;
  }

  // simulation_result.cc
  Status Deadlock() const;
  RunResult MakeResult();

  const Engine& e_;
  const int32_t n_;

  // Graph, built once per run.
  std::vector<int32_t> succ_begin_;  // per task + 1
  std::vector<int32_t> succ_;
  std::vector<int32_t> stream_begin_;  // per resource + 1
  std::vector<TaskId> stream_tasks_;

  // Task state.
  // Unfinished dependencies; kFinished once the task has finished (so that the per-task times
  // below need no fill: each is written when its task starts or ends, and read only after).
  static constexpr int32_t kFinished = -1;
  std::vector<int32_t> pending_;
  std::vector<int32_t> head_;  // per resource: index into stream_tasks_ of its head
  UninitVector<int64_t> start_;
  UninitVector<int64_t> end_;
  UninitVector<int32_t> trigger_;
  UninitVector<Release> why_;
  int32_t finished_ = 0;
  int32_t overflow_task_ = -1;  // the first task whose end the clock cannot hold

  // The state of a flow while it moves bytes (ActivateFlow to EndFlow), in a slot of states_
  // that is recycled when the flow ends: a step has a few dozen flows moving at once, so this
  // costs 4 bytes per flow (state_of_) instead of a record per flow.
  struct FlowState {
    double remaining;  // bytes left as of settled
    double rate;       // bytes/s; 0 while not transferring
    int64_t settled;   // picoseconds
    // Which link bounded the flow: the current one and the bytes moved under it, the best so far.
    double cur_bound_bytes;
    double best_bound_bytes;
    int64_t bound_since;
    int32_t cur_bound;
    int32_t best_bound;
    int32_t mark;
  };
  FlowState& St(size_t flow) { return states_[At32(state_of_[flow])]; }
  static size_t At32(int32_t i) { return static_cast<size_t>(i); }
  std::unique_ptr<int32_t[]> state_of_;  // per flow: its slot in states_ while it moves
  std::vector<FlowState> states_;
  std::vector<int32_t> free_states_;
  std::vector<int32_t> bound_;             // per task: RunResult::BoundBy, written when a flow ends
  std::unique_ptr<int32_t[]> slot_begin_;  // per flow: its first slot in slot_pos_
  std::unique_ptr<int32_t[]> slot_pos_;    // per (flow, link) slot: position in active_[link]

  // Link state, per resource.
  std::vector<std::vector<ActiveEntry>> active_;
  std::vector<int64_t> busy_since_;
  std::vector<int64_t> busy_;
  std::vector<double> bytes_;
  std::vector<uint8_t> dirty_;
  std::vector<int32_t> link_mark_;
  // The first num_dirty_ entries: links changed since Reshare (no fill: written before read).
  std::unique_ptr<int32_t[]> dirty_links_;
  int32_t num_dirty_ = 0;
  int64_t active_flows_ = 0;

  // Reshare scratch (reused: no allocation once grown).
  int32_t epoch_ = 0;
  std::vector<int32_t> comp_links_;
  std::vector<int32_t> comp_flows_;
  std::unique_ptr<int32_t[]> local_of_;  // per resource: index in comp_links_ (written first)
  std::vector<double> local_capacity_;
  std::vector<int32_t> local_begin_;
  std::vector<int32_t> local_links_;
  std::vector<double> local_cap_;
  std::vector<double> local_rate_;
  std::vector<double> local_weight_;
  std::vector<int32_t> local_bound_;
  MaxMinSolver solver_;

  // Solved sharing problems of this run: their rates and local bounds, one after another, found
  // by the component's words (component_memo_) or the local problem's (problem_memo_); Reshare.
  std::vector<double> memo_rates_;
  std::vector<int32_t> memo_bounds_;
  std::vector<uint64_t> component_key_;  // the current component's words
  std::vector<uint64_t> problem_key_;    // the current local problem's words
  MemoTable component_memo_;
  MemoTable problem_memo_;

  EventQueue queue_;
  RunStats stats_;

  // Periods (periods.cc): empty unless the engine has counterparts.
  bool periodic_ = false;
  const int32_t* next_ = nullptr;  // Engine::counterparts()
  std::vector<uint8_t> mapped_;    // per task: 1 where it is some task's counterpart
  // Per task, both written in one pass (BuildPeriods) and read together (Depth, Preserves).
  struct PeriodTask {
    int32_t depth;  // preserving steps along the task's chain; -1: not known yet
    int32_t indeg;  // dependency count
  };
  UninitVector<PeriodTask> ptask_;
  UninitVector<int32_t> stream_pos_;  // stream tasks: index in stream_tasks_
  UninitVector<int32_t> snext_;       // stream tasks: the next task on the stream, or -1
  int32_t bad_counterpart_ = -1;      // a task whose counterpart breaks one to one
  std::vector<int32_t> streams_;      // the stream resources
  // The tasks started or with a finished dependency, not finished yet (Touch / Untouch).
  std::vector<int32_t> tpos_;
  std::vector<int32_t> tset_;
  int32_t anchor_ = -1;  // the task whose start takes the next snapshot
  int32_t misses_ = 0;   // comparisons in a row that found no repetition
  int32_t max_misses_ = 0;
  bool snapshot_due_ = false;
  // The run state when a period began (TakeSnapshot), times relative to its `now`.
  struct FlowSnap {
    double remaining, rate, cur_bound_bytes, best_bound_bytes;
    int64_t settled, bound_since;
    int32_t cur_bound, best_bound;
  };
  // Where the logs stood (their sizes) when a snapshot was taken.
  struct LogMark {
    size_t start = 0, end = 0, bytes = 0, busy = 0;
  };
  struct Snapshot {
    int64_t now = 0;
    LogMark mark;
    std::vector<EventQueue::Slot> events;
    std::vector<EventKind> kinds;
    std::vector<FlowSnap> flows;                       // per kFlowEnd event, in event order
    std::vector<std::pair<int32_t, int32_t>> touched;  // (task, pending)
    std::vector<int32_t> heads;                        // per streams_ entry: task, or -1
    std::vector<int32_t> links;                        // links carrying flows
    std::vector<int64_t> busy_since;                   // per links entry, relative
    std::vector<int32_t> link_flows;                   // their flows' tasks, link by link
    RunStats stats;
    int32_t busy_links = 0;
  };
  // The last kMaxSpan snapshots, a ring: snaps_next_ is where the next goes.
  static constexpr size_t kMaxSpan = 8;
  std::vector<Snapshot> snaps_;
  size_t snaps_next_ = 0;
  int32_t snaps_count_ = 0;
  const Snapshot& SnapshotAgo(int32_t j) const {  // 1: the last taken
    return snaps_[(snaps_next_ + kMaxSpan - static_cast<size_t>(j)) % kMaxSpan];
  }
  std::vector<EventQueue::Slot> events_now_;  // scratch
  std::vector<uint8_t> head_mapped_;          // per streams_ entry, set by Repeats
  // What the run did since the oldest snapshot kept (Snapshot::mark), for Skip to repeat.
  std::vector<int32_t> log_start_;
  std::vector<int32_t> log_end_;
  std::vector<std::pair<int32_t, double>> log_bytes_;
  std::vector<std::pair<int32_t, int64_t>> log_busy_;
  int32_t busy_links_ = 0;  // links with a flow transferring
};

}  // namespace shardsim

#endif  // SHARDSIM_ENGINE_SIMULATION_H_
