// Periods (sim/engine/periods.cc): a run given each task's counterpart one period later fills in
// the periods whose state repeats instead of simulating them; its RunResult must be the run's
// without the map, bit for bit, whatever the map says.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "sim/engine/engine.h"
#include "tests/engine/same_run.h"

namespace shardsim {
namespace {

SimTime Ps(int64_t ps) { return SimTime::FromPicos(ps); }

// Runs `e` with `counterparts` and without; returns the periodic run's stats.
RunStats CompareRuns(Engine& e, const std::vector<int32_t>& counterparts) {
  e.SetCounterparts({});
  auto full = e.Run();
  EXPECT_TRUE(full.ok()) << full.status().ToString();
  e.SetCounterparts(counterparts);
  auto periodic = e.Run();
  EXPECT_TRUE(periodic.ok()) << periodic.status().ToString();
  if (!full.ok() || !periodic.ok()) return {};
  ExpectSameRun(e, *full, *periodic);
  return periodic->stats();
}

// A 1F1B pipeline of `stages` stages and `mbs` micro-batches: forwards and backwards on each
// stage's compute stream in 1F1B order, activations and gradients sent as flows on a link per
// neighbouring pair (both directions share it), a last task per stage after its last backward.
// Returns each task's counterpart one micro-batch later (`period` micro-batches: the map the
// test passes, right or wrong).
struct Pipeline {
  Engine engine;
  std::vector<std::vector<TaskId>> fwd, bwd, send_f, send_b;  // [stage][mb]
  std::vector<TaskId> tail;
};

Pipeline BuildPipeline(int stages, int mbs, int64_t f_ps, int64_t b_ps, double bytes,
                       int perturbed_mb = -1, int64_t latency_ps = 10'000) {
  Pipeline p;
  Engine& e = p.engine;
  std::vector<ResourceId> compute, send_next, send_prev;
  for (int s = 0; s < stages; ++s) {
    compute.push_back(e.AddStream("compute " + std::to_string(s)));
    send_next.push_back(e.AddStream("send to next " + std::to_string(s)));
    send_prev.push_back(e.AddStream("send to previous " + std::to_string(s)));
  }
  std::vector<ResourceId> link;
  for (int s = 0; s + 1 < stages; ++s) {
    link.push_back(e.AddLink("link " + std::to_string(s), BytesPerSec(25e9)));
  }
  p.fwd.assign(static_cast<size_t>(stages), std::vector<TaskId>(static_cast<size_t>(mbs)));
  p.bwd = p.send_f = p.send_b = p.fwd;
  for (int s = 0; s < stages; ++s) {
    // 1F1B: stages - s - 1 warm-up forwards, then one forward one backward, then the rest.
    std::vector<std::pair<bool, int>> order;
    const int warm = std::min(mbs, stages - s - 1);
    int f = 0, b = 0;
    for (; f < warm; ++f) order.emplace_back(true, f);
    while (b < mbs) {
      if (f < mbs) order.emplace_back(true, f++);
      order.emplace_back(false, b++);
    }
    for (const auto& [forward, m] : order) {
      const int64_t ps = (forward ? f_ps : b_ps) + (m == perturbed_mb ? 1000 : 0);
      const TaskId t = e.AddDelay(compute[static_cast<size_t>(s)], Ps(ps), 0, 0);
      (forward ? p.fwd : p.bwd)[static_cast<size_t>(s)][static_cast<size_t>(m)] = t;
    }
  }
  for (int s = 0; s < stages; ++s) {
    for (int m = 0; m < mbs; ++m) {
      const auto si = static_cast<size_t>(s), mi = static_cast<size_t>(m);
      e.AddDependency(p.fwd[si][mi], p.bwd[si][mi]);
      if (s + 1 < stages) {
        const TaskId t =
            e.AddFlow(send_next[si], Bytes(bytes), Ps(latency_ps), {&link[si], 1}, 0, 1);
        p.send_f[si][mi] = t;
        e.AddDependency(p.fwd[si][mi], t);
        e.AddDependency(t, p.fwd[si + 1][mi]);
      }
      if (s > 0) {
        const TaskId t =
            e.AddFlow(send_prev[si], Bytes(bytes), Ps(latency_ps), {&link[si - 1], 1}, 0, 1);
        p.send_b[si][mi] = t;
        e.AddDependency(p.bwd[si][mi], t);
        e.AddDependency(t, p.bwd[si - 1][mi]);
      }
    }
  }
  for (int s = 0; s < stages; ++s) {
    const TaskId t = e.AddDelay(compute[static_cast<size_t>(s)], Ps(5'000'000), 0, 2);
    e.AddDependency(p.bwd[static_cast<size_t>(s)].back(), t);
    p.tail.push_back(t);
  }
  return p;
}

std::vector<int32_t> PipelineMap(const Pipeline& p, int period) {
  std::vector<int32_t> next(static_cast<size_t>(p.engine.num_tasks()), -1);
  for (const auto* table : {&p.fwd, &p.bwd, &p.send_f, &p.send_b}) {
    for (const std::vector<TaskId>& row : *table) {
      for (size_t m = 0; m + static_cast<size_t>(period) < row.size(); ++m) {
        if (row[m].valid())
          next[static_cast<size_t>(row[m].v)] = row[m + static_cast<size_t>(period)].v;
      }
    }
  }
  return next;
}

TEST(Periods, APipelineSkipsItsSteadyStateAndGivesTheFullRunsResult) {
  // This 1F1B pipeline's steady state repeats over `stages` micro-batches, not one (the anchor's
  // starts 12, 20, 20, 20 ms apart, then again: a max-plus system's cyclicity); the engine finds
  // the span.
  for (const auto& [stages, mbs] : {std::pair{4, 32}, std::pair{8, 64}, std::pair{2, 24}}) {
    Pipeline p = BuildPipeline(stages, mbs, 3'000'000, 9'000'000, 1e5);
    const RunStats stats = CompareRuns(p.engine, PipelineMap(p, 1));
    // Most micro-batches are steady state: most tasks are filled in, not simulated.
    EXPECT_GT(stats.periods_skipped, mbs / 3) << stages << " stages";
    EXPECT_GT(stats.tasks_skipped, p.engine.num_tasks() / 3) << stages << " stages";
  }
}

TEST(Periods, ContendedTransfersStayExact) {
  // Transfers longer than the passes: sends of both directions share each link most of the
  // time, at rates from the max-min solver. Such a pipeline need not repeat period by period
  // (its pattern can span several micro-batches, which the engine does not look for); whatever
  // it skips, the result is the full run's.
  Pipeline p = BuildPipeline(4, 40, 1'000'000, 2'000'000, 2e5);
  const RunStats stats = CompareRuns(p.engine, PipelineMap(p, 1));
  EXPECT_GT(stats.max_active_flows, 1);
}

TEST(Periods, AMicroBatchThatDiffersEndsTheSkipAndTheResultStaysExact) {
  // Micro-batch 40's passes take longer: the map still names them counterparts, the engine sees
  // that the graph is not preserved there and skips less than without the change.
  Pipeline same = BuildPipeline(4, 64, 3'000'000, 9'000'000, 1e5);
  const RunStats all = CompareRuns(same.engine, PipelineMap(same, 1));
  Pipeline p = BuildPipeline(4, 64, 3'000'000, 9'000'000, 1e5, 40);
  const RunStats stats = CompareRuns(p.engine, PipelineMap(p, 1));
  EXPECT_GT(stats.tasks_skipped, 0);
  EXPECT_LT(stats.tasks_skipped, all.tasks_skipped);
}

TEST(Periods, AWrongMapOnlySkipsLess) {
  Pipeline p = BuildPipeline(4, 32, 3'000'000, 6'000'000, 1e5);
  CompareRuns(p.engine, PipelineMap(p, 2));  // two micro-batches: not this schedule's period
  // Every task's counterpart the next task: one to one, preserves almost nothing.
  std::vector<int32_t> shifted(static_cast<size_t>(p.engine.num_tasks()), -1);
  for (size_t t = 0; t + 1 < shifted.size(); ++t) shifted[t] = static_cast<int32_t>(t + 1);
  CompareRuns(p.engine, shifted);
  // A random one-to-one map.
  std::vector<int32_t> perm(shifted.size());
  for (size_t t = 0; t < perm.size(); ++t) perm[t] = static_cast<int32_t>(t);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(7));
  std::vector<int32_t> random(perm.size(), -1);
  for (size_t t = 0; t + 1 < perm.size(); ++t) random[static_cast<size_t>(perm[t])] = perm[t + 1];
  CompareRuns(p.engine, random);
}

TEST(Periods, AStepThatOutgrowsTheClockFailsAsWithoutTheMap) {
  // 100 micro-batches of 0.35 + 1.04 days of passes: past the int64 picosecond clock (106 days)
  // somewhere in the steady state, which the skip must not jump over.
  Pipeline p = BuildPipeline(4, 100, 30'000'000'000'000'000, 90'000'000'000'000'000, 1e5);
  auto full = p.engine.Run();
  ASSERT_FALSE(full.ok());
  p.engine.SetCounterparts(PipelineMap(p, 1));
  auto periodic = p.engine.Run();
  ASSERT_FALSE(periodic.ok());
  EXPECT_EQ(periodic.status().ToString(), full.status().ToString());
}

TEST(Periods, AMapThatIsNotOneToOneIsAnError) {
  Pipeline p = BuildPipeline(2, 4, 3'000'000, 6'000'000, 1e5);
  std::vector<int32_t> next(static_cast<size_t>(p.engine.num_tasks()), -1);
  next[0] = 2;
  next[1] = 2;
  p.engine.SetCounterparts(next);
  auto r = p.engine.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("counterpart"), std::string::npos) << r.status().ToString();
}

// Random periodic graphs: a template of tasks (delays and flows on random streams and shared
// links, dependencies inside the period and on the previous one) repeated `periods` times after
// a prologue, with an epilogue on the last period. Whether and where the state repeats depends on
// the draw; the result must not.
TEST(Periods, RandomPeriodicGraphsGiveTheFullRunsResult) {
  int skipped_any = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    auto uniform = [&](int lo, int hi) {
      return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
    };
    Engine e;
    const int num_streams = uniform(1, 5);
    const int num_links = uniform(1, 4);
    std::vector<ResourceId> streams, links;
    for (int s = 0; s < num_streams; ++s) streams.push_back(e.AddStream("s" + std::to_string(s)));
    for (int l = 0; l < num_links; ++l) {
      links.push_back(e.AddLink("l" + std::to_string(l), BytesPerSec(1e9 * uniform(1, 50))));
    }
    struct Template {
      int stream;
      bool flow;
      int64_t ps;
      double bytes;
      std::vector<ResourceId> path;
      std::vector<double> weights;
      double cap;
      std::vector<int> same, previous;  // dependencies on template tasks of this / the last period
    };
    const int k = uniform(2, 12);
    std::vector<Template> tmpl;
    for (int j = 0; j < k; ++j) {
      Template t;
      t.stream = uniform(0, 3) == 0 ? -1 : uniform(0, num_streams - 1);
      t.flow = uniform(0, 1) == 0;
      t.ps = 1000 * uniform(0, 5000);
      t.bytes = 1e3 * uniform(0, 5000);
      t.cap = uniform(0, 3) == 0 ? 1e9 * uniform(1, 20) : 0.0;
      for (int l = 0; l < num_links; ++l) {
        if (uniform(0, 1) == 0) {
          t.path.push_back(links[static_cast<size_t>(l)]);
          t.weights.push_back(uniform(0, 2) == 0 ? 2.0 : 1.0);
        }
      }
      for (int d = 0; d < j; ++d) {
        if (uniform(0, 2) == 0) t.same.push_back(d);
      }
      for (int d = 0; d < k; ++d) {
        if (uniform(0, 3) == 0) t.previous.push_back(d);
      }
      tmpl.push_back(t);
    }
    const int periods = uniform(8, 40);
    const TaskId prologue = e.AddDelay(ResourceId(), Ps(1000 * uniform(0, 3000)), 0, 0);
    std::vector<std::vector<TaskId>> ids(static_cast<size_t>(periods));
    for (int m = 0; m < periods; ++m) {
      for (const Template& t : tmpl) {
        const ResourceId s = t.stream < 0 ? ResourceId() : streams[static_cast<size_t>(t.stream)];
        ids[static_cast<size_t>(m)].push_back(t.flow
                                                  ? e.AddFlow(s, Bytes(t.bytes), Ps(t.ps), t.path,
                                                              0, 0, BytesPerSec(t.cap), t.weights)
                                                  : e.AddDelay(s, Ps(t.ps), 0, 0));
      }
    }
    for (int m = 0; m < periods; ++m) {
      const auto mi = static_cast<size_t>(m);
      for (size_t j = 0; j < tmpl.size(); ++j) {
        for (int d : tmpl[j].same) e.AddDependency(ids[mi][static_cast<size_t>(d)], ids[mi][j]);
        if (m == 0) {
          e.AddDependency(prologue, ids[mi][j]);
        } else {
          for (int d : tmpl[j].previous) {
            e.AddDependency(ids[mi - 1][static_cast<size_t>(d)], ids[mi][j]);
          }
        }
      }
    }
    const TaskId epilogue = e.AddDelay(ResourceId(), Ps(1000), 0, 0);
    for (TaskId t : ids.back()) e.AddDependency(t, epilogue);
    std::vector<int32_t> next(static_cast<size_t>(e.num_tasks()), -1);
    for (size_t m = 0; m + 1 < ids.size(); ++m) {
      for (size_t j = 0; j < tmpl.size(); ++j)
        next[static_cast<size_t>(ids[m][j].v)] = ids[m + 1][j].v;
    }
    const RunStats stats = CompareRuns(e, next);
    if (HasFatalFailure() || HasNonfatalFailure()) {
      ADD_FAILURE() << "seed " << seed;
      return;
    }
    if (stats.tasks_skipped > 0) ++skipped_any;
  }
  // The draw gives steady states that repeat exactly often enough for the check to mean
  // something (printed, so that a change of the generator shows).
  std::printf("random periodic graphs: %d of 60 skipped periods\n", skipped_any);
  EXPECT_GT(skipped_any, 10);
}

}  // namespace
}  // namespace shardsim
