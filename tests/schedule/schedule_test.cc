#include "sim/schedule/schedule.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace shardsim {
namespace {

std::string Render(const std::vector<ScheduleItem>& order) {
  std::string s;
  for (const ScheduleItem& it : order) {
    if (!s.empty()) s += " ";
    s += (it.phase == Phase::kForward ? "F" : "B") + std::to_string(it.microbatch);
    if (it.chunk > 0) s += "." + std::to_string(it.chunk);
  }
  return s;
}

// Narayanan 2021 Figure 4 (top): 1F1B with 4 stages and 8 micro-batches.
TEST(PipelineOrder, OneFOneBMatchesMegatron) {
  ScheduleShape s{PipelineSchedule::k1F1B, 4, 1, 8};
  EXPECT_EQ(Render(*PipelineOrder(s, 0)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(Render(*PipelineOrder(s, 3)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
  EXPECT_EQ(Render(*PipelineOrder(s, 1)), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7");
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
  for (auto sched : {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B,
                     PipelineSchedule::kInterleaved1F1B}) {
    for (int64_t p : {1, 2, 4, 8}) {
      for (int64_t m : {8, 16, 24}) {
        const int64_t v = sched == PipelineSchedule::kInterleaved1F1B ? 3 : 1;
        ScheduleShape s{sched, p, v, m};
        for (int64_t r = 0; r < p; ++r) {
          auto order = PipelineOrder(s, r);
          ASSERT_TRUE(order.ok());
          ASSERT_EQ(order->size(), static_cast<size_t>(2 * m * v));
          std::set<std::pair<int, int>> fwd, bwd;
          for (const ScheduleItem& it : *order) {
            const auto key = std::make_pair(static_cast<int>(it.chunk), static_cast<int>(it.microbatch));
            if (it.phase == Phase::kForward) {
              EXPECT_TRUE(fwd.insert(key).second);
            } else {
              EXPECT_TRUE(fwd.count(key)) << "backward before forward";
              EXPECT_TRUE(bwd.insert(key).second);
            }
          }
          EXPECT_EQ(fwd.size(), static_cast<size_t>(m * v));
        }
      }
    }
  }
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
