// DeepSpeed ZeRO-3's coordinator replayed on small traces (sim/program/zero3_fetch.h), worked by
// hand from deepspeed/runtime/zero/partitioned_param_coordinator.py's rules.
#include "sim/program/zero3_fetch.h"

#include <gtest/gtest.h>

namespace shardsim {
namespace {

using Plan = std::vector<std::vector<size_t>>;

// GPT-3 175B's submodules (h = 12288): qkv 453M, proj 151M, fc1 604M, fc2 604M elements, two
// layers forward, DeepSpeed's defaults (prefetch bucket 5e7, max live 1e9). The bucket is smaller
// than any submodule, so each fetch prefetches exactly the next submodule: use 0 is fetched on
// demand with use 1, then each use i issues use i + 1. Live elements peak at fc1 + fc2 = 1.208e9
// (the bound is checked before a prefetch: 1e9 - 604M > 0 still lets fc2 in).
TEST(Zero3Fetch, OneSubmoduleAheadUnderTheDefaultBucket) {
  const std::vector<int64_t> layer = {453'000'000, 151'000'000, 604'000'000, 604'000'000};
  std::vector<FetchUse> trace;
  for (int64_t l = 0; l < 2; ++l) {
    for (int64_t u = 0; u < 4; ++u) trace.push_back({10 * l + u, layer[static_cast<size_t>(u)]});
  }
  const Plan plan = PlanFetches(trace, {50'000'000, 1'000'000'000, 1'000'000'000});
  EXPECT_EQ(plan, (Plan{{0, 1}, {2}, {3}, {4}, {5}, {6}, {7}, {}}));
}

// A bucket that covers several small submodules prefetches them all at once: 4 submodules of 10
// elements, bucket 25: use 0 fetches itself and prefetches 1, 2, 3 (10, 20 < 25, then 30 stops).
TEST(Zero3Fetch, BucketCoversSeveralSubmodules) {
  const std::vector<FetchUse> trace = {{0, 10}, {1, 10}, {2, 10}, {3, 10}, {4, 10}};
  EXPECT_EQ(PlanFetches(trace, {25, 1000, 0}), (Plan{{0, 1, 2, 3}, {4}, {}, {}, {}}));
}

// stage3_max_live_parameters: a submodule of 1.2e9 leaves no room (1e9 - 1.2e9 < 0), so the next
// one is fetched on demand after it is released.
TEST(Zero3Fetch, MaxLiveParametersStopsThePrefetch) {
  const std::vector<FetchUse> trace = {{0, 1'200'000'000}, {1, 100'000'000}};
  EXPECT_EQ(PlanFetches(trace, {50'000'000, 1'000'000'000, 0}), (Plan{{0}, {1}}));
  // Persistent parameters (numel 0) are never gathered.
  EXPECT_EQ(PlanFetches({{0, 0}, {1, 0}}, {50, 1000, 0}), (Plan{{}, {}}));
}

// stage3_max_reuse_distance, without prefetch: a recompute forward a, b then the backward b, a
// (100 elements each). With a distance of 150, a's reuse lies 200 elements ahead: released and
// fetched again; b is reused at once and kept. With 250 both are kept.
TEST(Zero3Fetch, ReuseDistanceKeepsParametersUsedSoon) {
  const std::vector<FetchUse> trace = {{0, 100}, {1, 100}, {1, 100}, {0, 100}};
  EXPECT_EQ(PlanFetches(trace, {0, 1000, 150}), (Plan{{0}, {1}, {}, {3}}));
  EXPECT_EQ(PlanFetches(trace, {0, 1000, 250}), (Plan{{0}, {1}, {}, {}}));
}

// reduce_bucket_size 500: 300, 300, 300, 100 elements: a bucket that would overflow is reduced
// when the next gradient arrives (after uses 1 and 2), the last 400 by the epilogue.
TEST(Zero3Fetch, ReduceBuckets) {
  const std::vector<ReduceBucket> b = PlanReduceBuckets({300, 0, 300, 300, 100}, 500);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].after, 2u);
  EXPECT_EQ(b[0].numel, 300);
  EXPECT_EQ(b[1].after, 3u);
  EXPECT_EQ(b[1].numel, 300);
  EXPECT_EQ(b[2].after, 4u);
  EXPECT_EQ(b[2].numel, 400);
  EXPECT_TRUE(PlanReduceBuckets({0, 0}, 500).empty());
}

}  // namespace
}  // namespace shardsim
