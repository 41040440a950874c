#include "sim/memory/allocator.h"

#include <algorithm>
#include <cmath>

namespace shardsim {
namespace {

double RoundUp(double bytes, double unit) { return std::ceil(bytes / unit) * unit; }

}  // namespace

AllocatorBlock AllocatorBlockFor(double bytes, bool expandable_segments) {
  AllocatorBlock b;
  if (bytes <= 0.0) return b;
  const double size = RoundUp(bytes, kMinBlockSize);  // round_size
  // Small pool (<= 1 MiB) or split from a 20 MiB large segment; under expandable segments
  // should_split splits off any remainder of at least kMinBlockSize.
  if (size < kMinLargeAlloc || expandable_segments) {
    b.allocated = size;
    b.segment = size;
    return b;
  }
  const double segment = RoundUp(size, kRoundLarge);  // get_allocation_size, large requests
  // should_split (large pool): the tail becomes a free block only when larger than kSmallSize;
  // otherwise the block keeps it.
  b.allocated = segment - size > kSmallSize ? size : segment;
  b.segment = segment;
  return b;
}

BlockTotals PackBlocks(const BlockSizes& blocks, double scale, bool expandable_segments) {
  BlockTotals t;
  double medium = 0.0;
  for (const auto& [bytes, count] : blocks) {
    const double n = count * scale;
    const AllocatorBlock b = AllocatorBlockFor(bytes, expandable_segments);
    t.requested += n * bytes;
    t.allocated += n * b.allocated;
    if (b.allocated <= kSmallSize) {
      t.small += n * b.allocated;
    } else if (b.allocated < kMinLargeAlloc || expandable_segments) {
      medium += n * b.allocated;
    } else {
      t.reserved += n * b.segment;
    }
  }
  // The pools' blocks packed into whole segments (kSmallBuffer, kLargeBuffer), or, expandable,
  // into the pages of each pool's one segment (the same sizes).
  t.reserved += RoundUp(t.small, kSmallBuffer) + RoundUp(medium, kLargeBuffer);
  return t;
}

MemoryFigures DeviceMemoryFigures(const StageMemory& s, Bytes live_activations,
                                  const HardwareSpec& hw) {
  MemoryFigures f;
  f.transient = std::max(s.loss_buffers, s.recompute_buffer);
  f.cublas_workspace = Bytes(kCublasWorkspaceBytes);
  // What the tensors request: the stage's totals (the blocks only add their rounding, so bytes
  // no block lists, e.g. a tied head's copy, still count).
  const Bytes requested = s.model_states() + s.zero3_buffers + s.moe_buffers + f.transient +
                          f.cublas_workspace + live_activations;
  // The rounding of the blocks: model states and buffers as listed, one micro-batch's
  // activation blocks scaled to what is live (an interleaved peak or a fractional in-flight
  // count scales them all alike).
  BlockSizes fixed = s.state_blocks;
  for (const Bytes b : {s.zero3_buffers, s.moe_buffers, f.transient, f.cublas_workspace}) {
    if (b.value() > 0.0) AddBlocks(fixed, b.value(), 1.0);
  }
  const double per_mb = s.activations_per_microbatch.value();
  const double scale = per_mb > 0.0 ? live_activations.value() / per_mb : 0.0;
  const bool es = s.expandable_segments;
  const BlockTotals a = PackBlocks(fixed, 1.0, es);
  const BlockTotals b = PackBlocks(s.activation_blocks, scale, es);
  f.block_rounding = Bytes(a.allocated - a.requested + b.allocated - b.requested);
  f.allocated = requested + f.block_rounding;
  if (es) {
    // One segment per pool of the compute stream: every block (and the bytes no block lists) in
    // whole pages of the pool's segment.
    const double small = a.small + b.small;
    const double large = f.allocated.value() - small;
    f.segment_rounding =
        Bytes(RoundUp(small, kSmallBuffer) - small + RoundUp(large, kLargeBuffer) - large);
  } else {
    f.segment_rounding = Bytes(a.reserved - a.allocated + b.reserved - b.allocated);
  }
  f.fragmentation = f.allocated * hw.reserve_fragmentation;
  f.stream_pools = s.stream_pools;
  f.reserved = f.allocated + f.segment_rounding + f.fragmentation + f.stream_pools;
  f.device = f.reserved + s.cuda_context + s.comm_buffers;
  return f;
}

Bytes FrameworkFigure(const MemoryFigures& f, MemoryFigure which) {
  switch (which) {
    case MemoryFigure::kAllocated:
      return f.allocated;
    case MemoryFigure::kReserved:
      return f.reserved;
    case MemoryFigure::kDevice:
      return f.device;
  }
  return f.device;
}

}  // namespace shardsim
