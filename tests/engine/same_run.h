// Two runs of one engine graph compared figure by figure, exactly (the periods' oracle:
// tests/engine/periods_test.cc, tests/program/periods_test.cc).
#ifndef SHARDSIM_TESTS_ENGINE_SAME_RUN_H_
#define SHARDSIM_TESTS_ENGINE_SAME_RUN_H_

#include <gtest/gtest.h>

#include "sim/engine/engine.h"

namespace shardsim {

// Every figure of two runs of one graph, compared exactly.
inline void ExpectSameRun(const Engine& e, const RunResult& a, const RunResult& b) {
  ASSERT_EQ(a.num_tasks(), b.num_tasks());
  EXPECT_EQ(a.makespan(), b.makespan());
  for (int32_t t = 0; t < a.num_tasks(); ++t) {
    const TaskId id(t);
    ASSERT_EQ(a.start(id), b.start(id)) << "task " << t;
    ASSERT_EQ(a.end(id), b.end(id)) << "task " << t;
    ASSERT_EQ(a.released_by(id), b.released_by(id)) << "task " << t;
    ASSERT_EQ(a.released_by_task(id), b.released_by_task(id)) << "task " << t;
    ASSERT_EQ(a.BoundBy(id), b.BoundBy(id)) << "task " << t;
  }
  for (int32_t r = 0; r < e.num_resources(); ++r) {
    const ResourceId id(r);
    if (e.resource_kind(id) == ResourceKind::kStream) {
      EXPECT_EQ(a.StreamBusy(id), b.StreamBusy(id)) << e.resource_name(id);
    } else {
      // Bytes summed in the same order: the same double.
      EXPECT_EQ(a.LinkBytes(id).value(), b.LinkBytes(id).value()) << e.resource_name(id);
      EXPECT_EQ(a.LinkBusy(id), b.LinkBusy(id)) << e.resource_name(id);
    }
  }
  EXPECT_EQ(a.CriticalPathToString(), b.CriticalPathToString());
  EXPECT_EQ(a.stats().events, b.stats().events);
  EXPECT_EQ(a.stats().reshares, b.stats().reshares);
  EXPECT_EQ(a.stats().reshared_flows, b.stats().reshared_flows);
  EXPECT_EQ(a.stats().max_active_flows, b.stats().max_active_flows);
  EXPECT_EQ(a.stats().max_queue, b.stats().max_queue);
}

}  // namespace shardsim

#endif  // SHARDSIM_TESTS_ENGINE_SAME_RUN_H_
