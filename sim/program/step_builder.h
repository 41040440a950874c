// The builder of a step's program (sim/program/step_program.h BuildStepProgram), shared by the
// files that hold its parts: step_program.cc (chunks, devices, the schedule's passes, pipeline
// links, the optimizer), step_in_layer.cc (in-layer TP/CP/EP traffic as flows on the step's
// links) and step_zero3.cc (ZeRO-3 / FSDP parameter gathers and gradient reductions). Internal to
// sim/program.
#ifndef SHARDSIM_PROGRAM_STEP_BUILDER_H_
#define SHARDSIM_PROGRAM_STEP_BUILDER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/hardware/op_cost.h"
#include "sim/memory/budget.h"
#include "sim/model/recompute.h"
#include "sim/parallel/stages.h"
#include "sim/program/step_links.h"
#include "sim/program/step_program.h"
#include "sim/program/zero3_fetch.h"
#include "sim/schedule/schedule.h"
#include "sim/topology/group.h"

namespace shardsim::step_builder {

// The in-layer traffic classes that can run as flows (Builder::ChooseNetworkedClasses), in the
// order a pass stages them (Builder::AddPass).
enum InLayerClass : size_t { kTpTraffic, kCpTraffic, kEpTraffic, kInLayerClasses };

// A pass's time of one in-layer class.
inline Seconds& PartOf(PassTime& p, InLayerClass c) {
  return c == kTpTraffic ? p.tp : c == kCpTraffic ? p.cp : p.ep;
}
inline Seconds PartOf(const PassTime& p, InLayerClass c) {
  return c == kTpTraffic ? p.tp : c == kCpTraffic ? p.cp : p.ep;
}

// Work of one chunk of one pipeline rank: its layers, and the embedding / head when it holds them.
struct ChunkWork {
  std::vector<int64_t> layers;
  bool embedding = false;
  bool head = false;
  int64_t dense_params = 0;
  int64_t expert_params = 0;
  Bytes activations;  // kept per micro-batch between its forward and backward
  Bytes weight_held;  // split backward: kept per micro-batch from its B to its W
  // The chunk's passes, summed over its layers once (every micro-batch runs the same ones).
  PassTime fwd;
  PassTime bwd;
  Seconds recompute;  // of the backward
  Seconds wgrad;      // of the backward: its weight-gradient kernels
  // Added to the pass's EP time when it has no partner to hide its all-to-alls behind
  // (BlockCost::ep_alone less what the pass already pays).
  Seconds fwd_ep_alone;
  Seconds bwd_ep_alone;
  // The passes' in-layer communication (BlockCost::fwd_traffic ... bwd_window).
  PassTime fwd_traffic, bwd_traffic, fwd_window, bwd_window;
};

class Builder {
 public:
  Builder(const Scenario& sc, const Plan& plan, const StepCosts& costs, const OpCostModel& hw,
          const MemoryBudget& mem, const ProgramOptions& opt)
      : sc_(sc),
        plan_(plan),
        g_(plan.graph),
        layout_(plan.layout),
        costs_(costs),
        hw_(hw),
        mem_(mem),
        opt_(opt),
        net_(plan.layout, opt.every_rank) {}

  Result<StepProgram> Build();

 private:
  struct Key {
    int32_t device, chunk, mb;
    auto operator<=>(const Key&) const = default;
  };

  TaskId Add(TaskInfo info, ResourceId stream, SimTime duration) {
    const TaskId t =
        prog_.engine.AddDelay(stream, duration, static_cast<uint32_t>(prog_.tasks->size()),
                              static_cast<uint8_t>(info.category));
    prog_.tasks->push_back(info);
    return t;
  }
  // A collective's cost and its flows for one device (CommOf).
  struct Comm {
    const CollectiveCost* cost = nullptr;
    const std::vector<PhaseFlow>* flows = nullptr;
    // The categories (bit per TaskCategory) Remember has seen these flows under.
    uint16_t* remembered = nullptr;
    // Per phase: the first flow added for it (invalid until then); later ones share its path
    // (Engine::AddFlowLike).
    std::vector<TaskId>* first = nullptr;
  };
  static_assert(kNumTaskCategories <= 16, "Comm::remembered holds a bit per category");

  // Keeps the largest instance of each kind of communication for the explanation.
  void Remember(const TaskInfo& info, const Comm& c) {
    if (c.flows->empty() || c.flows == last_remembered_) return;
    last_remembered_ = c.flows;
    // The same flows under a category seen before change nothing: they are cached per (group,
    // op, size, ...), and every caller's info.bytes is that size, so the kind exists and holds at
    // least these bytes. Skips the lookup below for all but the first of each.
    const auto bit = static_cast<uint16_t>(1u << static_cast<unsigned>(info.category));
    if ((*c.remembered & bit) != 0) return;
    *c.remembered = static_cast<uint16_t>(*c.remembered | bit);
    RememberKind(info, c);
  }
  void RememberKind(const TaskInfo& info, const Comm& c) {
    const std::tuple<int, int, int> key{static_cast<int>(info.category),
                                        static_cast<int>(info.group), static_cast<int>(info.op)};
    auto it = kind_index_.find(key);
    if (it == kind_index_.end()) {
      it = kind_index_.emplace(key, prog_.comm_kinds.size()).first;
      prog_.comm_kinds.emplace_back();
    } else if (!(info.bytes > prog_.comm_kinds[it->second].size)) {
      return;
    }
    CommKind& k = prog_.comm_kinds[it->second];
    k.category = info.category;
    k.group = info.group;
    k.op = info.op;
    k.algo = c.cost->algo;
    k.size = info.bytes;
    k.device = info.device;
    k.phases = *c.flows;
  }
  std::map<std::tuple<int, int, int>, size_t> kind_index_;
  const std::vector<PhaseFlow>* last_remembered_ = nullptr;

  // A collective as flows on the step's links (sim/program/step_links.h): one flow per phase,
  // the first on `stream`, each later one after the previous; the next task of `stream` waits for
  // the last phase too. Returns the last phase's task.
  TaskId AddComm(const TaskInfo& base, ResourceId stream, const Comm& c) {
    // The common case, built in short: one phase whose path a flow already holds, its kind
    // already remembered, on a stream no multi-phase collective left a tail on. The general path
    // below adds the same task and info and no dependency (Remember and the tails are no-ops).
    if (c.flows->size() == 1 && (*c.first)[0].valid() &&
        (c.flows == last_remembered_ ||
         (*c.remembered & (1u << static_cast<unsigned>(base.category))) != 0) &&
        !HasTail(stream)) {
      last_remembered_ = c.flows;
      const PhaseFlow& f = c.flows->front();
      const TaskId t = prog_.engine.AddFlowLike((*c.first)[0], stream, f.bytes, f.latency,
                                                static_cast<uint32_t>(prog_.tasks->size()),
                                                static_cast<uint8_t>(base.category));
      TaskInfo& info = prog_.tasks->emplace_back(base);
      info.link = c.cost->bottleneck_class;
      info.phases = 1;
      info.phase = 0;
      return t;
    }
    return AddCommInGeneral(base, stream, c);
  }
  [[gnu::noinline]] TaskId AddCommInGeneral(const TaskInfo& base, ResourceId stream,
                                            const Comm& c) {
    const LinkClass link = c.cost->bottleneck_class;
    const auto phases = static_cast<int16_t>(std::max<size_t>(1, c.flows->size()));
    Remember(base, c);
    if (stream.valid()) {
      const auto at = static_cast<size_t>(stream.v);
      if (at < stream_tail_.size() && stream_tail_[at].valid()) pending_tail_ = stream_tail_[at];
    }
    TaskId prev;
    for (size_t k = 0; k < c.flows->size(); ++k) {
      const PhaseFlow& f = (*c.flows)[k];
      TaskId& first = (*c.first)[k];
      const ResourceId on = k == 0 ? stream : ResourceId();
      const auto label = static_cast<uint32_t>(prog_.tasks->size());
      const auto category = static_cast<uint8_t>(base.category);
      const TaskId t =
          first.valid() ? prog_.engine.AddFlowLike(first, on, f.bytes, f.latency, label, category)
                        : prog_.engine.AddFlow(on, f.bytes, f.latency, f.links, label, category,
                                               BytesPerSec(0.0), f.weights);
      if (!first.valid()) first = t;
      TaskInfo& info = prog_.tasks->emplace_back(base);
      info.link = link;
      info.phases = phases;
      info.phase = static_cast<int16_t>(k);
      if (k == 0 && pending_tail_.valid()) Dep(pending_tail_, t);
      if (prev.valid()) Dep(prev, t);
      prev = t;
    }
    pending_tail_ = TaskId();
    if (!prev.valid()) {  // no phase (nothing to move): an instant task
      TaskInfo info = base;
      info.link = link;
      info.phases = phases;
      prev = Add(info, stream, SimTime::Zero());
    }
    if (stream.valid()) {
      const auto at = static_cast<size_t>(stream.v);
      if (c.flows->size() > 1) {
        if (at >= stream_tail_.size()) stream_tail_.resize(at + 1);
        stream_tail_[at] = prev;
      } else if (at < stream_tail_.size()) {
        stream_tail_[at] = TaskId();
      }
    }
    return prev;
  }
  // Whether `stream`'s last collective had several phases (the next one waits for its last).
  bool HasTail(ResourceId stream) const {
    if (!stream.valid()) return false;
    const auto at = static_cast<size_t>(stream.v);
    return at < stream_tail_.size() && stream_tail_[at].valid();
  }
  void Dep(TaskId before, TaskId after) { prog_.engine.AddDependency(before, after); }
  // Dep inside AddPass: also kept, while a pass is recorded for replay (StampedPass), in
  // `recording_`, in order.
  void PassDep(TaskId before, TaskId after) {
    if (recording_ != nullptr) recording_->emplace_back(before.v, after.v);
    prog_.engine.AddDependency(before, after);
  }
  std::vector<std::pair<int32_t, int32_t>>* recording_ = nullptr;

  // A collective of `bytes` in group `grp` of device `d`, on `stream`, after `after` (if valid).
  Result<TaskId> AddCollective(const Device& d, TaskCategory category, CommGroup grp,
                               CollectiveOp op, Bytes bytes, ResourceId stream, TaskId after,
                               int32_t chunk, int32_t microbatch = 0, int32_t layer = -1) {
    Result<Comm> c = CommOf(grp, op, bytes, d.coords, d);
    if (!c.ok()) return c.status();
    TaskInfo info;
    info.category = category;
    info.device = d.index;
    info.chunk = chunk;
    info.microbatch = microbatch;
    info.layer = layer;
    info.group = grp;
    info.op = op;
    info.bytes = bytes;
    const TaskId t = AddComm(info, stream, *c);
    if (after.valid()) Dep(after, First(t));
    return t;
  }
  // ZeRO's gradient reduction of `bytes` (the whole buffer): a reduce-scatter over the shard
  // group on `stream`, then under HSDP an all-reduce of the rank's shard (bytes / shard group)
  // across the replicas on the device's replica stream, after it: PyTorch FSDP2's foreach_reduce
  // (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py: all_reduce_stream waits for
  // reduce_scatter_stream, then dist.all_reduce over all_reduce_group) and FSDP1 HYBRID_SHARD's
  // _post_backward_hook (torch/distributed/fsdp/_runtime_utils.py: all_reduce over
  // _inter_node_pg on _all_reduce_stream). Returns the task after which the shard is reduced.
  // Precondition: the kGrad group has more than one rank.
  Result<TaskId> AddShardReduce(const Device& d, Bytes bytes, ResourceId stream, TaskId after,
                                int32_t chunk, int32_t microbatch = 0, int32_t layer = -1) {
    const int64_t shard = shard_size_;
    TaskId last;
    if (shard > 1) {
      Result<TaskId> rs =
          AddCollective(d, TaskCategory::kGradReduce, shard_group_, CollectiveOp::kReduceScatter,
                        bytes, stream, after, chunk, microbatch, layer);
      if (!rs.ok()) return rs.status();
      last = *rs;
    }
    if (replica_size_ > 1) {
      Result<TaskId> ar =
          AddCollective(d, TaskCategory::kGradReduce, CommGroup::kReplica, CollectiveOp::kAllReduce,
                        bytes / static_cast<double>(shard), d.replica, last.valid() ? last : after,
                        chunk, microbatch, layer);
      if (!ar.ok()) return ar.status();
      last = *ar;
    }
    return last;
  }
  // The first phase of the collective whose last phase is `last` (phases are added in a row).
  TaskId First(TaskId last) const {
    const TaskInfo& i = (*prog_.tasks)[static_cast<size_t>(last.v)];
    return TaskId(last.v - i.phase);
  }

  // A collective's cost and its flows for device `d`, memoized: a step repeats the same few
  // collectives (one per layer and micro-batch under ZeRO-3) and analyzing a group's shape is
  // the expensive part. `at` is the rank whose group it is (the device itself, or for a pipeline
  // transfer back, the previous stage).
  Result<Comm> CommOf(CommGroup grp, CollectiveOp op, Bytes size, const RankCoords& at,
                      const Device& d) {
    const CostKey key{
        static_cast<int>(grp), static_cast<int>(op), size.value(), at.dp, at.pp, at.cp};
    // Consecutive calls often repeat one collective (gradient buckets, ZeRO-3 layers).
    if (last_comm_.cost != nullptr && last_device_ == d.index && last_key_ == key) {
      return last_comm_;
    }
    auto it = cost_cache_.find(key);
    if (it == cost_cache_.end()) {
      Result<CollectiveCost> c = CostOf(grp, op, size, at);
      if (!c.ok()) return c.status();
      it = cost_cache_.emplace(key, std::move(*c)).first;
    }
    const FlowKey fk{key, d.index};
    auto f = flow_cache_.find(fk);
    if (f == flow_cache_.end()) {
      // NCCL returns at once for a count of 0 (nothing is launched): no flow, no latency.
      std::vector<PhaseFlow> flows;
      if (size.value() > 0.0) flows = net_.Flows(it->second, d.coords, prog_.engine);
      std::vector<TaskId> first(flows.size());
      f = flow_cache_.emplace(fk, CachedFlows{std::move(flows), 0, std::move(first)}).first;
    }
    last_key_ = key;
    last_device_ = d.index;
    last_comm_ = Comm{&it->second, &f->second.flows, &f->second.remembered, &f->second.first};
    return last_comm_;
  }
  // Layout::Cost(grp, op, size, at): the collective on the shape of `at`'s group
  // (AnalyzeGroup of Layout::GroupAt) with Layout::Concurrent(grp) groups at once, each group's
  // shape analyzed once and each (shape, op, size, concurrent groups) priced once: every pipeline
  // rank's DP group and most PP pairs have one shape.
  Result<CollectiveCost> CostOf(CommGroup grp, CollectiveOp op, Bytes size, const RankCoords& at) {
    const std::tuple<int, int64_t, int64_t, int64_t, int64_t> gk{static_cast<int>(grp), at.dp,
                                                                 at.tp, at.pp, at.cp};
    auto s = shape_cache_.find(gk);
    if (s == shape_cache_.end()) {
      Result<Group> g = layout_.GroupAt(grp, at);
      if (!g.ok()) return g.status();
      Result<GroupShape> shape = AnalyzeGroup(layout_.cluster(), *g);
      if (!shape.ok()) return shape.status();
      s = shape_cache_.emplace(gk, *shape).first;
    }
    const GroupShape& sh = s->second;
    CollectiveOptions opts;
    opts.concurrent_groups = layout_.Concurrent(grp);
    const ShapeCostKey ck{sh.ranks,
                          sh.ranks_per_node,
                          sh.nodes,
                          sh.nodes_per_leaf,
                          sh.leaves,
                          sh.nodes_per_pod,
                          sh.pods,
                          sh.uniform,
                          static_cast<int>(op),
                          size.value(),
                          opts.concurrent_groups};
    auto c = shape_cost_.find(ck);
    if (c == shape_cost_.end()) {
      Result<CollectiveCost> cost = CostCollective(layout_.cluster(), sh, op, size, opts);
      if (!cost.ok()) return cost.status();
      c = shape_cost_.emplace(ck, std::move(*cost)).first;
    }
    return c->second;
  }
  std::map<std::tuple<int, int64_t, int64_t, int64_t, int64_t>, GroupShape> shape_cache_;
  using ShapeCostKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                  bool, int, double, int64_t>;
  std::map<ShapeCostKey, CollectiveCost> shape_cost_;
  using CostKey = std::tuple<int, int, double, int64_t, int64_t, int64_t>;
  using FlowKey = std::pair<CostKey, int32_t>;
  std::map<CostKey, CollectiveCost> cost_cache_;
  CostKey last_key_;
  int32_t last_device_ = -1;
  Comm last_comm_;
  struct CachedFlows {
    std::vector<PhaseFlow> flows;
    uint16_t remembered = 0;    // Comm::remembered
    std::vector<TaskId> first;  // Comm::first
  };
  std::map<FlowKey, CachedFlows> flow_cache_;
  // Per stream (by id): the last phase of its last collective, or invalid.
  std::vector<TaskId> stream_tail_;
  TaskId pending_tail_;

  Status MakeChunks();
  void MakeDevices();
  // In-layer traffic as flows (see AddPass).
  Status ChooseNetworkedClasses();
  struct InLayerFlow {
    TaskId first;  // the first flow added on this path (Engine::AddFlowLike)
    double seconds_per_byte =
        0.0;  // alone: the template phase's max over its links of w / capacity
    std::vector<ResourceId> links;
    std::vector<double> weights;
    CommGroup group = CommGroup::kTp;
    CollectiveOp op = CollectiveOp::kAllReduce;
    Bytes size;
    LinkClass link = LinkClass::kNvlink;
    bool made = false;  // InLayerTemplate has filled it in
  };
  Result<InLayerFlow*> InLayerTemplate(const Device& d, InLayerClass cls, bool backward);
  // A compute pass of `info.parts` on d.compute, its networked in-layer traffic as flows; sets
  // the pass's first and last compute-stream task.
  Status AddPass(const Device& d, const TaskInfo& info, const PassTime& traffic,
                 const PassTime& window, TaskId* first, TaskId* last);
  // A pass as AddPass built it for one micro-batch, replayed for the others (StampedPass): its
  // tasks (`count` from `recorded` on, in the engine), their infos and the dependencies among
  // them, relative to its first task; Replay copies them (Engine::AppendCopies). Every
  // micro-batch's pass of one chunk, phase and pairing is the same tasks, durations, bytes and
  // dependencies; only TaskInfo::microbatch differs.
  struct PassStamp {
    bool built = false;
    bool replayable = false;  // every dependency recorded stays inside the pass
    int32_t first = 0, last = 0;
    TaskId recorded;
    int32_t count = 0;
    std::vector<TaskInfo> infos;
    std::vector<std::pair<int32_t, int32_t>> deps;
  };
  // AddPass(d, info, traffic, window, first, last), recorded into `stamp` the first time and
  // replayed from it after (with info.microbatch): the same engine tasks, infos and dependencies
  // in the same order. Precondition: every call with one stamp passes the same arguments but
  // info.microbatch.
  Status StampedPass(PassStamp* stamp, const Device& d, const TaskInfo& info,
                     const PassTime& traffic, const PassTime& window, TaskId* first, TaskId* last);
  // Whether `stamp` holds a pass to replay; Replay adds it for `microbatch`.
  static bool Replayable(const PassStamp& stamp) { return stamp.built && stamp.replayable; }
  void Replay(const PassStamp& stamp, int32_t microbatch, TaskId* first, TaskId* last);
  std::array<bool, kInLayerClasses> networked_{};
  bool any_networked_ = false;  // some class of networked_
  // By (device, class, backward): InLayerTemplate's index. Sized once, never moved after (the
  // builder keeps pointers into it).
  std::vector<InLayerFlow> in_layer_;
  void PriceChunk(ChunkWork* w) const;
  // The chunk's forward or backward (adding the backward's recompute and weight-gradient time to
  // `recompute` and `wgrad`).
  // `alone`: the pass has no partner to hide its expert all-to-alls behind (BlockCost::ep_alone).
  PassTime ChunkPass(const ChunkWork& w, bool backward, Seconds* recompute,
                     Seconds* wgrad = nullptr, bool alone = false) const;
  struct OncePass {
    TaskInfo info;
    SimTime duration;
    bool built = false;
  };
  TaskInfo PassInfo(const Device& d, const ChunkWork& w, const ScheduleItem& it, bool alone) const;
  OncePass PassOnce(const Device& d, const ChunkWork& w, const ScheduleItem& it, bool alone) const;
  Status BuildDevice(const Device& d);
  Status BuildZero3Item(const Device& d, const ScheduleItem& it, TaskId* first, TaskId* last);
  Status BuildSubmoduleZero3Item(const Device& d, const ScheduleItem& it, TaskId* first,
                                 TaskId* last);
  // DeepSpeed's submodules of a layer kind (gather_unit submodule): a unit starts at each op
  // holding at least stage3_param_persistence_threshold parameters and takes the ops after it;
  // its share of the layer's forward and backward time is its ops' kernel time over the layer's.
  struct UnitShape {
    int64_t numel = 0;  // elements all-gathered (the ops above the persistence threshold)
    int64_t grads = 0;  // gradient elements (all its ops' parameters)
    double fwd_share = 0.0, bwd_share = 0.0;
  };
  const std::vector<UnitShape>& UnitsOf(int64_t layer);
  std::map<int, std::vector<UnitShape>> units_;  // by layer kind
  Status LinkPipeline();
  Status Finish(const Device& d);
  // Each task's counterpart one schedule period later (Engine::SetCounterparts), or -1; empty
  // when no period is named (PeriodOf 0).
  std::vector<int32_t> Counterparts() const;
  // The schedule's period in micro-batches, when the step has kMinPeriods of them at least (and,
  // under DualPipe, kDualPipeMinPerStage micro-batches per stage); 0 where none is named.
  int64_t PeriodOf() const;
  static constexpr int64_t kMinPeriods = 12;
  // DualPipe and DualPipeV: named from this many micro-batches per pipeline stage (PeriodOf).
  static constexpr int64_t kDualPipeMinPerStage = 6;
  int64_t period_ = 0;
  // Collective flows joined across replicas (every-rank mode): returns the task that completes
  // when all members of this collective instance have.
  // Identifies one collective across the ranks that run it (every-rank mode).
  enum class JoinKind {
    kParamGather,
    kGradBucket,
    kExpertGrad,
    kZero2,
    kZero3Gather,
    kZero3Reduce
  };
  struct JoinKey {
    JoinKind kind;
    int64_t stage, chunk, microbatch, index;
    auto operator<=>(const JoinKey&) const = default;
  };
  TaskId Joined(const JoinKey& key, TaskId flow);

  const Scenario& sc_;
  const Plan& plan_;
  const OpGraph& g_;
  const Layout& layout_;
  const StepCosts& costs_;
  const OpCostModel& hw_;
  const MemoryBudget& mem_;
  ProgramOptions opt_;
  StepNetwork net_;
  StepProgram prog_;
  ScheduleShape shape_;
  std::vector<std::vector<ChunkWork>> chunks_;        // [pp rank][chunk]
  std::shared_ptr<const OrderCache::Orders> orders_;  // [pp rank]: the schedule's run order
  // Flat tables indexed by Slot(device, chunk, micro-batch): the first and last compute task of
  // each forward and backward (a backward split into gradient buckets has several).
  size_t ChunkSlot(int32_t device, int32_t chunk) const {
    return static_cast<size_t>(device) * static_cast<size_t>(shape_.virtual_stages) +
           static_cast<size_t>(chunk);
  }
  size_t Slot(const Key& k) const {
    return ChunkSlot(k.device, k.chunk) * static_cast<size_t>(prog_.microbatches) +
           static_cast<size_t>(k.mb);
  }
  std::vector<TaskId> fwd_, bwd_, fwd_first_, bwd_first_;
  std::vector<TaskId> wgt_;  // split backward: the last task of each W (its gradients are done)
  // The tasks each schedule item built, [Slot * kPhases + phase]: in BuildDevice (its pass and
  // what came with it) and in LinkPipeline (the transfer after it), for Counterparts.
  struct TaskRange {
    int32_t begin = 0, end = 0;
  };
  static constexpr size_t kPhases = 4;  // Phase's values
  size_t ItemSlot(const Key& k, Phase phase) const {
    return Slot(k) * kPhases + static_cast<size_t>(phase);
  }
  std::vector<TaskRange> item_tasks_, send_tasks_;
  // DualPipe's paired chunks (ScheduleItem::paired), by the backward's slot: the first task of
  // the forward it runs with, which waits for the backward's input gradient as well.
  std::vector<TaskId> pair_fwd_;
  // DualPipe / DualPipeV with ep_comm_overlap: only paired chunks hide their all-to-alls.
  bool pairs_only_overlap_ = false;
  bool split_ = false;  // the schedule runs B and W apart
  // The group ZeRO / FSDP shards over: kGrad, or kShard under HSDP (framework.shard_group below
  // dp x cp), whose gradients are then all-reduced across kReplica (AddShardReduce).
  CommGroup shard_group_ = CommGroup::kGrad;
  // Layout::GroupSize of shard_group_ and of kReplica, once (AddShardReduce runs per bucket).
  int64_t shard_size_ = 1, replica_size_ = 1;
  int64_t sp_shards_ = 1;  // sequence parallelism's shards of a column-parallel input
  std::vector<std::vector<TaskId>> waits_;  // per device: comm tasks the optimizer waits for
  std::vector<TaskId> gather_;              // per (device, chunk): ZeRO-1/2 parameter gather
  std::map<JoinKey, TaskId> join_task_;     // every-rank mode: the task that completes a collective
};

}  // namespace shardsim::step_builder

#endif  // SHARDSIM_PROGRAM_STEP_BUILDER_H_
