#include "sim/engine/event_queue.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace shardsim {
namespace {

TEST(EventQueue, PopsByTimeThenInsertionOrder) {
  EventQueue q;
  q.Push(30, EventKind::kTaskEnd, 0);
  q.Push(10, EventKind::kTaskEnd, 1);
  q.Push(20, EventKind::kTaskEnd, 2);
  q.Push(10, EventKind::kLatencyEnd, 3);
  q.Push(10, EventKind::kFlowEnd, 4, 7);
  std::vector<int32_t> order;
  while (!q.empty()) order.push_back(q.Pop().task);
  EXPECT_EQ(order, (std::vector<int32_t>{1, 3, 4, 2, 0}));
}

TEST(EventQueue, KeepsKindAndVersion) {
  EventQueue q;
  q.Push(5, EventKind::kFlowEnd, 9, 42);
  const Event e = q.Pop();
  EXPECT_EQ(e.time, 5);
  EXPECT_EQ(e.task, 9);
  EXPECT_EQ(e.version, 42u);
  EXPECT_EQ(e.kind, EventKind::kFlowEnd);
}

// Against a stable sort of the same events: many equal times, interleaved pushes and pops.
TEST(EventQueue, MatchesStableSortUnderInterleaving) {
  std::mt19937 rng(7);
  EventQueue q;
  struct Ref {
    int64_t time;
    uint64_t seq;
    int32_t task;
  };
  std::vector<Ref> pending;
  uint64_t seq = 0;
  int32_t task = 0;
  int64_t floor = 0;  // a DES never pushes into the past
  for (int round = 0; round < 2000; ++round) {
    const int pushes = static_cast<int>(rng() % 4);
    for (int i = 0; i < pushes; ++i) {
      const int64_t t = floor + static_cast<int64_t>(rng() % 5);
      q.Push(t, EventKind::kTaskEnd, task);
      pending.push_back({t, seq++, task++});
    }
    if (!pending.empty() && rng() % 2 == 0) {
      size_t best = 0;
      for (size_t i = 1; i < pending.size(); ++i) {
        if (pending[i].time < pending[best].time ||
            (pending[i].time == pending[best].time && pending[i].seq < pending[best].seq)) {
          best = i;
        }
      }
      const Event e = q.Pop();
      ASSERT_EQ(e.task, pending[best].task);
      ASSERT_EQ(e.time, pending[best].time);
      floor = e.time;
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(best));
    }
  }
  EXPECT_EQ(q.size(), pending.size());
}

}  // namespace
}  // namespace shardsim
