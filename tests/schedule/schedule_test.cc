#include "sim/schedule/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace shardsim {
namespace {

std::string Render(const std::vector<ScheduleItem>& order) {
  std::string s;
  for (const ScheduleItem& it : order) {
    if (!s.empty()) s += " ";
    s += (it.phase == Phase::kForward  ? "F"
          : it.phase == Phase::kWeight ? "W"
                                       : "B") +
         std::to_string(it.microbatch);
    if (it.chunk > 0) s += "." + std::to_string(it.chunk);
  }
  return s;
}

// Walks one rank's order, checking each (chunk, micro-batch) runs F, then B (the input gradient,
// or the whole backward), then W at most once each in that order, and counts the activations held:
// +1 at each F, -1 at each whole backward, and at each W (`frees_at_weight`) or else each B.
struct PassCount {
  size_t forwards = 0, backwards = 0, weights = 0;
  int64_t peak_live = 0;
};
PassCount CountPasses(const std::vector<ScheduleItem>& order, bool frees_at_weight) {
  std::set<std::pair<int, int>> f, b, w;
  int64_t live = 0;
  PassCount n;
  for (const ScheduleItem& it : order) {
    const auto key = std::make_pair(static_cast<int>(it.chunk), static_cast<int>(it.microbatch));
    if (it.phase == Phase::kForward) {
      EXPECT_TRUE(f.insert(key).second) << "forward twice";
      ++live;
    } else if (it.phase == Phase::kWeight) {
      EXPECT_TRUE(b.count(key) == 1 && w.insert(key).second) << "W before B, or twice";
    } else {
      EXPECT_TRUE(f.count(key) == 1 && b.insert(key).second) << "backward before forward, or twice";
    }
    const bool frees = it.phase == Phase::kBackward ||
                       it.phase == (frees_at_weight ? Phase::kWeight : Phase::kInput);
    if (frees) --live;
    n.peak_live = std::max(n.peak_live, live);
  }
  n.forwards = f.size();
  n.backwards = b.size();
  n.weights = w.size();
  return n;
}

// Narayanan 2021 Figure 4 (top): 1F1B with 4 stages and 8 micro-batches.
TEST(PipelineOrder, OneFOneBMatchesMegatron) {
  ScheduleShape s{PipelineSchedule::k1F1B, 4, 1, 8};
  EXPECT_EQ(Render(*PipelineOrder(s, 0)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(Render(*PipelineOrder(s, 3)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
  EXPECT_EQ(Render(*PipelineOrder(s, 1)), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7");
}

// ZB-H1, p = 4, m = 8, as the zero-bubble authors' handcrafted schedule orders it
// (sail-sg/zero-bubble-pipeline-parallelism, zbpp_light auto_schedule.py): 1F1B's warm-up and
// steady state, stage r deferring its first r W passes to the end.
TEST(PipelineOrder, ZbH1MatchesTheAuthorsSchedule) {
  ScheduleShape s{PipelineSchedule::kZbH1, 4, 1, 8};
  EXPECT_EQ(Render(*PipelineOrder(s, 0)),
            "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 B5 W5 B6 W6 B7 W7");
  EXPECT_EQ(Render(*PipelineOrder(s, 1)),
            "F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 F6 B4 W3 F7 B5 W4 B6 W5 B7 W6 W7");
  EXPECT_EQ(Render(*PipelineOrder(s, 2)),
            "F0 F1 B0 F2 B1 F3 B2 W0 F4 B3 W1 F5 B4 W2 F6 B5 W3 F7 B6 W4 B7 W5 W6 W7");
  EXPECT_EQ(Render(*PipelineOrder(s, 3)),
            "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7");
  EXPECT_EQ(WarmupCount(s, 0), 4);
  EXPECT_EQ(WarmupCount(s, 3), 1);
}

// ZB-H2, p = 4, m = 8: the heuristic scheduler on unit costs with 2p = 8 micro-batches past F
// and not through W; stage 0 runs 2p - 1 = 7 forwards before its first B (the paper's Figure 4
// shape: more warm-up forwards, W passes at the tail).
TEST(PipelineOrder, ZbH2IsTheHeuristicAtTwicePMemory) {
  ScheduleShape s{PipelineSchedule::kZbH2, 4, 1, 8};
  EXPECT_EQ(Render(*PipelineOrder(s, 0)),
            "F0 F1 F2 F3 F4 F5 F6 B0 F7 B1 W0 B2 W1 B3 W2 B4 W3 B5 W4 B6 W5 B7 W6 W7");
  EXPECT_EQ(Render(*PipelineOrder(s, 1)),
            "F0 F1 F2 F3 F4 B0 F5 B1 F6 B2 F7 B3 W0 B4 W1 B5 W2 B6 W3 B7 W4 W5 W6 W7");
  EXPECT_EQ(Render(*PipelineOrder(s, 2)),
            "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 W0 B6 W1 B7 W2 W3 W4 W5 W6 W7");
  EXPECT_EQ(Render(*PipelineOrder(s, 3)),
            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7 W0 W1 W2 W3 W4 W5 W6 W7");
  // PipelineOrders builds every rank's at once, the same.
  auto all = PipelineOrders(s);
  ASSERT_TRUE(all.ok());
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(Render((*all)[static_cast<size_t>(r)]), Render(*PipelineOrder(s, r)));
  }
}

// Micro-batches past F but not through W, at the peak of each rank's order: ZB-H1 holds p on
// every stage (1F1B's first stage), ZB-H2 at most 2p; every pass runs once, F before B before W.
TEST(PipelineOrder, ZeroBubbleInFlightAndPassesOnce) {
  for (auto sched : {PipelineSchedule::kZbH1, PipelineSchedule::kZbH2}) {
    for (int64_t p : {1, 2, 4, 8}) {
      for (int64_t m : {1, 3, 8, 16, 24}) {
        ScheduleShape s{sched, p, 1, m};
        for (int64_t r = 0; r < p; ++r) {
          auto order = PipelineOrder(s, r);
          ASSERT_TRUE(order.ok());
          ASSERT_EQ(order->size(), static_cast<size_t>(3 * m));
          std::vector<int> stage(static_cast<size_t>(m), 0);  // 0 none, 1 F, 2 B, 3 W done
          int64_t live = 0, peak = 0;
          for (const ScheduleItem& it : *order) {
            int& st = stage[static_cast<size_t>(it.microbatch)];
            const int want = it.phase == Phase::kForward ? 0 : it.phase == Phase::kInput ? 1 : 2;
            EXPECT_EQ(st, want) << Name(sched) << " p " << p << " m " << m << " r " << r;
            st = want + 1;
            live += it.phase == Phase::kForward ? 1 : it.phase == Phase::kWeight ? -1 : 0;
            peak = std::max(peak, live);
          }
          const int64_t bound = sched == PipelineSchedule::kZbH1 ? p : 2 * p;
          EXPECT_LE(peak, std::min(bound, m)) << Name(sched) << " p " << p << " m " << m;
          if (sched == PipelineSchedule::kZbH1) {
            EXPECT_EQ(peak, std::min(p, m));
          }
        }
      }
    }
  }
}

// Split-backward rendering: a whole backward BW, its input-gradient half B, its weight half W.
std::string RenderSplit(const std::vector<ScheduleItem>& order) {
  std::string s;
  for (const ScheduleItem& it : order) {
    if (!s.empty()) s += " ";
    const char* p = it.phase == Phase::kForward    ? "F"
                    : it.phase == Phase::kBackward ? "BW"
                    : it.phase == Phase::kInput    ? "B"
                                                   : "W";
    s += p + std::to_string(it.microbatch);
    if (it.chunk > 0) s += "." + std::to_string(it.chunk);
  }
  return s;
}

// DualPipe, p = 4, m = 8, as deepseek-ai/DualPipe's step() runs it: micro-batches 0-3 enter at
// rank 0 on chunk 0, 4-7 at rank 3 on chunk 1 (rank 3 is in the second half: its phase 0 is
// chunk 1); steps nF0, nF0F1, nB1W1F1, nF0B1F1B0, nB1F1B0, nB1B0, nWB0, nW.
TEST(PipelineOrder, DualPipeMatchesDeepSeek) {
  ScheduleShape s{PipelineSchedule::kDualPipe, 4, 2, 8};
  EXPECT_EQ(RenderSplit(*PipelineOrder(s, 0)),
            "F0 F1 F2 F4.1 B4.1 W4.1 F5.1 F3 BW5.1 F6.1 BW0 BW6.1 F7.1 BW1 BW7.1 B2 W2 B3 W3");
  EXPECT_EQ(RenderSplit(*PipelineOrder(s, 1)),
            "F0 F4.1 F1 F5.1 F2 BW4.1 F6.1 BW0 F3 BW5.1 F7.1 BW1 BW6.1 BW2 B7.1 B3 W7.1 W3");
  EXPECT_EQ(RenderSplit(*PipelineOrder(s, 3)),
            "F4.1 F5.1 F6.1 F0 B0 W0 F1 F7.1 BW1 F2 BW4.1 BW2 F3 BW5.1 BW3 B6.1 W6.1 B7.1 W7.1");
  // The _forward_backward_chunk pairs, marked on their backward: rank 0 pairs F3 BW5.1 and
  // F6.1 BW0 (step 4) and F7.1 BW1 (step 5); rank 1, a middle rank, runs its first F2 BW4.1
  // apart ("to further reduce bubble size") and pairs F6.1 BW0, F3 BW5.1, F7.1 BW1.
  const auto paired = [&](int64_t rank) {
    std::string out;
    const std::vector<ScheduleItem> o = *PipelineOrder(s, rank);
    for (size_t i = 1; i < o.size(); ++i) {
      if (!o[i].paired) continue;
      out += (out.empty() ? "" : " ") + RenderSplit({o[i - 1]}) + "+" + RenderSplit({o[i]});
    }
    return out;
  };
  EXPECT_EQ(paired(0), "F3+BW5.1 F6.1+BW0 F7.1+BW1");
  EXPECT_EQ(paired(1), "F6.1+BW0 F3+BW5.1 F7.1+BW1");
  // Refused where DualPipe's implementation asserts: odd pp, odd or too few micro-batches.
  EXPECT_FALSE(PipelineOrder(ScheduleShape{PipelineSchedule::kDualPipe, 3, 2, 12}, 0).ok());
  EXPECT_FALSE(PipelineOrder(ScheduleShape{PipelineSchedule::kDualPipe, 4, 2, 9}, 0).ok());
  EXPECT_FALSE(PipelineOrder(ScheduleShape{PipelineSchedule::kDualPipe, 4, 2, 6}, 0).ok());
}

// DualPipeV, p = 4, m = 8 (dualpipev.py): one stream down chunk 0 and back up chunk 1.
TEST(PipelineOrder, DualPipeVMatchesDeepSeek) {
  ScheduleShape s{PipelineSchedule::kDualPipeV, 4, 2, 8};
  EXPECT_EQ(RenderSplit(*PipelineOrder(s, 0)),
            "F0 F1 F2 F3 F4 F5 F6 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 F2.1 B2.1 W2.1 F3.1 F7 BW3.1 "
            "F4.1 BW0 BW4.1 F5.1 BW1 BW5.1 F6.1 BW2 BW6.1 F7.1 BW3 BW7.1 B4 W4 B5 W5 B6 W6 B7 W7");
  EXPECT_EQ(RenderSplit(*PipelineOrder(s, 3)),
            "F0 F0.1 F1 F1.1 F2 F2.1 F3 F3.1 F4 BW0.1 F4.1 BW0 F5 BW1.1 F5.1 BW1 F6 BW2.1 F6.1 "
            "BW2 F7 BW3.1 F7.1 BW3 BW4.1 BW4 BW5.1 BW5 B6.1 B6 B7.1 B7 W6.1 W6 W7.1 W7");
}

// ZB-V, p = 4, m = 8, as the zero-bubble authors' handcrafted V schedule orders it
// (sail-sg/zero-bubble-pipeline-parallelism handcrafted_zb_v; PyTorch's ScheduleZBVZeroBubble):
// chunk 0 is stage r, chunk 1 stage 7 - r. Warm-up 2(p - r) - 1 F0, r F1 F0, p - r F1 B1 W1;
// steady F0 B0 W0 F1 B1 W1; cool-down r B0 B1, p - r B0 W0, then the deferred W1, then W0.
TEST(PipelineOrder, ZbVMatchesTheAuthorsSchedule) {
  ScheduleShape s{PipelineSchedule::kZbV, 4, 2, 8};
  EXPECT_EQ(RenderSplit(*PipelineOrder(s, 0)),
            "F0 F1 F2 F3 F4 F5 F6 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 F2.1 B2.1 W2.1 F3.1 B3.1 W3.1 F7 "
            "B0 W0 F4.1 B4.1 W4.1 B1 W1 F5.1 B5.1 W5.1 B2 W2 F6.1 B6.1 W6.1 B3 W3 F7.1 B7.1 W7.1 "
            "B4 W4 B5 W5 B6 W6 B7 W7");
  EXPECT_EQ(RenderSplit(*PipelineOrder(s, 1)),
            "F0 F1 F2 F3 F4 F0.1 F5 F1.1 B0.1 W0.1 F2.1 B1.1 W1.1 F3.1 B2.1 W2.1 F6 B0 W0 F4.1 "
            "B3.1 W3.1 F7 B1 W1 F5.1 B4.1 W4.1 B2 W2 F6.1 B5.1 W5.1 B3 W3 F7.1 B6.1 W6.1 B4 B7.1 "
            "B5 W4 B6 W5 B7 W6 W7.1 W7");
  EXPECT_EQ(RenderSplit(*PipelineOrder(s, 2)),
            "F0 F1 F2 F0.1 F3 F1.1 F4 F2.1 B0.1 W0.1 F3.1 B1.1 W1.1 F5 B0 W0 F4.1 B2.1 W2.1 F6 B1 "
            "W1 F5.1 B3.1 W3.1 F7 B2 W2 F6.1 B4.1 W4.1 B3 W3 F7.1 B5.1 W5.1 B4 B6.1 B5 B7.1 B6 W4 "
            "B7 W5 W6.1 W7.1 W6 W7");
  EXPECT_EQ(RenderSplit(*PipelineOrder(s, 3)),
            "F0 F0.1 F1 F1.1 F2 F2.1 F3 F3.1 B0.1 W0.1 F4 B0 W0 F4.1 B1.1 W1.1 F5 B1 W1 F5.1 B2.1 "
            "W2.1 F6 B2 W2 F6.1 B3.1 W3.1 F7 B3 W3 F7.1 B4.1 W4.1 B4 B5.1 B5 B6.1 B6 B7.1 B7 W4 "
            "W5.1 W6.1 W7.1 W5 W6 W7");
  EXPECT_EQ(WarmupCount(s, 0), 8);  // 2p - 1 chunk-0 forwards and the turn's first F1
  EXPECT_FALSE(PipelineOrder(ScheduleShape{PipelineSchedule::kZbV, 1, 2, 4}, 0).ok());
}

// ZB-V keeps 1F1B's activation memory (Qi et al. 2024 §6): every rank peaks at 2p chunk passes
// past F and not through W (p micro-batches of a whole stage, 1F1B's first stage); every pass
// runs once, F before B before W, for any m (the passes of micro-batches past m dropped).
TEST(PipelineOrder, ZbVHoldsOneFOneBMemoryAndPassesOnce) {
  for (int64_t p : {2, 4, 8}) {
    for (int64_t m : {2 * p - 1, 2 * p, 3 * p + 1, 6 * p}) {
      ScheduleShape s{PipelineSchedule::kZbV, p, 2, m};
      for (int64_t r = 0; r < p; ++r) {
        auto order = PipelineOrder(s, r);
        ASSERT_TRUE(order.ok());
        ASSERT_EQ(order->size(), static_cast<size_t>(6 * m));
        const PassCount n = CountPasses(*order, /*frees_at_weight=*/true);
        EXPECT_EQ(n.weights, static_cast<size_t>(2 * m));
        EXPECT_EQ(n.peak_live, 2 * p) << "p " << p << " m " << m << " rank " << r;
      }
    }
  }
}

// DeepSeek-V3 Table 2: DualPipe holds pp + 1 micro-batches' activations (each a chunk's: one
// stage of its stream) on every rank; every pass runs once, F before B before W.
TEST(PipelineOrder, DualPipeHoldsPpPlusOneMicrobatches) {
  for (int64_t p : {2, 4, 8, 16}) {
    for (int64_t m : {2 * p, 2 * p + 2, 6 * p}) {
      ScheduleShape s{PipelineSchedule::kDualPipe, p, 2, m};
      for (int64_t r = 0; r < p; ++r) {
        auto order = PipelineOrder(s, r);
        ASSERT_TRUE(order.ok()) << order.status().ToString();
        // A B frees all but what its W holds.
        const PassCount n = CountPasses(*order, /*frees_at_weight=*/false);
        EXPECT_EQ(n.forwards, static_cast<size_t>(m / 2 + m / 2));
        EXPECT_EQ(n.backwards, n.forwards);
        EXPECT_EQ(n.peak_live, p + 1) << "p " << p << " m " << m << " rank " << r;
      }
    }
  }
}

TEST(PipelineOrder, GpipeRunsAllForwardsFirst) {
  ScheduleShape s{PipelineSchedule::kGpipe, 2, 1, 3};
  EXPECT_EQ(Render(*PipelineOrder(s, 1)), "F0 F1 F2 B0 B1 B2");
}

// Interleaved, p = 2, v = 2, m = 4: rank 0 warms up with (2-0-1)*2 + (2-1)*2 = 4 chunk
// forwards: micro-batches 0,1 on chunk 0, then 0,1 on chunk 1; backwards start on the last chunk.
TEST(PipelineOrder, InterleavedMatchesMegatron) {
  ScheduleShape s{PipelineSchedule::kInterleaved1F1B, 2, 2, 4};
  EXPECT_EQ(WarmupCount(s, 0), 4);
  EXPECT_EQ(WarmupCount(s, 1), 2);
  EXPECT_EQ(Render(*PipelineOrder(s, 0)),
            "F0 F1 F0.1 F1.1 F2 B0.1 F3 B1.1 F2.1 B0 F3.1 B1 B2.1 B3.1 B2 B3");
  EXPECT_EQ(Render(*PipelineOrder(s, 1)),
            "F0 F1 F0.1 B0.1 F1.1 B1.1 F2 B0 F3 B1 F2.1 B2.1 F3.1 B3.1 B2 B3");
}

// Every (chunk, micro-batch) runs forward once and backward once, forward first.
TEST(PipelineOrder, EveryPassExactlyOnce) {
  for (auto sched :
       {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B, PipelineSchedule::kInterleaved1F1B}) {
    for (int64_t p : {1, 2, 4, 8}) {
      for (int64_t m : {8, 16, 24}) {
        const int64_t v = sched == PipelineSchedule::kInterleaved1F1B ? 3 : 1;
        ScheduleShape s{sched, p, v, m};
        for (int64_t r = 0; r < p; ++r) {
          auto order = PipelineOrder(s, r);
          ASSERT_TRUE(order.ok());
          ASSERT_EQ(order->size(), static_cast<size_t>(2 * m * v));
          const PassCount n = CountPasses(*order, /*frees_at_weight=*/false);
          EXPECT_EQ(n.forwards, static_cast<size_t>(m * v));
          EXPECT_EQ(n.backwards, n.forwards);
        }
      }
    }
  }
}

// Megatron-Core's tunable group (microbatch_group_size_per_vp_stage, N): its own example in
// schedules.py (PP2 N3 M5 VP2: micro-batches 0 1 2 0 1 2 3 4 3 4 on chunks 0 0 0 1 1 1 0 0 1 1),
// with get_pp_rank_microbatches' warm-up (pp - r - 1)·2 + (v - 1)·N: 5 on rank 0, 3 on rank 1.
TEST(PipelineOrder, InterleavedGroupsMatchMegatronsTable) {
  const ScheduleShape s{PipelineSchedule::kInterleaved1F1B, 2, 2, 5, 3};
  EXPECT_EQ(WarmupCount(s, 0), 5);
  EXPECT_EQ(WarmupCount(s, 1), 3);
  EXPECT_EQ(Render(*PipelineOrder(s, 0)),
            "F0 F1 F2 F0.1 F1.1 F2.1 B0.1 F3 B1.1 F4 B2.1 F3.1 B0 F4.1 B1 B2 B3.1 B4.1 B3 B4");
  EXPECT_EQ(Render(*PipelineOrder(s, 1)),
            "F0 F1 F2 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3 B0 F4 B1 F3.1 B2 F4.1 B3.1 B4.1 B3 B4");
}

// Whether every rank's order runs to its end when a pass waits for its inputs: a chunk-forward
// for the previous stage's (stage c·p + r of the interleaved pipeline), a backward for the next
// stage's backward (the last stage: its own forward). Rounds of "run each rank's next pass if it
// can" until nothing moves.
bool RunsToTheEnd(const std::vector<std::vector<ScheduleItem>>& orders, int64_t p, int64_t v) {
  std::set<std::tuple<bool, int64_t, int64_t>> done;  // (forward, stage, micro-batch)
  std::vector<size_t> next(orders.size(), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (size_t r = 0; r < orders.size(); ++r) {
      if (next[r] == orders[r].size()) continue;
      const ScheduleItem& it = orders[r][next[r]];
      const int64_t stage = it.chunk * p + static_cast<int64_t>(r);
      const bool forward = it.phase == Phase::kForward;
      const bool ready = forward ? stage == 0 || done.count({true, stage - 1, it.microbatch}) == 1
                         : stage == p * v - 1 ? done.count({true, stage, it.microbatch}) == 1
                                              : done.count({false, stage + 1, it.microbatch}) == 1;
      if (!ready) continue;
      done.insert({forward, stage, it.microbatch});
      ++next[r];
      moved = true;
    }
  }
  for (size_t r = 0; r < orders.size(); ++r) {
    if (next[r] != orders[r].size()) return false;
  }
  return true;
}

// Every group Megatron-LM accepts (pp <= N <= m, m mod N zero or at least pp) gives orders that
// run every pass once and to the end; N = pp is the default's order exactly.
TEST(PipelineOrder, InterleavedGroupsRunEveryPassOnceAndToTheEnd) {
  int64_t shapes = 0;
  for (int64_t p : {2, 3, 4}) {
    for (int64_t v : {2, 3}) {
      for (int64_t m = p; m <= 13; ++m) {
        for (int64_t n = p; n <= m; ++n) {
          if (m % n != 0 && m % n < p) continue;
          const ScheduleShape s{PipelineSchedule::kInterleaved1F1B, p, v, m, n};
          Result<std::vector<std::vector<ScheduleItem>>> orders = PipelineOrders(s);
          ASSERT_TRUE(orders.ok()) << orders.status().message();
          for (const std::vector<ScheduleItem>& o : *orders) {
            const PassCount c = CountPasses(o, /*frees_at_weight=*/false);
            EXPECT_EQ(c.forwards, static_cast<size_t>(m * v));
            EXPECT_EQ(c.backwards, c.forwards);
          }
          EXPECT_TRUE(RunsToTheEnd(*orders, p, v))
              << "p " << p << " v " << v << " m " << m << " N " << n;
          if (n == p) {
            const ScheduleShape plain{PipelineSchedule::kInterleaved1F1B, p, v, m};
            EXPECT_EQ(*PipelineOrders(plain), *orders);
          }
          ++shapes;
        }
      }
    }
  }
  EXPECT_GT(shapes, 100);
  // The check stalls where a pass comes before what it waits for: the last stage's first
  // backward moved ahead of its forward.
  Result<std::vector<std::vector<ScheduleItem>>> orders =
      PipelineOrders(ScheduleShape{PipelineSchedule::kInterleaved1F1B, 2, 2, 4});
  ASSERT_TRUE(orders.ok());
  std::vector<ScheduleItem>& last = (*orders)[1];
  const auto b = std::find_if(last.begin(), last.end(),
                              [](const ScheduleItem& it) { return it.phase == Phase::kBackward; });
  std::rotate(last.begin(), b, b + 1);
  EXPECT_FALSE(RunsToTheEnd(*orders, 2, 2));
}

TEST(PipelineOrder, InterleavedGroupsOutsideMegatronsRangeAreRefused) {
  // Below pp, above m, and a last group shorter than pp (10 = 7 + 3 with pp 4).
  for (int64_t n : {3, 11, 7}) {
    const ScheduleShape s{PipelineSchedule::kInterleaved1F1B, 4, 2, 10, n};
    Result<std::vector<ScheduleItem>> order = PipelineOrder(s, 0);
    ASSERT_FALSE(order.ok()) << n;
    EXPECT_EQ(order.status().message(),
              "interleaved 1F1B with " + std::to_string(n) +
                  " micro-batches per chunk group needs pp (4) <= it <= the micro-batches per "
                  "step (10), which it divides or leaves at least pp over");
  }
  // 10 = 6 + 4: the last group holds pp.
  EXPECT_TRUE(
      PipelineOrder(ScheduleShape{PipelineSchedule::kInterleaved1F1B, 4, 2, 10, 6}, 0).ok());
}

TEST(PipelineOrder, InterleavedNeedsMicrobatchesDivisibleByPp) {
  ScheduleShape s{PipelineSchedule::kInterleaved1F1B, 4, 2, 6};
  auto order = PipelineOrder(s, 0);
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().message(),
            "interleaved 1F1B needs micro-batches per step (6) divisible by pp (4)");
}

}  // namespace
}  // namespace shardsim

namespace shardsim {
namespace {

// The forwards at the head of `order`, before its first backward (B or whole).
int64_t LeadingForwards(const std::vector<ScheduleItem>& order) {
  int64_t n = 0;
  for (const ScheduleItem& it : order) {
    if (it.phase != Phase::kForward) break;
    ++n;
  }
  return n;
}

// WarmupCount's closed forms against the orders themselves, on every schedule, every rank of a
// grid of pp, chunks and micro-batch counts, valid shapes or not: a split schedule's count is the
// forwards before its order's first B (0 where no order is built); GPipe's, 1F1B's and the
// interleaved schedule's warm-up is followed by the steady state's first forward (unless the
// warm-up takes every forward).
TEST(WarmupCount, ClosedFormsEqualTheBuiltOrders) {
  int64_t checked = 0;
  for (auto sched :
       {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B, PipelineSchedule::kInterleaved1F1B,
        PipelineSchedule::kZbH1, PipelineSchedule::kZbH2, PipelineSchedule::kZbV,
        PipelineSchedule::kDualPipe, PipelineSchedule::kDualPipeV}) {
    for (int64_t p = 1; p <= 9; ++p) {
      for (int64_t v : {1, 2, 3, 5}) {
        if (v > 1 && sched != PipelineSchedule::kInterleaved1F1B) continue;
        for (int64_t m = 1; m <= 40; ++m) {
          const ScheduleShape s{sched, p, v, m};
          for (int64_t r = 0; r < p; ++r) {
            Result<std::vector<ScheduleItem>> order = PipelineOrder(s, r);
            const int64_t count = WarmupCount(s, r);
            if (!order.ok()) {
              if (SplitsBackward(sched)) {
                EXPECT_EQ(count, 0) << Name(sched) << " p" << p;
              }
              continue;
            }
            const int64_t lead = LeadingForwards(*order);
            const int64_t forwards = m * (sched == PipelineSchedule::kInterleaved1F1B ? v : 1);
            const int64_t expected =
                SplitsBackward(sched) || sched == PipelineSchedule::kGpipe
                    ? lead
                    : (lead == forwards && count >= forwards ? count : lead - 1);
            EXPECT_EQ(count, expected)
                << Name(sched) << " pp " << p << " v " << v << " m " << m << " rank " << r;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 5000);
}

// The split schedules' counts on the shapes of the tests above, by hand: ZB-H2 p = 4 runs
// 2p - 1 - 2r forwards first (7 5 3 1), ZB-V 2p - r - 1 chunk-0 and r + 1 chunk-1 ones.
TEST(WarmupCount, ZeroBubbleByHand) {
  const ScheduleShape h2{PipelineSchedule::kZbH2, 4, 1, 8};
  EXPECT_EQ(WarmupCount(h2, 0), 7);
  EXPECT_EQ(WarmupCount(h2, 1), 5);
  EXPECT_EQ(WarmupCount(h2, 2), 3);
  EXPECT_EQ(WarmupCount(h2, 3), 1);
  const ScheduleShape h2_short{PipelineSchedule::kZbH2, 4, 1, 2};
  EXPECT_EQ(WarmupCount(h2_short, 0), 2);  // all m
  const ScheduleShape zbv{PipelineSchedule::kZbV, 4, 1, 8};
  EXPECT_EQ(WarmupCount(zbv, 0), 8);
  EXPECT_EQ(WarmupCount(zbv, 3), 4 + 4);
  const ScheduleShape dualpipe{PipelineSchedule::kDualPipe, 4, 1, 7};  // odd m: no order
  EXPECT_EQ(WarmupCount(dualpipe, 0), 0);
}

}  // namespace
}  // namespace shardsim

namespace shardsim {
namespace {

// The zero-bubble heuristic as first written (sim/schedule/schedule.cc before it kept each
// stage's candidate in an ordered set): every stage scanned for each pass.
std::vector<std::vector<ScheduleItem>> ScanGreedy(int64_t pp, int64_t m, int64_t limit) {
  constexpr int64_t kUnset = -1;
  const auto at = [&](int64_t s, int64_t k) { return static_cast<size_t>(s * m + k); };
  std::vector<int64_t> f_end(static_cast<size_t>(pp * m), kUnset), b_end = f_end;
  std::vector<int64_t> t(static_cast<size_t>(pp), 0), f(t), b(t), w(t);
  std::vector<std::vector<ScheduleItem>> orders(static_cast<size_t>(pp));
  const auto u = [](int64_t s) { return static_cast<size_t>(s); };
  for (int64_t placed = 0; placed < 3 * pp * m; ++placed) {
    int64_t best_start = 0, best_stage = -1;
    Phase best_phase = Phase::kWeight;
    for (int64_t s = 0; s < pp; ++s) {
      if (w[u(s)] >= m) continue;
      int64_t start = -1;
      Phase phase = Phase::kWeight;
      const auto offer = [&](int64_t ready, Phase p) {
        const int64_t st = std::max(t[u(s)], ready);
        // Earliest start wins; at equal starts B before F before W (the enum's order is F B W).
        const auto rank_of = [](Phase x) {
          return x == Phase::kInput ? 0 : x == Phase::kForward ? 1 : 2;
        };
        if (start < 0 || st < start || (st == start && rank_of(p) < rank_of(phase))) {
          start = st;
          phase = p;
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
      if (start < 0) continue;
      if (best_stage < 0 || start < best_start) {
        best_start = start;
        best_stage = s;
        best_phase = phase;
      }
    }
    if (best_stage < 0) break;  // cannot happen: stage pp-1 can always make progress
    const size_t s = u(best_stage);
    t[s] = best_start + 1;
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
    orders[s].push_back(ScheduleItem{best_phase, 0, static_cast<int32_t>(k)});
  }
  return orders;
}

// ZB-H2's orders (the heuristic with candidates kept per stage) equal the scan over every stage
// on a grid of pp and m (the limit 2p).
TEST(PipelineOrder, ZbH2EqualsTheScanOverEveryStage) {
  for (int64_t p = 1; p <= 12; ++p) {
    for (int64_t m : {1, 2, 3, 5, 8, 13, 24, 40}) {
      Result<std::vector<std::vector<ScheduleItem>>> orders =
          PipelineOrders(ScheduleShape{PipelineSchedule::kZbH2, p, 1, m});
      ASSERT_TRUE(orders.ok());
      const std::vector<std::vector<ScheduleItem>> scan = ScanGreedy(p, m, 2 * p);
      ASSERT_EQ(orders->size(), scan.size());
      for (size_t r = 0; r < scan.size(); ++r) {
        EXPECT_EQ(Render((*orders)[r]), Render(scan[r]))
            << "pp " << p << " m " << m << " rank " << r;
      }
    }
  }
}

}  // namespace
}  // namespace shardsim

namespace shardsim {
namespace {

// The cache gives PipelineOrders' orders, stored once per shape (the virtual stages count only
// under the interleaved schedule), and PipelineOrders' error for a shape without orders.
TEST(OrderCache, GivesPipelineOrdersOncePerShape) {
  OrderCache cache;
  for (auto sched : {PipelineSchedule::kZbH1, PipelineSchedule::kZbH2, PipelineSchedule::kZbV,
                     PipelineSchedule::kDualPipe, PipelineSchedule::kDualPipeV,
                     PipelineSchedule::kInterleaved1F1B}) {
    const ScheduleShape shape{sched, 4, 2, 16};
    auto cached = cache.Get(shape);
    ASSERT_TRUE(cached.ok());
    auto built = PipelineOrders(shape);
    ASSERT_TRUE(built.ok());
    EXPECT_EQ(**cached, *built) << Name(sched);
    auto again = cache.Get(shape);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(cached->get(), again->get()) << "stored once";
  }
  auto zbv3 = cache.Get(ScheduleShape{PipelineSchedule::kZbV, 4, 3, 16});
  ASSERT_TRUE(zbv3.ok());
  EXPECT_EQ(**zbv3, *PipelineOrders(ScheduleShape{PipelineSchedule::kZbV, 4, 2, 16}));
  const ScheduleShape interleaved{PipelineSchedule::kInterleaved1F1B, 4, 3, 8};
  for (int64_t r = 0; r < 4; ++r) {
    auto one = cache.GetRank(interleaved, r);
    ASSERT_TRUE(one.ok());
    EXPECT_EQ(**one, *PipelineOrder(interleaved, r));
    EXPECT_EQ(one->get(), cache.GetRank(interleaved, r)->get()) << "stored once";
  }
  EXPECT_FALSE(cache.GetRank(ScheduleShape{PipelineSchedule::kInterleaved1F1B, 4, 3, 6}, 0).ok());
  auto odd = cache.Get(ScheduleShape{PipelineSchedule::kDualPipe, 4, 2, 15});
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(
      odd.status().message(),
      PipelineOrders(ScheduleShape{PipelineSchedule::kDualPipe, 4, 2, 15}).status().message());
}

}  // namespace
}  // namespace shardsim
