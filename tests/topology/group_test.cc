// Group shapes: the closed form of AnalyzeGroup (sim/topology/group.cc: the aligned O(dims) path
// and the block-period path) against enumeration of every member (ShapeByEnumeration, the
// reference) on random strided and explicit groups, random clusters and random placements.
#include "sim/topology/group.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "sim/topology/cluster.h"
#include "sim/topology/placement.h"
#include "tests/topology/test_specs.h"

namespace shardsim {
namespace {

using testing::DgxA100;
using testing::Uniform;

std::string Fields(const GroupShape& s) {
  return s.ToString() + " | per leaf " + std::to_string(s.nodes_per_leaf) + ", per pod " +
         std::to_string(s.nodes_per_pod);
}

void ExpectSameShape(const Cluster& cluster, const Group& group) {
  Result<GroupShape> fast = AnalyzeGroup(cluster, group);
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  const GroupShape slow = ShapeByEnumeration(cluster, group);
  EXPECT_EQ(fast->ranks, slow.ranks);
  EXPECT_EQ(Fields(*fast), Fields(slow))
      << group.ToString() << " on " << cluster.levels().gpus << " GPUs, "
      << cluster.levels().gpus_per_node << " per node, " << cluster.levels().nodes_per_leaf
      << " nodes per leaf, " << cluster.levels().nodes_per_pod << " per pod";
}

// A random cluster: 1-8 GPUs per node, 1-6 nodes per leaf, pods of 1-4 leaves or none.
Cluster RandomCluster(std::mt19937_64& rng, int64_t* gpus) {
  const int64_t gpn = std::uniform_int_distribution<int64_t>(1, 8)(rng);
  const int64_t per_leaf = std::uniform_int_distribution<int64_t>(1, 6)(rng);
  TopologySpec t = Uniform(gpn, 100e9, 1, 10e9, per_leaf);
  t.has_inter_node = true;
  const int64_t leaves_per_pod = std::uniform_int_distribution<int64_t>(0, 4)(rng);
  t.nodes_per_pod = leaves_per_pod * per_leaf;
  const int64_t nodes = std::uniform_int_distribution<int64_t>(1, 90)(rng);
  *gpus = nodes * gpn;
  Result<Cluster> c = Cluster::Build(t, *gpus);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

// A random strided group inside `gpus`: up to 4 dimensions, in a random order, each stride past
// the span of the smaller ones (Group::Strided's rule).
bool RandomStrided(std::mt19937_64& rng, int64_t gpus, Group* out) {
  const int ndims = std::uniform_int_distribution<int>(1, 4)(rng);
  std::vector<GroupDim> dims;
  int64_t span = 0;
  for (int j = 0; j < ndims; ++j) {
    const int64_t size = std::uniform_int_distribution<int64_t>(2, 9)(rng);
    const int64_t extra = std::uniform_int_distribution<int64_t>(0, 2)(rng) == 0
                              ? 0
                              : std::uniform_int_distribution<int64_t>(0, 12)(rng);
    const int64_t stride = span + 1 + extra;
    dims.push_back(GroupDim{size, stride});
    span += stride * (size - 1);
  }
  if (span >= gpus) return false;
  std::shuffle(dims.begin(), dims.end(), rng);
  const int64_t base = std::uniform_int_distribution<int64_t>(0, gpus - 1 - span)(rng);
  Result<Group> g = Group::Strided(base, dims);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  *out = *g;
  return true;
}

TEST(GroupShape, ClosedFormEqualsEnumerationOnRandomStridedGroups) {
  std::mt19937_64 rng(17);
  int checked = 0;
  for (int trial = 0; trial < 40000; ++trial) {
    int64_t gpus = 0;
    const Cluster cluster = RandomCluster(rng, &gpus);
    Group g = *Group::Explicit({GpuId(0)});
    if (!RandomStrided(rng, gpus, &g)) continue;
    ExpectSameShape(cluster, g);
    if (HasFailure()) return;
    ++checked;
  }
  EXPECT_GT(checked, 10000);
}

TEST(GroupShape, ClosedFormEqualsEnumerationOnRandomExplicitGroups) {
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 3000; ++trial) {
    int64_t gpus = 0;
    const Cluster cluster = RandomCluster(rng, &gpus);
    std::vector<GpuId> all;
    for (int64_t i = 0; i < gpus; ++i) all.push_back(GpuId(static_cast<int32_t>(i)));
    std::shuffle(all.begin(), all.end(), rng);
    const int64_t n = std::uniform_int_distribution<int64_t>(1, gpus)(rng);
    all.resize(static_cast<size_t>(n));
    ExpectSameShape(cluster, *Group::Explicit(all));
    if (HasFailure()) return;
  }
}

// Every group of random layouts and rank orders on random clusters, and the DP groups of the
// benchmark's DP 8 to 2,048 on dgx-a100 (20-node leaf domains: DP groups that end inside one).
TEST(GroupShape, ClosedFormEqualsEnumerationOnPlacements) {
  std::mt19937_64 rng(2026);
  const std::vector<std::vector<std::string>> orders = {{"tp", "cp", "dp", "pp"},
                                                        {"dp", "tp", "cp", "pp"},
                                                        {"pp", "dp", "cp", "tp"},
                                                        {"tp", "pp", "dp", "cp"}};
  for (int trial = 0; trial < 300; ++trial) {
    int64_t gpus = 0;
    const Cluster cluster = RandomCluster(rng, &gpus);
    ParallelSpec p;
    int64_t left = gpus;
    auto divisor = [&](int64_t n) {
      std::vector<int64_t> ds;
      for (int64_t d = 1; d <= n; ++d) {
        if (n % d == 0) ds.push_back(d);
      }
      return ds[std::uniform_int_distribution<size_t>(0, ds.size() - 1)(rng)];
    };
    p.tp = divisor(left);
    left /= p.tp;
    p.pp = divisor(left);
    left /= p.pp;
    p.cp = divisor(left);
    p.dp = left / p.cp;
    p.order = orders[static_cast<size_t>(trial) % orders.size()];
    Result<Placement> pl = Placement::Make(p, gpus);
    ASSERT_TRUE(pl.ok()) << pl.status().ToString();
    for (ParallelDim d : {ParallelDim::kTp, ParallelDim::kCp, ParallelDim::kDp, ParallelDim::kPp}) {
      for (const Group& g : pl->AllGroups(d)) ExpectSameShape(cluster, g);
    }
    ExpectSameShape(cluster, pl->GroupOf({ParallelDim::kDp, ParallelDim::kCp}, RankCoords{}));
    if (HasFailure()) return;
  }
  for (int64_t dp = 8; dp <= 2048; dp *= 4) {
    Result<Cluster> cluster = Cluster::Build(DgxA100(), dp * 32);
    ASSERT_TRUE(cluster.ok());
    for (int64_t stride : {8, 32}) {
      Result<Group> g = Group::Strided(3, {GroupDim{dp, stride}});
      ASSERT_TRUE(g.ok());
      ExpectSameShape(*cluster, *g);
    }
  }
}

// Closed form, by hand: 2,048 DP ranks 8 GPUs apart on dgx-a100 (one rank per node on 2,048
// nodes; 20-node leaf domains, so 102 full ones and one of 8 nodes).
TEST(GroupShape, UnalignedDataParallelGroupOnDgxA100) {
  Result<Cluster> cluster = Cluster::Build(DgxA100(), 2048 * 32);
  Result<Group> g = Group::Strided(0, {GroupDim{2048, 8}});
  ASSERT_TRUE(cluster.ok() && g.ok());
  Result<GroupShape> s = AnalyzeGroup(*cluster, *g);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ranks_per_node, 1);
  EXPECT_EQ(s->nodes, 2048);
  EXPECT_EQ(s->nodes_per_leaf, 20);
  EXPECT_EQ(s->leaves, 103);
  EXPECT_EQ(s->pods, 1);
  EXPECT_EQ(s->nodes_per_pod, 2048);
  EXPECT_FALSE(s->uniform);
}

}  // namespace
}  // namespace shardsim
