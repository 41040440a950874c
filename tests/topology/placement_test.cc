#include "sim/topology/placement.h"

#include <gtest/gtest.h>

#include <set>

#include "sim/topology/cluster.h"
#include "sim/topology/group.h"
#include "tests/topology/test_specs.h"

namespace shardsim {
namespace {

using testing::DgxH100;
using testing::Uniform;

ParallelSpec Layout(int64_t dp, int64_t tp, int64_t pp, int64_t cp) {
  ParallelSpec p;
  p.dp = dp;
  p.tp = tp;
  p.pp = pp;
  p.cp = cp;
  return p;
}

std::vector<int32_t> Ids(const Group& g) {
  std::vector<int32_t> out;
  for (GpuId id : g.Members()) out.push_back(id.v);
  return out;
}

TEST(Placement, DefaultOrderPutsTpInsideANode) {
  Result<Placement> p = Placement::Make(Layout(4, 8, 2, 1), 64);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->Stride(ParallelDim::kTp), 1);
  EXPECT_EQ(p->Stride(ParallelDim::kCp), 8);
  EXPECT_EQ(p->Stride(ParallelDim::kDp), 8);
  EXPECT_EQ(p->Stride(ParallelDim::kPp), 32);
  RankCoords c;
  c.dp = 1;
  c.pp = 1;
  c.tp = 3;
  EXPECT_EQ(p->GpuOf(c).v, 32 + 8 + 3);
  EXPECT_EQ(Ids(p->GroupOf(ParallelDim::kTp, c)),
            (std::vector<int32_t>{40, 41, 42, 43, 44, 45, 46, 47}));
  EXPECT_EQ(Ids(p->GroupOf(ParallelDim::kDp, c)), (std::vector<int32_t>{35, 43, 51, 59}));
  EXPECT_EQ(Ids(p->GroupOf(ParallelDim::kPp, c)), (std::vector<int32_t>{11, 43}));
  EXPECT_EQ(p->GroupOf(ParallelDim::kDp, c).ToString(), "gpus 35 + 8*i (i < 4)");
}

TEST(Placement, TpGroupsStayInsideNodesAndDpGroupsSpanThem) {
  Result<Cluster> cluster = Cluster::Build(DgxH100(), 64);
  Result<Placement> p = Placement::Make(Layout(4, 8, 2, 1), 64);
  ASSERT_TRUE(cluster.ok() && p.ok());
  for (const Group& g : p->AllGroups(ParallelDim::kTp)) {
    Result<GroupShape> s = AnalyzeGroup(*cluster, g);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->nodes, 1);
    EXPECT_EQ(s->ranks_per_node, 8);
  }
  for (const Group& g : p->AllGroups(ParallelDim::kDp)) {
    Result<GroupShape> s = AnalyzeGroup(*cluster, g);
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->nodes, 4);
    EXPECT_EQ(s->ranks_per_node, 1);
  }
}

TEST(Placement, CoordinatesRoundTripAndGroupsPartitionTheRanks) {
  ParallelSpec spec = Layout(2, 4, 3, 2);
  spec.order = {"dp", "tp", "pp", "cp"};
  Result<Placement> p = Placement::Make(spec, 48);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (int32_t gpu = 0; gpu < 48; ++gpu) {
    EXPECT_EQ(p->GpuOf(p->CoordsOf(GpuId(gpu))).v, gpu);
  }
  for (ParallelDim d : {ParallelDim::kTp, ParallelDim::kCp, ParallelDim::kDp, ParallelDim::kPp}) {
    const std::vector<Group> groups = p->AllGroups(d);
    EXPECT_EQ(static_cast<int64_t>(groups.size()), p->NumGroups(d));
    std::set<int32_t> seen;
    for (const Group& g : groups) {
      EXPECT_EQ(g.size(), p->Size(d));
      for (GpuId id : g.Members()) EXPECT_TRUE(seen.insert(id.v).second) << Name(d);
    }
    EXPECT_EQ(seen.size(), 48u);
  }
  // dp innermost: a DP group is 2 consecutive GPUs.
  EXPECT_EQ(Ids(p->GroupOf(ParallelDim::kDp, RankCoords{})), (std::vector<int32_t>{0, 1}));
}

TEST(Placement, MultiDimensionGroup) {
  Result<Placement> p = Placement::Make(Layout(2, 2, 1, 2), 8);
  ASSERT_TRUE(p.ok());
  RankCoords c;
  c.tp = 1;
  // cp stride 2, dp stride 4: the DP x CP group of tp rank 1.
  EXPECT_EQ(Ids(p->GroupOf({ParallelDim::kDp, ParallelDim::kCp}, c)),
            (std::vector<int32_t>{1, 3, 5, 7}));
}

TEST(Placement, Errors) {
  ParallelSpec bad = Layout(2, 4, 1, 1);
  bad.order = {"tp", "cp", "dpp", "pp"};
  EXPECT_EQ(Placement::Make(bad, 8).status().message(),
            "parallel.order: 'dpp' is not a parallel dimension (tp, cp, dp, pp); did you mean "
            "'dp'?");
  bad.order = {"tp", "dp", "pp"};
  EXPECT_EQ(Placement::Make(bad, 8).status().message(),
            "parallel.order must name each of tp, cp, dp, pp once, got [tp, dp, pp]");
  bad.order = {"tp", "tp", "dp", "pp"};
  EXPECT_EQ(Placement::Make(bad, 8).status().message(), "parallel.order: 'tp' appears twice");
  EXPECT_EQ(Placement::Make(Layout(2, 4, 1, 1), 16).status().message(),
            "dp*tp*pp*cp = 2*4*1*1 = 8 does not equal gpus (16)");
  EXPECT_EQ(Placement::Make(Layout(2, 0, 1, 1), 16).status().message(),
            "parallel.tp must be at least 1, got 0");
}

// The closed-form shape of every group of many layouts equals the shape found by enumeration.
TEST(GroupShape, ClosedFormMatchesEnumeration) {
  TopologySpec t = Uniform(4, 100e9, 4, 10e9, /*per_leaf=*/2);
  t.nodes_per_pod = 4;
  Result<Cluster> cluster = Cluster::Build(t, 64);  // 16 nodes, 8 leaf domains, 4 pods
  ASSERT_TRUE(cluster.ok());
  const std::vector<std::vector<std::string>> orders = {
      {"tp", "cp", "dp", "pp"}, {"dp", "tp", "cp", "pp"}, {"pp", "dp", "cp", "tp"}};
  const std::vector<std::array<int64_t, 4>> layouts = {{4, 4, 4, 1},  {2, 8, 2, 2},  {16, 2, 2, 1},
                                                       {1, 2, 16, 2}, {64, 1, 1, 1}, {2, 2, 2, 8}};
  int checked = 0;
  for (const auto& order : orders) {
    for (const auto& l : layouts) {
      ParallelSpec spec = Layout(l[0], l[1], l[2], l[3]);
      spec.order = order;
      Result<Placement> p = Placement::Make(spec, 64);
      ASSERT_TRUE(p.ok());
      for (ParallelDim d :
           {ParallelDim::kTp, ParallelDim::kCp, ParallelDim::kDp, ParallelDim::kPp}) {
        for (const Group& g : p->AllGroups(d)) {
          Result<GroupShape> fast = AnalyzeGroup(*cluster, g);
          Result<Group> listed = Group::Explicit(g.Members());
          ASSERT_TRUE(fast.ok() && listed.ok());
          Result<GroupShape> slow = AnalyzeGroup(*cluster, *listed);
          ASSERT_TRUE(slow.ok());
          EXPECT_EQ(fast->ranks_per_node, slow->ranks_per_node) << g.ToString();
          EXPECT_EQ(fast->nodes, slow->nodes) << g.ToString();
          EXPECT_EQ(fast->nodes_per_leaf, slow->nodes_per_leaf) << g.ToString();
          EXPECT_EQ(fast->leaves, slow->leaves) << g.ToString();
          EXPECT_EQ(fast->nodes_per_pod, slow->nodes_per_pod) << g.ToString();
          EXPECT_EQ(fast->pods, slow->pods) << g.ToString();
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(GroupShape, NonUniformGroupsUseTheLargestCounts) {
  Result<Cluster> cluster = Cluster::Build(Uniform(8, 100e9, 8, 10e9), 32);
  Result<Group> g = Group::Explicit({GpuId(0), GpuId(1), GpuId(2), GpuId(9)});
  ASSERT_TRUE(cluster.ok() && g.ok());
  Result<GroupShape> s = AnalyzeGroup(*cluster, *g);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ranks_per_node, 3);
  EXPECT_EQ(s->nodes, 2);
  EXPECT_FALSE(s->uniform);
  EXPECT_EQ(s->ToString(), "4 ranks: 3 per node on 2 nodes, 1 leaf domain, 1 pod (not uniform)");
}

TEST(Group, Errors) {
  EXPECT_EQ(Group::Strided(0, {{4, 2}, {2, 4}}).status().message(),
            "group dimensions overlap: stride 4 is within the span 6 of the smaller ones");
  EXPECT_EQ(Group::Strided(0, {{0, 1}}).status().message(),
            "group dimension 0 x 1: size and stride must be at least 1");
  EXPECT_EQ(Group::Explicit({GpuId(1), GpuId(1)}).status().message(),
            "gpu 1 appears twice in the group");
  Result<Cluster> cluster = Cluster::Build(Uniform(8, 100e9, 8, 10e9), 16);
  Result<Group> g = Group::Strided(8, {{2, 8}});
  ASSERT_TRUE(cluster.ok() && g.ok());
  EXPECT_EQ(AnalyzeGroup(*cluster, *g).status().message(),
            "group gpus 8 + 8*i (i < 2) reaches gpu 16, beyond the cluster's 16 GPUs");
}

TEST(Group, StridedMembersAndText) {
  Result<Group> g = Group::Strided(3, {{2, 1}, {3, 8}});
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(Ids(*g), (std::vector<int32_t>{3, 4, 11, 12, 19, 20}));
  EXPECT_EQ(g->ToString(), "gpus 3 + 1*i0 + 8*i1 (i0 < 2, i1 < 3)");
  EXPECT_EQ(Group::Strided(0, {{8, 1}})->ToString(), "gpus 0..7");
}

}  // namespace
}  // namespace shardsim
