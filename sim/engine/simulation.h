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
#include <span>
#include <utility>
#include <vector>

#include "sim/base/status.h"
#include "sim/engine/engine.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/max_min.h"
#include "sim/engine/run_result.h"

namespace shardsim {

class Simulation {
 public:
  // `contract`: run the engine's regions contracted (contraction.cc); `fallback`: this run
  // redoes one whose contraction fell back (RunStats::contraction_fallbacks).
  explicit Simulation(const Engine& engine, bool contract = false, bool fallback = false);
  Result<RunResult> Run();
  // Whether a contracted run stopped on a tie it cannot reproduce (the caller runs again).
  bool fell_back() const { return fell_back_; }

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
  void Start(int32_t task, int64_t now, int32_t trigger, Release why);
  void Finish(int32_t task, int64_t now);
  void ActivateFlow(int32_t flow, int64_t now);
  void EndFlow(int32_t flow, int64_t now);
  void MarkDirty(int32_t link);
  void Reshare(int64_t now);
  bool ShareAlone(int32_t flow, int64_t now);
  void SolveMemo();
  void SetRate(int32_t flow, double rate, int64_t now, int32_t bound);
  void Rebound(int32_t flow, int32_t bound, int64_t now);

  // simulation_result.cc
  Status Deadlock() const;
  RunResult MakeResult();

  // contraction.cc: regions (Engine::AddRegion) run as one task each.
  // A region's key simulated alone: each task's times, trigger and release, each flow's bound,
  // and what its flows leave on their links.
  struct Solo {
    std::vector<int64_t> start, end;
    std::vector<int32_t> trigger;  // relative to the region's begin; -1 for the entry
    std::vector<Release> why;
    std::vector<int32_t> bound;                     // engine link ids, or -1
    std::vector<std::pair<int32_t, double>> bytes;  // (link, bytes), in the order flows ended
    std::vector<std::pair<int32_t, int64_t>> busy;  // (link, busy picoseconds)
    std::vector<int64_t> activations;               // when a flow starts moving bytes on its links
    int64_t wake = 0;                               // the exit's start
    int64_t span = 0;                               // the exit's end
  };
  struct Contracted {
    int32_t region;
    int32_t solo;
    int32_t exit_pos;  // the exit's index in stream_tasks_
  };
  void Contract();
  bool SoloRun(const Engine::Region& r, std::span<const std::pair<int32_t, int32_t>> deps,
               Solo* solo) const;
  void StartRegion(int32_t task, int64_t now);
  void WakeRegion(int32_t task, int64_t now);
  void FinishRegion(int32_t task, int64_t now);
  void BeginInstant(int64_t now);
  void CheckTie(int32_t task);
  bool PhantomAt(int64_t now);
  void ExpandRegions();
  void Note(int32_t task) {
    if (guard_) sched_at_[At32Size(task)] = sched_count_++;
  }
  static size_t At32Size(int32_t i) { return static_cast<size_t>(i); }

  bool contract_ = false;
  bool fallback_ = false;
  bool fell_back_ = false;
  bool guard_ = false;  // some region is contracted
  bool force_general_ = false;
  std::vector<Solo> solos_;
  std::vector<Contracted> contracted_;
  std::vector<int32_t> contracted_of_;      // per task: its contracted_ index if an entry, or -1
  const int32_t* contracted_at_ = nullptr;  // contracted_of_'s data while contracting
  std::vector<std::pair<int32_t, double>>* byte_log_ = nullptr;  // a solo run's EndFlow bytes
  // The tie guard: the events scheduled in the instant a contracted exit starts (its end was
  // scheduled then in the full run, at a place in that instant the contracted run cannot know)
  // must not end when it does.
  struct Arm {
    int64_t end;
    uint64_t first, last;  // scheduling counts of that instant, [first, last)
    int32_t task;
  };
  std::vector<Arm> arms_;           // heap by end
  std::vector<Arm> opening_;        // armed in the current instant (its `last` is not known yet)
  std::vector<Arm> due_;            // ending at the current instant
  std::vector<uint64_t> sched_at_;  // per task: the scheduling count of its pending event
  uint64_t sched_count_ = 0;
  uint64_t instant_first_ = 0;  // the count when the current instant began
  int64_t instant_ = 0;
  // When a contracted region's flows start on their links: the full run re-shares there in
  // general (Reshare, force_general_). A min-heap.
  std::vector<int64_t> phantoms_;

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

  // Solved sharing problems of this run, by their words (SolveMemo).
  struct MemoEntry {
    uint64_t hash = 0;
    size_t key_begin = 0, key_end = 0;  // in memo_keys_
    size_t result_begin = 0;            // in memo_rates_ and memo_bounds_
  };
  static constexpr size_t kMemoSlots = 1024;  // a power of two
  static constexpr size_t kMaxMemo = kMemoSlots / 2;
  std::vector<uint64_t> memo_key_;  // the current problem's words, written by Reshare
  std::vector<uint64_t> memo_keys_;
  std::vector<double> memo_rates_;
  std::vector<int32_t> memo_bounds_;
  std::vector<MemoEntry> memo_;
  std::vector<int32_t> memo_table_;  // kMemoSlots slots: a memo_ entry, or -1

  EventQueue queue_;
  RunStats stats_;
};

}  // namespace shardsim

#endif  // SHARDSIM_ENGINE_SIMULATION_H_
