// The generic discrete-event engine: tasks on streams, flows on shared links, and time.
//
// The engine knows nothing of transformers, GPUs or collectives. It keeps SimGrid's separation:
//   - what the workload does: tasks (a fixed-duration delay, or a flow of bytes) and the
//     dependencies between them;
//   - what exists: streams (like CUDA streams: one task at a time, in enqueue order) and links
//     (a capacity in bytes/s shared by the flows crossing them);
//   - how fast work progresses: a delay takes its duration; a flow waits its latency, then moves
//     its bytes at the max-min fair rate of its links (sim/engine/max_min.h), recomputed whenever
//     the set of transferring flows changes.
// The program module builds one Engine per simulated step; report reads the RunResult.
//
// A task starts when it is at the head of its stream (if it has one) and all its dependencies have
// finished. Time is SimTime (integer picoseconds); events at equal times run in the order they
// were scheduled, so the same input always gives the same result.
//
// Errors: Add* never fail on the spot; a bad argument (an unknown id, a negative duration, a
// link that is not a link...) is recorded and returned by Run() as a kInternal Status, since the
// engine's inputs come from the program module, not from users; a recorded error stays for the
// Engine's life (a later good call does not clear it). A deadlock (tasks that can never
// start) is also a kInternal error naming the stuck tasks and a wait cycle among them.
//
// Thread safety: an Engine is not thread-safe, but holds no global state: many Engines may run in
// parallel threads. Run() is const and can be called repeatedly.
#ifndef SHARDSIM_ENGINE_ENGINE_H_
#define SHARDSIM_ENGINE_ENGINE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/ids.h"
#include "sim/base/status.h"
#include "sim/base/units.h"
#include "sim/engine/run_result.h"

namespace shardsim {

enum class TaskKind : uint8_t { kDelay, kFlow };
enum class ResourceKind : uint8_t { kStream, kLink };

// Names tasks in error messages (the engine stores only a label and a category per task).
using TaskNamer = std::function<std::string(TaskId)>;

class Engine {
 public:
  Engine() = default;

  // Optional: capacity hints so that building a large graph does not reallocate.
  void Reserve(int32_t tasks, int64_t dependencies);

  // A stream: runs its tasks one at a time in the order they are added to it.
  ResourceId AddStream(std::string name);
  // A link of `capacity` bytes/s (> 0, finite), shared max-min fairly by the flows crossing it.
  ResourceId AddLink(std::string name, BytesPerSec capacity);
  // Changes a link's capacity (what-if runs on one built graph).
  void SetLinkCapacity(ResourceId link, BytesPerSec capacity);

  // A task that takes `duration` (>= 0), e.g. a compute kernel whose time the caller computed.
  // `stream` may be invalid (ResourceId()): the task then runs as soon as its dependencies are
  // done. `label` and `category` are the caller's (e.g. an index into its name table, a kind).
  TaskId AddDelay(ResourceId stream, SimTime duration, uint32_t label, uint8_t category);

  // A flow: waits `latency` (>= 0), then moves `bytes` (>= 0) across every link of `links`
  // (each a link, each at most once) at the max-min fair rate, never above `rate_cap` bytes/s
  // (0 = no cap). The task ends when the last byte arrives: a flow alone on a link of B bytes/s
  // takes latency + bytes / B, rounded up to the picosecond. The latency phase uses no bandwidth.
  // A flow with no links and no cap transfers instantly. `stream` may be invalid, as for delays.
  // `weights` (empty, or one per link, each > 0 and finite): what the flow uses of each link per
  // byte/s of its rate (sim/engine/max_min.h). A weight of m makes the flow stand for m identical
  // flows on that link (replicas not simulated one by one), or move m times its bytes across it;
  // alone on a link of B bytes/s with weight w the flow takes latency + w * bytes / B.
  TaskId AddFlow(ResourceId stream, Bytes bytes, SimTime latency, std::span<const ResourceId> links,
                 uint32_t label, uint8_t category, BytesPerSec rate_cap = BytesPerSec(0.0),
                 std::span<const double> weights = {});

  // A flow on the same links, with the same weights and rate cap, as `like` (a flow this Engine
  // returned): what AddFlow(stream, bytes, latency, flow_links(like), label, category, its cap,
  // flow_weights(like)) adds, without checking or storing the path again. A builder that adds
  // the same collective many times passes its first flow.
  TaskId AddFlowLike(TaskId like, ResourceId stream, Bytes bytes, SimTime latency, uint32_t label,
                     uint8_t category);

  // Copies of the `count` tasks from `first` on (tasks this Engine returned), appended in order:
  // each the same kind, stream, duration or latency, bytes, path, weights, cap and category as
  // its original, labelled `label` + its offset; then `deps` (pairs of offsets into the range:
  // before, after) as dependencies among the copies, in order. What AddDelay / AddFlowLike and
  // AddDependency add task by task, in one pass: a builder that repeats a recorded piece of work
  // (the same pass for another micro-batch) passes its first copy. Returns the first copy's id.
  TaskId AppendCopies(TaskId first, int32_t count, uint32_t label,
                      std::span<const std::pair<int32_t, int32_t>> deps);

  // `after` cannot start before `before` has finished.
  void AddDependency(TaskId before, TaskId after) {
    if (before.valid() && before.v < num_tasks() && after.valid() && after.v < num_tasks()) {
      edges_.emplace_back(before.v, after.v);  // inline: the builder adds one per task or so
      return;
    }
    BadDependency(before, after);
  }

  // Optional: the program's repetition, for Run() to advance over (sim/engine/periods.cc).
  // `counterpart[t]` is the task that does t's work one period later (in a training step: the
  // same pass or transfer a micro-batch, or a group of them, further on), or -1. Run() checks
  // task by task where the map preserves the graph (the same kind, duration or bytes and path,
  // stream and dependency count; successors and stream successor mapped onto the counterpart's)
  // and, where the whole run state at one period's start is that of one of the last 8 mapped
  // (by the map applied as many times as periods lie between) and shifted in time, fills in the
  // repetitions that follow instead of simulating them: the RunResult is the same, bit for bit,
  // as without the map. A map of the wrong size, or not one to one, makes Run return kInternal;
  // any other wrong map only skips less.
  void SetCounterparts(std::vector<int32_t> counterpart);
  const std::vector<int32_t>& counterparts() const { return counterpart_; }

  // How error messages name tasks; by default "task 12".
  void SetTaskNamer(TaskNamer namer) { namer_ = std::move(namer); }

  // Runs the simulation from time zero until every task has finished.
  Result<RunResult> Run() const;

  // The graph as built (for reports: a Chrome trace needs each task's stream, label, category).
  // Ids must be ones this Engine returned.
  int32_t num_tasks() const { return static_cast<int32_t>(tasks_.size()); }
  int32_t num_resources() const { return static_cast<int32_t>(resource_kind_.size()); }
  int64_t num_dependencies() const { return static_cast<int64_t>(edges_.size()); }
  TaskKind kind(TaskId t) const { return tasks_[Index(t)].kind; }
  ResourceId stream(TaskId t) const { return ResourceId(tasks_[Index(t)].stream); }
  uint32_t label(TaskId t) const { return tasks_[Index(t)].label; }
  uint8_t category(TaskId t) const { return tasks_[Index(t)].category; }
  ResourceKind resource_kind(ResourceId r) const { return resource_kind_[Index(r)]; }
  const std::string& resource_name(ResourceId r) const { return resource_name_[Index(r)]; }
  BytesPerSec link_capacity(ResourceId link) const { return BytesPerSec(capacity_[Index(link)]); }
  // A delay's duration, or a flow's latency.
  SimTime fixed_time(TaskId t) const;
  // A flow's bytes and links (zero and empty for a delay).
  Bytes flow_bytes(TaskId t) const;
  std::span<const ResourceId> flow_links(TaskId t) const;
  // A flow's weight on each of flow_links(t) (empty for a delay).
  std::span<const double> flow_weights(TaskId t) const;
  // The namer's name for `t`, or "task <id>".
  std::string TaskName(TaskId t) const;

 private:
  friend class Simulation;

  template <class Tag>
  static size_t Index(Id<Tag> id) {
    return static_cast<size_t>(id.v);
  }
  bool IsResource(ResourceId r, ResourceKind kind) const;
  void BadDependency(TaskId before, TaskId after);
  // The errors of a bad AddDelay / AddFlowLike, recorded out of the hot path; FlowLikeErrors
  // returns false when `like` is not a flow (the task is then added as a flow on no links).
  [[gnu::cold]] void DelayErrors(TaskId id, ResourceId stream, SimTime duration);
  [[gnu::cold]] bool FlowLikeErrors(TaskId id, bool known, TaskId like, ResourceId stream,
                                    Bytes bytes, SimTime latency);
  void Error(std::string message) { errors_.Add(SourceLoc{}, "engine: " + std::move(message)); }

  // Tasks, indexed by TaskId: one record each (24 bytes), so adding a task is one push_back.
  struct Task {
    int64_t fixed_ps;  // delay: duration; flow: latency
    int32_t stream;    // ResourceId value, or -1
    int32_t flow;      // flow index, or -1 for delays
    uint32_t label;
    TaskKind kind;
    uint8_t category;
  };
  std::vector<Task> tasks_;

  // Flows, indexed by flow index.
  // A flow crosses flow_links_[path_begin .. path_end), with flow_weight_ alongside; flows made
  // by AddFlowLike share their model's slice.
  struct Flow {
    double bytes;
    double cap;  // bytes/s; 0 = none
    int32_t task;
    int32_t path_begin;
    int32_t path_end;
  };
  std::vector<Flow> flows_;
  std::vector<ResourceId> flow_links_;
  std::vector<double> flow_weight_;  // parallel to flow_links_
  // Per resource: the last flow (index + 1) that listed it, so that AddFlow finds a link listed
  // twice in one pass.
  std::vector<int32_t> link_seen_;

  // Dependencies in insertion order: (before, after).
  std::vector<std::pair<int32_t, int32_t>> edges_;
  // SetCounterparts: per task, or empty.
  std::vector<int32_t> counterpart_;

  // Resources (streams and links share one id space), indexed by ResourceId.
  std::vector<ResourceKind> resource_kind_;
  std::vector<std::string> resource_name_;
  std::vector<double> capacity_;  // links: bytes/s; streams: 0

  TaskNamer namer_;
  DiagnosticSink errors_;
};

}  // namespace shardsim

#endif  // SHARDSIM_ENGINE_ENGINE_H_
