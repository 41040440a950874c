#include "sim/topology/cluster.h"

#include <gtest/gtest.h>

#include "sim/topology/fabric_graph.h"
#include "tests/topology/test_specs.h"

namespace shardsim {
namespace {

using testing::DgxA100;
using testing::DgxH100;
using testing::HgxH100OneNode;
using testing::Llama3Roce;
using testing::Uniform;

TEST(ClusterBuild, LevelsOfA16kGpuDgxH100Cluster) {
  Result<Cluster> c = Cluster::Build(DgxH100(), 16384);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const ClusterLevels& lv = c->levels();
  EXPECT_EQ(lv.nodes, 2048);
  EXPECT_EQ(lv.nodes_per_leaf, 32);
  EXPECT_EQ(lv.leaves, 64);
  EXPECT_EQ(lv.pods, 1);
  EXPECT_EQ(c->NodeOf(GpuId(17)), 2);
  EXPECT_EQ(c->LocalIndexOf(GpuId(17)), 1);
  EXPECT_EQ(c->LeafOf(33), 1);
}

TEST(ClusterBuild, Llama3PodsOf384Nodes) {
  Result<Cluster> c = Cluster::Build(Llama3Roce(), 24576);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->levels().nodes, 3072);
  EXPECT_EQ(c->levels().leaves, 1536);
  EXPECT_EQ(c->levels().pods, 8);
  EXPECT_EQ(c->PodOf(383), 0);
  EXPECT_EQ(c->PodOf(384), 1);
}

TEST(ClusterBuild, PartOfOneNode) {
  Result<Cluster> c = Cluster::Build(HgxH100OneNode(), 4);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->num_nodes(), 1);
  EXPECT_EQ(c->num_gpus(), 4);
}

TEST(ClusterBuild, ErrorsNameTheTopologyAndTheKey) {
  TopologySpec zero = DgxH100();
  zero.intra_bandwidth = 0;
  EXPECT_EQ(Cluster::Build(zero, 8).status().message(),
            "topology 'dgx-h100': intra_node.bandwidth must be positive, got 0; expected e.g. "
            "\"450 GB/s\"");
  TopologySpec eff = DgxH100();
  eff.inter_efficiency = 1.5;
  EXPECT_EQ(Cluster::Build(eff, 8).status().message(),
            "topology 'dgx-h100': inter_node.efficiency must be in (0, 1], got 1.50");
  TopologySpec over = DgxH100();
  over.oversubscription = 0.5;
  EXPECT_EQ(Cluster::Build(over, 8).status().message(),
            "topology 'dgx-h100': inter_node.oversubscription must be at least 1 (1 = "
            "non-blocking), got 0.500");
  EXPECT_EQ(Cluster::Build(DgxH100(), 12).status().message(),
            "12 GPUs do not fill whole nodes of topology 'dgx-h100' (8 GPUs per node); use a "
            "multiple of 8");
  EXPECT_EQ(Cluster::Build(HgxH100OneNode(), 16).status().message(),
            "topology 'hgx-h100-1node' is a single node of 8 GPUs (no inter_node block); 16 GPUs "
            "do not fit");
  EXPECT_EQ(Cluster::Build(Llama3Roce(), 32768).status().message(),
            "topology 'llama3-roce' has at most 3072 nodes (24576 GPUs); 32768 GPUs do not fit");
  EXPECT_EQ(Cluster::Build(DgxH100(), 0).status().message(), "gpus must be positive, got 0");
  EXPECT_EQ(Cluster::Build(DgxH100(), 0).status().code(), StatusCode::kInvalidInput);
}

TEST(ClusterBuild, ErrorsPointAtTheKeyInTheFile) {
  TopologySpec t = DgxH100();
  t.nic_bandwidth = 0;
  t.origins.set_file("topologies/x.yaml");
  t.origins.Set("inter_node.nic_bandwidth",
                KeyOrigin{SourceLoc{"topologies/x.yaml", 12, 18}, "  nic_bandwidth: 0 Gb/s"});
  const Status s = Cluster::Build(t, 16).status();
  ASSERT_EQ(s.diagnostics().size(), 1u);
  EXPECT_EQ(s.diagnostics()[0].loc.ToString(), "topologies/x.yaml:12:18");
}

TEST(ClusterCapacity, ClassCapacitiesFollowTheSpec) {
  TopologySpec t = Uniform(8, 100e9, 4, 10e9, /*per_leaf=*/4, /*oversubscription=*/2.0);
  t.nodes_per_pod = 8;
  t.pod_oversubscription = 3;
  Result<Cluster> c = Cluster::Build(t, 8 * 16);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_DOUBLE_EQ(c->NominalBandwidth(LinkClass::kNvlink), 100e9);
  EXPECT_DOUBLE_EQ(c->NominalBandwidth(LinkClass::kNic), 10e9);
  // 4 nodes x 4 NICs x 10 GB/s / 2 and, for 8-node pods, 8 x 4 x 10 / (2 * 3).
  EXPECT_DOUBLE_EQ(c->NominalBandwidth(LinkClass::kLeafUplink), 80e9);
  EXPECT_DOUBLE_EQ(c->NominalBandwidth(LinkClass::kPodUplink), 320e9 / 6);
}

// The class capacities the collective model uses are those of the explicit graph.
double SumOut(const FabricGraph& g, VertexKind from, int32_t first, int32_t count, LinkClass c) {
  double sum = 0;
  for (int32_t v = 0; v < g.num_vertices(); ++v) {
    const FabricVertex& fv = g.vertex(v);
    if (fv.kind != from || fv.index < first || fv.index >= first + count) continue;
    for (LinkId l : g.OutLinks(v)) {
      if (g.link(l).link_class == c && g.link(l).up) sum += g.link(l).bandwidth;
    }
  }
  return sum;
}

TEST(FabricGraph, UplinkCapacitiesMatchTheClassModel) {
  TopologySpec t = Uniform(8, 100e9, 4, 10e9, /*per_leaf=*/4, /*oversubscription=*/2.0);
  t.nodes_per_pod = 8;
  t.pod_oversubscription = 3;
  Result<Cluster> c = Cluster::Build(t, 8 * 16);
  ASSERT_TRUE(c.ok());
  const FabricGraph& g = c->graph();
  // Leaf domain 0 is leaf switch 0 (fat tree: one switch per domain).
  EXPECT_NEAR(SumOut(g, VertexKind::kLeaf, 0, 1, LinkClass::kLeafUplink),
              c->NominalBandwidth(LinkClass::kLeafUplink), 1.0);
  // Pod 0 holds spines 0..3 (4 NICs -> 4 spines per pod).
  EXPECT_NEAR(SumOut(g, VertexKind::kSpine, 0, 4, LinkClass::kPodUplink),
              c->NominalBandwidth(LinkClass::kPodUplink), 1.0);
}

TEST(FabricGraph, RailOptimizedHasOneLeafPerRail) {
  Result<Cluster> c = Cluster::Build(DgxA100(), 8 * 40);
  ASSERT_TRUE(c.ok());
  // 320 GPUs, 40 NVSwitch planes, 320 NICs, 2 SUs x 8 rail leaves, 8 spines.
  EXPECT_EQ(c->graph().Summary(),
            "320 gpu, 40 nvswitch, 320 nic, 16 leaf, 8 spine; 2176 directed links");
  EXPECT_NEAR(SumOut(c->graph(), VertexKind::kLeaf, 0, 8, LinkClass::kLeafUplink),
              c->NominalBandwidth(LinkClass::kLeafUplink), 1.0);
}

TEST(FabricGraph, SingleNodeHasNoNetwork) {
  Result<Cluster> c = Cluster::Build(HgxH100OneNode(), 8);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->graph().Summary(), "8 gpu, 1 nvswitch; 16 directed links");
}

TEST(FabricGraph, SixteenThousandGpusBuild) {
  Result<Cluster> c = Cluster::Build(DgxH100(), 16384);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->graph().Summary(),
            "16384 gpu, 2048 nvswitch, 16384 nic, 512 leaf, 8 spine; 106496 directed links");
  // Copies share the graph.
  Cluster copy = *c;
  EXPECT_EQ(&copy.graph(), &c->graph());
}

}  // namespace
}  // namespace shardsim
