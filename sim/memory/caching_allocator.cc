#include "sim/memory/caching_allocator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardsim {
namespace {

// The constants of c10/cuda/CUDACachingAllocator.cpp (the same values as sim/memory/allocator.h,
// in whole bytes).
constexpr int64_t kMinBlock = 512;
constexpr int64_t kSmall = int64_t{1} << 20;            // kSmallSize
constexpr int64_t kSmallSegment = int64_t{2} << 20;     // kSmallBuffer
constexpr int64_t kLargeSegment = int64_t{20} << 20;    // kLargeBuffer
constexpr int64_t kMinLarge = int64_t{10} << 20;        // kMinLargeAlloc
constexpr int64_t kRoundLargeBytes = int64_t{2} << 20;  // kRoundLarge
constexpr int64_t kSegmentSpacing = int64_t{1} << 48;   // virtual address space per segment

int64_t RoundUpTo(int64_t bytes, int64_t unit) { return (bytes + unit - 1) / unit * unit; }

}  // namespace

CachingAllocator::FreeKey CachingAllocator::KeyOf(int64_t id) const {
  const Block& b = blocks_[static_cast<size_t>(id)];
  const Segment& s = segments_[static_cast<size_t>(b.segment)];
  return {s.small, s.stream, b.size, b.addr, id};
}

int64_t CachingAllocator::ExpandableSize(int64_t id) const {
  // get_free_block's expandable_size: a block followed by its segment's unmapped tail can grow
  // into it (the tail is the rest of the address space: larger than any request).
  const Block& b = blocks_[static_cast<size_t>(id)];
  const Segment& s = segments_[static_cast<size_t>(b.segment)];
  if (expandable_ && s.last == id) return std::numeric_limits<int64_t>::max() / 2;
  return b.size;
}

int64_t CachingAllocator::NewBlock(int segment, int64_t addr, int64_t size, int64_t prev,
                                   int64_t next) {
  Block b;
  b.segment = segment;
  b.addr = addr;
  b.size = size;
  b.prev = prev;
  b.next = next;
  blocks_.push_back(b);
  const int64_t id = static_cast<int64_t>(blocks_.size()) - 1;
  if (prev >= 0) blocks_[static_cast<size_t>(prev)].next = id;
  if (next >= 0) blocks_[static_cast<size_t>(next)].prev = id;
  Segment& s = segments_[static_cast<size_t>(segment)];
  if (next < 0) s.last = id;
  return id;
}

int CachingAllocator::NewSegment(int stream, bool small, int64_t bytes) {
  Segment s;
  s.stream = stream;
  s.small = small;
  s.base = static_cast<int64_t>(segments_.size()) * kSegmentSpacing;
  s.mapped = bytes;
  reserved_ += bytes;
  segments_.push_back(s);
  return static_cast<int>(segments_.size()) - 1;
}

int64_t CachingAllocator::GrowSegment(int stream, bool small, int64_t size) {
  // try_allocate_expandable_block: the stream's pool segment (created on first use), from the
  // free block before the unmapped tail if there is one, mapped in whole pages to cover `size`.
  auto [it, inserted] = expandable_of_.try_emplace({stream, small}, 0);
  if (inserted) it->second = NewSegment(stream, small, 0);
  const int seg = it->second;
  Segment& s = segments_[static_cast<size_t>(seg)];
  const int64_t page = small ? kSmallSegment : kLargeSegment;
  int64_t start = s.base + s.mapped;
  int64_t id = -1;
  if (s.last >= 0 && !blocks_[static_cast<size_t>(s.last)].allocated) {
    id = s.last;
    free_.erase(KeyOf(id));
    start = blocks_[static_cast<size_t>(id)].addr;
  }
  const int64_t end = s.base + RoundUpTo(start + size - s.base, page);
  const int64_t grown = end - (s.base + s.mapped);
  s.mapped += grown;
  reserved_ += grown;
  if (id >= 0) {
    blocks_[static_cast<size_t>(id)].size = end - start;
  } else {
    id = NewBlock(seg, start, end - start, s.last, -1);
  }
  return id;
}

void CachingAllocator::Split(int64_t id, int64_t size, bool small) {
  // should_split, then the remainder becomes a free block after the allocated one.
  Block& b = blocks_[static_cast<size_t>(id)];
  const int64_t remaining = b.size - size;
  const bool split = (small || expandable_) ? remaining >= kMinBlock : remaining > kSmall;
  if (!split) return;
  const int64_t addr = b.addr + size;
  const int seg = b.segment;
  const int64_t next = b.next;
  b.size = size;
  const int64_t rest = NewBlock(seg, addr, remaining, id, next);
  free_.insert(KeyOf(rest));
}

int64_t CachingAllocator::Malloc(double bytes, int stream) {
  const int64_t asked = static_cast<int64_t>(std::ceil(std::max(bytes, 1.0)));
  const int64_t size = RoundUpTo(asked, kMinBlock);  // round_size
  const bool small = size <= kSmall;                 // get_pool
  int64_t id = -1;
  // get_free_block: best fit over the pool's free blocks of this stream.
  auto it = free_.lower_bound(FreeKey{small, stream, size, std::numeric_limits<int64_t>::min(),
                                      std::numeric_limits<int64_t>::min()});
  auto same = [&](const std::set<FreeKey>::iterator& i) {
    return i != free_.end() && std::get<0>(*i) == small && std::get<1>(*i) == stream;
  };
  if (same(it)) {
    if (expandable_) {
      auto next = std::next(it);
      while (same(next) && ExpandableSize(std::get<4>(*next)) < ExpandableSize(std::get<4>(*it))) {
        it = next++;
      }
    }
    id = std::get<4>(*it);
    free_.erase(it);
  } else if (expandable_) {
    id = GrowSegment(stream, small, size);
  } else {
    // alloc_block: a segment of get_allocation_size bytes, one block over all of it.
    const int64_t segment =
        small ? kSmallSegment
              : (size < kMinLarge ? kLargeSegment : RoundUpTo(size, kRoundLargeBytes));
    const int seg = NewSegment(stream, small, segment);
    id = NewBlock(seg, segments_[static_cast<size_t>(seg)].base, segment, -1, -1);
  }
  Split(id, size, small);
  Block& b = blocks_[static_cast<size_t>(id)];
  b.allocated = true;
  allocated_ += b.size;
  Track();
  return id;
}

void CachingAllocator::TryMerge(int64_t into, int64_t other) {
  if (other < 0) return;
  Block& o = blocks_[static_cast<size_t>(other)];
  if (o.allocated) return;
  free_.erase(KeyOf(other));
  Block& b = blocks_[static_cast<size_t>(into)];
  Segment& s = segments_[static_cast<size_t>(b.segment)];
  if (o.addr < b.addr) {  // other is b's prev
    b.addr = o.addr;
    b.prev = o.prev;
    if (b.prev >= 0) blocks_[static_cast<size_t>(b.prev)].next = into;
  } else {  // other is b's next
    b.next = o.next;
    if (b.next >= 0) blocks_[static_cast<size_t>(b.next)].prev = into;
    if (s.last == other) s.last = into;
  }
  b.size += o.size;
  o.live = false;
}

void CachingAllocator::Free(int64_t id) {
  if (id < 0 || id >= static_cast<int64_t>(blocks_.size())) return;
  Block& b = blocks_[static_cast<size_t>(id)];
  if (!b.live || !b.allocated) return;
  b.allocated = false;
  allocated_ -= b.size;
  // free_block: merge with the free neighbours, then back into the pool.
  TryMerge(id, blocks_[static_cast<size_t>(id)].prev);
  TryMerge(id, blocks_[static_cast<size_t>(id)].next);
  free_.insert(KeyOf(id));
}

int64_t CachingAllocator::reserved_on(int stream) const {
  int64_t r = 0;
  for (const Segment& s : segments_) {
    if (s.stream == stream) r += s.mapped;
  }
  return r;
}

void CachingAllocator::Track() {
  peak_allocated_ = std::max(peak_allocated_, allocated_);
  peak_reserved_ = std::max(peak_reserved_, reserved_);
}

}  // namespace shardsim
