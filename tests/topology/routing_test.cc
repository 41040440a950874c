#include "sim/topology/routing.h"

#include <gtest/gtest.h>

#include "sim/topology/cluster.h"
#include "sim/topology/fabric_graph.h"
#include "tests/topology/test_specs.h"

namespace shardsim {
namespace {

using testing::DgxA100;
using testing::Llama3Roce;
using testing::Uniform;

Cluster Make(const TopologySpec& spec, int64_t gpus) {
  Result<Cluster> c = Cluster::Build(spec, gpus);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

double FractionOfClass(const Cluster& c, const Route& r, LinkClass cls) {
  double sum = 0;
  for (const RouteHop& h : r.hops) {
    if (c.graph().link(h.link).link_class == cls) sum += h.fraction;
  }
  return sum;
}

TEST(Routing, InsideANodeThroughTheNvSwitch) {
  const Cluster c = Make(Uniform(8, 100e9, 4, 10e9), 32);
  Result<Route> r = RouteBetween(c, GpuId(1), GpuId(6));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->hop_count, 2);
  EXPECT_EQ(r->paths, 1);
  EXPECT_DOUBLE_EQ(r->latency, 1e-6);
  EXPECT_DOUBLE_EQ(r->bandwidth, 100e9);
  EXPECT_EQ(r->bottleneck, LinkClass::kNvlink);
  EXPECT_EQ(r->ToString(),
            "gpu 1 -> gpu 6: 2 hops, 1 paths, 1.00 us, 100 GB/s (nvlink (intra-node))");
}

TEST(Routing, AcrossNodesUnderOneLeaf) {
  // 8 GPUs and 4 NICs per node: GPU 0 uses NIC 0; GPU 9 (local 1) uses NIC 0 of node 1.
  const Cluster c = Make(Uniform(8, 100e9, 4, 10e9), 32);
  Result<Route> r = RouteBetween(c, GpuId(0), GpuId(9));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->hop_count, 4);  // GPU -> NIC -> leaf -> NIC -> GPU
  EXPECT_EQ(r->paths, 1);
  EXPECT_DOUBLE_EQ(r->latency, 5e-6);
  EXPECT_DOUBLE_EQ(r->bandwidth, 10e9);
  EXPECT_EQ(r->bottleneck, LinkClass::kPcie);  // GPU-NIC and NIC-leaf tie at the NIC rate
  EXPECT_DOUBLE_EQ(FractionOfClass(c, *r, LinkClass::kNic), 2.0);
}

TEST(Routing, AcrossLeavesSpreadsOverEverySpine) {
  // 2 leaf domains of 4 nodes; 4 NICs -> 4 spines; 2:1 over-subscribed uplinks.
  const Cluster c = Make(Uniform(8, 100e9, 4, 10e9, 4, 2.0), 64);
  Result<Route> r = RouteBetween(c, GpuId(0), GpuId(63));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->hop_count, 6);
  EXPECT_EQ(r->paths, 4);
  EXPECT_DOUBLE_EQ(FractionOfClass(c, *r, LinkClass::kLeafUplink), 2.0);  // up and down, 1/4 each
  int uplinks = 0;
  for (const RouteHop& h : r->hops) {
    if (c.graph().link(h.link).link_class == LinkClass::kLeafUplink) {
      EXPECT_DOUBLE_EQ(h.fraction, 0.25);
      ++uplinks;
    }
  }
  EXPECT_EQ(uplinks, 8);
  // Each leaf-spine link carries 4 nodes x 4 NICs x 10 GB/s / (2 x 4 spines) = 20 GB/s; a quarter
  // of the flow on it allows 80 GB/s: the NIC (10 GB/s) stays the bottleneck.
  EXPECT_DOUBLE_EQ(r->bandwidth, 10e9);
}

TEST(Routing, RailOptimizedCrossRailGoesThroughTheSpines) {
  const Cluster c = Make(DgxA100(), 8 * 4);  // one scalable unit
  Result<Route> same_rail = RouteBetween(c, GpuId(3), GpuId(8 + 3));
  ASSERT_TRUE(same_rail.ok());
  EXPECT_EQ(same_rail->hop_count, 4);
  Result<Route> cross_rail = RouteBetween(c, GpuId(3), GpuId(8 + 5));
  ASSERT_TRUE(cross_rail.ok());
  EXPECT_EQ(cross_rail->hop_count, 6);
  EXPECT_EQ(cross_rail->paths, 8);
  // The plain shortest-path search also finds 6-hop paths that forward through GPU 5 of the
  // source node (NVLink, then rail 5): what NCCL's PXN does, not its default route.
  Result<Route> any = ShortestPathRoute(c, GpuId(3), GpuId(8 + 5));
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->hop_count, 6);
  EXPECT_GT(any->paths, cross_rail->paths);
}

TEST(Routing, ThreeTierCrossPodGoesThroughTheCores) {
  TopologySpec t = Llama3Roce();
  const Cluster c = Make(t, 8 * 384 * 2);  // two pods
  Result<Route> r = RouteBetween(c, GpuId(0), GpuId(8 * 384));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->hop_count, 8);  // GPU NIC ToR spine core spine ToR NIC GPU
  EXPECT_EQ(r->paths, 8 * 8 * 8);
  EXPECT_DOUBLE_EQ(FractionOfClass(c, *r, LinkClass::kPodUplink), 2.0);
  EXPECT_EQ(r->bottleneck, LinkClass::kPcie);
}

TEST(Routing, AgreesWithPlainShortestPathsOnAFatTree) {
  TopologySpec t = Uniform(4, 100e9, 4, 10e9, /*per_leaf=*/2, /*oversubscription=*/2.0);
  t.nodes_per_pod = 4;
  const Cluster c = Make(t, 4 * 8);  // 8 nodes, 4 leaf domains, 2 pods
  for (int32_t s = 0; s < c.num_gpus(); ++s) {
    for (int32_t d = 0; d < c.num_gpus(); ++d) {
      Result<Route> fast = RouteBetween(c, GpuId(s), GpuId(d));
      Result<Route> slow = ShortestPathRoute(c, GpuId(s), GpuId(d));
      ASSERT_TRUE(fast.ok() && slow.ok());
      ASSERT_EQ(fast->hop_count, slow->hop_count) << s << " -> " << d;
      ASSERT_EQ(fast->paths, slow->paths) << s << " -> " << d;
      ASSERT_EQ(fast->hops.size(), slow->hops.size()) << s << " -> " << d;
      for (size_t i = 0; i < fast->hops.size(); ++i) {
        EXPECT_EQ(fast->hops[i].link, slow->hops[i].link);
        EXPECT_NEAR(fast->hops[i].fraction, slow->hops[i].fraction, 1e-12);
      }
      EXPECT_DOUBLE_EQ(fast->latency, slow->latency);
    }
  }
}

TEST(Routing, SharedNicIsNotALoopbackInsideANode) {
  // GPUs 0 and 1 share NIC 0: the plain search also finds GPU 0 -> NIC 0 -> GPU 1 (2 hops).
  const Cluster c = Make(Uniform(8, 100e9, 4, 10e9), 16);
  Result<Route> r = RouteBetween(c, GpuId(0), GpuId(1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->paths, 1);
  EXPECT_DOUBLE_EQ(FractionOfClass(c, *r, LinkClass::kNvlink), 2.0);
  Result<Route> any = ShortestPathRoute(c, GpuId(0), GpuId(1));
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->paths, 2);
}

TEST(Routing, FlowIsConservedAtEveryHopCount) {
  const Cluster c = Make(Llama3Roce(), 8 * 384 * 2);
  Result<Route> r = RouteBetween(c, GpuId(5), GpuId(8 * 500 + 2));
  ASSERT_TRUE(r.ok());
  double total = 0;
  for (const RouteHop& h : r->hops) total += h.fraction;
  EXPECT_NEAR(total, r->hop_count, 1e-9);  // each hop level carries the whole flow
}

TEST(Routing, RejectsGpusOutsideTheCluster) {
  const Cluster c = Make(Uniform(8, 100e9, 4, 10e9), 16);
  EXPECT_EQ(RouteBetween(c, GpuId(0), GpuId(16)).status().message(),
            "gpu 16 is not in the cluster (0..15)");
}

}  // namespace
}  // namespace shardsim
