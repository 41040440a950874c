#include "sim/memory/allocator.h"

#include <algorithm>
#include <cmath>

namespace shardsim {
namespace {

double RoundUp(double bytes, double unit) { return std::ceil(bytes / unit) * unit; }

}  // namespace

AllocatorBlock AllocatorBlockFor(double bytes) {
  AllocatorBlock b;
  if (bytes <= 0.0) return b;
  const double size = RoundUp(bytes, kMinBlockSize);  // round_size
  if (size < kMinLargeAlloc) {  // small pool (<= 1 MiB) or split from a 20 MiB large segment
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

BlockTotals PackBlocks(const BlockSizes& blocks, double scale) {
  BlockTotals t;
  double small = 0.0, medium = 0.0;
  for (const auto& [bytes, count] : blocks) {
    const double n = count * scale;
    const AllocatorBlock b = AllocatorBlockFor(bytes);
    t.requested += n * bytes;
    t.allocated += n * b.allocated;
    if (b.allocated <= kSmallSize) {
      small += n * b.allocated;
    } else if (b.allocated < kMinLargeAlloc) {
      medium += n * b.allocated;
    } else {
      t.reserved += n * b.segment;
    }
  }
  // The pools' blocks packed into whole segments (kSmallBuffer, kLargeBuffer).
  t.reserved += RoundUp(small, kSmallBuffer) + RoundUp(medium, kLargeBuffer);
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
    if (b.value() > 0.0) fixed[b.value()] += 1.0;
  }
  const double per_mb = s.activations_per_microbatch.value();
  const double scale = per_mb > 0.0 ? live_activations.value() / per_mb : 0.0;
  const BlockTotals a = PackBlocks(fixed);
  const BlockTotals b = PackBlocks(s.activation_blocks, scale);
  f.block_rounding = Bytes(a.allocated - a.requested + b.allocated - b.requested);
  f.segment_rounding = Bytes(a.reserved - a.allocated + b.reserved - b.allocated);
  f.allocated = requested + f.block_rounding;
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
