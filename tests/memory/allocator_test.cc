// PyTorch's caching-allocator rules (sim/memory/allocator.h) in closed form, and the three memory
// figures against what a profiler printed on an NVIDIA H200 (bench/h200/results/train.json:
// torch.cuda.max_memory_allocated, max_memory_reserved, and total - free from cudaMemGetInfo).
#include "sim/memory/allocator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/memory/h200_rows.h"
#include "tests/model/test_models.h"

namespace shardsim {
namespace {

// BlockSizes' form: sorted by size, each size once, counts summed.
TEST(Allocator, BlockListsMergeAndKeepTheirOrder) {
  BlockSizes blocks = {{4.0, 1.0}, {2.0, 3.0}, {4.0, 2.0}, {1.0, 1.0}};
  MergeBlocks(blocks);
  EXPECT_EQ(blocks, (BlockSizes{{1.0, 1.0}, {2.0, 3.0}, {4.0, 3.0}}));
  AddBlocks(blocks, 3.0, 1.0);
  AddBlocks(blocks, 2.0, 2.0);
  AddBlocks(blocks, 8.0, 1.0);
  EXPECT_EQ(blocks, (BlockSizes{{1.0, 1.0}, {2.0, 5.0}, {3.0, 1.0}, {4.0, 3.0}, {8.0, 1.0}}));
}

TEST(Allocator, BlockRounding) {
  // round_size: 512 B multiples.
  EXPECT_EQ(AllocatorBlockFor(1).allocated, 512.0);
  EXPECT_EQ(AllocatorBlockFor(513).allocated, 1024.0);
  EXPECT_EQ(AllocatorBlockFor(kSmallSize).allocated, kSmallSize);
  // Medium: split out of a 20 MiB segment, the block keeps its rounded size.
  EXPECT_EQ(AllocatorBlockFor(5 * kMiB + 1).allocated, 5 * kMiB + 512);
  // Large: a segment rounded to 2 MiB; a tail of more than 1 MiB is split off (10.5 MiB in a
  // 12 MiB segment), a tail of at most 1 MiB stays with the block (11.5 MiB -> 12 MiB).
  EXPECT_EQ(AllocatorBlockFor(10.5 * kMiB).allocated, 10.5 * kMiB);
  EXPECT_EQ(AllocatorBlockFor(10.5 * kMiB).segment, 12 * kMiB);
  EXPECT_EQ(AllocatorBlockFor(11.5 * kMiB).allocated, 12 * kMiB);
  EXPECT_EQ(AllocatorBlockFor(128 * kMiB).allocated, 128 * kMiB);
  EXPECT_EQ(AllocatorBlockFor(128 * kMiB).segment, 128 * kMiB);
}

TEST(Allocator, PoolsPackIntoSegments) {
  // Three 1 KiB requests share one 2 MiB small-pool segment.
  BlockTotals small = PackBlocks({{1024.0, 3.0}});
  EXPECT_EQ(small.allocated, 3072.0);
  EXPECT_EQ(small.reserved, kSmallBuffer);
  // Three 8 MiB requests: 24 MiB of blocks in two 20 MiB segments.
  BlockTotals medium = PackBlocks({{8 * kMiB, 3.0}});
  EXPECT_EQ(medium.allocated, 24 * kMiB);
  EXPECT_EQ(medium.reserved, 40 * kMiB);
  // Large requests: their own segments.
  BlockTotals large = PackBlocks({{10.5 * kMiB, 2.0}});
  EXPECT_EQ(large.allocated, 21 * kMiB);
  EXPECT_EQ(large.reserved, 24 * kMiB);
}

// A stage of one 4 MiB weight, one 11.5 MiB activation block per micro-batch, 64 MiB of loss
// buffers and a 32 MiB full-recompute buffer (never live with the loss buffers).
StageMemory SmallStage() {
  StageMemory s;
  s.weights = Bytes(4 * kMiB);
  s.state_blocks = {{4 * kMiB, 1.0}};
  s.activations_per_microbatch = Bytes(11.5 * kMiB);
  s.activation_blocks = {{11.5 * kMiB, 1.0}};
  s.loss_buffers = Bytes(64 * kMiB);
  s.recompute_buffer = Bytes(32 * kMiB);
  return s;
}

TEST(Allocator, FiguresOfAStage) {
  StageMemory s = SmallStage();
  s.cuda_context = Bytes(500 * kMiB);
  s.comm_buffers = Bytes(1024 * kMiB);
  HardwareSpec hw;
  hw.reserve_fragmentation = 0.1;
  const MemoryFigures f = DeviceMemoryFigures(s, Bytes(2 * 11.5 * kMiB), hw);
  EXPECT_EQ(f.transient.value(), 64 * kMiB);
  // Two micro-batches of one 11.5 MiB block, each in a 12 MiB block of its own segment.
  EXPECT_EQ(f.block_rounding.value(), 2 * 0.5 * kMiB);
  const double allocated = (4 + 64 + 32 + 2 * 12) * kMiB;  // weights, loss, cuBLAS, activations
  EXPECT_EQ(f.allocated.value(), allocated);
  // The 4 MiB weight sits in a 20 MiB medium segment (16 MiB of tail), the rest fill theirs.
  EXPECT_EQ(f.segment_rounding.value(), 16 * kMiB);
  EXPECT_DOUBLE_EQ(f.reserved.value(), allocated + 16 * kMiB + 0.1 * allocated);
  EXPECT_DOUBLE_EQ(f.device.value(), f.reserved.value() + 1524 * kMiB);
}

HardwareSpec H200Measured() {
  HardwareSpec h;
  h.name = "h200-test";
  h.memory_capacity = 141e9;
  h.reserve_cuda_context = 0.79e9;  // hardware/h200-sxm.yaml
  h.reserve_comm_buffers = 0.0;     // one GPU: no NCCL communicator
  h.reserve_fragmentation = 0.03;
  return h;
}

// Expandable segments (StageMemory::expandable_segments): should_split splits any remainder of
// at least 512 B, so a block is its request rounded to 512 B, and each pool of the stream is one
// segment of whole pages (20 MiB large, 2 MiB small).
TEST(Allocator, ExpandableSegments) {
  EXPECT_EQ(AllocatorBlockFor(513, true).allocated, 1024.0);
  EXPECT_EQ(AllocatorBlockFor(11.5 * kMiB, true).allocated, 11.5 * kMiB);  // default: 12 MiB
  EXPECT_EQ(AllocatorBlockFor(11.5 * kMiB, true).segment, 11.5 * kMiB);
  // Two 11.5 MiB and three 1000 B requests: 23 MiB in two 20 MiB pages, 3 x 1 KiB in one 2 MiB.
  const BlockTotals t = PackBlocks({{1000.0, 3.0}, {11.5 * kMiB, 2.0}}, 1.0, true);
  EXPECT_EQ(t.allocated, 23 * kMiB + 3072.0);
  EXPECT_EQ(t.small, 3072.0);
  EXPECT_EQ(t.reserved, 40 * kMiB + kSmallBuffer);
  // SmallStage: the activation blocks keep 11.5 MiB, and the compute stream's one large segment
  // holds 4 + 64 + 32 + 23 = 123 MiB in 7 pages (140 MiB).
  StageMemory s = SmallStage();
  s.expandable_segments = true;
  HardwareSpec hw;
  hw.reserve_fragmentation = 0.0;
  const MemoryFigures f = DeviceMemoryFigures(s, Bytes(2 * 11.5 * kMiB), hw);
  EXPECT_EQ(f.block_rounding.value(), 0.0);
  EXPECT_EQ(f.allocated.value(), 123 * kMiB);
  EXPECT_EQ(f.segment_rounding.value(), 17 * kMiB);
  EXPECT_EQ(f.reserved.value(), 140 * kMiB);
}

// The H200 profiler rows (bench/h200/calibrate_h200.py: peak_allocated_bytes is
// torch.cuda.max_memory_allocated, peak_reserved_bytes max_memory_reserved, device_used_bytes
// total - free of torch.cuda.mem_get_info after the step), predicted with the script's setup as
// tests/memory/budget_test.cc builds it. Allocated is held within 1% (issue 14); reserved and
// device are printed and held within 5% (their fragmentation is one measured median, 1.6-7.2%
// over these runs).
TEST(Allocator, AllocatedPeakAgreesWithH200Profiler) {
  std::ifstream in(std::string(SHARDSIM_SOURCE_DIR) + "/bench/h200/results/train.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json runs = nlohmann::json::parse(in);
  std::printf("%-12s %5s %3s %-5s | %9s %9s %6s | %9s %9s %6s | %9s %9s %6s\n", "model", "seq",
              "mb", "recomp", "alloc", "measured", "err", "reserved", "measured", "err", "device",
              "measured", "err");
  int held = 0;
  for (const auto& r : runs) {
    const auto [m, t] = testing::H200RowSpecs(r);
    const HardwareSpec hw = H200Measured();
    auto b = EstimateMemory(m, t, ParallelSpec{}, hw);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    const StageMemory& s = b->worst_stage();
    const MemoryFigures f = DeviceMemoryFigures(s, s.activations, hw);
    const double g = 1073741824.0;
    const double am = r["peak_allocated_bytes"], rm = r["peak_reserved_bytes"];
    const double dm = r["device_used_bytes"];
    const double ae = f.allocated.value() / am - 1, re = f.reserved.value() / rm - 1;
    const double de = f.device.value() / dm - 1;
    std::printf(
        "%-12s %5d %3d %-5s | %8.2fG %8.2fG %+5.1f%% | %8.2fG %8.2fG %+5.1f%% | "
        "%8.2fG %8.2fG %+5.1f%%\n",
        r["name"].get<std::string>().c_str(), static_cast<int>(t.seq_len),
        static_cast<int>(t.micro_batch), Name(t.recompute), f.allocated.value() / g, am / g,
        ae * 100, f.reserved.value() / g, rm / g, re * 100, f.device.value() / g, dm / g, de * 100);
    // Every row, the math-attention one (gpt-noflash: SDPA's fp32 math backend) included.
    EXPECT_NEAR(ae, 0.0, 0.01) << r["name"] << " seq " << t.seq_len << " " << Name(t.recompute);
    EXPECT_NEAR(re, 0.0, 0.05) << r["name"] << " seq " << t.seq_len;
    EXPECT_NEAR(de, 0.0, 0.05) << r["name"] << " seq " << t.seq_len;
    ++held;
  }
  EXPECT_GE(held, 12);
}

}  // namespace
}  // namespace shardsim
