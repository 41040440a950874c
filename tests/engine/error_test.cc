// Deadlocks and bad arguments: errors name what is wrong, never a hang. Exact texts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/engine/engine.h"

namespace shardsim {
namespace {

SimTime Ps(int64_t ps) { return SimTime::FromPicos(ps); }
const ResourceId kNoStream;

TEST(Deadlock, DependencyCycleIsNamed) {
  Engine e;
  const TaskId ok = e.AddDelay(kNoStream, Ps(1), 0, 0);
  const TaskId a = e.AddDelay(kNoStream, Ps(1), 0, 0);
  const TaskId b = e.AddDelay(kNoStream, Ps(1), 0, 0);
  e.AddDependency(ok, a);
  e.AddDependency(a, b);
  e.AddDependency(b, a);
  auto r = e.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_EQ(r.status().message(),
            "engine: deadlock: 2 of 3 tasks can never start; wait cycle: task 1 waits for task 2 "
            "(its dependency), task 2 waits for task 1 (its dependency); stuck: task 1, task 2");
}

TEST(Deadlock, SelfDependency) {
  Engine e;
  const TaskId a = e.AddDelay(kNoStream, Ps(1), 0, 0);
  e.AddDependency(a, a);
  auto r = e.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "engine: deadlock: 1 of 1 tasks can never start; wait cycle: task 0 waits for task 0 "
            "(its dependency); stuck: task 0");
}

// A receive enqueued before the send it waits for on the same stream: a cycle through stream
// order, named with the caller's task names.
TEST(Deadlock, StreamOrderCycleUsesTheNamer) {
  Engine e;
  const ResourceId s = e.AddStream("gpu0.pp");
  const TaskId recv = e.AddDelay(s, Ps(1), 0, 0);
  const TaskId send = e.AddDelay(s, Ps(1), 1, 0);
  const TaskId compute = e.AddDelay(kNoStream, Ps(1), 2, 0);
  e.AddDependency(send, recv);
  e.AddDependency(recv, compute);
  const std::vector<std::string> names{"recv mb0", "send mb0", "fwd mb0"};
  e.SetTaskNamer([&](TaskId t) { return "'" + names[e.label(t)] + "'"; });
  auto r = e.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "engine: deadlock: 3 of 3 tasks can never start; wait cycle: 'recv mb0' waits for "
            "'send mb0' (its dependency), 'send mb0' waits for 'recv mb0' (ahead of it on stream "
            "'gpu0.pp'); stuck: 'recv mb0', 'send mb0', 'fwd mb0'");
}

// Long chains behind a cycle: the message lists the first eight tasks and counts the rest.
TEST(Deadlock, LongListsAreTruncated) {
  Engine e;
  std::vector<TaskId> t;
  t.reserve(12);
  for (int i = 0; i < 12; ++i) {
    t.push_back(e.AddDelay(kNoStream, Ps(1), 0, 0));
  }
  for (int i = 0; i < 12; ++i) {
    e.AddDependency(t[static_cast<size_t>(i)], t[static_cast<size_t>((i + 1) % 12)]);
  }
  auto r = e.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "engine: deadlock: 12 of 12 tasks can never start; wait cycle: task 0 waits for task "
            "11 (its dependency), task 11 waits for task 10 (its dependency), task 10 waits for "
            "task 9 (its dependency), task 9 waits for task 8 (its dependency), task 8 waits for "
            "task 7 (its dependency), task 7 waits for task 6 (its dependency), task 6 waits for "
            "task 5 (its dependency), task 5 waits for task 4 (its dependency), ... (4 more); "
            "stuck: task 0, task 1, task 2, task 3, task 4, task 5, task 6, task 7, ... (4 more)");
}

TEST(BadArguments, AllAreReportedByRun) {
  Engine e;
  const ResourceId s = e.AddStream("s");
  const ResourceId link = e.AddLink("nic0", BytesPerSec(0.0));
  e.AddDelay(link, Ps(1), 0, 0);
  e.AddDelay(s, Ps(-5), 0, 0);
  const std::vector<ResourceId> links{link, s, link};
  e.AddFlow(kNoStream, Bytes(-1.0), Ps(-2), links, 0, 0, BytesPerSec(-3.0));
  e.AddDependency(TaskId(0), TaskId(9));
  auto r = e.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_EQ(r.status().ToString(),
            "error: engine: link 'nic0': capacity must be positive and finite, got 0 B/s\n"
            "error: engine: task 0: resource 1 is not a stream\n"
            "error: engine: task 1: negative duration -5 ps\n"
            "error: engine: task 2: flow bytes must be finite and >= 0, got -1.00\n"
            "error: engine: task 2: negative latency -2 ps\n"
            "error: engine: task 2: negative rate cap -3.00 B/s\n"
            "error: engine: task 2: resource 0 is not a link\n"
            "error: engine: task 2: link 'nic0' listed twice\n"
            "error: engine: dependency 0 -> 9: unknown task 9");
}

TEST(BadArguments, SetLinkCapacityOnAStream) {
  Engine e;
  const ResourceId s = e.AddStream("s");
  e.SetLinkCapacity(s, BytesPerSec(1e9));
  auto r = e.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "engine: SetLinkCapacity: resource 0 is not a link");
}

TEST(BadArguments, TimeOverflowIsAnErrorNotAWrap) {
  Engine e;
  const TaskId a = e.AddDelay(kNoStream, SimTime::Max(), 0, 0);
  const TaskId b = e.AddDelay(kNoStream, Ps(1), 0, 0);
  e.AddDependency(a, b);
  auto r = e.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);  // absurd inputs, not an engine bug
  EXPECT_EQ(r.status().message(),
            "the simulated step lasts longer than the engine's clock holds (int64 picoseconds, "
            "about 106 days), first at task 1: look for a hardware or topology bandwidth, "
            "latency or efficiency off by orders of magnitude");
}

// A flow too long for the clock (1e10 bytes at 1 B/s is 1e22 ps) names its task and links.
TEST(BadArguments, TimeOverflowNamesTheFlowAndItsLinks) {
  Engine e;
  const ResourceId nic = e.AddLink("nic0", BytesPerSec(1.0));
  const ResourceId nvl = e.AddLink("nvlink3", BytesPerSec(1e12));
  const ResourceId links[] = {nvl, nic};
  e.AddFlow(kNoStream, Bytes(1e10), Ps(0), links, 0, 0);
  e.SetTaskNamer([](TaskId t) { return "dp all_reduce " + std::to_string(t.v); });
  auto r = e.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(r.status().message(),
            "the simulated step lasts longer than the engine's clock holds (int64 picoseconds, "
            "about 106 days), first at dp all_reduce 0 on links 'nvlink3', 'nic0': look for a "
            "hardware or topology bandwidth, latency or efficiency off by orders of magnitude");
}

}  // namespace
}  // namespace shardsim
