#include "sim/engine/simulation.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>

namespace shardsim {
namespace {

constexpr double kPicosPerSecond = 1e12;
constexpr int64_t kMaxPicos = std::numeric_limits<int64_t>::max();

size_t At(int32_t i) { return static_cast<size_t>(i); }
size_t At64(int64_t i) { return static_cast<size_t>(i); }

}  // namespace

Simulation::Simulation(const Engine& engine) : e_(engine), n_(engine.num_tasks()) {}

void Simulation::Build() {
  const size_t n = At(n_);
  const size_t num_resources = At(e_.num_resources());
  const size_t num_flows = e_.flows_.size();

  // Successors (CSR, counting sort by `before`: stable, so insertion order is kept). The counts
  // summed in place give each task's end; filling from the last edge back, each pre-decremented
  // end becomes its task's begin, so no cursor copy is needed.
  succ_begin_.assign(n + 1, 0);
  pending_.assign(n, 0);
  for (const auto& [before, after] : e_.edges_) {
    ++succ_begin_[At(before)];
    ++pending_[At(after)];
  }
  for (size_t t = 1; t < n; ++t) {
    succ_begin_[t] += succ_begin_[t - 1];
  }
  succ_begin_[n] = static_cast<int32_t>(e_.edges_.size());
  succ_.resize(e_.edges_.size());
  for (auto edge = e_.edges_.rbegin(); edge != e_.edges_.rend(); ++edge) {
    succ_[At(--succ_begin_[At(edge->first)])] = edge->second;
  }

  // Stream queues, in the order tasks were added.
  stream_begin_.assign(num_resources + 1, 0);
  for (const Engine::Task& task : e_.tasks_) {
    if (const int32_t s = task.stream; s >= 0) {
      ++stream_begin_[At(s) + 1];
    }
  }
  for (size_t r = 0; r < num_resources; ++r) {
    stream_begin_[r + 1] += stream_begin_[r];
  }
  stream_tasks_.resize(At(stream_begin_[num_resources]));
  head_.assign(stream_begin_.begin(), stream_begin_.end() - 1);
  // With counterparts, also each stream task's position and its successor on its stream (-1 for
  // the last: each task is the last until the next one comes), for periods.cc.
  const bool positions = !e_.counterparts().empty();
  if (positions) {
    stream_pos_.resize(n);
    snext_.resize(n);
  }
  for (int32_t t = 0; t < n_; ++t) {
    const int32_t s = e_.tasks_[At(t)].stream;
    if (s >= 0) {
      const int32_t pos = head_[At(s)]++;
      stream_tasks_[At(pos)] = TaskId(t);
      if (positions) {
        stream_pos_[At(t)] = pos;
        snext_[At(t)] = -1;
        if (pos > stream_begin_[At(s)]) snext_[At(stream_tasks_[At(pos - 1)].v)] = t;
      }
    }
  }
  head_.assign(stream_begin_.begin(), stream_begin_.end() - 1);

  // No fill: Start and Finish write these (a task's times are read only once it has finished).
  start_.resize(n);
  end_.resize(n);
  trigger_.resize(n);
  why_.resize(n);

  // Flow state lives only while a flow moves bytes (a few dozen at once): a slot of states_ per
  // moving flow, recycled when it ends (state_of_ written when it activates, no fill).
  state_of_ = std::make_unique_for_overwrite<int32_t[]>(num_flows);
  states_.clear();
  free_states_.clear();
  bound_.assign(n, -1);
  // Flows may share a path (AddFlowLike): each gets its own slots, one per link it crosses.
  slot_begin_ = std::make_unique_for_overwrite<int32_t[]>(num_flows);
  int32_t slots = 0;
  for (size_t f = 0; f < num_flows; ++f) {
    slot_begin_[f] = slots;
    slots += e_.flows_[f].path_end - e_.flows_[f].path_begin;
  }
  slot_pos_ = std::make_unique_for_overwrite<int32_t[]>(At(slots));

  active_.assign(num_resources, {});
  busy_since_.assign(num_resources, 0);
  busy_.assign(num_resources, 0);
  bytes_.assign(num_resources, 0.0);
  dirty_.assign(num_resources, 0);
  link_mark_.assign(num_resources, 0);
  local_of_ = std::make_unique_for_overwrite<int32_t[]>(num_resources);
  // At most one entry per link (dirty_ guards it): sized once, so MarkDirty never grows it.
  dirty_links_ = std::make_unique_for_overwrite<int32_t[]>(num_resources);
  num_dirty_ = 0;

  queue_.Reset(n);
  BuildPeriods();
}

[[gnu::always_inline]] inline bool Simulation::IsHead(int32_t task) const {
  const int32_t s = e_.tasks_[At(task)].stream;
  return s < 0 || stream_tasks_[At(head_[At(s)])].v == task;
}

// Whether now + delay is past the clock's range; the first task to overflow is kept for Run's
// error.
[[gnu::always_inline]] inline bool Simulation::Overflows(int64_t now, int64_t delay, int32_t task) {
  if (delay <= kMaxPicos - now) return false;
  if (overflow_task_ < 0) overflow_task_ = task;
  return true;
}

[[gnu::always_inline]] inline void Simulation::Schedule(int64_t now, int64_t delay, EventKind kind,
                                                        int32_t task) {
  if (!Overflows(now, delay, task)) queue_.Schedule(task, now + delay, kind);
}

// A new event of a task that has none pending (Start, an instant flow): straight to the queue's
// heap, or its FIFO when due now (a zero-length task).
[[gnu::always_inline]] inline void Simulation::Push(int64_t now, int64_t delay, EventKind kind,
                                                    int32_t task) {
  if (delay == 0) {
    queue_.PushNow(task, kind);
    return;
  }
  if (!Overflows(now, delay, task)) queue_.Push(task, now + delay, kind);
}

template <bool kTrack>
[[gnu::always_inline]] inline void Simulation::Start(int32_t task, int64_t now, int32_t trigger,
                                                     Release why) {
  const size_t t = At(task);
  start_[t] = now;
  trigger_[t] = trigger;
  why_[t] = why;
  if constexpr (kTrack) {
    Touch(task);
    log_start_.push_back(task);
    if (task == anchor_) {  // a snapshot once this time's events are done (AtAnchor)
      snapshot_due_ = true;
      anchor_ = next_[t];
    }
  }
  const int64_t fixed = e_.tasks_[t].fixed_ps;
  if (e_.tasks_[t].kind == TaskKind::kDelay) {
    Push(now, fixed, EventKind::kTaskEnd, task);
  } else if (fixed > 0) {
    Push(now, fixed, EventKind::kLatencyEnd, task);
  } else {
    ActivateFlow<kTrack>(e_.tasks_[t].flow, now);
  }
}

template <bool kTrack>
[[gnu::always_inline]] inline void Simulation::Finish(int32_t task, int64_t now) {
  const size_t t = At(task);
  end_[t] = now;
  pending_[t] = kFinished;
  ++finished_;
  if constexpr (kTrack) {
    Untouch(task);
    log_end_.push_back(task);
  }
  const int32_t s = e_.tasks_[t].stream;
  if (s >= 0) {
    const int32_t pos = ++head_[At(s)];
    if (pos < stream_begin_[At(s) + 1]) {
      const int32_t next = stream_tasks_[At(pos)].v;
      if (pending_[At(next)] == 0) {
        Start<kTrack>(next, now, task, Release::kStreamOrder);
      }
    }
  }
  for (int32_t k = succ_begin_[t]; k < succ_begin_[t + 1]; ++k) {
    const int32_t next = succ_[At(k)];
    if constexpr (kTrack) Touch(next);
    if (--pending_[At(next)] == 0 && IsHead(next)) {
      Start<kTrack>(next, now, task, Release::kDependency);
    }
  }
}

[[gnu::always_inline]] inline void Simulation::MarkDirty(int32_t link) {
  if (dirty_[At(link)] != 0) {
    return;
  }
  dirty_[At(link)] = 1;
  dirty_links_[At(num_dirty_++)] = link;
}

template <bool kTrack>
[[gnu::always_inline]] inline void Simulation::ActivateFlow(int32_t flow, int64_t now) {
  const size_t f = At(flow);
  const int32_t task = e_.flows_[f].task;
  const double bytes = e_.flows_[f].bytes;
  const int32_t begin = e_.flows_[f].path_begin;
  const int32_t end = e_.flows_[f].path_end;
  const double cap = e_.flows_[f].cap;
  if (bytes <= 0.0 || (begin == end && cap <= 0.0)) {  // nothing limits it: instant
    Push(now, 0, EventKind::kTaskEnd, task);
    return;
  }
  int32_t state;
  if (free_states_.empty()) {
    state = static_cast<int32_t>(states_.size());
    states_.emplace_back();
  } else {
    state = free_states_.back();
    free_states_.pop_back();
  }
  state_of_[f] = state;
  FlowState& st = states_[At(state)];
  st.remaining = bytes;
  st.rate = 0.0;
  st.settled = now;
  st.cur_bound_bytes = 0.0;
  st.best_bound_bytes = 0.0;
  st.bound_since = now;
  st.cur_bound = -1;
  st.best_bound = -1;
  st.mark = 0;
  if (begin == end) {  // no shared link: its own cap is its rate
    SetRate(flow, cap, now, -1);
    return;
  }
  for (int32_t k = begin; k < end; ++k) {
    const int32_t link = e_.flow_links_[At(k)].v;
    auto& list = active_[At(link)];
    if (list.empty()) {
      busy_since_[At(link)] = now;
      if constexpr (kTrack) ++busy_links_;
    }
    const int32_t slot = slot_begin_[f] + (k - begin);
    slot_pos_[At(slot)] = static_cast<int32_t>(list.size());
    list.push_back({flow, slot});
    MarkDirty(link);
  }
  ++active_flows_;
  if (active_flows_ > stats_.max_active_flows) {
    stats_.max_active_flows = active_flows_;
  }
}

template <bool kTrack>
[[gnu::always_inline]] inline void Simulation::EndFlow(int32_t flow, int64_t now) {
  const size_t f = At(flow);
  const int32_t path_begin = e_.flows_[f].path_begin;
  for (int32_t k = path_begin; k < e_.flows_[f].path_end; ++k) {
    const int32_t link = e_.flow_links_[At(k)].v;
    auto& list = active_[At(link)];
    const ActiveEntry last = list.back();
    const int32_t pos = slot_pos_[At(slot_begin_[f] + (k - path_begin))];
    list[At(pos)] = last;
    slot_pos_[At(last.slot)] = pos;
    list.pop_back();
    const double moved = e_.flow_weight_[At(k)] * e_.flows_[f].bytes;
    bytes_[At(link)] += moved;
    if constexpr (kTrack) log_bytes_.emplace_back(link, moved);
    if (list.empty()) {
      // Nothing left to re-share here (Reshare skips an idle link; a flow that starts on it
      // marks it again).
      busy_[At(link)] += now - busy_since_[At(link)];
      if constexpr (kTrack) {
        --busy_links_;
        log_busy_.emplace_back(link, now - busy_since_[At(link)]);
      }
    } else {
      MarkDirty(link);
    }
  }
  Rebound(flow, -1, now);
  if (e_.flows_[f].path_end > e_.flows_[f].path_begin) {
    --active_flows_;
  }
  const int32_t task = e_.flows_[f].task;
  bound_[At(task)] = St(f).best_bound;  // the flow's part of the result; its state is free
  free_states_.push_back(state_of_[f]);
  Finish<kTrack>(task, now);
}

// Brings the flow's remaining bytes up to `now` at its old rate, then schedules its end at the
// new rate: now + ceil(remaining * 1e12 / rate) picoseconds. Multiplying before dividing keeps
// round figures exact (1e6 B at 1e11 B/s is exactly 1e7 ps).
[[gnu::always_inline]] inline void Simulation::SetRate(int32_t flow, double rate, int64_t now,
                                                       int32_t bound) {
  FlowState& st = St(At(flow));
  const size_t f = At(flow);
  if (st.rate > 0.0 && now > st.settled) {
    st.remaining -= st.rate * static_cast<double>(now - st.settled) / kPicosPerSecond;
    if (st.remaining < 0.0) {
      st.remaining = 0.0;
    }
  }
  Rebound(flow, bound, now);
  st.settled = now;
  st.rate = rate;
  const double picos = st.remaining * kPicosPerSecond / rate;
  if (!(picos < 9.2e18)) {
    if (overflow_task_ < 0) overflow_task_ = e_.flows_[f].task;
    return;
  }
  // std::ceil, in fewer instructions than the baseline ISA's (no SSE4.1 round): the truncation,
  // plus one where it dropped a fraction (not at 2^52 and above, where doubles are integers).
  // Past the test above the value fits int64, and ceil(x) < 9.2e18 exactly when x < 9.2e18.
  auto ps = static_cast<int64_t>(picos);
  if (static_cast<double>(ps) < picos) ++ps;
  Schedule(now, ps, EventKind::kFlowEnd, e_.flows_[f].task);
}

// Credits the bytes `flow` moved since the last call (at its current rate) to its current
// bounding link, then makes `bound` the current one. The link with the most bytes so far is the
// flow's RunResult::BoundBy. Kept apart from remaining_/settled_ so that the bookkeeping never
// moves a flow's end.
[[gnu::always_inline]] inline void Simulation::Rebound(int32_t flow, int32_t bound, int64_t now) {
  FlowState& st = St(At(flow));
  if (st.rate > 0.0 && now > st.bound_since) {
    st.cur_bound_bytes += st.rate * static_cast<double>(now - st.bound_since) / kPicosPerSecond;
  }
  st.bound_since = now;
  if (st.cur_bound >= 0 && st.cur_bound_bytes > st.best_bound_bytes) {
    st.best_bound = st.cur_bound;
    st.best_bound_bytes = st.cur_bound_bytes;
  }
  if (bound != st.cur_bound) {
    st.cur_bound = bound;
    st.cur_bound_bytes = 0.0;
  }
}

// A flow alone on all its links (the common case) gets the smallest of their capacities over its
// weights (the first such link bounds it), or its cap: no solver needed. Returns false, having
// changed nothing, when another flow shares one of its links.
[[gnu::always_inline]] inline bool Simulation::ShareAlone(int32_t flow, int64_t now) {
  const size_t f = At(flow);
  double capacity = std::numeric_limits<double>::infinity();
  int32_t bound = -1;
  for (int32_t k = e_.flows_[f].path_begin; k < e_.flows_[f].path_end; ++k) {
    const int32_t link = e_.flow_links_[At(k)].v;
    if (active_[At(link)].size() != 1) {
      return false;
    }
    const double c = e_.capacity_[At(link)] / e_.flow_weight_[At(k)];
    if (c < capacity) {
      capacity = c;
      bound = link;
    }
  }
  ++stats_.reshares;
  ++stats_.reshared_flows;
  const double cap = e_.flows_[f].cap;
  const bool capped = cap > 0.0 && cap < capacity;
  const double rate = capped ? cap : capacity;
  if (capped) bound = -1;
  const FlowState& st = St(f);
  if (rate != st.rate) {
    SetRate(flow, rate, now, bound);
  } else if (bound != st.cur_bound) {
    Rebound(flow, bound, now);
  }
  return true;
}

// Recomputes max-min rates on the connected components (flows <-> shared links) that contain a
// link whose set of transferring flows changed since the last call. Other flows keep their rates
// and their scheduled end events: max-min fairness decomposes over components.
void Simulation::Reshare(int64_t now) {
  const std::span<const int32_t> dirty(dirty_links_.get(), At(num_dirty_));
  num_dirty_ = 0;
  // The common case first: every changed link that still carries a flow carries the same single
  // flow, and that flow is alone on all its links. Its component is that flow alone, which the
  // breadth-first search below would find at a higher cost (the same component, the same rates).
  int32_t alone = -1;
  for (int32_t link : dirty) {
    dirty_[At(link)] = 0;
    const auto& list = active_[At(link)];
    if (list.empty()) continue;
    if (alone == -2) continue;
    if (list.size() != 1 || (alone >= 0 && list[0].flow != alone)) {
      alone = -2;
      continue;
    }
    alone = list[0].flow;
  }
  if (alone >= 0 && ShareAlone(alone, now)) {
    return;
  }
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  for (int32_t link : dirty) {
    if (active_[At(link)].empty() || link_mark_[At(link)] == epoch_) {
      continue;
    }
    link_mark_[At(link)] = epoch_;
    comp_links_.push_back(link);
  }
  for (size_t i = 0; i < comp_links_.size(); ++i) {  // breadth-first; comp_links_ grows
    for (const ActiveEntry& entry : active_[At(comp_links_[i])]) {
      const size_t f = At(entry.flow);
      FlowState& st = St(f);
      if (st.mark == epoch_) {
        continue;
      }
      st.mark = epoch_;
      comp_flows_.push_back(entry.flow);
      for (int32_t k = e_.flows_[f].path_begin; k < e_.flows_[f].path_end; ++k) {
        const int32_t link = e_.flow_links_[At(k)].v;
        if (link_mark_[At(link)] == epoch_) {
          continue;
        }
        link_mark_[At(link)] = epoch_;
        comp_links_.push_back(link);
      }
    }
  }
  if (comp_flows_.empty()) {
    return;
  }
  if (comp_flows_.size() == 1 && ShareAlone(comp_flows_[0], now)) {
    return;  // (ShareAlone counts it)
  }
  ++stats_.reshares;
  stats_.reshared_flows += static_cast<int64_t>(comp_flows_.size());

  // The component's words: the link count, the flow count, the links by id, then per flow where
  // its path lies in flow_links_ and its cap. They fix the local problem (SolveMemo), which the
  // same component met again need not build: its rates and bounds are where they were kept.
  const size_t nl = comp_links_.size();
  const size_t nf = comp_flows_.size();
  component_key_.resize(2 + nl + 2 * nf);
  MemoTable::KeyWriter put(component_key_.data());
  put(nl);
  put(nf);
  for (int32_t link : comp_links_) put(static_cast<uint32_t>(link));
  const Engine::Flow* flows = e_.flows_.data();
  for (int32_t flow : comp_flows_) {
    const Engine::Flow& f = flows[At(flow)];
    put(uint64_t{static_cast<uint32_t>(f.path_begin)} << 32 | static_cast<uint32_t>(f.path_end));
    put(std::bit_cast<uint64_t>(f.cap));
  }
  const uint64_t hash = put.hash();
  size_t slot = 0;
  int64_t result = component_memo_.Find(component_key_, hash, &slot);
  if (result < 0) {
    result = SolveMemo(BuildProblem());
    if (result >= 0) component_memo_.Insert(slot, component_key_, hash, At64(result));
  }
  // A result the memo could not keep is in the solver's output.
  const double* rates = result >= 0 ? memo_rates_.data() + result : local_rate_.data();
  const int32_t* bounds = result >= 0 ? memo_bounds_.data() + result : local_bound_.data();

  for (size_t i = 0; i < nf; ++i) {
    const int32_t flow = comp_flows_[i];
    const int32_t b = bounds[i];
    const int32_t bound = b >= 0 ? comp_links_[At(b)] : -1;
    const FlowState& st = St(At(flow));
    if (rates[i] != st.rate) {
      SetRate(flow, rates[i], now, bound);
    } else if (bound != st.cur_bound) {
      Rebound(flow, bound, now);
    }
  }
}

// The local problem of the component in comp_links_ and comp_flows_, and with it the words that
// name it (problem_key_): the link count, the flow count, the capacities, then per flow its path
// length, its (local link, weight) pairs and its cap. Written through pointers into vectors sized
// once per call. Returns the words' hash.
uint64_t Simulation::BuildProblem() {
  const size_t nl = comp_links_.size();
  const size_t nf = comp_flows_.size();
  size_t path_total = 0;
  for (int32_t flow : comp_flows_) {
    path_total += At(e_.flows_[At(flow)].path_end - e_.flows_[At(flow)].path_begin);
  }
  local_capacity_.resize(nl);
  local_begin_.resize(nf + 1);
  local_links_.resize(path_total);
  local_weight_.resize(path_total);
  local_cap_.resize(nf);
  problem_key_.resize(2 + nl + 2 * nf + 2 * path_total);
  MemoTable::KeyWriter put(problem_key_.data());
  put(nl);
  put(nf);
  const double* capacity = e_.capacity_.data();
  int32_t* local_of = local_of_.get();
  for (size_t i = 0; i < nl; ++i) {
    const size_t link = At(comp_links_[i]);
    local_of[link] = static_cast<int32_t>(i);
    local_capacity_[i] = capacity[link];
    put(std::bit_cast<uint64_t>(capacity[link]));
  }
  const Engine::Flow* flows = e_.flows_.data();
  const ResourceId* flow_links = e_.flow_links_.data();
  const double* flow_weight = e_.flow_weight_.data();
  int32_t* links_out = local_links_.data();
  double* weight_out = local_weight_.data();
  int32_t pos = 0;
  local_begin_[0] = 0;
  for (size_t i = 0; i < nf; ++i) {
    const size_t f = At(comp_flows_[i]);
    const int32_t b = flows[f].path_begin;
    const int32_t e = flows[f].path_end;
    put(static_cast<uint64_t>(e - b));
    for (int32_t k = b; k < e; ++k) {
      const int32_t local = local_of[At(flow_links[At(k)].v)];
      const double w = flow_weight[At(k)];
      links_out[At(pos)] = local;
      weight_out[At(pos)] = w;
      ++pos;
      put(static_cast<uint64_t>(local));
      put(std::bit_cast<uint64_t>(w));
    }
    local_begin_[i + 1] = pos;
    local_cap_[i] = flows[f].cap;
    put(std::bit_cast<uint64_t>(local_cap_[i]));
  }
  return put.hash();
}

// The solver is a pure function of the local problem (capacities, paths, weights, caps: the
// local indices follow the search order, so the same links and flows met in the same order give
// the same problem). A step repeats the same few contentions (a DP bucket meeting a PP send on a
// NIC, micro-batch after micro-batch), so each distinct problem is solved once and its rates and
// bounds are read afterwards: the same doubles the solver would return. Returns where they are
// kept in memo_rates_ and memo_bounds_, or -1 when the memo is full and they are only in
// local_rate_ and local_bound_.
int64_t Simulation::SolveMemo(uint64_t hash) {
  size_t slot = 0;
  const int64_t found = problem_memo_.Find(problem_key_, hash, &slot);
  if (found >= 0) return found;
  const size_t nf = local_cap_.size();
  // No fill: the solver writes every flow's rate and bound.
  local_rate_.resize(nf);
  local_bound_.resize(nf);
  solver_.Solve(local_capacity_, local_begin_, local_links_, local_cap_, local_rate_, local_weight_,
                local_bound_);
  if (problem_memo_.full()) return -1;
  const size_t result = memo_rates_.size();
  memo_rates_.insert(memo_rates_.end(), local_rate_.begin(), local_rate_.end());
  memo_bounds_.insert(memo_bounds_.end(), local_bound_.begin(), local_bound_.end());
  problem_memo_.Insert(slot, problem_key_, hash, result);
  return static_cast<int64_t>(result);
}

// The event loop; with kTrack, while periodic_ holds (AtAnchor may end it).
template <bool kTrack>
void Simulation::Loop() {
  while (!queue_.empty() && overflow_task_ < 0 && (!kTrack || periodic_)) {
    const int64_t now = queue_.top_time();
    if (static_cast<int64_t>(queue_.size()) > stats_.max_queue) {
      stats_.max_queue = static_cast<int64_t>(queue_.size());
    }
    do {
      const Event ev = queue_.Pop();
      ++stats_.events;
      switch (ev.kind) {
        case EventKind::kTaskEnd:
          Finish<kTrack>(ev.task, now);
          break;
        case EventKind::kLatencyEnd:
          ActivateFlow<kTrack>(e_.tasks_[At(ev.task)].flow, now);
          break;
        case EventKind::kFlowEnd:
          EndFlow<kTrack>(e_.tasks_[At(ev.task)].flow, now);
          break;
      }
    } while (!queue_.empty() && queue_.top_time() == now);
    if (num_dirty_ > 0) {
      Reshare(now);
    }
    if constexpr (kTrack) {
      if (snapshot_due_) AtAnchor(now);
    }
  }
}

Result<RunResult> Simulation::Run() {
  Build();
  if (bad_counterpart_ >= 0) {
    const int32_t t = bad_counterpart_;
    return Status::Internal("engine: SetCounterparts: task " + std::to_string(t) +
                            "'s counterpart " + std::to_string(next_[At(t)]) +
                            " is not a task, or is itself or another task's counterpart");
  }
  for (int32_t t = 0; t < n_; ++t) {
    if (pending_[At(t)] == 0 && IsHead(t)) {
      if (periodic_) {
        Start<true>(t, 0, -1, Release::kAtStart);
      } else {
        Start<false>(t, 0, -1, Release::kAtStart);
      }
    }
  }
  if (num_dirty_ > 0) {
    Reshare(0);
  }
  // Tracking the periods (periods.cc) until it stops, then the plain loop.
  if (periodic_) Loop<true>();
  Loop<false>();
  if (overflow_task_ >= 0) {
    // Not a bug of the engine: inputs off by orders of magnitude (a bandwidth of bytes per
    // second, a latency of years) make one step longer than the clock holds. Name the task and
    // where it runs, so that the input behind it can be found.
    const TaskId t(overflow_task_);
    const std::span<const ResourceId> links = e_.flow_links(t);
    std::string where;
    for (ResourceId link : links) {
      where += (where.empty() ? (links.size() > 1 ? " on links '" : " on link '") : "', '") +
               e_.resource_name(link);
    }
    if (!where.empty()) where += "'";
    return Status::Invalid(
        "the simulated step lasts longer than the engine's clock holds (int64 picoseconds, about "
        "106 days), first at " +
        e_.TaskName(t) + where +
        ": look for a hardware or topology bandwidth, latency or efficiency off by orders of "
        "magnitude");
  }
  if (finished_ < n_) {
    return Deadlock();
  }
  return MakeResult();
}

}  // namespace shardsim
