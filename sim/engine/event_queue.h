// The engine's event queue: an indexed binary min-heap holding at most one pending event per
// task, ordered by (time, scheduling sequence).
//
// A task has at most one pending event at any time (a delay's end; a flow's latency end, then its
// transfer end), so the heap is indexed by task: rescheduling a task (a flow whose rate changed)
// moves its event in place instead of leaving a stale copy behind. Ties in time break by the order
// in which events were last scheduled, so two runs of the same input pop events in the same order
// (STYLE.md: determinism). Nothing allocates per event: the heap and the FIFO keep their capacity,
// which grows by doubling to the most events pending at once (a step has a few dozen).
//
// Events due at the current time (the time of the last pop: zero-length tasks, flows with nothing
// to move, released while the loop works through that time) skip the heap: they go to a FIFO,
// which pops in scheduling order after the heap's events at that time. That is the heap's own
// order: an event in the heap at the current time was scheduled before the loop reached that time
// (anything scheduled at the current time since goes to the FIFO), so its sequence is lower than
// every FIFO event's. A heap event rescheduled to the current time leaves the heap for the FIFO's
// back; a FIFO event rescheduled leaves a blank behind (skipped) and goes to the heap or the back.
//
// A slot is 16 bytes (time, a 32-bit sequence, task; the kind kept per task), so a sift moves
// two words per level; the sequence is renumbered in order if a run ever schedules 2^32 times.
//
// Pop is bottom-up (Wegener, "Bottom-up-heapsort", Theoretical Computer Science 118, 1993): the
// root's hole goes down to a leaf, taking the smaller child at each level (one comparison per
// level, not two), and the last slot is sifted up from there; it seldom rises, as it is one of
// the later events. Measured with callgrind on
// Simulate: 2.3% fewer instructions on the 405B scenario, 0.5% on DeepSeek-V3, up to 0.8% more on
// scenarios whose heap holds a handful of events (the top-down sift stops sooner there).
// Tests: tests/engine/event_queue_test.cc (against a std::priority_queue reference on random
// events, ties, the FIFO and the renumbering included).
#ifndef SHARDSIM_ENGINE_EVENT_QUEUE_H_
#define SHARDSIM_ENGINE_EVENT_QUEUE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace shardsim {

// What happens when an event fires.
enum class EventKind : uint8_t {
  kTaskEnd,     // a delay (or a flow with nothing to transfer) ends
  kLatencyEnd,  // a flow's latency is over: it starts transferring on its links
  kFlowEnd,     // a flow's transfer ends
};

// An event as Pop returns it.
struct Event {
  int64_t time = 0;  // picoseconds
  int32_t task = -1;
  EventKind kind = EventKind::kTaskEnd;
};

class EventQueue {
 public:
  // A heap or FIFO slot: 16 bytes, so that moving an event is one copy of two words; the kind
  // is kept per task (a task has one pending event). The 32-bit sequence is renumbered when it
  // runs out (Renumber), which keeps every later comparison as with an unbounded one.
  struct Slot {
    int64_t time;
    uint32_t seq;
    int32_t task;
  };

  // Empties the queue and sizes it for tasks 0 .. num_tasks-1.
  void Reset(size_t num_tasks) {
    heap_.clear();
    heap_.reserve(std::min<size_t>(num_tasks, 256));
    pos_.assign(num_tasks, kNone);
    kind_ = std::make_unique_for_overwrite<EventKind[]>(num_tasks);  // written when scheduled
    fifo_.clear();
    fifo_head_ = 0;
    fifo_live_ = 0;
    now_ = 0;
    next_seq_ = 0;
  }
  bool empty() const { return heap_.empty() && fifo_live_ == 0; }
  size_t size() const { return heap_.size() + fifo_live_; }
  // The time of the next event (the queue must not be empty).
  int64_t top_time() const { return fifo_live_ > 0 ? now_ : heap_.front().time; }
  bool Pending(int32_t task) const { return pos_[static_cast<size_t>(task)] != kNone; }

  // Schedules `task`'s event at `time` (never before the last pop's time), replacing the task's
  // pending event if it has one.
  [[gnu::always_inline]] void Schedule(int32_t task, int64_t time, EventKind kind) {
    const Slot e{time, NextSeq(), task};
    kind_[static_cast<size_t>(task)] = kind;
    const int32_t at = pos_[static_cast<size_t>(task)];
    if (time == now_ || at <= kInFifo) [[unlikely]] {
      ScheduleOffHeap(e, at);
      return;
    }
    if (at < 0) {
      heap_.push_back(e);
      SiftUp(heap_.size() - 1, e);
      return;
    }
    const auto i = static_cast<size_t>(at);
    if (Before(e, heap_[i])) {
      SiftUp(i, e);
    } else {
      SiftDown(i, e);
    }
  }

  // Schedule's cases that the caller knows statically (the engine's Start): `task` has no
  // pending event, and `time` is after the last pop's (Push) or equal to it (PushNow).
  [[gnu::always_inline]] void Push(int32_t task, int64_t time, EventKind kind) {
    const Slot e{time, NextSeq(), task};
    kind_[static_cast<size_t>(task)] = kind;
    heap_.push_back(e);
    SiftUp(heap_.size() - 1, e);
  }
  [[gnu::always_inline]] void PushNow(int32_t task, EventKind kind) {
    pos_[static_cast<size_t>(task)] = kInFifo - static_cast<int32_t>(fifo_.size());
    fifo_.push_back({now_, NextSeq(), task});
    kind_[static_cast<size_t>(task)] = kind;
    ++fifo_live_;
  }
  int64_t now() const { return now_; }
  bool fifo_empty() const { return fifo_live_ == 0; }
  EventKind kind_of(int32_t task) const { return kind_[static_cast<size_t>(task)]; }

  // For the engine's periods (sim/engine/periods.cc), with the FIFO empty: the pending events in
  // pop order, and their replacement by `events` (in pop order; their sequences are renumbered
  // after every earlier one, in that order, so they pop in it) with the clock at `now`.
  void Pending(std::vector<Slot>* out) const {
    out->assign(heap_.begin(), heap_.end());
    std::sort(out->begin(), out->end(), Before);
  }
  void Replace(const std::vector<Slot>& events, const std::vector<EventKind>& kinds, int64_t now) {
    for (const Slot& e : heap_) pos_[static_cast<size_t>(e.task)] = kNone;
    // Nothing stays pending (the FIFO is empty), so the numbering may restart where it would
    // run out.
    if (next_seq_ + events.size() >= kSeqLimit) next_seq_ = 0;
    heap_.assign(events.data(), events.data() + events.size());  // a sorted array is a heap
    for (size_t i = 0; i < heap_.size(); ++i) {
      heap_[i].seq = static_cast<uint32_t>(next_seq_++);
      pos_[static_cast<size_t>(heap_[i].task)] = static_cast<int32_t>(i);
      kind_[static_cast<size_t>(heap_[i].task)] = kinds[i];
    }
    now_ = now;
  }
  // For tests: the sequence number the next scheduling takes (to reach the renumbering).
  void SetNextSeqForTest(uint64_t seq) { next_seq_ = seq; }

  [[gnu::always_inline]] Event Pop() {
    if (fifo_live_ > 0 && (heap_.empty() || heap_.front().time != now_)) {
      while (fifo_[fifo_head_].task < 0) ++fifo_head_;
      const Slot out = fifo_[fifo_head_++];
      pos_[static_cast<size_t>(out.task)] = kNone;
      if (--fifo_live_ == 0) {
        fifo_.clear();
        fifo_head_ = 0;
      }
      return {out.time, out.task, kind_[static_cast<size_t>(out.task)]};
    }
    const Slot out = heap_.front();
    now_ = out.time;
    pos_[static_cast<size_t>(out.task)] = kNone;
    const Slot last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) {
      SiftUp(HoleToLeaf(), last);
    }
    return {out.time, out.task, kind_[static_cast<size_t>(out.task)]};
  }

 private:
  // pos_ values: a heap slot (>= 0), none, or FIFO slot k as kInFifo - k.
  static constexpr int32_t kNone = -1;
  static constexpr int32_t kInFifo = -2;

  // Schedule's rare cases: `e` is due now (to the FIFO's back, out of the heap if it was there),
  // or its task's pending event is in the FIFO (blanked; `e` then goes to the FIFO or the heap).
  [[gnu::noinline]] void ScheduleOffHeap(const Slot& e, int32_t at) {
    const auto task = static_cast<size_t>(e.task);
    if (at <= kInFifo) {
      fifo_[static_cast<size_t>(kInFifo - at)].task = -1;  // a blank: Pop skips it
      --fifo_live_;
      pos_[task] = kNone;
      at = kNone;
    }
    if (e.time != now_) {
      heap_.push_back(e);
      SiftUp(heap_.size() - 1, e);
      return;
    }
    if (at >= 0) Remove(static_cast<size_t>(at));
    pos_[task] = kInFifo - static_cast<int32_t>(fifo_.size());
    fifo_.push_back(e);
    ++fifo_live_;
  }

  // Takes the event at heap slot `i` out of the heap.
  void Remove(size_t i) {
    const Slot last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;
    if (Before(last, heap_[i])) {
      SiftUp(i, last);
    } else {
      SiftDown(i, last);
    }
  }

  static bool Before(const Slot& a, const Slot& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }

  [[gnu::always_inline]] void Place(size_t i, const Slot& e) {
    heap_[i] = e;
    pos_[static_cast<size_t>(e.task)] = static_cast<int32_t>(i);
  }

  // Puts `e` at slot `i` or above.
  [[gnu::always_inline]] void SiftUp(size_t i, const Slot& e) {
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!Before(e, heap_[parent])) {
        break;
      }
      Place(i, heap_[parent]);
      i = parent;
    }
    Place(i, e);
  }

  // Puts `e` at slot `i` or below.
  [[gnu::always_inline]] void SiftDown(size_t i, const Slot& e) {
    const size_t n = heap_.size();
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) {
        break;
      }
      if (child + 1 < n && Before(heap_[child + 1], heap_[child])) {
        ++child;
      }
      if (!Before(heap_[child], e)) {
        break;
      }
      Place(i, heap_[child]);
      i = child;
    }
    Place(i, e);
  }

  // Moves the hole at the root down to a leaf, each level's smaller child up into it (one
  // comparison per level); returns the leaf.
  [[gnu::always_inline]] size_t HoleToLeaf() {
    Slot* const h = heap_.begin();
    int32_t* const pos = pos_.data();
    const size_t n = heap_.size();
    Slot* hole = h;
    const Slot* const two_children = h + (n - 1) / 2;  // the slots before it have two children
    // The child pointers walk the array (the index kept alongside cost more instructions).
    while (hole < two_children) {
      Slot* child = hole + (hole - h) + 1;
      if (Before(child[1], child[0])) ++child;
      *hole = *child;
      pos[child->task] = static_cast<int32_t>(hole - h);
      hole = child;
    }
    const auto i = static_cast<size_t>(hole - h);
    if (2 * i + 1 < n) {  // one child, the last slot
      *hole = h[2 * i + 1];
      pos[hole->task] = static_cast<int32_t>(i);
      return 2 * i + 1;
    }
    return i;
  }

  // The next sequence number; at 2^32 schedulings the pending events are renumbered first.
  [[gnu::always_inline]] uint32_t NextSeq() {
    if (next_seq_ == kSeqLimit) [[unlikely]] {
      Renumber();
    }
    return static_cast<uint32_t>(next_seq_++);
  }

  // Gives the pending events the sequences 0, 1, ... in their order: the heap's by (time,
  // sequence) (a sorted array is a valid heap), then the FIFO's (due now, after the heap's events
  // at that time). Every pending event keeps its rank among the others, and later events (numbered
  // after them) still come after them at equal times.
  [[gnu::cold, gnu::noinline]] void Renumber() {
    std::sort(heap_.begin(), heap_.end(), Before);
    uint32_t seq = 0;
    for (size_t i = 0; i < heap_.size(); ++i) {
      Slot e = heap_[i];
      e.seq = seq++;
      Place(i, e);
    }
    for (size_t i = fifo_head_; i < fifo_.size(); ++i) {
      if (fifo_[i].task >= 0) fifo_[i].seq = seq++;
    }
    next_seq_ = seq;
  }

  static constexpr uint64_t kSeqLimit = uint64_t{1} << 32;

  // The heap's storage: a vector's growth by doubling, with the append inlined (the loop appends
  // once per event; std::vector's push_back, with its reallocation inside, is not always).
  class Slots {
   public:
    size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    Slot& operator[](size_t i) { return data_[i]; }
    const Slot& operator[](size_t i) const { return data_[i]; }
    const Slot& front() const { return data_[0]; }
    const Slot& back() const { return data_[n_ - 1]; }
    Slot* begin() { return data_.get(); }
    Slot* end() { return data_.get() + n_; }
    const Slot* begin() const { return data_.get(); }
    const Slot* end() const { return data_.get() + n_; }
    void pop_back() { --n_; }
    void clear() { n_ = 0; }
    [[gnu::always_inline]] void push_back(const Slot& e) {
      if (n_ == cap_) [[unlikely]] {
        reserve(cap_ == 0 ? 16 : 2 * cap_);
      }
      data_[n_++] = e;
    }
    [[gnu::noinline]] void reserve(size_t cap) {
      if (cap <= cap_) return;
      auto grown = std::make_unique_for_overwrite<Slot[]>(cap);
      std::copy(begin(), end(), grown.get());
      data_ = std::move(grown);
      cap_ = cap;
    }
    void assign(const Slot* first, const Slot* last) {
      n_ = 0;
      reserve(static_cast<size_t>(last - first));
      std::copy(first, last, data_.get());
      n_ = static_cast<size_t>(last - first);
    }

   private:
    std::unique_ptr<Slot[]> data_;
    size_t n_ = 0, cap_ = 0;
  };
  Slots heap_;
  std::vector<int32_t> pos_;           // per task: where its event is (see kNone, kInFifo)
  std::vector<Slot> fifo_;             // events due at now_, in scheduling order; task -1: a blank
  std::unique_ptr<EventKind[]> kind_;  // per task: the kind of its pending event
  size_t fifo_head_ = 0;               // the first slot not popped yet
  size_t fifo_live_ = 0;               // events in fifo_ (blanks not counted)
  int64_t now_ = 0;                    // the time of the last event popped from the heap
  uint64_t next_seq_ = 0;
};

}  // namespace shardsim

#endif  // SHARDSIM_ENGINE_EVENT_QUEUE_H_
