// The layout's sub-groups (expert-parallel, expert-data-parallel, HSDP shard / replica, FSDP2
// reshard groups: sim/parallel/layout.cc) in closed form hold the same GPUs as listing their
// members rank by rank (the lists they were built as before, kept here as the reference), so
// their shapes and costs are unchanged while costing them no longer grows with the DP degree
// (issue 17: an expert-data-parallel group of 2,048 ranks was enumerated, sorted and counted).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "sim/parallel/layout.h"
#include "sim/topology/group.h"
#include "tests/topology/test_specs.h"

namespace shardsim {
namespace {

// The members as layout.cc listed them: EP groups are ep consecutive (dp, cp) ranks, dp
// fastest; expert-data-parallel ranks are ep apart; HSDP slices are blocks (or, replica, every
// block's rank at the same offset) of the gradient group in its rank order.
std::vector<int32_t> Listed(const Placement& pl, int64_t ep, int64_t block, CommGroup g,
                            const RankCoords& at) {
  std::vector<int32_t> out;
  if (g == CommGroup::kEp || g == CommGroup::kExpertGrad) {
    const int64_t dp = pl.Size(ParallelDim::kDp);
    const int64_t cp = pl.Size(ParallelDim::kCp);
    const int64_t sd = pl.Stride(ParallelDim::kDp);
    const int64_t sc = pl.Stride(ParallelDim::kCp);
    const int64_t j = at.dp + at.cp * dp;
    RankCoords base = at;
    base.dp = 0;
    base.cp = 0;
    const int64_t origin = pl.GpuOf(base).v;
    const auto gpu = [&](int64_t k) {
      return static_cast<int32_t>(origin + (k % dp) * sd + (k / dp) * sc);
    };
    if (g == CommGroup::kEp) {
      for (int64_t i = 0; i < ep; ++i) out.push_back(gpu((j / ep) * ep + i));
    } else {
      for (int64_t k = j % ep; k < dp * cp; k += ep) out.push_back(gpu(k));
    }
  } else {
    const Group grad = pl.GroupOf({ParallelDim::kDp, ParallelDim::kCp}, at);
    int64_t index = 0, radix = 1;
    for (ParallelDim d : pl.order()) {
      if (d != ParallelDim::kDp && d != ParallelDim::kCp) continue;
      index += at.at(d) * radix;
      radix *= pl.Size(d);
    }
    if (g == CommGroup::kReplica) {
      for (int64_t i = index % block; i < grad.size(); i += block) out.push_back(grad.Member(i).v);
    } else if (block >= grad.size()) {
      for (const GpuId m : grad.Members()) out.push_back(m.v);
    } else {
      const int64_t first = index / block * block;
      for (int64_t i = first; i < first + block; ++i) out.push_back(grad.Member(i).v);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> ds;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) ds.push_back(d);
  }
  return ds;
}

TEST(LayoutGroups, ClosedFormHoldsTheListedMembers) {
  std::mt19937_64 rng(17);
  const std::vector<std::vector<std::string>> orders = {{"tp", "cp", "dp", "pp"},
                                                        {"tp", "dp", "cp", "pp"},
                                                        {"dp", "tp", "cp", "pp"},
                                                        {"pp", "dp", "cp", "tp"},
                                                        {"cp", "pp", "tp", "dp"}};
  const auto pick = [&](const std::vector<int64_t>& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  int strided = 0, checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    Scenario sc;
    sc.topology = testing::DgxH100();
    ParallelSpec& p = sc.parallel;
    p.tp = pick({1, 2, 4, 8});
    p.pp = pick({1, 2, 3, 4});
    p.cp = pick({1, 2, 3, 4});
    p.dp = pick({1, 2, 3, 4, 6, 8, 12, 16, 24, 64});
    p.order = orders[static_cast<size_t>(trial) % orders.size()];
    // Any ep: dividing dp * cp or not (then the groups are listed), above dp or below.
    p.ep = pick({1, 2, 3, 4, 6, 8, 16, p.dp, p.dp * p.cp});
    sc.gpus = p.tp * p.pp * p.cp * p.dp;
    const std::vector<int64_t> shards = Divisors(p.dp * p.cp);
    sc.framework.shard_group = trial % 3 == 0 ? 0 : pick(shards);
    if (trial % 4 == 1) {
      sc.framework.reshard_after_forward = Reshard::kToGroup;
      sc.framework.reshard_group = pick(shards);
    }
    if (sc.gpus % 8 != 0 && sc.gpus > 8) continue;  // whole nodes
    Result<Layout> layout = Layout::Make(sc);
    ASSERT_TRUE(layout.ok()) << layout.status().ToString();
    const Placement& pl = layout->placement();
    const int64_t shard = layout->GroupSize(CommGroup::kShard);
    for (int sample = 0; sample < 6; ++sample) {
      RankCoords at;
      at.dp = std::uniform_int_distribution<int64_t>(0, p.dp - 1)(rng);
      at.cp = std::uniform_int_distribution<int64_t>(0, p.cp - 1)(rng);
      at.pp = std::uniform_int_distribution<int64_t>(0, p.pp - 1)(rng);
      for (CommGroup g : {CommGroup::kEp, CommGroup::kExpertGrad, CommGroup::kShard,
                          CommGroup::kReplica, CommGroup::kReshard}) {
        if (layout->GroupSize(g) <= 1) continue;
        if ((g == CommGroup::kEp || g == CommGroup::kExpertGrad) && (p.dp * p.cp) % p.ep != 0) {
          continue;  // not a layout the scenario checks accept
        }
        Result<Group> got = layout->GroupAt(g, at);
        ASSERT_TRUE(got.ok()) << got.status().ToString();
        std::vector<int32_t> members;
        for (const GpuId m : got->Members()) members.push_back(m.v);
        std::sort(members.begin(), members.end());
        const int64_t block = g == CommGroup::kReshard ? layout->GroupSize(g) : shard;
        ASSERT_EQ(members, Listed(pl, p.ep, block, g, at))
            << Name(g) << " tp" << p.tp << " pp" << p.pp << " cp" << p.cp << " dp" << p.dp << " ep"
            << p.ep << " shard " << shard << " order " << p.order[0] << p.order[1] << p.order[2]
            << p.order[3] << " at dp" << at.dp << " cp" << at.cp;
        strided += got->strided() ? 1 : 0;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
  // The closed form covers the slices that line up with the grid (87% of these draws; the rest,
  // e.g. a shard group of 6 over dp 4 x cp 3, dp innermost, are listed).
  EXPECT_GT(strided, checked * 3 / 4);
}

// DP 2,048 of a dense model: its expert-data-parallel group is the whole gradient group, now a
// strided group of two dimensions at most, not a list of 2,048 GPUs.
TEST(LayoutGroups, LargeGroupsAreStrided) {
  Scenario sc;
  sc.topology = testing::DgxH100();
  sc.parallel.tp = 8;
  sc.parallel.pp = 4;
  sc.parallel.dp = 2048;
  sc.gpus = 8 * 4 * 2048;
  sc.framework.shard_group = 8;
  Result<Layout> layout = Layout::Make(sc);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  for (CommGroup g : {CommGroup::kExpertGrad, CommGroup::kShard, CommGroup::kReplica}) {
    Result<Group> group = layout->GroupAt(g, RankCoords{});
    ASSERT_TRUE(group.ok());
    EXPECT_TRUE(group->strided()) << Name(g);
    EXPECT_LE(group->dims().size(), 2u) << Name(g);
  }
  EXPECT_EQ(layout->GroupAt(CommGroup::kReplica, RankCoords{})->size(), 256);
}

}  // namespace
}  // namespace shardsim
