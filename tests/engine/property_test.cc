// Properties over random task graphs (fixed seeds): an independent max-plus oracle for graphs
// without sharing, monotonicity where it holds, time-scale invariance and conservation where
// links are shared, and determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "sim/engine/engine.h"

namespace shardsim {
namespace {

SimTime Ps(int64_t ps) { return SimTime::FromPicos(ps); }

// A random DAG description the tests can rebuild with changes. Dependencies always go from a
// lower to a higher task index, and streams run in index order, so index order is topological.
struct TaskDesc {
  bool flow = false;
  int stream = -1;       // -1: none
  int64_t fixed_ps = 0;  // duration or latency
  double bytes = 0.0;
  std::vector<int> links;
  double cap = 0.0;
  std::vector<int> deps;
};

struct Graph {
  int num_streams = 0;
  std::vector<double> capacity;  // bytes/s per link
  std::vector<TaskDesc> tasks;

  Engine Build() const {
    Engine e;
    std::vector<ResourceId> streams;
    std::vector<ResourceId> links;
    streams.reserve(static_cast<size_t>(num_streams));
    for (int s = 0; s < num_streams; ++s) {
      streams.push_back(e.AddStream("s" + std::to_string(s)));
    }
    for (size_t l = 0; l < capacity.size(); ++l) {
      links.push_back(e.AddLink("l" + std::to_string(l), BytesPerSec(capacity[l])));
    }
    for (const TaskDesc& t : tasks) {
      const ResourceId stream =
          t.stream < 0 ? ResourceId() : streams[static_cast<size_t>(t.stream)];
      if (t.flow) {
        std::vector<ResourceId> path;
        for (int l : t.links) {
          path.push_back(links[static_cast<size_t>(l)]);
        }
        e.AddFlow(stream, Bytes(t.bytes), Ps(t.fixed_ps), path, 0, 0, BytesPerSec(t.cap));
      } else {
        e.AddDelay(stream, Ps(t.fixed_ps), 0, 0);
      }
    }
    for (size_t i = 0; i < tasks.size(); ++i) {
      for (int d : tasks[i].deps) {
        e.AddDependency(TaskId(d), TaskId(static_cast<int32_t>(i)));
      }
    }
    return e;
  }
};

enum class LinkUse {
  kNone,     // delays only
  kPrivate,  // every flow is on a stream and uses only links owned by that stream: no sharing
  kShared,   // flows anywhere, links shared freely
};

Graph RandomGraph(uint32_t seed, int n, LinkUse use) {
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
  };
  Graph g;
  g.num_streams = uniform(1, 6);
  const int links_per_stream = 2;
  const int num_links = use == LinkUse::kPrivate ? g.num_streams * links_per_stream : uniform(1, 5);
  for (int l = 0; l < num_links; ++l) {
    g.capacity.push_back(1e9 * uniform(1, 50));
  }
  for (int i = 0; i < n; ++i) {
    TaskDesc t;
    t.stream = uniform(0, 4) == 0 ? -1 : uniform(0, g.num_streams - 1);
    t.flow = use != LinkUse::kNone && uniform(0, 2) == 0;
    if (use == LinkUse::kPrivate && t.stream < 0) {
      t.flow = false;
    }
    t.fixed_ps = 2 * static_cast<int64_t>(uniform(0, 500'000));  // even: halvable exactly
    if (t.flow) {
      t.bytes = 1e3 * uniform(0, 10'000);
      if (use == LinkUse::kPrivate) {
        for (int k = 0; k < links_per_stream; ++k) {
          if (uniform(0, 1) == 0 || t.links.empty()) {
            t.links.push_back(t.stream * links_per_stream + k);
          }
        }
      } else {
        for (int l = 0; l < num_links; ++l) {
          if (uniform(0, 2) == 0) {
            t.links.push_back(l);
          }
        }
      }
      if (uniform(0, 3) == 0) {
        t.cap = 1e9 * uniform(1, 20);
      }
    }
    const int num_deps = i == 0 ? 0 : uniform(0, 3);
    for (int k = 0; k < num_deps; ++k) {
      t.deps.push_back(uniform(0, i - 1));
    }
    g.tasks.push_back(t);
  }
  return g;
}

// Max-plus oracle for graphs where no two flows ever share a link: a flow then takes
// latency + ceil(bytes / min(link capacities, cap)) and every start is the latest predecessor end.
std::vector<int64_t> OracleEnds(const Graph& g) {
  std::vector<int64_t> end(g.tasks.size(), 0);
  std::vector<int64_t> stream_free(static_cast<size_t>(g.num_streams), 0);
  for (size_t i = 0; i < g.tasks.size(); ++i) {
    const TaskDesc& t = g.tasks[i];
    int64_t start = t.stream >= 0 ? stream_free[static_cast<size_t>(t.stream)] : 0;
    for (int d : t.deps) {
      start = std::max(start, end[static_cast<size_t>(d)]);
    }
    int64_t duration = t.fixed_ps;
    if (t.flow && t.bytes > 0.0) {
      double rate = t.cap > 0.0 ? t.cap : INFINITY;
      for (int l : t.links) {
        rate = std::min(rate, g.capacity[static_cast<size_t>(l)]);
      }
      if (std::isfinite(rate)) {
        duration += static_cast<int64_t>(std::ceil(t.bytes * 1e12 / rate));
      }
    }
    end[i] = start + duration;
    if (t.stream >= 0) {
      stream_free[static_cast<size_t>(t.stream)] = end[i];
    }
  }
  return end;
}

std::vector<int64_t> Ends(const RunResult& r) {
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(r.num_tasks()));
  for (int32_t t = 0; t < r.num_tasks(); ++t) {
    out.push_back(r.end(TaskId(t)).picos());
  }
  return out;
}

TEST(Properties, DelayGraphsMatchTheMaxPlusOracle) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const Graph g = RandomGraph(seed, 300, LinkUse::kNone);
    auto r = g.Build().Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(Ends(*r), OracleEnds(g)) << "seed " << seed;
  }
}

TEST(Properties, UnsharedFlowGraphsMatchTheMaxPlusOracle) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const Graph g = RandomGraph(seed, 300, LinkUse::kPrivate);
    auto r = g.Build().Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(Ends(*r), OracleEnds(g)) << "seed " << seed;
  }
}

// Where no link is shared at once, times are a max-plus function of durations, so more capacity
// (or shorter delays) can never lengthen the makespan. (With sharing it can: see
// Flows.MoreCapacityCanLengthenTheMakespanUnderSharing.)
TEST(Properties, MoreCapacityNeverIncreasesTheMakespanWithoutSharing) {
  std::mt19937 rng(99);
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    Graph g = RandomGraph(seed, 300, LinkUse::kPrivate);
    auto before = g.Build().Run();
    ASSERT_TRUE(before.ok());
    for (double& c : g.capacity) {
      c *= 1.0 + static_cast<double>(rng() % 4);
    }
    for (TaskDesc& t : g.tasks) {
      if (!t.flow) {
        t.fixed_ps -= t.fixed_ps * static_cast<int64_t>(rng() % 2) / 3;
      }
    }
    auto after = g.Build().Run();
    ASSERT_TRUE(after.ok());
    EXPECT_LE(after->makespan(), before->makespan()) << "seed " << seed;
  }
}

// Doubling every capacity and cap and halving every duration and latency is the same run at twice
// the speed: every time halves, up to the picosecond rounding of flow ends.
TEST(Properties, SharedLinksScaleWithTime) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    Graph g = RandomGraph(seed, 200, LinkUse::kShared);
    auto slow = g.Build().Run();
    ASSERT_TRUE(slow.ok()) << slow.status().ToString();
    // Not vacuous: some rate computations involved several flows at once.
    ASSERT_GT(slow->stats().reshared_flows, slow->stats().reshares) << "seed " << seed;
    for (double& c : g.capacity) {
      c *= 2.0;
    }
    for (TaskDesc& t : g.tasks) {
      t.fixed_ps /= 2;
      t.cap *= 2.0;
    }
    auto fast = g.Build().Run();
    ASSERT_TRUE(fast.ok());
    const std::vector<int64_t> a = Ends(*slow);
    const std::vector<int64_t> b = Ends(*fast);
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_NEAR(static_cast<double>(a[i]), 2.0 * static_cast<double>(b[i]), 50.0)
          << "seed " << seed << " task " << i;
    }
  }
}

// On shared links: bytes are conserved, no link carries more than capacity x busy time, and no
// flow beats its bottleneck rate alone.
TEST(Properties, SharedLinksConserveBytesAndRespectCapacity) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const Graph g = RandomGraph(seed, 300, LinkUse::kShared);
    const Engine e = g.Build();
    auto r = e.Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    std::vector<double> expected(g.capacity.size(), 0.0);
    for (size_t i = 0; i < g.tasks.size(); ++i) {
      const TaskDesc& t = g.tasks[i];
      if (!t.flow) {
        continue;
      }
      for (int l : t.links) {
        expected[static_cast<size_t>(l)] += t.bytes;
      }
      const TaskId id(static_cast<int32_t>(i));
      const std::vector<int64_t> alone = OracleEnds(
          Graph{0, g.capacity, {TaskDesc{t.flow, -1, t.fixed_ps, t.bytes, t.links, t.cap, {}}}});
      EXPECT_GE((r->end(id) - r->start(id)).picos(), alone[0]) << "seed " << seed << " task " << i;
    }
    for (size_t l = 0; l < g.capacity.size(); ++l) {
      const ResourceId link(g.num_streams + static_cast<int32_t>(l));
      EXPECT_DOUBLE_EQ(r->LinkBytes(link).value(), expected[l]);
      EXPECT_LE(r->LinkBytes(link).value(),
                g.capacity[l] * r->LinkBusy(link).seconds().value() * (1 + 1e-9) + 1.0);
      EXPECT_LE(r->LinkBusy(link), r->makespan());
    }
  }
}

TEST(Properties, SameInputGivesIdenticalResults) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const Graph g = RandomGraph(seed, 500, LinkUse::kShared);
    const Engine e1 = g.Build();
    const Engine e2 = g.Build();
    auto r1 = e1.Run();
    auto r2 = e2.Run();
    auto r3 = e1.Run();
    ASSERT_TRUE(r1.ok() && r2.ok() && r3.ok());
    EXPECT_EQ(Ends(*r1), Ends(*r2));
    EXPECT_EQ(Ends(*r1), Ends(*r3));
    EXPECT_EQ(r1->CriticalPathToString(), r2->CriticalPathToString());
    EXPECT_EQ(r1->stats().events, r2->stats().events);
    EXPECT_EQ(r1->stats().reshares, r3->stats().reshares);
  }
}

// Run() keeps its state in the run, not in the Engine or in globals: threads may run one Engine
// (or many) at once and get the single-threaded answer.
TEST(Properties, ConcurrentRunsAgree) {
  const Graph g = RandomGraph(3, 2000, LinkUse::kShared);
  const Engine e = g.Build();
  auto reference = e.Run();
  ASSERT_TRUE(reference.ok());
  const std::vector<int64_t> expected = Ends(*reference);
  std::vector<std::vector<int64_t>> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] {
      for (int rep = 0; rep < 5; ++rep) {
        got[i] = Ends(*e.Run());
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  for (const auto& ends : got) {
    EXPECT_EQ(ends, expected);
  }
}

// The critical path of any run is contiguous from zero to the makespan.
TEST(Properties, CriticalPathSpansTheMakespan) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    const Graph g = RandomGraph(seed, 300, LinkUse::kShared);
    auto r = g.Build().Run();
    ASSERT_TRUE(r.ok());
    const auto& path = r->critical_path();
    ASSERT_FALSE(path.empty());
    EXPECT_EQ(path.front().start, Ps(0));
    EXPECT_EQ(path.front().released_by, Release::kAtStart);
    for (size_t i = 1; i < path.size(); ++i) {
      ASSERT_EQ(path[i].start, path[i - 1].end);
    }
    EXPECT_EQ(path.back().end, r->makespan());
  }
}

}  // namespace
}  // namespace shardsim
