// Regions of an engine's graph run as one task each (Engine::AddRegion): which regions qualify,
// each region key simulated once alone, the region's stand-in during the run, and the full
// result rebuilt from the solo runs. Internal to sim/engine.
//
// Why the result is the full run's, bit for bit (tests/program/contract_test.cc holds contracted
// runs equal to full runs task by task, link by link):
//   - A region qualifies only if its tasks meet the outside through its entry and exit alone
//     (dependencies, and its stream between them) and no flow outside it uses one of its links
//     unless ordered before its entry or after its exit through its stream group's tasks (the
//     order is found statically, along dependencies and stream order in id order: fewer paths
//     than exist, never more). Then its flows are alone on their links whenever they move: their
//     rates are those of the region run alone (a lone flow's rate and bound do not depend on the
//     flows solved beside it: tests/engine/max_min_test.cc), and so are its times, triggers,
//     releases and bounds, shifted by its entry's start.
//   - Its stand-in starts as the entry would, wakes when the exit would start and ends when it
//     would end, so the exit's end is scheduled in the same instant as in the full run (ties at
//     equal times run in scheduling order). Only the place inside that instant is unknown: if
//     another event scheduled in that instant ends when the exit does, the run is redone without
//     regions (Engine::Run).
//   - Where a region's flow starts, the full run re-shares the other changed links in general
//     (their flows solved with it, not alone): the contracted run does the same there.
//   - Link bytes are doubles added in the order flows end: the region's are added when it ends,
//     in its own order (no other flow on those links ends in between); busy times are integers.
#include <algorithm>
#include <functional>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "sim/engine/simulation.h"

namespace shardsim {
namespace {

size_t At(int32_t i) { return static_cast<size_t>(i); }
constexpr int32_t kNone = -1;
constexpr int32_t kConflict = -2;

}  // namespace

void Simulation::Contract() {
  const std::vector<Engine::Region>& regions = e_.regions_;
  const size_t n = At(n_);
  const size_t nr = regions.size();
  std::vector<uint8_t> ok(nr, 1);
  std::vector<int32_t> region_of(n, kNone);
  // Ranges: inside the graph, entry and exit inside, not overlapping.
  for (size_t i = 0; i < nr; ++i) {
    const Engine::Region& r = regions[i];
    if (!(0 <= r.begin && r.begin < r.end && r.end <= n_ && r.begin <= r.entry && r.entry < r.end &&
          r.begin <= r.exit && r.exit < r.end && r.entry != r.exit && r.key >= 0)) {
      ok[i] = 0;
      continue;
    }
    for (int32_t t = r.begin; t < r.end; ++t) {
      if (region_of[At(t)] != kNone) {
        ok[i] = 0;
        ok[At(region_of[At(t)])] = 0;
      } else {
        region_of[At(t)] = static_cast<int32_t>(i);
      }
    }
  }
  // Dependencies: from outside only to the entry, to outside only from the exit. The ones inside
  // a region, in insertion order, for the solo runs (CSR by region).
  std::vector<int32_t> inner_preds(n, 0);
  std::vector<int32_t> internal_begin(nr + 1, 0);
  for (const auto& [a, b] : e_.edges_) {
    const int32_t ra = region_of[At(a)];
    const int32_t rb = region_of[At(b)];
    if (ra != kNone && ra == rb) {
      const Engine::Region& r = regions[At(ra)];
      if (a == r.exit || b == r.entry) ok[At(ra)] = 0;
      ++inner_preds[At(b)];
      ++internal_begin[At(ra) + 1];
      continue;
    }
    if (ra != kNone && a != regions[At(ra)].exit) ok[At(ra)] = 0;
    if (rb != kNone && b != regions[At(rb)].entry) ok[At(rb)] = 0;
  }
  for (size_t i = 0; i < nr; ++i) internal_begin[i + 1] += internal_begin[i];
  std::vector<std::pair<int32_t, int32_t>> internal(At(internal_begin[nr]));
  {
    std::vector<int32_t> cursor(internal_begin.begin(), internal_begin.end() - 1);
    for (const auto& [a, b] : e_.edges_) {
      const int32_t ra = region_of[At(a)];
      if (ra == kNone || ra != region_of[At(b)]) continue;
      const int32_t begin = regions[At(ra)].begin;
      internal[At(cursor[At(ra)]++)] = {a - begin, b - begin};
    }
  }
  // Streams: the entry's stream S holds the exit; every other task is on S between them or on
  // none, and waits for a task of the region (a task on S after the entry waits for the one
  // ahead of it).
  for (size_t i = 0; i < nr; ++i) {
    if (ok[i] == 0) continue;
    const Engine::Region& r = regions[i];
    const int32_t s = e_.tasks_[At(r.entry)].stream;
    bool good = s >= 0 && e_.tasks_[At(r.exit)].stream == s;
    for (int32_t t = r.begin; good && t < r.end; ++t) {
      const int32_t ts = e_.tasks_[At(t)].stream;
      if (ts >= 0 && ts != s) good = false;
      if (ts == s && (t < r.entry || t > r.exit)) good = false;
      if (t != r.entry && ts != s && inner_preds[At(t)] == 0) good = false;
    }
    if (!good) ok[i] = 0;
  }
  // One key, one graph: each region equals the first of its key (tasks, times, bytes, caps,
  // paths, dependencies).
  int32_t num_keys = 0;
  for (size_t i = 0; i < nr; ++i) {
    if (ok[i] != 0) num_keys = std::max(num_keys, regions[i].key + 1);
  }
  std::vector<int32_t> ref_of_key(At(num_keys), kNone);
  for (size_t i = 0; i < nr; ++i) {
    if (ok[i] == 0) continue;
    const Engine::Region& r = regions[i];
    int32_t& ref = ref_of_key[At(r.key)];
    if (ref == kNone) {
      ref = static_cast<int32_t>(i);
      continue;
    }
    const Engine::Region& q = regions[At(ref)];
    bool same = r.end - r.begin == q.end - q.begin && r.entry - r.begin == q.entry - q.begin &&
                r.exit - r.begin == q.exit - q.begin &&
                internal_begin[i + 1] - internal_begin[i] ==
                    internal_begin[At(ref) + 1] - internal_begin[At(ref)];
    for (int32_t k = 0; same && k < r.end - r.begin; ++k) {
      const Engine::Task& a = e_.tasks_[At(r.begin + k)];
      const Engine::Task& b = e_.tasks_[At(q.begin + k)];
      same = a.kind == b.kind && a.stream == b.stream && a.fixed_ps == b.fixed_ps &&
             (a.flow < 0) == (b.flow < 0);
      if (same && a.flow >= 0) {
        const Engine::Flow& fa = e_.flows_[At(a.flow)];
        const Engine::Flow& fb = e_.flows_[At(b.flow)];
        same = fa.bytes == fb.bytes && fa.cap == fb.cap && fa.path_begin == fb.path_begin &&
               fa.path_end == fb.path_end;
      }
    }
    for (int32_t k = 0; same && k < internal_begin[i + 1] - internal_begin[i]; ++k) {
      same = internal[At(internal_begin[i] + k)] == internal[At(internal_begin[At(ref)] + k)];
    }
    if (!same) ok[i] = 0;
  }
  // Each key alone, once.
  std::vector<int32_t> solo_of_key(At(num_keys), kNone);
  for (size_t i = 0; i < nr; ++i) {
    if (ok[i] == 0) continue;
    const int32_t key = regions[i].key;
    if (solo_of_key[At(key)] == kNone) {
      Solo solo;
      const int32_t ref = ref_of_key[At(key)];
      const std::span<const std::pair<int32_t, int32_t>> deps(
          internal.data() + internal_begin[At(ref)],
          At(internal_begin[At(ref) + 1] - internal_begin[At(ref)]));
      if (SoloRun(regions[At(ref)], deps, &solo)) {
        solo_of_key[At(key)] = static_cast<int32_t>(solos_.size());
        solos_.push_back(std::move(solo));
      } else {
        solo_of_key[At(key)] = kConflict;
      }
    }
    if (solo_of_key[At(key)] < 0) ok[i] = 0;
  }

  // Isolation. The group of each region's stream; one stream of regions per group.
  const auto group_of = [&](int32_t s) {
    return s >= 0 && At(s) < e_.stream_group_.size() ? e_.stream_group_[At(s)] : kNone;
  };
  int32_t num_groups = 0;
  for (size_t i = 0; i < nr; ++i) {
    if (ok[i] == 0) continue;
    const int32_t g = group_of(e_.tasks_[At(regions[i].entry)].stream);
    if (g < 0) ok[i] = 0;
    num_groups = std::max(num_groups, g + 1);
  }
  std::vector<int32_t> group_stream(At(num_groups), kNone);  // kConflict: regions on two
  for (size_t i = 0; i < nr; ++i) {
    if (ok[i] == 0) continue;
    const int32_t s = e_.tasks_[At(regions[i].entry)].stream;
    int32_t& gs = group_stream[At(group_of(s))];
    gs = gs == kNone || gs == s ? s : kConflict;
  }
  // Each link of a region: the stream of the regions that use it (kConflict: regions on two).
  const size_t num_resources = At(e_.num_resources());
  std::vector<int32_t> link_stream(num_resources, kNone);
  const auto for_links = [&](int32_t t, const auto& fn) {
    const int32_t f = e_.tasks_[At(t)].flow;
    if (f < 0) return;
    for (int32_t k = e_.flows_[At(f)].path_begin; k < e_.flows_[At(f)].path_end; ++k) {
      fn(e_.flow_links_[At(k)].v);
    }
  };
  for (size_t i = 0; i < nr; ++i) {
    if (ok[i] == 0) continue;
    const Engine::Region& r = regions[i];
    const int32_t s = e_.tasks_[At(r.entry)].stream;
    if (group_stream[At(group_of(s))] == kConflict) {
      ok[i] = 0;
      continue;
    }
    for (int32_t t = r.begin; t < r.end; ++t) {
      for_links(t, [&](int32_t l) {
        int32_t& ls = link_stream[At(l)];
        ls = ls == kNone || ls == s ? s : kConflict;
      });
    }
  }
  for (size_t i = 0; i < nr; ++i) {
    if (ok[i] == 0) continue;
    const Engine::Region& r = regions[i];
    for (int32_t t = r.begin; t < r.end; ++t) {
      for_links(t, [&](int32_t l) {
        if (link_stream[At(l)] == kConflict) ok[i] = 0;
      });
    }
  }
  // Positions on each group's stream of regions; per task its group, and the latest (lo) and
  // earliest (hi) position on that stream ordered before / after it.
  std::vector<int32_t> pos(n, kNone);
  const auto region_stream = [&](int32_t g) {
    return g >= 0 && g < num_groups ? group_stream[At(g)] : kNone;
  };
  for (int32_t g = 0; g < num_groups; ++g) {
    const int32_t s = group_stream[At(g)];
    if (s < 0) continue;
    for (int32_t k = stream_begin_[At(s)]; k < stream_begin_[At(s) + 1]; ++k) {
      pos[At(stream_tasks_[At(k)].v)] = k - stream_begin_[At(s)];
    }
  }
  std::vector<int32_t> pred_begin(n + 1, 0);
  for (const auto& edge : e_.edges_) ++pred_begin[At(edge.second) + 1];
  for (size_t t = 0; t < n; ++t) pred_begin[t + 1] += pred_begin[t];
  std::vector<int32_t> pred(e_.edges_.size());
  {
    std::vector<int32_t> cursor(pred_begin.begin(), pred_begin.end() - 1);
    for (const auto& [a, b] : e_.edges_) pred[At(cursor[At(b)]++)] = a;
  }
  std::vector<int32_t> dom(n, kNone), lo(n, kNone);
  std::vector<int32_t> hi(n, std::numeric_limits<int32_t>::max());
  std::vector<int32_t> last_on(num_resources, kNone);
  for (int32_t t = 0; t < n_; ++t) {
    const int32_t s = e_.tasks_[At(t)].stream;
    int32_t d = group_of(s);
    if (s < 0) {
      for (int32_t k = pred_begin[At(t)]; k < pred_begin[At(t) + 1] && d < 0; ++k) {
        if (pred[At(k)] < t) d = dom[At(pred[At(k)])];
      }
    }
    dom[At(t)] = d;
    if (d >= 0 && s >= 0 && s == region_stream(d)) {
      lo[At(t)] = pos[At(t)];
    } else if (d >= 0) {
      int32_t v = kNone;
      if (s >= 0 && last_on[At(s)] != kNone) v = lo[At(last_on[At(s)])];
      for (int32_t k = pred_begin[At(t)]; k < pred_begin[At(t) + 1]; ++k) {
        const int32_t p = pred[At(k)];
        if (p < t && dom[At(p)] == d) v = std::max(v, lo[At(p)]);
      }
      lo[At(t)] = v;
    }
    if (s >= 0) last_on[At(s)] = t;
  }
  std::fill(last_on.begin(), last_on.end(), kNone);  // now: the next task on each stream
  for (int32_t t = n_ - 1; t >= 0; --t) {
    const int32_t s = e_.tasks_[At(t)].stream;
    const int32_t d = dom[At(t)];
    if (d >= 0 && s >= 0 && s == region_stream(d)) {
      hi[At(t)] = pos[At(t)];
    } else if (d >= 0) {
      int32_t v = std::numeric_limits<int32_t>::max();
      if (s >= 0 && last_on[At(s)] != kNone) v = hi[At(last_on[At(s)])];
      for (int32_t k = succ_begin_[At(t)]; k < succ_begin_[At(t) + 1]; ++k) {
        const int32_t q = succ_[At(k)];
        if (q > t && dom[At(q)] == d) v = std::min(v, hi[At(q)]);
      }
      hi[At(t)] = v;
    }
    if (s >= 0) last_on[At(s)] = t;
  }
  // Every flow outside the regions still standing that crosses a region link blocks the
  // positions of that link's stream strictly between what it is ordered after and before
  // (all of them when it is of another group).
  std::vector<std::vector<int32_t>> blocked(num_resources);  // by stream: difference array
  for (int32_t t = 0; t < n_; ++t) {
    const int32_t rt = region_of[At(t)];
    if (rt != kNone && ok[At(rt)] != 0) continue;
    for_links(t, [&](int32_t l) {
      const int32_t s = link_stream[At(l)];
      if (s < 0) return;
      std::vector<int32_t>& b = blocked[At(s)];
      const int32_t len = stream_begin_[At(s) + 1] - stream_begin_[At(s)];
      if (b.empty()) b.assign(At(len) + 1, 0);
      int32_t from = 0, to = len;  // blocks [from, to)
      if (region_stream(dom[At(t)]) == s) {
        from = lo[At(t)] + 1;
        to = std::min(hi[At(t)], len);
      }
      if (from < to) {
        ++b[At(from)];
        --b[At(to)];
      }
    });
  }
  for (std::vector<int32_t>& b : blocked) {  // prefix sums, then counts of blocked positions
    for (size_t k = 1; k < b.size(); ++k) b[k] += b[k - 1];
    for (int32_t& v : b) v = v > 0 ? 1 : 0;
    int32_t sum = 0;
    for (int32_t& v : b) {
      sum += v;
      v = sum;  // blocked positions in [0, k]
    }
  }
  contracted_of_.assign(n, kNone);
  for (size_t i = 0; i < nr; ++i) {
    if (ok[i] == 0) continue;
    const Engine::Region& r = regions[i];
    const int32_t s = e_.tasks_[At(r.entry)].stream;
    const std::vector<int32_t>& b = blocked[At(s)];
    const int32_t e = pos[At(r.entry)];
    const int32_t x = pos[At(r.exit)];
    if (!b.empty() && b[At(x)] - (e > 0 ? b[At(e - 1)] : 0) > 0) continue;
    contracted_of_[At(r.entry)] = static_cast<int32_t>(contracted_.size());
    contracted_.push_back(
        {static_cast<int32_t>(i), solo_of_key[At(r.key)], stream_begin_[At(s)] + x});
    stats_.contracted_tasks += r.end - r.begin;
  }
  guard_ = !contracted_.empty();
  if (guard_) {
    contracted_at_ = contracted_of_.data();
    sched_at_.assign(n, 0);
  }
}

bool Simulation::SoloRun(const Engine::Region& r, std::span<const std::pair<int32_t, int32_t>> deps,
                         Solo* solo) const {
  Engine eng;
  const int32_t stream = e_.tasks_[At(r.entry)].stream;
  const ResourceId s = eng.AddStream("");
  std::vector<std::pair<int32_t, ResourceId>> local;  // (engine link, solo link)
  std::vector<int32_t> global;                        // solo resource -> engine link
  global.push_back(kNone);                            // the stream
  std::vector<ResourceId> links;
  std::vector<double> weights;
  for (int32_t t = r.begin; t < r.end; ++t) {
    const Engine::Task& task = e_.tasks_[At(t)];
    const ResourceId on = task.stream == stream ? s : ResourceId();
    if (task.flow < 0) {
      eng.AddDelay(on, SimTime::FromPicos(task.fixed_ps), 0, 0);
      continue;
    }
    const Engine::Flow& f = e_.flows_[At(task.flow)];
    links.clear();
    weights.clear();
    for (int32_t k = f.path_begin; k < f.path_end; ++k) {
      const int32_t l = e_.flow_links_[At(k)].v;
      auto it =
          std::find_if(local.begin(), local.end(), [l](const auto& p) { return p.first == l; });
      if (it == local.end()) {
        local.emplace_back(l, eng.AddLink("", BytesPerSec(e_.capacity_[At(l)])));
        global.push_back(l);
        it = local.end() - 1;
      }
      links.push_back(it->second);
      weights.push_back(e_.flow_weight_[At(k)]);
    }
    eng.AddFlow(on, Bytes(f.bytes), SimTime::FromPicos(task.fixed_ps), links, 0, 0,
                BytesPerSec(f.cap), weights);
  }
  for (const auto& [a, b] : deps) eng.AddDependency(TaskId(a), TaskId(b));
  if (!eng.errors_.empty()) return false;
  std::vector<std::pair<int32_t, double>> log;
  Simulation sub(eng);
  sub.byte_log_ = &log;
  Result<RunResult> run = sub.Run();
  if (!run.ok()) return false;
  const int32_t size = r.end - r.begin;
  const TaskId entry(r.entry - r.begin);
  const TaskId exit(r.exit - r.begin);
  solo->wake = run->start(exit).picos();
  solo->span = run->end(exit).picos();
  if (run->start(entry).picos() != 0 || !(solo->span > solo->wake)) return false;
  for (int32_t k = 0; k < size; ++k) {
    const TaskId t(k);
    if (t != exit && run->end(t).picos() > solo->wake) return false;  // done when the exit starts
    solo->start.push_back(run->start(t).picos());
    solo->end.push_back(run->end(t).picos());
    solo->trigger.push_back(run->released_by_task(t).v);
    solo->why.push_back(run->released_by(t));
    const int32_t b = run->BoundBy(t).v;
    solo->bound.push_back(b < 0 ? kNone : global[At(b)]);
    const Engine::Task& task = e_.tasks_[At(r.begin + k)];
    if (task.flow >= 0) {
      const Engine::Flow& f = e_.flows_[At(task.flow)];
      if (f.bytes > 0.0 && f.path_end > f.path_begin) {
        solo->activations.push_back(run->start(t).picos() + task.fixed_ps);
      }
    }
  }
  for (const auto& [l, bytes] : log) solo->bytes.emplace_back(global[At(l)], bytes);
  for (size_t l = 1; l < global.size(); ++l) {
    const int64_t busy = run->LinkBusy(ResourceId(static_cast<int32_t>(l))).picos();
    if (busy > 0) solo->busy.emplace_back(global[l], busy);
  }
  solo->span += e_.contraction_error_ps_;
  return true;
}

// The loop's first pass is at time 0, the instant of the tasks started before it: an instant
// begins when the time moves.
void Simulation::BeginInstant(int64_t now) {
  if (now != instant_) {
    for (Arm& a : opening_) {
      a.last = sched_count_;
      arms_.push_back(a);
      std::push_heap(arms_.begin(), arms_.end(),
                     [](const Arm& x, const Arm& y) { return x.end > y.end; });
    }
    opening_.clear();
    instant_first_ = sched_count_;
    instant_ = now;
  }
  due_.clear();
  while (!arms_.empty() && arms_.front().end <= now) {
    std::pop_heap(arms_.begin(), arms_.end(),
                  [](const Arm& x, const Arm& y) { return x.end > y.end; });
    if (arms_.back().end == now) due_.push_back(arms_.back());
    arms_.pop_back();
  }
}

void Simulation::CheckTie(int32_t task) {
  const uint64_t s = sched_at_[At(task)];
  for (const Arm& a : due_) {
    if (task != a.task && s >= a.first && s < a.last) fell_back_ = true;
  }
}

bool Simulation::PhantomAt(int64_t now) {
  while (!phantoms_.empty() && phantoms_.front() < now) {
    std::pop_heap(phantoms_.begin(), phantoms_.end(), std::greater<>());
    phantoms_.pop_back();
  }
  return !phantoms_.empty() && phantoms_.front() == now;
}

void Simulation::ExpandRegions() {
  for (const Contracted& c : contracted_) {
    const Engine::Region& r = e_.regions_[At(c.region)];
    const Solo& s = solos_[At(c.solo)];
    const int64_t t0 = start_[At(r.entry)];
    for (int32_t t = r.begin; t < r.end; ++t) {
      const size_t k = At(t - r.begin);
      end_[At(t)] = t0 + s.end[k];
      bound_[At(t)] = s.bound[k];
      if (t == r.entry) continue;
      start_[At(t)] = t0 + s.start[k];
      trigger_[At(t)] = r.begin + s.trigger[k];
      why_[At(t)] = s.why[k];
    }
    for (const auto& [l, b] : s.busy) busy_[At(l)] += b;
  }
}

}  // namespace shardsim
