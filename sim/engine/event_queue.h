// The engine's event queue: a binary min-heap of events ordered by (time, insertion sequence).
//
// Ties in time break by the order in which events were pushed, so two runs of the same input
// pop events in the same order (STYLE.md: determinism). The queue never allocates once its
// capacity is reserved; Simulation reserves one slot per task up front.
#ifndef SHARDSIM_ENGINE_EVENT_QUEUE_H_
#define SHARDSIM_ENGINE_EVENT_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace shardsim {

// What happens when an event fires.
enum class EventKind : uint8_t {
  kTaskEnd,     // a delay (or a flow with nothing to transfer) ends
  kLatencyEnd,  // a flow's latency is over: it starts transferring on its links
  kFlowEnd,     // a flow's transfer ends, if `version` still matches the flow's current version
};

struct Event {
  int64_t time = 0;       // picoseconds
  uint64_t seq = 0;       // insertion sequence: the tie-break
  int32_t task = -1;      // the task the event belongs to
  uint32_t version = 0;   // kFlowEnd only: the flow's rate version when the event was pushed
  EventKind kind = EventKind::kTaskEnd;
};

class EventQueue {
 public:
  void Reserve(size_t n) { heap_.reserve(n); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  void Push(int64_t time, EventKind kind, int32_t task, uint32_t version = 0) {
    heap_.push_back(Event{time, next_seq_++, task, version, kind});
    SiftUp(heap_.size() - 1);
  }

  Event Pop() {
    Event out = heap_.front();
    Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(std::move(last));
    return out;
  }

 private:
  static bool Before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }

  void SiftUp(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!Before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  // Places `e` (the former last element) starting from the root.
  void SiftDown(Event e) {
    const size_t n = heap_.size();
    size_t i = 0;
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && Before(heap_[child + 1], heap_[child])) ++child;
      if (!Before(heap_[child], e)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace shardsim

#endif  // SHARDSIM_ENGINE_EVENT_QUEUE_H_
