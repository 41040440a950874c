#include "sim/schedule/schedule.h"

#include <algorithm>
#include <array>
#include <deque>
#include <string>

namespace shardsim {
namespace {

int64_t Chunks(const ScheduleShape& s) {
  return s.schedule == PipelineSchedule::kInterleaved1F1B ? std::max<int64_t>(1, s.virtual_stages)
                                                          : 1;
}

// Interleaved: Megatron-LM's schedule table (get_schedule_table): micro-batches in groups of N
// (MicrobatchGroup), the last group holding what is left (N when N divides m); within a group,
// chunk by chunk, the group's micro-batches in order. The k-th chunk-forward of a rank is entry k,
// the k-th backward entry k with the chunks walked in reverse (get_model_chunk_id; a chunk's
// backwards pop its inputs first in, first out).
ScheduleItem InterleavedItem(int64_t k, int64_t m, int64_t v, int64_t n, bool forward) {
  const int64_t last_start = ((m - 1) / n) * n;  // the last group's first micro-batch
  const int64_t start = std::min(k / (n * v) * n, last_start);
  const int64_t size = start == last_start ? m - last_start : n;
  const int64_t within = k - start * v;
  int64_t chunk = within / size;
  if (!forward) chunk = v - 1 - chunk;
  const int64_t mb = start + within % size;
  return ScheduleItem{forward ? Phase::kForward : Phase::kBackward, static_cast<int32_t>(chunk),
                      static_cast<int32_t>(mb)};
}

// The group size as it decides an order: the interleaved schedule's only (0 elsewhere).
int64_t Group(const ScheduleShape& s) {
  return s.schedule == PipelineSchedule::kInterleaved1F1B ? MicrobatchGroup(s) : 0;
}

ScheduleItem Item(Phase p, int64_t chunk, int64_t mb) {
  return ScheduleItem{p, static_cast<int32_t>(chunk), static_cast<int32_t>(mb)};
}

// ZB-H1 (Qi et al. 2024 §3.1; the authors' handcrafted order, zbpp_light auto_schedule.py):
// 1F1B's p - r - 1 warm-up forwards, then F B pairs, each followed by a W once r of them have
// been deferred; the deferred W passes run at the end.
std::vector<ScheduleItem> ZbH1(int64_t pp, int64_t m, int64_t r) {
  std::vector<ScheduleItem> o;
  int64_t f = 0, b = 0, w = 0;
  const int64_t warmup = std::min(pp - r - 1, m);
  const int64_t remaining = m - warmup;
  for (int64_t i = 0; i < warmup; ++i) o.push_back(Item(Phase::kForward, 0, f++));
  for (int64_t i = 0; i < remaining; ++i) {
    o.push_back(Item(Phase::kForward, 0, f++));
    o.push_back(Item(Phase::kInput, 0, b++));
    if (i >= r) o.push_back(Item(Phase::kWeight, 0, w++));
  }
  for (int64_t i = 0; i < warmup; ++i) {
    o.push_back(Item(Phase::kInput, 0, b++));
    if (remaining + i >= r) o.push_back(Item(Phase::kWeight, 0, w++));
  }
  while (w < m) o.push_back(Item(Phase::kWeight, 0, w++));
  return o;
}

// The zero-bubble heuristic scheduler (Qi et al. 2024 §3.2) on unit costs, every transfer free:
// whenever a stage is free it starts, of the passes that can start earliest, a B (its F done
// here and its B done on the next stage), else an F (done on the previous stage, and fewer
// than `limit` micro-batches past F but not through W), else a W. Among stages, the earliest
// start goes first, then the lower rank. Integer time, so the order is exact.
//
// Each stage's next pass (its earliest start and which) depends on its own counts and on what its
// neighbours have finished (a forward from the stage before, a B from the one after): after a
// pass is placed on stage s only stages s - 1, s and s + 1 can change, so each stage's candidate
// is kept and only those three are recomputed before the next pick (the earliest start, ties to
// the lower rank): the same order as evaluating every stage for every pass.
std::vector<std::vector<ScheduleItem>> Greedy(int64_t pp, int64_t m, int64_t limit) {
  constexpr int64_t kUnset = -1;
  const auto at = [&](int64_t s, int64_t k) { return static_cast<size_t>(s * m + k); };
  std::vector<int64_t> f_end(static_cast<size_t>(pp * m), kUnset), b_end = f_end;
  std::vector<int64_t> t(static_cast<size_t>(pp), 0), f(t), b(t), w(t);
  std::vector<std::vector<ScheduleItem>> orders(static_cast<size_t>(pp));
  const auto u = [](int64_t s) { return static_cast<size_t>(s); };
  // Earliest start wins; at equal starts B before F before W (the enum's order is F B W).
  const auto rank_of = [](Phase x) {
    return x == Phase::kInput ? 0 : x == Phase::kForward ? 1 : 2;
  };
  struct Candidate {
    int64_t start = -1;  // -1: nothing can start
    Phase phase = Phase::kWeight;
  };
  const auto candidate = [&](int64_t s) {
    Candidate c;
    if (w[u(s)] >= m) return c;
    const auto offer = [&](int64_t ready, Phase p) {
      const int64_t st = std::max(t[u(s)], ready);
      if (c.start < 0 || st < c.start || (st == c.start && rank_of(p) < rank_of(c.phase))) {
        c.start = st;
        c.phase = p;
      }
    };
    if (b[u(s)] < f[u(s)]) {
      const int64_t ready = s == pp - 1 ? f_end[at(s, b[u(s)])] : b_end[at(s + 1, b[u(s)])];
      if (ready != kUnset) offer(ready, Phase::kInput);
    }
    if (f[u(s)] < m && f[u(s)] - w[u(s)] < limit) {
      const int64_t ready = s == 0 ? 0 : f_end[at(s - 1, f[u(s)])];
      if (ready != kUnset) offer(ready, Phase::kForward);
    }
    if (w[u(s)] < b[u(s)]) offer(t[u(s)], Phase::kWeight);
    return c;
  };
  std::vector<Candidate> next(static_cast<size_t>(pp));
  const auto refresh = [&](int64_t s) {
    if (s >= 0 && s < pp) next[u(s)] = candidate(s);
  };
  for (int64_t s = 0; s < pp; ++s) refresh(s);
  for (int64_t placed = 0; placed < 3 * pp * m; ++placed) {
    int64_t best_start = 0, best_stage = -1;
    for (int64_t s = 0; s < pp; ++s) {
      const int64_t start = next[u(s)].start;
      if (start >= 0 && (best_stage < 0 || start < best_start)) {
        best_start = start;
        best_stage = s;
      }
    }
    if (best_stage < 0) break;  // cannot happen: stage pp-1 can always make progress
    const size_t s = u(best_stage);
    const Phase best_phase = next[s].phase;
    t[s] = next[s].start + 1;
    int64_t k = 0;
    if (best_phase == Phase::kForward) {
      k = f[s]++;
      f_end[at(best_stage, k)] = t[s];
    } else if (best_phase == Phase::kInput) {
      k = b[s]++;
      b_end[at(best_stage, k)] = t[s];
    } else {
      k = w[s]++;
    }
    orders[s].push_back(Item(best_phase, 0, k));
    refresh(best_stage - 1);
    refresh(best_stage);
    refresh(best_stage + 1);
  }
  return orders;
}

// ZB-V (Qi et al. 2024 §6) as the authors' handcrafted V schedule orders it (sail-sg/zero-bubble-
// pipeline-parallelism handcrafted_zb_v; PyTorch's ScheduleZBVZeroBubble is the same order):
// chunk 0 of rank r is stage r, chunk 1 stage 2p - 1 - r. Warm-up: 2(p - r) - 1 chunk-0
// forwards, r pairs F1 F0, then p - r triples F1 B1 W1; steady state: F0 B0 W0 F1 B1 W1 (F0 while
// micro-batches remain); cool-down: r pairs B0 B1, p - r pairs B0 W0, then the deferred W of
// chunk 1, then of chunk 0. The order is built for max(2p - 1, m) micro-batches and the passes
// of those past m dropped, as both implementations do: the zero bubble needs m >= 2p - 1.
std::vector<ScheduleItem> ZbV(int64_t pp, int64_t m, int64_t r) {
  const int64_t n = std::max(2 * pp - 1, m);
  std::vector<ScheduleItem> o;
  std::array<int64_t, 2> f{0, 0}, b{0, 0}, w{0, 0};
  const auto put = [&](Phase p, int c, std::array<int64_t, 2>& count) {
    const int64_t k = count[static_cast<size_t>(c)]++;
    if (k < m) o.push_back(Item(p, c, k));
  };
  for (int64_t i = 0; i < 2 * (pp - r) - 1; ++i) put(Phase::kForward, 0, f);
  for (int64_t i = 0; i < r; ++i) {
    put(Phase::kForward, 1, f);
    put(Phase::kForward, 0, f);
  }
  for (int64_t i = 0; i < pp - r; ++i) {
    put(Phase::kForward, 1, f);
    put(Phase::kInput, 1, b);
    put(Phase::kWeight, 1, w);
  }
  while (f[1] < f[0] || f[0] < n) {
    if (f[0] < n) put(Phase::kForward, 0, f);
    put(Phase::kInput, 0, b);
    put(Phase::kWeight, 0, w);
    put(Phase::kForward, 1, f);
    put(Phase::kInput, 1, b);
    put(Phase::kWeight, 1, w);
  }
  for (int64_t i = 0; i < r; ++i) {
    put(Phase::kInput, 0, b);
    put(Phase::kInput, 1, b);
  }
  for (int64_t i = 0; i < pp - r; ++i) {
    put(Phase::kInput, 0, b);
    put(Phase::kWeight, 0, w);
  }
  while (w[1] < b[1]) put(Phase::kWeight, 1, w);
  while (w[0] < b[0]) put(Phase::kWeight, 0, w);
  return o;
}

// DualPipe and DualPipeV as deepseek-ai/DualPipe's step() runs them on `rank`, in its eight
// steps. A schedule "phase" p is chunk p on DualPipe's first half of ranks and chunk 1 - p on its
// second half (phase ^= is_in_second_half); DualPipeV's phase is its chunk. Micro-batches are
// counted per chunk (DualPipe numbers the reverse stream's m/2 after the forward stream's m/2);
// a backward with zero bubble enabled is a B whose W joins a FIFO that each W step pops
// (WeightGradStore). Paired forward/backward chunks (_forward_backward_chunk) run F then B as
// one unit (ScheduleItem::paired on the B).
std::vector<ScheduleItem> DualPipeOrder(int64_t pp, int64_t m, int64_t rank, bool v_shape) {
  const int64_t half = v_shape ? pp : pp / 2;  // num_half_ranks (DualPipeV: num_ranks)
  const int64_t h = v_shape ? rank : std::min(rank, pp - 1 - rank);  // half_rank (or rank)
  const int64_t per_stream = v_shape ? m : m / 2;                    // half_num_chunks
  const int flip = !v_shape && rank >= pp / 2 ? 1 : 0;
  std::vector<ScheduleItem> o;
  std::array<int64_t, 2> f{0, 0}, b{0, 0};
  std::deque<ScheduleItem> deferred;
  const auto chunk_of = [&](int phase) { return phase ^ flip; };
  const auto mb_of = [&](int c, int64_t k) { return v_shape ? k : c * per_stream + k; };
  const auto fwd = [&](int phase) {
    const int c = chunk_of(phase);
    o.push_back(Item(Phase::kForward, c, mb_of(c, f[static_cast<size_t>(c)]++)));
  };
  const auto bwd = [&](int phase, bool zero_bubble) {
    const int c = chunk_of(phase);
    const int64_t k = mb_of(c, b[static_cast<size_t>(c)]++);
    o.push_back(Item(zero_bubble ? Phase::kInput : Phase::kBackward, c, k));
    if (zero_bubble) deferred.push_back(Item(Phase::kWeight, c, k));
  };
  const auto weight = [&] {
    o.push_back(deferred.front());
    deferred.pop_front();
  };
  // _forward_backward_chunk(f, b): F then the whole backward, one unit.
  const auto pair = [&](int f_phase, int b_phase) {
    fwd(f_phase);
    bwd(b_phase, false);
    o.back().paired = true;
  };
  for (int64_t i = 0; i < (half - h - 1) * 2; ++i) fwd(0);  // step 1: nF0
  for (int64_t i = 0; i < h + 1; ++i) {                     // step 2: nF0F1
    fwd(0);
    fwd(1);
  }
  for (int64_t i = 0; i < half - h - 1; ++i) {  // step 3: nB1W1F1 (zero bubble)
    bwd(1, true);
    weight();
    fwd(1);
  }
  for (int64_t i = 0; i < per_stream - 2 * half + h + 1; ++i) {  // step 4: nF0B1F1B0
    if (i == 0 && h == half - 1) {
      // The middle ranks (DualPipeV: the last) do not pair their first F0 B1 ("to further
      // reduce bubble size").
      fwd(0);
      bwd(1, false);
    } else {
      pair(0, 1);
    }
    pair(1, 0);
  }
  for (int64_t i = 0; i < half - h - 1; ++i) {  // step 5: nB1F1B0
    bwd(1, false);
    pair(1, 0);
  }
  bool zero_bubble = false;  // step 6: nB1B0, the second half with zero bubble
  for (int64_t i = 0; i < h + 1; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) zero_bubble = true;
    bwd(1, zero_bubble);
    if (i == (h + 1) / 2 && h % 2 == 0) zero_bubble = true;
    bwd(0, zero_bubble);
  }
  for (int64_t i = 0; i < half - h - 1; ++i) {  // step 7: nWB0 (zero bubble)
    weight();
    bwd(0, true);
  }
  while (!deferred.empty()) weight();  // step 8: nW
  return o;
}

}  // namespace

StageHop NextHop(const ScheduleShape& s, int64_t r, int32_t chunk, bool forward) {
  const int64_t p = s.pp;
  StageHop h;
  const auto to = [&](int64_t rank, int64_t c, bool via_next) {
    h.exists = true;
    h.rank = rank;
    h.chunk = static_cast<int32_t>(c);
    h.via_next = via_next;
    return h;
  };
  switch (s.schedule) {
    case PipelineSchedule::kDualPipe:
      // Chunk 0: the stream from rank 0 to p-1; chunk 1: from p-1 to 0.
      if (chunk == 0) {
        if (forward) return r < p - 1 ? to(r + 1, 0, true) : h;
        return r > 0 ? to(r - 1, 0, false) : h;
      }
      if (forward) return r > 0 ? to(r - 1, 1, false) : h;
      return r < p - 1 ? to(r + 1, 1, true) : h;
    case PipelineSchedule::kZbV:
    case PipelineSchedule::kDualPipeV:
      // Down the ranks on chunk 0, back up on chunk 1, turning on rank p-1.
      if (chunk == 0) {
        if (forward) return r < p - 1 ? to(r + 1, 0, true) : to(r, 1, true);
        return r > 0 ? to(r - 1, 0, false) : h;
      }
      if (forward) return r > 0 ? to(r - 1, 1, false) : h;
      return r < p - 1 ? to(r + 1, 1, true) : to(r, 0, true);
    default: {
      // Chunks in a loop: rank p-1's chunk c feeds rank 0's chunk c + 1 (interleaved).
      const int64_t v = Chunks(s);
      if (forward) {
        if (r < p - 1) return to(r + 1, chunk, true);
        return chunk < v - 1 ? to(0, chunk + 1, true) : h;
      }
      if (r > 0) return to(r - 1, chunk, false);
      return chunk > 0 ? to(p - 1, chunk - 1, false) : h;
    }
  }
}

ScheduleShape ShapeOf(const ParallelSpec& parallel, int64_t microbatches) {
  return ScheduleShape{parallel.schedule, parallel.pp, parallel.ChunksPerRank(), microbatches,
                       parallel.microbatch_group_size_per_vp_stage};
}

int64_t MicrobatchGroup(const ScheduleShape& s) {
  return s.microbatch_group > 0 ? s.microbatch_group : s.pp;
}

bool SplitsBackward(PipelineSchedule schedule) {
  switch (schedule) {
    case PipelineSchedule::kGpipe:
    case PipelineSchedule::k1F1B:
    case PipelineSchedule::kInterleaved1F1B:
      return false;
    case PipelineSchedule::kZbH1:
    case PipelineSchedule::kZbH2:
    case PipelineSchedule::kZbV:
    case PipelineSchedule::kDualPipe:
    case PipelineSchedule::kDualPipeV:
      return true;
  }
  return false;
}

int64_t WarmupCount(const ScheduleShape& s, int64_t rank) {
  const int64_t v = Chunks(s);
  const int64_t m = s.microbatches;
  const int64_t p = s.pp;
  const int64_t total = m * v;
  // The split schedules' counts are their orders': none where PipelineOrder fails.
  if (SplitsBackward(s.schedule) && (p <= 0 || m <= 0 || rank < 0 || rank >= p)) return 0;
  switch (s.schedule) {
    case PipelineSchedule::kGpipe:
      return m;
    case PipelineSchedule::k1F1B:
      return std::min(p - rank - 1, m);
    case PipelineSchedule::kInterleaved1F1B:
      if (m == p) return total;  // Megatron: all warm-up when m == p
      return std::min((p - rank - 1) * 2 + (v - 1) * MicrobatchGroup(s), total);
    // The zero-bubble and DualPipe schedules: the forwards before the first B (or backward) of
    // the order, in closed form (tests/schedule/schedule_test.cc holds each equal to the count
    // over the built order on a grid of pp, m and every rank).
    case PipelineSchedule::kZbH1:
      // ZbH1: min(p - r - 1, m) warm-up forwards, then (micro-batches left) one more before B.
      return std::min(p - rank, m);
    case PipelineSchedule::kZbH2:
      // Greedy on unit costs: stage r runs F_k at time r + k until its first B is ready,
      // B_0 reaching it from stage p-1 (forward done at time p) at time 2p - 1 - r; the memory
      // limit 2p is not reached before (2p - 1 - 2r < 2p), so 2p - 1 - 2r forwards, or all m.
      return std::min(2 * p - 1 - 2 * rank, m);
    case PipelineSchedule::kZbV:
      // ZbV: 2(p - r) - 1 chunk-0 forwards, r pairs F1 F0, then F1 B1: 2p - r - 1 chunk-0 and
      // r + 1 chunk-1 forwards attempted, those past m dropped.
      if (p < 2) return 0;
      return std::min(2 * p - rank - 1, m) + std::min(rank + 1, m);
    case PipelineSchedule::kDualPipe:
    case PipelineSchedule::kDualPipeV: {
      const bool v_shape = s.schedule == PipelineSchedule::kDualPipeV;
      if ((!v_shape && (p % 2 != 0 || m % 2 != 0)) || m < 2 * p) return 0;
      // DualPipeOrder: steps 1 and 2 run 2(half - h - 1) + 2(h + 1) forwards; step 3 opens
      // with a B, unless it is empty (h = half - 1), when step 4's first F0 comes before it.
      const int64_t half = v_shape ? p : p / 2;
      const int64_t h = v_shape ? rank : std::min(rank, p - 1 - rank);
      return 2 * half + (h == half - 1 ? 1 : 0);
    }
  }
  return 0;
}

Result<std::vector<ScheduleItem>> PipelineOrder(const ScheduleShape& s, int64_t rank) {
  if (s.pp <= 0 || s.microbatches <= 0 || rank < 0 || rank >= s.pp) {
    return Status::Invalid("pipeline order: bad shape (pp " + std::to_string(s.pp) +
                           ", micro-batches " + std::to_string(s.microbatches) + ", rank " +
                           std::to_string(rank) + ")");
  }
  const int64_t v = Chunks(s);
  switch (s.schedule) {
    case PipelineSchedule::kZbH1:
      return ZbH1(s.pp, s.microbatches, rank);
    case PipelineSchedule::kZbH2:
      return std::move(Greedy(s.pp, s.microbatches, 2 * s.pp)[static_cast<size_t>(rank)]);
    case PipelineSchedule::kDualPipe:
    case PipelineSchedule::kDualPipeV: {
      const bool v_shape = s.schedule == PipelineSchedule::kDualPipeV;
      if ((!v_shape && (s.pp % 2 != 0 || s.microbatches % 2 != 0)) || s.microbatches < 2 * s.pp) {
        return Status::Invalid(std::string(Name(s.schedule)) +
                               (v_shape ? ""
                                        : " needs an even pp and an even number of "
                                          "micro-batches, and") +
                               " needs at least 2*pp micro-batches per step (pp " +
                               std::to_string(s.pp) + ", micro-batches " +
                               std::to_string(s.microbatches) + ")");
      }
      return DualPipeOrder(s.pp, s.microbatches, rank, v_shape);
    }
    case PipelineSchedule::kZbV:
      if (s.pp < 2) {
        return Status::Invalid("zb_v needs pp >= 2 (pp " + std::to_string(s.pp) + ")");
      }
      return ZbV(s.pp, s.microbatches, rank);
    default:
      break;
  }
  std::vector<ScheduleItem> order;
  order.reserve(static_cast<size_t>(2 * s.microbatches * v));
  const auto item = Item;
  if (s.schedule == PipelineSchedule::kGpipe) {
    for (int64_t i = 0; i < s.microbatches; ++i) order.push_back(item(Phase::kForward, 0, i));
    for (int64_t i = 0; i < s.microbatches; ++i) order.push_back(item(Phase::kBackward, 0, i));
    return order;
  }
  if (s.schedule == PipelineSchedule::k1F1B) {
    const int64_t warmup = WarmupCount(s, rank);
    const int64_t remaining = s.microbatches - warmup;
    for (int64_t i = 0; i < warmup; ++i) order.push_back(item(Phase::kForward, 0, i));
    for (int64_t i = 0; i < remaining; ++i) {
      order.push_back(item(Phase::kForward, 0, warmup + i));
      order.push_back(item(Phase::kBackward, 0, i));
    }
    for (int64_t i = remaining; i < s.microbatches; ++i) {
      order.push_back(item(Phase::kBackward, 0, i));
    }
    return order;
  }
  const int64_t n = MicrobatchGroup(s);
  if (s.microbatch_group <= 0 && s.microbatches % s.pp != 0) {
    return Status::Invalid("interleaved 1F1B needs micro-batches per step (" +
                           std::to_string(s.microbatches) + ") divisible by pp (" +
                           std::to_string(s.pp) + ")");
  }
  if (FitMicrobatchGroup(s.pp, s.microbatches, n) != GroupFit::kFits) {
    return Status::Invalid(
        "interleaved 1F1B with " + std::to_string(n) + " micro-batches per chunk group needs pp (" +
        std::to_string(s.pp) + ") <= it <= the micro-batches per step (" +
        std::to_string(s.microbatches) + "), which it divides or leaves at least pp over");
  }
  const int64_t total = s.microbatches * v;
  const int64_t warmup = WarmupCount(s, rank);
  const int64_t remaining = total - warmup;
  for (int64_t k = 0; k < warmup; ++k) {
    order.push_back(InterleavedItem(k, s.microbatches, v, n, true));
  }
  for (int64_t k = 0; k < remaining; ++k) {
    order.push_back(InterleavedItem(warmup + k, s.microbatches, v, n, true));
    order.push_back(InterleavedItem(k, s.microbatches, v, n, false));
  }
  for (int64_t k = remaining; k < total; ++k) {
    order.push_back(InterleavedItem(k, s.microbatches, v, n, false));
  }
  return order;
}

Result<std::vector<std::vector<ScheduleItem>>> PipelineOrders(const ScheduleShape& s) {
  if (s.schedule == PipelineSchedule::kZbH2 && s.pp > 0 && s.microbatches > 0) {
    return Greedy(s.pp, s.microbatches, 2 * s.pp);
  }
  std::vector<std::vector<ScheduleItem>> out;
  for (int64_t r = 0; r < s.pp; ++r) {
    Result<std::vector<ScheduleItem>> order = PipelineOrder(s, r);
    if (!order.ok()) return order.status();
    out.push_back(std::move(*order));
  }
  return out;
}

Result<std::shared_ptr<const OrderCache::Orders>> OrderCache::Get(const ScheduleShape& s) {
  // Chunks(s): the virtual stages count only under the interleaved schedule.
  const Key key{s.schedule, s.pp, Chunks(s), s.microbatches, Group(s)};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = orders_.find(key);
    if (it != orders_.end()) return it->second;
  }
  Result<Orders> built = PipelineOrders(s);
  if (!built.ok()) return built.status();
  int64_t items = 0;
  for (const std::vector<ScheduleItem>& o : *built) items += static_cast<int64_t>(o.size());
  auto orders = std::make_shared<const Orders>(std::move(*built));
  std::lock_guard<std::mutex> lock(mu_);
  if (items_ + items > kMaxItems) return orders;
  auto [it, inserted] = orders_.emplace(key, std::move(orders));
  if (inserted) items_ += items;
  return it->second;
}

Result<std::shared_ptr<const std::vector<ScheduleItem>>> OrderCache::GetRank(const ScheduleShape& s,
                                                                             int64_t rank) {
  const RankKey key{s.schedule, s.pp, Chunks(s), s.microbatches, Group(s), rank};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = rank_orders_.find(key);
    if (it != rank_orders_.end()) return it->second;
  }
  Result<std::vector<ScheduleItem>> built = PipelineOrder(s, rank);
  if (!built.ok()) return built.status();
  const int64_t items = static_cast<int64_t>(built->size());
  auto order = std::make_shared<const std::vector<ScheduleItem>>(std::move(*built));
  std::lock_guard<std::mutex> lock(mu_);
  if (items_ + items > kMaxItems) return order;
  auto [it, inserted] = rank_orders_.emplace(key, std::move(order));
  if (inserted) items_ += items;
  return it->second;
}

}  // namespace shardsim
