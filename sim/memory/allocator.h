// The three memory figures people read off a training run, and PyTorch's CUDA caching allocator
// between them:
//   allocated  torch.cuda.max_memory_allocated: the blocks handed to live tensors (model states,
//              activations, buffers, cuBLAS workspace), each request rounded as below;
//   reserved   torch.cuda.max_memory_reserved: the segments the allocator holds from cudaMalloc
//              (blocks, the unused tails of their segments, and fragmentation: cached blocks
//              that cannot serve the requests of the moment);
//   device     nvidia-smi: reserved plus what lives outside the allocator (CUDA context and
//              kernel images, NCCL's buffers).
//
// The allocator's rules (c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.x; constants of the same
// names there):
//   - every request is rounded up to a multiple of kMinBlockSize = 512 B (round_size);
//   - requests of at most kSmallSize = 1 MiB come from the small pool, whose segments are
//     kSmallBuffer = 2 MiB, split into blocks (get_allocation_size);
//   - larger requests below kMinLargeAlloc = 10 MiB are split out of kLargeBuffer = 20 MiB
//     segments of the large pool;
//   - requests of kMinLargeAlloc or more get a segment of their size rounded up to
//     kRoundLarge = 2 MiB; the segment's tail is split off as a free block only when it is larger
//     than kSmallSize (should_split), else it stays with the block and counts as allocated.
// With expandable segments (PYTORCH_CUDA_ALLOC_CONF expandable_segments:True; Note [Expandable
// Segments] there), each stream's pool is one segment that grows by mapping pages, kLargeBuffer
// = 20 MiB for the large pool and kSmallBuffer = 2 MiB for the small one, and should_split splits
// every block whose remainder is at least kMinBlockSize: a block is its request rounded to 512 B,
// and the segments are the pools' blocks rounded up to whole pages.
// Fragmentation beyond that rounding is the hardware file's measured
// runtime_reserve.fragmentation (peak reserved over peak allocated − 1 on the H200: 3.1% median,
// measured with the default segments), a fraction of allocated. Tested in
// tests/memory/allocator_test.cc. The allocator replayed request by request over an FSDP2 step
// (sim/memory/caching_allocator.h, ReplayFsdp2Step in budget.h) is checked beside these figures
// and does not replace them yet (README, Memory).
#ifndef SHARDSIM_MEMORY_ALLOCATOR_H_
#define SHARDSIM_MEMORY_ALLOCATOR_H_

#include "sim/base/units.h"
#include "sim/config/spec.h"
#include "sim/memory/budget.h"

namespace shardsim {

inline constexpr double kMinBlockSize = 512.0;
inline constexpr double kSmallSize = 1.0 * kMiB;
inline constexpr double kSmallBuffer = 2.0 * kMiB;
inline constexpr double kMinLargeAlloc = 10.0 * kMiB;
inline constexpr double kLargeBuffer = 20.0 * kMiB;
inline constexpr double kRoundLarge = 2.0 * kMiB;
// cuBLAS workspace PyTorch allocates through the caching allocator for the compute stream's
// handle: 4096 KiB x 8 = 32 MiB by default on Hopper and later (CUBLAS_WORKSPACE_CONFIG
// ":4096:8", aten/src/ATen/cuda/CublasHandlePool.cpp); 8.125 MiB on older GPUs, a difference of
// 24 MiB that no figure here resolves. Counted once per device, in allocated.
inline constexpr double kCublasWorkspaceBytes = 32.0 * kMiB;

// One request of `bytes` (> 0) as the allocator serves it on an empty cache.
struct AllocatorBlock {
  double allocated = 0.0;  // the block's size (what max_memory_allocated counts)
  double segment = 0.0;    // bytes of segment it holds (small and medium blocks: their own
                           // size; their pool's segment tails are counted over the pool)
};
AllocatorBlock AllocatorBlockFor(double bytes, bool expandable_segments = false);

// What a set of live requests occupies: allocated (blocks) and reserved (segments, with the small
// and medium pools' blocks packed into their 2 MiB / 20 MiB segments). With expandable segments,
// reserved is what the blocks' pages need: the small pool's blocks (`small`) in 2 MiB pages, the
// large pool's in 20 MiB pages.
struct BlockTotals {
  double requested = 0.0;
  double allocated = 0.0;
  double reserved = 0.0;
  double small = 0.0;  // of allocated, the small pool's blocks (requests of at most 1 MiB)
};
// Of `blocks` (BlockSizes, sim/memory/budget.h: sorted by size), each count scaled by `scale`.
BlockTotals PackBlocks(const BlockSizes& blocks, double scale = 1.0,
                       bool expandable_segments = false);

// The figures of one device at its peak, `live_activations` held (the simulated timeline's peak,
// or the closed form's stage.activations).
struct MemoryFigures {
  Bytes allocated;         // as torch.cuda.max_memory_allocated
  Bytes reserved;          // as torch.cuda.max_memory_reserved
  Bytes device;            // as nvidia-smi
  Bytes block_rounding;    // allocated - requested: 512 B rounding, unsplit segment tails
  Bytes segment_rounding;  // segment tails and pool segments beyond the blocks (in reserved)
  Bytes fragmentation;     // runtime_reserve.fragmentation x allocated (in reserved)
  Bytes stream_pools;      // FSDP2's all-gather / reduce-scatter streams' segments (in reserved)
  Bytes cublas_workspace;  // in allocated
  Bytes transient;         // the larger of the loss buffers and the full-recompute rebuild
};
// Allocated counts the loss buffers and the rebuilt layer of full recompute as never live at
// once: a stage frees its logits' buffers in the loss backward before the first layer's backward
// rebuilds its activations (StageMemory::Allocated, the figure `peak_bytes` keeps, adds both).
MemoryFigures DeviceMemoryFigures(const StageMemory& stage, Bytes live_activations,
                                  const HardwareSpec& hardware);
// The figure a framework's logs print (FrameworkSpec::memory_figure) out of `f`.
Bytes FrameworkFigure(const MemoryFigures& f, MemoryFigure which);

}  // namespace shardsim

#endif  // SHARDSIM_MEMORY_ALLOCATOR_H_
