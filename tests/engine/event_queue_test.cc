#include "sim/engine/event_queue.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <vector>

namespace shardsim {
namespace {

TEST(EventQueue, PopsByTimeThenSchedulingOrder) {
  EventQueue q;
  q.Reset(5);
  q.Schedule(0, 30, EventKind::kTaskEnd);
  q.Schedule(1, 10, EventKind::kTaskEnd);
  q.Schedule(2, 20, EventKind::kTaskEnd);
  q.Schedule(3, 10, EventKind::kLatencyEnd);
  q.Schedule(4, 10, EventKind::kFlowEnd);
  std::vector<int32_t> order;
  while (!q.empty()) {
    order.push_back(q.Pop().task);
  }
  EXPECT_EQ(order, (std::vector<int32_t>{1, 3, 4, 2, 0}));
}

// Rescheduling moves the task's one event (earlier or later) and counts as a new scheduling for
// ties: it goes behind events already scheduled at the same time.
TEST(EventQueue, ReschedulingMovesTheTasksEvent) {
  EventQueue q;
  q.Reset(4);
  q.Schedule(0, 50, EventKind::kFlowEnd);
  q.Schedule(1, 20, EventKind::kTaskEnd);
  q.Schedule(2, 40, EventKind::kTaskEnd);
  q.Schedule(3, 30, EventKind::kFlowEnd);
  q.Schedule(0, 10, EventKind::kFlowEnd);  // earlier
  q.Schedule(3, 60, EventKind::kFlowEnd);  // later
  q.Schedule(1, 40, EventKind::kTaskEnd);  // ties with task 2, scheduled after it
  EXPECT_EQ(q.size(), 4u);
  EXPECT_TRUE(q.Pending(3));
  std::vector<int32_t> order;
  std::vector<int64_t> times;
  while (!q.empty()) {
    const Event e = q.Pop();
    order.push_back(e.task);
    times.push_back(e.time);
  }
  EXPECT_EQ(order, (std::vector<int32_t>{0, 2, 1, 3}));
  EXPECT_EQ(times, (std::vector<int64_t>{10, 40, 40, 60}));
  EXPECT_FALSE(q.Pending(3));
}

// Against a brute-force reference: random schedules, reschedules and pops.
TEST(EventQueue, MatchesBruteForceReference) {
  std::mt19937 rng(7);
  const int32_t num_tasks = 64;
  EventQueue q;
  q.Reset(num_tasks);
  struct Ref {
    bool pending = false;
    int64_t time = 0;
    uint64_t seq = 0;
  };
  std::vector<Ref> ref(num_tasks);
  uint64_t seq = 0;
  int64_t floor = 0;  // a DES never schedules into the past
  for (int round = 0; round < 20000; ++round) {
    if (rng() % 3 != 0) {
      const auto task = static_cast<int32_t>(rng() % num_tasks);
      const int64_t t = floor + static_cast<int64_t>(rng() % 6);
      q.Schedule(task, t, EventKind::kTaskEnd);
      ref[static_cast<size_t>(task)] = {true, t, seq++};
    } else if (!q.empty()) {
      int32_t best = -1;
      for (int32_t i = 0; i < num_tasks; ++i) {
        const Ref& r = ref[static_cast<size_t>(i)];
        if (!r.pending) {
          continue;
        }
        const Ref* b = best < 0 ? nullptr : &ref[static_cast<size_t>(best)];
        if (b == nullptr || r.time < b->time || (r.time == b->time && r.seq < b->seq)) {
          best = i;
        }
      }
      const Event e = q.Pop();
      ASSERT_EQ(e.task, best) << "round " << round;
      ASSERT_EQ(e.time, ref[static_cast<size_t>(best)].time);
      ref[static_cast<size_t>(best)].pending = false;
      floor = e.time;
    }
  }
}

}  // namespace
}  // namespace shardsim
