// The engine's event queue: an indexed binary min-heap holding at most one pending event per
// task, ordered by (time, scheduling sequence).
//
// A task has at most one pending event at any time (a delay's end; a flow's latency end, then its
// transfer end), so the heap is indexed by task: rescheduling a task (a flow whose rate changed)
// moves its event in place instead of leaving a stale copy behind. Ties in time break by the order
// in which events were last scheduled, so two runs of the same input pop events in the same order
// (STYLE.md: determinism). Nothing allocates once Reset() has sized the queue.
#ifndef SHARDSIM_ENGINE_EVENT_QUEUE_H_
#define SHARDSIM_ENGINE_EVENT_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shardsim {

// What happens when an event fires.
enum class EventKind : uint8_t {
  kTaskEnd,     // a delay (or a flow with nothing to transfer) ends
  kLatencyEnd,  // a flow's latency is over: it starts transferring on its links
  kFlowEnd,     // a flow's transfer ends
};

struct Event {
  int64_t time = 0;  // picoseconds
  uint64_t seq = 0;  // scheduling sequence: the tie-break
  int32_t task = -1;
  EventKind kind = EventKind::kTaskEnd;
};

class EventQueue {
 public:
  // Empties the queue and sizes it for tasks 0 .. num_tasks-1.
  void Reset(size_t num_tasks) {
    heap_.clear();
    heap_.reserve(num_tasks);
    pos_.assign(num_tasks, -1);
    next_seq_ = 0;
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  bool Pending(int32_t task) const { return pos_[static_cast<size_t>(task)] >= 0; }

  // Schedules `task`'s event at `time`, replacing the task's pending event if it has one.
  void Schedule(int32_t task, int64_t time, EventKind kind) {
    const Event e{time, next_seq_++, task, kind};
    const int32_t at = pos_[static_cast<size_t>(task)];
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

  Event Pop() {
    const Event out = heap_.front();
    pos_[static_cast<size_t>(out.task)] = -1;
    const Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) {
      SiftDown(0, last);
    }
    return out;
  }

 private:
  static bool Before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  }

  void Place(size_t i, const Event& e) {
    heap_[i] = e;
    pos_[static_cast<size_t>(e.task)] = static_cast<int32_t>(i);
  }

  // Puts `e` at slot `i` or above.
  void SiftUp(size_t i, const Event& e) {
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
  void SiftDown(size_t i, const Event& e) {
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

  std::vector<Event> heap_;
  std::vector<int32_t> pos_;  // per task: its event's slot in heap_, or -1
  uint64_t next_seq_ = 0;
};

}  // namespace shardsim

#endif  // SHARDSIM_ENGINE_EVENT_QUEUE_H_
