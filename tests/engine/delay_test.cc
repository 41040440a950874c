// Delays, streams, dependencies and the critical path: closed-form makespans.
#include <gtest/gtest.h>

#include <vector>

#include "sim/engine/engine.h"

namespace shardsim {
namespace {

SimTime Ps(int64_t ps) { return SimTime::FromPicos(ps); }
const ResourceId kNoStream;

TEST(Delays, EmptyGraph) {
  Engine e;
  auto r = e.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->makespan(), Ps(0));
  EXPECT_TRUE(r->critical_path().empty());
}

TEST(Delays, ChainMakespanIsTheSum) {
  Engine e;
  const TaskId a = e.AddDelay(kNoStream, Ps(3), 0, 0);
  const TaskId b = e.AddDelay(kNoStream, Ps(5), 0, 0);
  const TaskId c = e.AddDelay(kNoStream, Ps(7), 0, 0);
  e.AddDependency(a, b);
  e.AddDependency(b, c);
  auto r = e.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->start(b), Ps(3));
  EXPECT_EQ(r->start(c), Ps(8));
  EXPECT_EQ(r->makespan(), Ps(15));
}

// a -> {b, c} -> d: the longer branch sets the makespan: 2 + max(10, 4) + 1.
TEST(Delays, DiamondTakesTheLongerBranch) {
  Engine e;
  const TaskId a = e.AddDelay(kNoStream, Ps(2), 0, 0);
  const TaskId b = e.AddDelay(kNoStream, Ps(10), 0, 0);
  const TaskId c = e.AddDelay(kNoStream, Ps(4), 0, 0);
  const TaskId d = e.AddDelay(kNoStream, Ps(1), 0, 0);
  e.AddDependency(a, b);
  e.AddDependency(a, c);
  e.AddDependency(b, d);
  e.AddDependency(c, d);
  auto r = e.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->end(c), Ps(6));
  EXPECT_EQ(r->start(d), Ps(12));
  EXPECT_EQ(r->makespan(), Ps(13));
  ASSERT_EQ(r->critical_path().size(), 3u);
  EXPECT_EQ(r->critical_path()[0].task, a);
  EXPECT_EQ(r->critical_path()[1].task, b);
  EXPECT_EQ(r->critical_path()[2].task, d);
}

TEST(Delays, TwoStreamsRunInParallel) {
  Engine e;
  const ResourceId s0 = e.AddStream("compute");
  const ResourceId s1 = e.AddStream("comm");
  for (int i = 0; i < 2; ++i) {
    e.AddDelay(s0, Ps(5), 0, 0);
  }
  for (int i = 0; i < 3; ++i) {
    e.AddDelay(s1, Ps(3), 0, 0);
  }
  auto r = e.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->makespan(), Ps(10));
  EXPECT_EQ(r->StreamBusy(s0), Ps(10));
  EXPECT_EQ(r->StreamBusy(s1), Ps(9));
  ASSERT_EQ(r->StreamTasks(s1).size(), 3u);
  EXPECT_EQ(r->StreamTasks(s1)[2], TaskId(4));
  EXPECT_EQ(r->start(TaskId(4)), Ps(6));
}

// x is enqueued first but waits 100 ps for its dependency; y, enqueued behind it with nothing to
// wait for, must not overtake it: streams run in enqueue order, like CUDA streams.
TEST(Delays, StreamRunsInEnqueueOrderEvenWhenALaterTaskIsReadyFirst) {
  Engine e;
  const ResourceId s = e.AddStream("s");
  const TaskId gate = e.AddDelay(kNoStream, Ps(100), 0, 0);
  const TaskId x = e.AddDelay(s, Ps(1), 0, 0);
  const TaskId y = e.AddDelay(s, Ps(1), 0, 0);
  e.AddDependency(gate, x);
  auto r = e.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->start(x), Ps(100));
  EXPECT_EQ(r->start(y), Ps(101));
  EXPECT_EQ(r->released_by(y), Release::kStreamOrder);
  EXPECT_EQ(r->released_by_task(y), x);
  EXPECT_EQ(r->StreamBusy(s), Ps(2));
}

// Zero-duration tasks release their successors at the same instant, in a fixed order.
TEST(Delays, ZeroDurationTasks) {
  Engine e;
  const ResourceId s = e.AddStream("s");
  const TaskId a = e.AddDelay(s, Ps(0), 0, 0);
  const TaskId b = e.AddDelay(kNoStream, Ps(0), 0, 0);
  const TaskId c = e.AddDelay(s, Ps(4), 0, 0);
  e.AddDependency(a, b);
  e.AddDependency(b, c);
  auto r = e.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->start(c), Ps(0));
  EXPECT_EQ(r->makespan(), Ps(4));
  EXPECT_EQ(r->released_by_task(c), b);
}

// A pipeline-like DAG on two streams where the critical path switches streams:
//   s0: a(4) b(4)         b depends on a by stream order
//   s1: c(10) d(1)        c depends on a; d depends on b (done at 8) and c (done at 14)
//   e (no stream, 2)      depends on d
// Critical path: a [0,4) -> c [4,14) (dependency) -> d [14,15) (stream) -> e [15,17).
TEST(Delays, CriticalPathFollowsTheLastFinishingPredecessor) {
  Engine eng;
  const ResourceId s0 = eng.AddStream("s0");
  const ResourceId s1 = eng.AddStream("s1");
  const TaskId a = eng.AddDelay(s0, Ps(4), 0, 0);
  const TaskId b = eng.AddDelay(s0, Ps(4), 0, 0);
  const TaskId c = eng.AddDelay(s1, Ps(10), 0, 0);
  const TaskId d = eng.AddDelay(s1, Ps(1), 0, 0);
  const TaskId e = eng.AddDelay(kNoStream, Ps(2), 0, 0);
  eng.AddDependency(a, c);
  eng.AddDependency(b, d);
  eng.AddDependency(d, e);
  auto r = eng.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->makespan(), Ps(17));
  EXPECT_EQ(r->CriticalPathToString(),
            "task 0 [0, 4) ps at start\n"
            "task 2 [4, 14) ps after its dependency\n"
            "task 3 [14, 15) ps after the task ahead on its stream\n"
            "task 4 [15, 17) ps after its dependency\n");
  // The chain is contiguous from zero to the makespan.
  const auto& path = r->critical_path();
  EXPECT_EQ(path.front().start, Ps(0));
  for (size_t i = 1; i < path.size(); ++i) {
    EXPECT_EQ(path[i].start, path[i - 1].end);
  }
  EXPECT_EQ(path.back().end, r->makespan());
}

TEST(Delays, RunIsRepeatableAndKeepsMetadata) {
  Engine e;
  const ResourceId s = e.AddStream("gpu0.compute");
  const TaskId t = e.AddDelay(s, Ps(7), 42, 3);
  EXPECT_EQ(e.label(t), 42u);
  EXPECT_EQ(e.category(t), 3);
  EXPECT_EQ(e.stream(t), s);
  EXPECT_EQ(e.kind(t), TaskKind::kDelay);
  EXPECT_EQ(e.resource_name(s), "gpu0.compute");
  auto r1 = e.Run();
  auto r2 = e.Run();
  ASSERT_TRUE(r1.ok() && r2.ok());
  EXPECT_EQ(r1->end(t), Ps(7));
  EXPECT_EQ(r2->end(t), Ps(7));
}

// Two start conditions met in the same picosecond: the task is released by the event that was
// scheduled last (events at equal times run in scheduling order, engine.h), and that is set when
// each finishing task started, not when it ends. A stream runs a chain a (0-3 ps) then b (3-8);
// x starts at 2 and ends at 8 too; s waits for b (stream) and x. b's end was scheduled at 3, after
// x's at 2, so b releases s. A single 8 ps delay standing for a and b ends at 8 as well but was
// scheduled at 0: then x releases s. Replacing a chain by one delay of its length (a pass
// simulated once and put into the step as one task) keeps every time but can change what
// released the task after it, hence the critical path.
TEST(Delays, ATieIsReleasedByTheEventScheduledLastNotByTheOneThatStartedLast) {
  for (const bool as_one_delay : {false, true}) {
    Engine eng;
    const ResourceId stream = eng.AddStream("compute");
    TaskId last;
    if (as_one_delay) {
      last = eng.AddDelay(stream, Ps(8), 0, 0);
    } else {
      eng.AddDelay(stream, Ps(3), 0, 0);
      last = eng.AddDelay(stream, Ps(5), 0, 0);
    }
    const TaskId wait = eng.AddDelay(kNoStream, Ps(2), 0, 0);
    const TaskId x = eng.AddDelay(kNoStream, Ps(6), 0, 0);
    const TaskId s = eng.AddDelay(stream, Ps(1), 0, 0);
    eng.AddDependency(wait, x);
    eng.AddDependency(x, s);
    auto r = eng.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->end(last), Ps(8));
    EXPECT_EQ(r->end(x), Ps(8));
    EXPECT_EQ(r->start(s), Ps(8));
    if (as_one_delay) {
      EXPECT_EQ(r->released_by(s), Release::kDependency);
      EXPECT_EQ(r->released_by_task(s), x);
    } else {
      EXPECT_EQ(r->released_by(s), Release::kStreamOrder);
      EXPECT_EQ(r->released_by_task(s), last);
    }
  }
}

}  // namespace
}  // namespace shardsim
