// A replay of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.x)
// over a sequence of requests and frees, for the peak reserved memory (torch.cuda.
// max_memory_reserved) that holes between live blocks leave above the peak allocated.
//
// The rules replayed, each named as in the source:
//   - round_size: a request is rounded up to a multiple of kMinBlockSize (512 B);
//   - get_pool: requests of at most kSmallSize (1 MiB) are served from the small pool, larger
//     ones from the large pool; each pool keeps its free blocks per stream (a free block serves
//     only requests of the stream it was allocated on);
//   - get_free_block: best fit, the smallest free block of the pool and stream at least as large
//     as the request (BlockComparatorSize: stream, size, address); with expandable segments a
//     free block that borders its segment's unmapped tail counts as its size plus that tail, so
//     a larger free block elsewhere is taken before it;
//   - alloc_found_block / should_split: the found block is split and its remainder kept free when
//     the remainder is at least kMinBlockSize in the small pool or under expandable segments,
//     more than kSmallSize in the large pool otherwise (where the block keeps a smaller tail);
//   - free_block / try_merge_blocks: a freed block merges with free neighbours of its segment;
//   - default segments (alloc_block, get_allocation_size): a request no free block fits gets a
//     new segment of kSmallBuffer (2 MiB, small pool), kLargeBuffer (20 MiB, requests below
//     kMinLargeAlloc = 10 MiB) or its size rounded up to kRoundLarge (2 MiB); segments are never
//     released (no empty_cache, no out-of-memory retry);
//   - expandable segments (Note [Expandable Segments]; try_allocate_expandable_block,
//     find_expandable_block, map_block): each stream's pool is one segment of virtual address
//     space mapped in pages (kLargeBuffer for the large pool, kSmallBuffer for the small one); a
//     request no free block fits is placed at the segment's first unmapped byte, or at the free
//     block just before it, and the pages it needs beyond the mapped end are mapped. Nothing is
//     unmapped (that happens only on empty_cache or an out-of-memory retry), so a segment's
//     reserved bytes are its mapped extent, which only grows.
// Reserved is the sum of the segments; its peak is what max_memory_reserved reports. Closed-form
// sequences in tests/memory/caching_allocator_test.cc.
#ifndef SHARDSIM_MEMORY_CACHING_ALLOCATOR_H_
#define SHARDSIM_MEMORY_CACHING_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace shardsim {

class CachingAllocator {
 public:
  explicit CachingAllocator(bool expandable_segments) : expandable_(expandable_segments) {}

  // A request of `bytes` (> 0; rounded up to a whole byte) on `stream`; returns the block's id.
  int64_t Malloc(double bytes, int stream = 0);
  // Frees block `id` (from Malloc, not yet freed; anything else is ignored).
  void Free(int64_t id);

  // In bytes, over every stream and pool: what live blocks hold (their sizes), what segments
  // hold, and the peaks of both since construction.
  int64_t allocated() const { return allocated_; }
  int64_t reserved() const { return reserved_; }
  int64_t peak_allocated() const { return peak_allocated_; }
  int64_t peak_reserved() const { return peak_reserved_; }
  // What `stream`'s segments reserve now (both pools).
  int64_t reserved_on(int stream) const;
  // The size of block `id` (its request after round_size, plus any tail it kept).
  int64_t block_size(int64_t id) const { return blocks_[static_cast<size_t>(id)].size; }

 private:
  struct Block {
    int64_t addr = 0;
    int64_t size = 0;
    int segment = 0;
    int64_t prev = -1, next = -1;  // neighbours within the segment, by address
    bool allocated = false;
    bool live = true;  // false once merged into a neighbour
  };
  struct Segment {
    int stream = 0;
    bool small = false;
    int64_t base = 0;
    int64_t mapped = 0;  // bytes from base (the whole segment under default segments)
    int64_t last = -1;   // the block at the highest address
  };
  // (small pool, stream, size, address, id): best fit is lower_bound on the first three.
  using FreeKey = std::tuple<bool, int, int64_t, int64_t, int64_t>;

  FreeKey KeyOf(int64_t id) const;
  int64_t ExpandableSize(int64_t id) const;
  int64_t NewBlock(int segment, int64_t addr, int64_t size, int64_t prev, int64_t next);
  int64_t GrowSegment(int stream, bool small, int64_t size);
  int NewSegment(int stream, bool small, int64_t bytes);
  void Split(int64_t id, int64_t size, bool small);
  void TryMerge(int64_t into, int64_t other);
  void Track();

  bool expandable_;
  std::vector<Block> blocks_;
  std::vector<Segment> segments_;
  std::map<std::pair<int, bool>, int> expandable_of_;  // (stream, small) -> segment
  std::set<FreeKey> free_;
  int64_t allocated_ = 0, reserved_ = 0, peak_allocated_ = 0, peak_reserved_ = 0;
};

}  // namespace shardsim

#endif  // SHARDSIM_MEMORY_CACHING_ALLOCATOR_H_
