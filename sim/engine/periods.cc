// Periods: advancing a run exactly over the repetitions of its program (Engine::SetCounterparts).
//
// A training step repeats itself: in a pipeline's steady state every micro-batch (or group of
// micro-batches, for an interleaved schedule) runs the same passes and transfers as the one
// before, on the same streams and links. The caller names that repetition as a map σ from each
// task to its counterpart one period later. The run uses it in three steps.
//
// 1. Where the map preserves the graph (Preserves, Depth). σ preserves task t when t and σ(t)
//    are the same work (kind, duration or latency, bytes, links, weights, cap, stream), have as
//    many dependencies, σ maps t's successors in order onto σ(t)'s and t's stream successor onto
//    σ(t)'s. depth(t) counts how many times σ can be applied from t with the graph preserved at
//    each step; it is computed, chain by chain, only where a skip asks for it.
// 2. Whether the state repeats (TakeSnapshot, Repeats). Each time the next task of the anchor's
//    chain (the longest chain of σ) starts, the loop, once the events of that time are done and
//    the rates re-shared, compares the run state with the last 8 snapshots, nearest first: the
//    pending events (task, time, kind, in pop order), every transferring flow's state (bytes
//    left, rate, the bounding-link bookkeeping), which flows each link carries in which order,
//    the pending dependency count of every touched task (started, or with a finished
//    dependency, and not finished) and each stream's head. The state repeats snapshot s, `span`
//    anchor periods back, when it is s's with every task replaced by its σ^span and every time
//    shifted by the same Δ (a steady state may repeat only over several periods: the cyclicity
//    of a max-plus system). Times enter the loop only as differences (a flow's progress since it
//    was settled, the delay to its end), the queue orders by (time, scheduling order), and the
//    max-min solver is a pure function of its problem, so a repeated state evolves into the
//    repetition of what followed s, as long as σ preserves the graph at every task that takes
//    part.
// 3. Skipping (SkippablePeriods, Skip). What the run did since s was logged: the tasks it
//    started and finished, the bytes each flow end added to its links, the busy time each idle
//    link added. The next k stretches are σ^span ... σ^(k·span) of it, where k·span is at most
//    the least depth over everything that took part in it or is live now. Skip writes their
//    tasks' times (shifted by iΔ), release causes and bounding links, adds their byte and busy
//    increments in the same order (the same doubles summed in the same order as the simulation
//    would), counts their events and reshares, and moves the state forward: every live task to
//    its σ^(k·span), every time by kΔ. The run then continues from there, until the anchor's
//    chain ends or half its length of comparisons in a row find no repetition.
//
// The RunResult is the same, bit for bit, as without the map (tests/engine/periods_test.cc,
// tests/program/periods_test.cc); a map that preserves nothing, or a state that never repeats,
// only costs the checks.
#include <algorithm>
#include <cstddef>
#include <limits>

#include "sim/engine/simulation.h"

namespace shardsim {
namespace {

size_t At(int32_t i) { return static_cast<size_t>(i); }

constexpr int64_t kMaxPicos = std::numeric_limits<int64_t>::max();

}  // namespace

void Simulation::BuildPeriods() {
  const std::vector<int32_t>& next = e_.counterparts();
  periodic_ = !next.empty() && next.size() == At(n_);
  snaps_count_ = 0;
  snaps_next_ = 0;
  busy_links_ = 0;
  anchor_ = -1;
  snapshot_due_ = false;
  if (!periodic_) return;
  next_ = next.data();
  const size_t n = At(n_);
  streams_.clear();
  for (int32_t r = 0; r < e_.num_resources(); ++r) {
    if (e_.resource_kind_[At(r)] == ResourceKind::kStream) streams_.push_back(r);
  }
  head_mapped_.assign(streams_.size(), 0);
  mapped_.assign(n, 0);
  for (int32_t t = 0; t < n_; ++t) {
    const int32_t u = next_[At(t)];
    if (u < 0) continue;
    if (u >= n_ || u == t || mapped_[At(u)] != 0) {
      bad_counterpart_ = t;
      periodic_ = false;
      return;
    }
    mapped_[At(u)] = 1;
  }
  // Depths are computed when a skip asks for them (Depth): a run whose state never repeats
  // checks none. pending_ counts down from the dependency counts copied here. The anchor is the
  // first task of the longest chain (most often one pass of every micro-batch, or group of them).
  ptask_.resize(n);
  for (size_t t = 0; t < n; ++t) ptask_[t] = {-1, pending_[t]};
  int32_t longest = 0;
  for (int32_t t = 0; t < n_; ++t) {
    if (mapped_[At(t)] != 0 || next_[At(t)] < 0) continue;  // not a chain's first task
    int32_t length = 0;
    for (int32_t c = t; c >= 0; c = next_[At(c)]) ++length;
    if (length > longest) {
      longest = length;
      anchor_ = t;
    }
  }
  periodic_ = longest >= 3;  // two periods to compare and one to skip at the least
  misses_ = 0;
  // A pipeline's warm-up, which does not repeat, lasts about as many periods as it has stages
  // (times chunks), and more when the passes are uneven: misses are allowed for half the chain, 8
  // at the least.
  max_misses_ = std::max(8, longest / 2);
  if (!periodic_) {
    anchor_ = -1;
    return;
  }
  tpos_.assign(n, -1);
  tset_.clear();
  log_start_.clear();
  log_end_.clear();
  log_bytes_.clear();
  log_busy_.clear();
}

// How many times σ applies from `task` with the graph preserved at each step: walks the chain to
// the first task whose depth is known or that does not preserve it, then walks it again setting
// the depths. A counterpart added no later than its task ends a chain (a later period's work is
// added later; this also keeps the walk finite).
int32_t Simulation::Depth(int32_t task) {
  int32_t c = task;
  int32_t steps = 0;  // tasks walked whose depth was not known
  int32_t d = -1;     // the depth after the last of them
  while (ptask_[At(c)].depth < 0) {
    const int32_t u = next_[At(c)];
    ++steps;
    if (u <= c || !Preserves(c, u)) break;  // c itself: 0
    c = u;
  }
  if (steps == 0) return ptask_[At(task)].depth;
  if (ptask_[At(c)].depth >= 0) d = ptask_[At(c)].depth;
  for (c = task; steps > 0; --steps, c = next_[At(c)]) ptask_[At(c)].depth = d + steps;
  return ptask_[At(task)].depth;
}

[[gnu::always_inline]] inline bool Simulation::Preserves(int32_t t, int32_t u) const {
  const Engine::Task& a = e_.tasks_[At(t)];
  const Engine::Task& b = e_.tasks_[At(u)];
  if (a.kind != b.kind || a.fixed_ps != b.fixed_ps || a.stream != b.stream ||
      ptask_[At(t)].indeg != ptask_[At(u)].indeg) {
    return false;
  }
  if (a.kind == TaskKind::kFlow) {
    const Engine::Flow& f = e_.flows_[At(a.flow)];
    const Engine::Flow& g = e_.flows_[At(b.flow)];
    const int32_t len = f.path_end - f.path_begin;
    if (f.bytes != g.bytes || f.cap != g.cap || len != g.path_end - g.path_begin) return false;
    if (f.path_begin != g.path_begin) {
      for (int32_t k = 0; k < len; ++k) {
        if (e_.flow_links_[At(f.path_begin + k)] != e_.flow_links_[At(g.path_begin + k)] ||
            e_.flow_weight_[At(f.path_begin + k)] != e_.flow_weight_[At(g.path_begin + k)]) {
          return false;
        }
      }
    }
  }
  const int32_t st = succ_begin_[At(t)], su = succ_begin_[At(u)];
  const int32_t count = succ_begin_[At(t) + 1] - st;
  if (count != succ_begin_[At(u) + 1] - su) return false;
  for (int32_t k = 0; k < count; ++k) {
    if (next_[At(succ_[At(st + k)])] != succ_[At(su + k)]) return false;
  }
  if (a.stream < 0) return true;
  const int32_t nt = snext_[At(t)], nu = snext_[At(u)];
  return nt < 0 ? nu < 0 : nu >= 0 && next_[At(nt)] == nu;
}

// Called once the events at `now` are done after the anchor started: compares with the last
// kMaxSpan snapshots, nearest first (a steady state may repeat over several anchor periods: a
// max-plus system's cyclicity), skips when the state repeats one, and records the state.
void Simulation::AtAnchor(int64_t now) {
  if (!queue_.fifo_empty()) return;  // events still due now: after them
  snapshot_due_ = false;
  bool repeated = false;
  for (int32_t span = 1; span <= snaps_count_ && !repeated; ++span) {
    const Snapshot& s = SnapshotAgo(span);
    if (!Repeats(now, s, span)) continue;
    repeated = true;
    int32_t k = SkippablePeriods(s, span);
    const int64_t delta = now - s.now;
    // The jump stays on the clock: a step that outgrows it fails where it does, simulated.
    int64_t last = now;
    for (const EventQueue::Slot& ev : events_now_) last = std::max(last, ev.time);
    if (delta > 0 && k > (kMaxPicos - last) / delta) {
      k = static_cast<int32_t>((kMaxPicos - last) / delta);
    }
    if (k < 1) break;
    Skip(k, span, s, now);
    now += static_cast<int64_t>(k) * delta;
    anchor_ = Forward(anchor_, k * span);
    snaps_count_ = 0;  // the run jumped: nothing before compares
    log_start_.clear();
    log_end_.clear();
    log_bytes_.clear();
    log_busy_.clear();
  }
  misses_ = repeated ? 0 : misses_ + 1;
  if (anchor_ < 0 || misses_ > max_misses_) {
    // Nothing left to compare against, or a state that does not repeat: stop tracking.
    periodic_ = false;
    snaps_count_ = 0;
    return;
  }
  TakeSnapshot(now);
}

void Simulation::TakeSnapshot(int64_t now) {
  if (snaps_.size() < kMaxSpan) snaps_.resize(kMaxSpan);
  Snapshot& s = snaps_[snaps_next_];
  snaps_next_ = (snaps_next_ + 1) % kMaxSpan;
  snaps_count_ = std::min<int32_t>(snaps_count_ + 1, kMaxSpan);
  s.now = now;
  queue_.Pending(&s.events);
  s.kinds.clear();
  s.flows.clear();
  ++epoch_;
  s.links.clear();
  s.busy_since.clear();
  s.link_flows.clear();
  for (EventQueue::Slot& ev : s.events) {
    ev.time -= now;
    const EventKind kind = queue_.kind_of(ev.task);
    s.kinds.push_back(kind);
    if (kind != EventKind::kFlowEnd) continue;
    const int32_t f = e_.tasks_[At(ev.task)].flow;
    const FlowState& st = St(At(f));
    s.flows.push_back({st.remaining, st.rate, st.cur_bound_bytes, st.best_bound_bytes,
                       st.settled - now, st.bound_since - now, st.cur_bound, st.best_bound});
    for (int32_t k = e_.flows_[At(f)].path_begin; k < e_.flows_[At(f)].path_end; ++k) {
      const int32_t link = e_.flow_links_[At(k)].v;
      if (link_mark_[At(link)] == epoch_) continue;
      link_mark_[At(link)] = epoch_;
      s.links.push_back(link);
      s.busy_since.push_back(busy_since_[At(link)] - now);
      s.link_flows.push_back(static_cast<int32_t>(active_[At(link)].size()));
      for (const ActiveEntry& entry : active_[At(link)]) {
        s.link_flows.push_back(e_.flows_[At(entry.flow)].task);
      }
    }
  }
  s.busy_links = busy_links_;
  s.touched.clear();
  for (int32_t t : tset_) s.touched.emplace_back(t, pending_[At(t)]);
  s.heads.clear();
  for (int32_t r : streams_) {
    const int32_t pos = head_[At(r)];
    s.heads.push_back(pos < stream_begin_[At(r) + 1] ? stream_tasks_[At(pos)].v : -1);
  }
  s.stats = stats_;
  s.mark = {log_start_.size(), log_end_.size(), log_bytes_.size(), log_busy_.size()};
  // The logs from the oldest snapshot kept on: what came before is dropped once it is long.
  const Snapshot& oldest = SnapshotAgo(snaps_count_);
  if (oldest.mark.start > 4096) {
    const LogMark drop = oldest.mark;
    for (int32_t j = 1; j <= snaps_count_; ++j) {
      Snapshot& o = snaps_[(snaps_next_ + kMaxSpan - static_cast<size_t>(j)) % kMaxSpan];
      o.mark.start -= drop.start;
      o.mark.end -= drop.end;
      o.mark.bytes -= drop.bytes;
      o.mark.busy -= drop.busy;
    }
    log_start_.erase(log_start_.begin(),
                     log_start_.begin() + static_cast<std::ptrdiff_t>(drop.start));
    log_end_.erase(log_end_.begin(), log_end_.begin() + static_cast<std::ptrdiff_t>(drop.end));
    log_bytes_.erase(log_bytes_.begin(),
                     log_bytes_.begin() + static_cast<std::ptrdiff_t>(drop.bytes));
    log_busy_.erase(log_busy_.begin(), log_busy_.begin() + static_cast<std::ptrdiff_t>(drop.busy));
  }
}

// Whether the state now is snapshot `s`'s with every task replaced by its counterpart `span`
// periods later (σ^span) and every time shifted by now - s.now.
bool Simulation::Repeats(int64_t now, const Snapshot& s, int32_t span) {
  if (tset_.size() != s.touched.size() || busy_links_ != s.busy_links) return false;
  for (const auto& [t, pending] : s.touched) {
    const int32_t u = Forward(t, span);
    if (u < 0 || tpos_[At(u)] < 0 || pending_[At(u)] != pending) return false;
  }
  queue_.Pending(&events_now_);
  if (events_now_.size() != s.events.size()) return false;
  size_t flow = 0;
  for (size_t i = 0; i < events_now_.size(); ++i) {
    const EventQueue::Slot& ev = events_now_[i];
    const EventKind kind = queue_.kind_of(ev.task);
    if (ev.time - now != s.events[i].time || kind != s.kinds[i] ||
        ev.task != Forward(s.events[i].task, span)) {
      return false;
    }
    if (kind != EventKind::kFlowEnd) continue;
    const FlowState& st = St(At(e_.tasks_[At(ev.task)].flow));
    const FlowSnap& f = s.flows[flow++];
    if (st.remaining != f.remaining || st.rate != f.rate ||
        st.cur_bound_bytes != f.cur_bound_bytes || st.best_bound_bytes != f.best_bound_bytes ||
        st.settled - now != f.settled || st.bound_since - now != f.bound_since ||
        st.cur_bound != f.cur_bound || st.best_bound != f.best_bound) {
      return false;
    }
  }
  // The links carrying flows: every snapshot link carries the counterparts of its flows in the
  // same order, and there are as many (busy_links_ above).
  size_t at = 0;
  for (size_t i = 0; i < s.links.size(); ++i) {
    const int32_t link = s.links[i];
    const auto& list = active_[At(link)];
    const auto count = static_cast<size_t>(s.link_flows[at++]);
    if (list.size() != count || busy_since_[At(link)] - now != s.busy_since[i]) return false;
    for (const ActiveEntry& entry : list) {
      if (e_.flows_[At(entry.flow)].task != Forward(s.link_flows[at++], span)) return false;
    }
  }
  if (s.links.size() != static_cast<size_t>(busy_links_)) return false;
  // Streams: the head moved to its counterpart, or is the same task, untouched and no task's
  // counterpart (it waits for dependencies that no repeated period finishes).
  for (size_t i = 0; i < streams_.size(); ++i) {
    const int32_t r = streams_[i];
    const int32_t pos = head_[At(r)];
    const int32_t h = pos < stream_begin_[At(r) + 1] ? stream_tasks_[At(pos)].v : -1;
    const int32_t was = s.heads[i];
    head_mapped_[i] = 0;
    if (was >= 0 && h >= 0 && Forward(was, span) == h) {
      head_mapped_[i] = 1;
    } else if (h != was || (h >= 0 && (tpos_[At(h)] >= 0 || mapped_[At(h)] != 0))) {
      return false;
    }
  }
  return true;
}

// How many repetitions of the stretch since `s` (`span` periods) follow it: the least depth over
// the tasks the stretch started and finished and those live now (touched, or a moved stream
// head), in whole stretches.
int32_t Simulation::SkippablePeriods(const Snapshot& s, int32_t span) {
  int32_t k = std::numeric_limits<int32_t>::max();
  for (size_t i = s.mark.start; i < log_start_.size(); ++i) k = std::min(k, Depth(log_start_[i]));
  for (size_t i = s.mark.end; i < log_end_.size(); ++i) k = std::min(k, Depth(log_end_[i]));
  for (int32_t t : tset_) k = std::min(k, Depth(t));
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (head_mapped_[i] == 0) continue;
    const int32_t r = streams_[i];
    k = std::min(k, Depth(stream_tasks_[At(head_[At(r)])].v));
  }
  return k / span;
}

// Fills in `times` repetitions of the stretch since `s` (`span` periods) and moves the state
// forward over them.
void Simulation::Skip(int32_t times, int32_t span, const Snapshot& s, int64_t now) {
  const int64_t delta = now - s.now;
  const int64_t shift = static_cast<int64_t>(times) * delta;
  const int32_t steps = times * span;
  // The live state, read before any task's entries are rewritten.
  queue_.Pending(&events_now_);
  std::vector<EventKind> kinds;
  kinds.reserve(events_now_.size());
  for (const EventQueue::Slot& ev : events_now_) kinds.push_back(queue_.kind_of(ev.task));
  std::vector<std::pair<int32_t, int32_t>> touched;
  touched.reserve(tset_.size());
  for (int32_t t : tset_) touched.emplace_back(t, pending_[At(t)]);

  // The skipped stretches' results: σ^(i·span) of the stretch just simulated, i = 1 .. times.
  // Forward(·, span): a single lookup for the common span of one period.
  const auto step = [&](int32_t t) { return span == 1 ? next_[At(t)] : Forward(t, span); };
  for (size_t j = s.mark.start; j < log_start_.size(); ++j) {
    const int32_t x = log_start_[j];
    const Release why = why_[At(x)];
    int64_t time = start_[At(x)];
    int32_t y = x, by = trigger_[At(x)];
    for (int32_t i = 0; i < times; ++i) {
      y = step(y);
      if (by >= 0) by = step(by);
      time += delta;
      start_[At(y)] = time;
      trigger_[At(y)] = by;
      why_[At(y)] = why;
    }
  }
  for (size_t j = s.mark.end; j < log_end_.size(); ++j) {
    const int32_t x = log_end_[j];
    const int32_t bound = bound_[At(x)];
    int64_t time = end_[At(x)];
    int32_t y = x;
    for (int32_t i = 0; i < times; ++i) {
      y = step(y);
      time += delta;
      end_[At(y)] = time;
      bound_[At(y)] = bound;
      pending_[At(y)] = kFinished;
    }
  }
  finished_ += times * static_cast<int32_t>(log_end_.size() - s.mark.end);
  for (int32_t i = 0; i < times; ++i) {
    for (size_t j = s.mark.bytes; j < log_bytes_.size(); ++j) {
      bytes_[At(log_bytes_[j].first)] += log_bytes_[j].second;
    }
  }
  for (size_t j = s.mark.busy; j < log_busy_.size(); ++j) {
    busy_[At(log_busy_[j].first)] += times * log_busy_[j].second;
  }
  const RunStats& was = s.stats;
  stats_.events += times * (stats_.events - was.events);
  stats_.reshares += times * (stats_.reshares - was.reshares);
  stats_.reshared_flows += times * (stats_.reshared_flows - was.reshared_flows);
  stats_.periods_skipped += steps;
  stats_.tasks_skipped +=
      static_cast<int64_t>(times) * static_cast<int64_t>(log_start_.size() - s.mark.start);

  // The state moves to its counterparts σ^steps, its times by times·Δ.
  for (int32_t t : tset_) tpos_[At(t)] = -1;
  tset_.clear();
  for (const auto& [t, pending] : touched) {
    const int32_t u = Forward(t, steps);
    pending_[At(u)] = pending;
    Touch(u);
  }
  ++epoch_;
  for (size_t i = 0; i < events_now_.size(); ++i) {
    EventQueue::Slot& ev = events_now_[i];
    const int32_t from = ev.task;
    ev.task = Forward(from, steps);
    ev.time += shift;
    if (kinds[i] != EventKind::kFlowEnd) continue;
    const int32_t f = e_.tasks_[At(from)].flow;
    const int32_t g = e_.tasks_[At(ev.task)].flow;
    state_of_[At(g)] = state_of_[At(f)];
    FlowState& st = St(At(g));
    st.settled += shift;
    st.bound_since += shift;
    // Its links' lists: the entry of f becomes g's (the same slot within its path).
    for (int32_t k = e_.flows_[At(g)].path_begin; k < e_.flows_[At(g)].path_end; ++k) {
      const int32_t link = e_.flow_links_[At(k)].v;
      const int32_t offset = k - e_.flows_[At(g)].path_begin;
      const int32_t old_slot = slot_begin_[At(f)] + offset;
      const int32_t new_slot = slot_begin_[At(g)] + offset;
      const int32_t pos = slot_pos_[At(old_slot)];
      active_[At(link)][At(pos)] = {g, new_slot};
      slot_pos_[At(new_slot)] = pos;
      if (link_mark_[At(link)] != epoch_) {
        link_mark_[At(link)] = epoch_;
        busy_since_[At(link)] += shift;
      }
    }
  }
  queue_.Replace(events_now_, kinds, now + shift);
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (head_mapped_[i] == 0) continue;
    const int32_t r = streams_[i];
    head_[At(r)] = stream_pos_[At(Forward(stream_tasks_[At(head_[At(r)])].v, steps))];
  }
}

}  // namespace shardsim
