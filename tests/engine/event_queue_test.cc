#include "sim/engine/event_queue.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <queue>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

namespace shardsim {
namespace {

// The reference for the random tests: a std::priority_queue of (time, sequence, task) whose
// stale entries (a task rescheduled since) are skipped when popped.
class ReferenceQueue {
 public:
  explicit ReferenceQueue(int32_t num_tasks) : live_(static_cast<size_t>(num_tasks), 0) {}
  void Schedule(int32_t task, int64_t time) {
    if (live_[static_cast<size_t>(task)] == 0) ++pending_;
    live_[static_cast<size_t>(task)] = seq_ + 1;
    ref_.emplace(time, seq_++, task);
  }
  // The next event, taken out: (time, task).
  std::pair<int64_t, int32_t> Pop() {
    while (live_[static_cast<size_t>(std::get<2>(ref_.top()))] != std::get<1>(ref_.top()) + 1) {
      ref_.pop();
    }
    const auto [t, s, task] = ref_.top();
    ref_.pop();
    live_[static_cast<size_t>(task)] = 0;
    --pending_;
    return {t, task};
  }
  size_t pending() const { return pending_; }

 private:
  using Entry = std::tuple<int64_t, uint64_t, int32_t>;  // time, sequence, task
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ref_;
  std::vector<uint64_t> live_;  // the sequence of each task's pending event + 1
  uint64_t seq_ = 0;
  size_t pending_ = 0;
};

// Pops every event: the tasks and times in pop order.
std::pair<std::vector<int32_t>, std::vector<int64_t>> Drain(EventQueue& q) {
  std::pair<std::vector<int32_t>, std::vector<int64_t>> out;
  while (!q.empty()) {
    const Event e = q.Pop();
    out.first.push_back(e.task);
    out.second.push_back(e.time);
  }
  return out;
}

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
  const auto [order, times] = Drain(q);
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

// Events due at the time of the last pop go to the queue's FIFO: they pop after the heap's
// events at that time, in scheduling order, and a rescheduled one moves (to the FIFO's back, or
// back into the heap).
TEST(EventQueue, EventsDueNowPopInSchedulingOrder) {
  EventQueue q;
  q.Reset(6);
  q.Schedule(0, 10, EventKind::kTaskEnd);
  q.Schedule(1, 10, EventKind::kTaskEnd);
  q.Schedule(2, 20, EventKind::kFlowEnd);
  EXPECT_EQ(q.Pop().task, 0);              // now 10
  q.Schedule(3, 10, EventKind::kTaskEnd);  // due now: after task 1 (scheduled earlier)
  q.Schedule(4, 10, EventKind::kTaskEnd);  // due now
  q.Schedule(2, 10, EventKind::kFlowEnd);  // out of the heap, behind task 4
  q.Schedule(3, 10, EventKind::kTaskEnd);  // rescheduled: behind task 2
  q.Schedule(4, 30, EventKind::kTaskEnd);  // from the FIFO back into the heap
  EXPECT_EQ(q.size(), 4u);
  EXPECT_EQ(q.top_time(), 10);
  const auto [order, times] = Drain(q);
  EXPECT_EQ(order, (std::vector<int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(times, (std::vector<int64_t>{10, 10, 10, 30}));
}

// Against a std::priority_queue of (time, sequence) with stale entries skipped: random
// schedules, reschedules (earlier, later, to the current time) and pops, half of them due at the
// current time, so that the FIFO, its blanks, the heap's ties and the renumbering of the sequence
// are all exercised.
TEST(EventQueue, MatchesPriorityQueueReference) {
  std::mt19937 rng(11);
  const int32_t num_tasks = 200;
  EventQueue q;
  q.Reset(num_tasks);
  q.SetNextSeqForTest((uint64_t{1} << 32) - 50000);  // renumbers once, FIFO events pending or not
  ReferenceQueue ref(num_tasks);
  int64_t now = 0;
  for (int round = 0; round < 200000; ++round) {
    if (rng() % 5 < 3) {
      const auto task = static_cast<int32_t>(rng() % num_tasks);
      const int64_t t = now + (rng() % 2 == 0 ? 0 : static_cast<int64_t>(rng() % 4));
      q.Schedule(task, t, EventKind::kFlowEnd);
      ref.Schedule(task, t);
    } else if (ref.pending() > 0) {
      ASSERT_EQ(q.size(), ref.pending()) << "round " << round;
      const auto [t, task] = ref.Pop();
      ASSERT_EQ(q.top_time(), t) << "round " << round;
      const Event e = q.Pop();
      ASSERT_EQ(e.task, task) << "round " << round;
      ASSERT_EQ(e.time, t) << "round " << round;
      ASSERT_FALSE(q.Pending(task));
      now = t;
    }
  }
}

// Pop's bottom-up sift (the hole to a leaf, then the last slot up) on a heap of hundreds of
// events: random times far apart and reschedules earlier and later, so that the last slot sometimes
// rises back up, and heaps of every size down to empty, both parities (one child or two).
TEST(EventQueue, BottomUpPopMatchesPriorityQueueReference) {
  std::mt19937 rng(23);
  const int32_t num_tasks = 500;
  EventQueue q;
  q.Reset(num_tasks);
  ReferenceQueue ref(num_tasks);
  int64_t now = 0;
  for (int phase = 0; phase < 40; ++phase) {
    const int fill = static_cast<int>(rng() % 600);  // schedules (some reschedules), then drain
    for (int k = 0; k < fill; ++k) {
      const auto task = static_cast<int32_t>(rng() % num_tasks);
      const int64_t t = now + 1 + static_cast<int64_t>(rng() % (k % 2 == 0 ? 1000 : 8));
      q.Schedule(task, t, EventKind::kFlowEnd);
      ref.Schedule(task, t);
    }
    const size_t keep = phase % 3 == 0 ? 0 : rng() % (ref.pending() + 1);
    while (ref.pending() > keep) {
      ASSERT_EQ(q.size(), ref.pending()) << "phase " << phase;
      const auto [t, task] = ref.Pop();
      const Event e = q.Pop();
      ASSERT_EQ(e.task, task) << "phase " << phase;
      ASSERT_EQ(e.time, t) << "phase " << phase;
      now = t;
    }
  }
}

// The 32-bit scheduling sequence runs out after 2^32 schedulings: the pending events are then
// renumbered in their order, and ties still break by scheduling order across the renumbering.
TEST(EventQueue, SequenceRenumberingKeepsTheOrder) {
  EventQueue q;
  q.Reset(8);
  q.SetNextSeqForTest((uint64_t{1} << 32) - 3);
  q.Schedule(0, 50, EventKind::kTaskEnd);
  q.Schedule(1, 20, EventKind::kTaskEnd);
  q.Schedule(2, 50, EventKind::kFlowEnd);
  q.Schedule(3, 20, EventKind::kTaskEnd);  // renumbers 0, 1, 2 first
  q.Schedule(4, 50, EventKind::kTaskEnd);
  q.Schedule(1, 50, EventKind::kLatencyEnd);  // behind task 4
  std::vector<int32_t> order;
  std::vector<EventKind> kinds;
  while (!q.empty()) {
    const Event e = q.Pop();
    order.push_back(e.task);
    kinds.push_back(e.kind);
  }
  EXPECT_EQ(order, (std::vector<int32_t>{3, 0, 2, 4, 1}));
  EXPECT_EQ(kinds[2], EventKind::kFlowEnd);
  EXPECT_EQ(kinds[4], EventKind::kLatencyEnd);
}

}  // namespace
}  // namespace shardsim
