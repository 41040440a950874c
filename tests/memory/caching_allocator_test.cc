// The caching-allocator replay (sim/memory/caching_allocator.h) on hand-checked sequences: the
// rule each test names (c10/cuda/CUDACachingAllocator.cpp) decides the expected bytes.
#include "sim/memory/caching_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace shardsim {
namespace {

constexpr int64_t MiB = int64_t{1} << 20;
constexpr double dMiB = 1048576.0;

TEST(CachingAllocator, DefaultSegmentsAndSplitting) {
  CachingAllocator a(false);
  // round_size to 512 B; a small request takes a 2 MiB small-pool segment.
  const int64_t s = a.Malloc(1000);
  EXPECT_EQ(a.block_size(s), 1024);
  EXPECT_EQ(a.reserved(), 2 * MiB);
  // A 5 MiB request: a 20 MiB segment, split (the 15 MiB rest is more than kSmallSize) ...
  a.Malloc(5 * dMiB);
  EXPECT_EQ(a.reserved(), 22 * MiB);
  // ... so a second one is served from its remainder.
  a.Malloc(5 * dMiB);
  EXPECT_EQ(a.reserved(), 22 * MiB);
  // 11.5 MiB: a 12 MiB segment whose 0.5 MiB tail stays with the block (not more than 1 MiB).
  const int64_t l = a.Malloc(11.5 * dMiB);
  EXPECT_EQ(a.block_size(l), 12 * MiB);
  EXPECT_EQ(a.reserved(), 34 * MiB);
  EXPECT_EQ(a.allocated(), 1024 + 10 * MiB + 12 * MiB);
}

TEST(CachingAllocator, BestFitAndMerging) {
  CachingAllocator a(false);
  const int64_t big = a.Malloc(40 * dMiB);
  const int64_t mid = a.Malloc(24 * dMiB);
  a.Free(big);
  a.Free(mid);
  EXPECT_EQ(a.allocated(), 0);
  EXPECT_EQ(a.reserved(), 64 * MiB);  // segments are kept
  // Best fit: 22 MiB goes to the 24 MiB block, so 30 MiB still finds the 40 MiB one.
  a.Malloc(22 * dMiB);
  a.Malloc(30 * dMiB);
  EXPECT_EQ(a.reserved(), 64 * MiB);
  // Merging: the two halves of one segment, freed, serve a request neither could alone.
  CachingAllocator b(false);
  const int64_t h1 = b.Malloc(20 * dMiB);
  b.Free(h1);
  const int64_t p = b.Malloc(8 * dMiB);   // split from the 20 MiB segment: [0, 8)
  const int64_t q = b.Malloc(12 * dMiB);  // the rest: [8, 20)
  EXPECT_EQ(b.reserved(), 20 * MiB);
  b.Free(p);
  b.Free(q);
  b.Malloc(16 * dMiB);
  EXPECT_EQ(b.reserved(), 20 * MiB);
  EXPECT_EQ(b.peak_reserved(), 20 * MiB);
}

TEST(CachingAllocator, ExpandablePageGrowth) {
  CachingAllocator a(true);
  // 2 MiB (large pool) maps one 20 MiB page; the 18 MiB after it stays a free block.
  a.Malloc(2 * dMiB);
  EXPECT_EQ(a.reserved(), 20 * MiB);
  // 30 MiB fits no free block: it starts at the free block before the unmapped tail (2 MiB) and
  // maps up to 32 MiB, i.e. 40 MiB of pages (placed at the mapped end it would need 60).
  a.Malloc(30 * dMiB);
  EXPECT_EQ(a.reserved(), 40 * MiB);
  // Under expandable segments every remainder of 512 B or more is split: no tail kept.
  const int64_t odd = a.Malloc(11.5 * dMiB);
  EXPECT_EQ(a.block_size(odd), static_cast<int64_t>(11.5 * dMiB));
  // The small pool is a segment of its own, in 2 MiB pages.
  a.Malloc(1000);
  EXPECT_EQ(a.reserved(), 60 * MiB + 2 * MiB);
}

TEST(CachingAllocator, ExpandableBestFitSkipsTheGrowableBlock) {
  CachingAllocator a(true);
  const int64_t x = a.Malloc(10 * dMiB);  // [0, 10)
  a.Malloc(2 * dMiB);                     // [10, 12); [12, 20) free, before the unmapped tail
  a.Free(x);                              // [0, 10) free
  // 6 MiB: the 8 MiB block is the best fit by size, but it can grow into the tail, so its
  // expandable size is larger than the 10 MiB block's: the 10 MiB block is taken.
  a.Malloc(6 * dMiB);
  EXPECT_EQ(a.reserved(), 20 * MiB);
  // 9 MiB now fits neither 4 MiB [6, 10) nor 8 MiB [12, 20): it grows from 12 to 21 MiB (40 of
  // pages). Had the 6 MiB taken [12, 18), the 10 MiB block would have held it.
  a.Malloc(9 * dMiB);
  EXPECT_EQ(a.reserved(), 40 * MiB);
}

TEST(CachingAllocator, StreamsKeepTheirBlocks) {
  CachingAllocator a(true);
  const int64_t x = a.Malloc(10 * dMiB, 0);
  a.Free(x);
  a.Malloc(10 * dMiB, 1);  // the free block is stream 0's: stream 1 maps a segment of its own
  EXPECT_EQ(a.reserved(), 40 * MiB);
  EXPECT_EQ(a.reserved_on(0), 20 * MiB);
  EXPECT_EQ(a.reserved_on(1), 20 * MiB);
}

// A logits hole: bf16 logits L, their fp32 copy F and the log-softmax S (saved); F and L freed
// leave a hole of L + F below S; the backward's first gradient fills F of it, the second cannot
// use the L left over and maps above S: reserved peaks L above allocated.
TEST(CachingAllocator, ExpandableHoleBelowASavedBlock) {
  CachingAllocator a(true);
  const int64_t l = a.Malloc(40 * dMiB);
  const int64_t f = a.Malloc(80 * dMiB);
  const int64_t s = a.Malloc(80 * dMiB);
  a.Free(f);
  a.Free(l);
  const int64_t g1 = a.Malloc(80 * dMiB);
  const int64_t g2 = a.Malloc(80 * dMiB);
  EXPECT_EQ(a.peak_allocated(), 240 * MiB);
  EXPECT_EQ(a.peak_reserved(), 280 * MiB);
  a.Free(g1);
  a.Free(g2);
  a.Free(s);
  EXPECT_EQ(a.allocated(), 0);
  EXPECT_EQ(a.reserved(), 280 * MiB);  // nothing is unmapped
}

}  // namespace
}  // namespace shardsim
