#include "sim/program/step_program.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "sim/hardware/op_cost.h"
#include "sim/memory/budget.h"
#include "sim/model/recompute.h"
#include "sim/parallel/stages.h"
#include "sim/program/step_links.h"
#include "sim/program/zero3_fetch.h"
#include "sim/schedule/schedule.h"

namespace shardsim {

const char* Name(TaskCategory c) {
  switch (c) {
    case TaskCategory::kForward:
      return "forward";
    case TaskCategory::kBackward:
      return "backward";
    case TaskCategory::kOptimizer:
      return "optimizer";
    case TaskCategory::kPpSend:
      return "pp_send";
    case TaskCategory::kGradReduce:
      return "grad_reduce";
    case TaskCategory::kParamGather:
      return "param_gather";
    case TaskCategory::kZero3Gather:
      return "zero3_gather";
    case TaskCategory::kEmbeddingSync:
      return "embedding_sync";
    case TaskCategory::kJoin:
      return "join";
  }
  return "?";
}

namespace {

// The in-layer traffic classes that can run as flows (Builder::ChooseNetworkedClasses), in the
// order a pass stages them (Builder::AddPass).
enum InLayerClass : size_t { kTpTraffic, kCpTraffic, kEpTraffic, kInLayerClasses };

// A pass's time of one in-layer class.
Seconds& PartOf(PassTime& p, InLayerClass c) {
  return c == kTpTraffic ? p.tp : c == kCpTraffic ? p.cp : p.ep;
}
Seconds PartOf(const PassTime& p, InLayerClass c) {
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
  TaskId AddComm(TaskInfo info, ResourceId stream, const Comm& c) {
    info.link = c.cost->bottleneck_class;
    info.phases = static_cast<int16_t>(std::max<size_t>(1, c.flows->size()));
    Remember(info, c);
    if (stream.valid()) {
      const auto at = static_cast<size_t>(stream.v);
      if (at < stream_tail_.size() && stream_tail_[at].valid()) pending_tail_ = stream_tail_[at];
    }
    TaskId prev;
    for (size_t k = 0; k < c.flows->size(); ++k) {
      const PhaseFlow& f = (*c.flows)[k];
      info.phase = static_cast<int16_t>(k);
      TaskId& first = (*c.first)[k];
      const ResourceId on = k == 0 ? stream : ResourceId();
      const auto label = static_cast<uint32_t>(prog_.tasks->size());
      const auto category = static_cast<uint8_t>(info.category);
      const TaskId t =
          first.valid() ? prog_.engine.AddFlowLike(first, on, f.bytes, f.latency, label, category)
                        : prog_.engine.AddFlow(on, f.bytes, f.latency, f.links, label, category,
                                               BytesPerSec(0.0), f.weights);
      if (!first.valid()) first = t;
      prog_.tasks->push_back(info);
      if (k == 0 && pending_tail_.valid()) Dep(pending_tail_, t);
      if (prev.valid()) Dep(prev, t);
      prev = t;
    }
    pending_tail_ = TaskId();
    if (!prev.valid()) {  // no phase (nothing to move): an instant task
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
  void Dep(TaskId before, TaskId after) { prog_.engine.AddDependency(before, after); }

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
    const int64_t shard = layout_.GroupSize(shard_group_);
    TaskId last;
    if (shard > 1) {
      Result<TaskId> rs =
          AddCollective(d, TaskCategory::kGradReduce, shard_group_, CollectiveOp::kReduceScatter,
                        bytes, stream, after, chunk, microbatch, layer);
      if (!rs.ok()) return rs.status();
      last = *rs;
    }
    if (layout_.GroupSize(CommGroup::kReplica) > 1) {
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
      Result<CollectiveCost> c = layout_.Cost(grp, op, size, at);
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
  };
  Result<InLayerFlow*> InLayerTemplate(const Device& d, InLayerClass cls, bool backward);
  // A compute pass of `info.parts` on d.compute, its networked in-layer traffic as flows; sets
  // the pass's first and last compute-stream task.
  Status AddPass(const Device& d, const TaskInfo& info, const PassTime& traffic,
                 const PassTime& window, TaskId* first, TaskId* last);
  std::array<bool, kInLayerClasses> networked_{};
  std::map<std::tuple<int32_t, InLayerClass, bool>, InLayerFlow> in_layer_;  // (device, class, bwd)
  void PriceChunk(ChunkWork* w) const;
  // The chunk's forward or backward (adding the backward's recompute and weight-gradient time to
  // `recompute` and `wgrad`).
  // `alone`: the pass has no partner to hide its expert all-to-alls behind (BlockCost::ep_alone).
  PassTime ChunkPass(const ChunkWork& w, bool backward, Seconds* recompute,
                     Seconds* wgrad = nullptr, bool alone = false) const;
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
  std::vector<std::vector<ChunkWork>> chunks_;     // [pp rank][chunk]
  std::vector<std::vector<ScheduleItem>> orders_;  // [pp rank]: the schedule's run order
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
  // DualPipe's paired chunks (ScheduleItem::paired), by the backward's slot: the first task of
  // the forward it runs with, which waits for the backward's input gradient as well.
  std::vector<TaskId> pair_fwd_;
  // DualPipe / DualPipeV with ep_comm_overlap: only paired chunks hide their all-to-alls.
  bool pairs_only_overlap_ = false;
  bool split_ = false;  // the schedule runs B and W apart
  // The group ZeRO / FSDP shards over: kGrad, or kShard under HSDP (framework.shard_group below
  // dp x cp), whose gradients are then all-reduced across kReplica (AddShardReduce).
  CommGroup shard_group_ = CommGroup::kGrad;
  int64_t sp_shards_ = 1;  // sequence parallelism's shards of a column-parallel input
  std::vector<std::vector<TaskId>> waits_;  // per device: comm tasks the optimizer waits for
  std::vector<TaskId> gather_;              // per (device, chunk): ZeRO-1/2 parameter gather
  std::map<JoinKey, TaskId> join_task_;     // every-rank mode: the task that completes a collective
};

Status Builder::MakeChunks() {
  for (const PipelineRank& r : plan_.stages) {
    std::vector<ChunkWork> chunks;
    for (size_t c = 0; c < r.chunks.size(); ++c) {
      ChunkWork w;
      for (int64_t i = r.chunks[c].begin; i < r.chunks[c].end; ++i) {
        w.layers.push_back(i);
        w.activations += LayerActivationBytes(g_.layer(i), sc_.training);
        w.weight_held += WeightGradHeldBytes(g_.layer(i).ops, sc_.training, sp_shards_);
        for (const Op& op : g_.layer(i).ops) {
          (op.tp_split == TpSplit::kExperts ? w.expert_params : w.dense_params) += op.params;
        }
      }
      w.embedding = r.has_embedding && static_cast<int64_t>(c) == r.embedding_chunk;
      w.head = r.has_head && static_cast<int64_t>(c) == r.head_chunk;
      if (w.embedding) {
        w.activations += Sum(g_.embedding).saved;
        w.weight_held += WeightGradHeldBytes(g_.embedding, sc_.training, sp_shards_);
        w.dense_params += Sum(g_.embedding).params;
      }
      if (w.head) {
        w.activations += Sum(g_.head).saved + Sum(g_.mtp).saved;
        w.weight_held += WeightGradHeldBytes(g_.head, sc_.training, sp_shards_) +
                         WeightGradHeldBytes(g_.mtp, sc_.training, sp_shards_);
        w.dense_params += Sum(g_.head).params + Sum(g_.mtp).params;
        // A tied head's own token table: reduced over DP like any other parameter, then summed
        // with the first stage's (the kEmbeddingSync all-reduce).
        w.dense_params += TiedHeadCopyParams(sc_.model, sc_.parallel);
      }
      PriceChunk(&w);
      chunks.push_back(std::move(w));
    }
    chunks_.push_back(std::move(chunks));
  }
  return Status::Ok();
}

void Builder::MakeDevices() {
  const Placement& pl = layout_.placement();
  const int64_t dp = opt_.every_rank ? pl.Size(ParallelDim::kDp) : 1;
  const int64_t cp = opt_.every_rank ? pl.Size(ParallelDim::kCp) : 1;
  for (int64_t r = 0; r < sc_.parallel.pp; ++r) {
    for (int64_t c = 0; c < cp; ++c) {
      for (int64_t d = 0; d < dp; ++d) {
        Device dev;
        dev.index = static_cast<int32_t>(prog_.devices.size());
        dev.coords.pp = r;
        dev.coords.dp = d;
        dev.coords.cp = c;
        const std::string n =
            "rank pp" + std::to_string(r) +
            (opt_.every_rank ? " dp" + std::to_string(d) + " cp" + std::to_string(c) : "");
        dev.compute = prog_.engine.AddStream(n + " compute");
        dev.pp_next = prog_.engine.AddStream(n + " pp->next");
        dev.pp_prev = prog_.engine.AddStream(n + " pp->prev");
        dev.gather = prog_.engine.AddStream(n + " param gather");
        dev.grad = prog_.engine.AddStream(n + " grad reduce");
        if (layout_.GroupSize(CommGroup::kReplica) > 1) {
          dev.replica = prog_.engine.AddStream(n + " replica all-reduce");
        }
        prog_.devices.push_back(dev);
      }
    }
  }
}

void Builder::PriceChunk(ChunkWork* w) const {
  const auto add = [&](const BlockCost& b) {
    w->fwd += b.fwd;
    w->bwd += b.bwd;
    w->recompute += b.recompute.compute;
    w->wgrad += b.wgrad;
    w->fwd_ep_alone += b.ep_alone - b.fwd.ep;
    w->bwd_ep_alone += b.ep_alone - (b.bwd.ep - b.recompute.ep);
    w->fwd_traffic += b.fwd_traffic;
    w->bwd_traffic += b.bwd_traffic;
    w->fwd_window += b.fwd_window;
    w->bwd_window += b.bwd_window;
  };
  for (int64_t i : w->layers) {
    add(costs_.layer_kinds[static_cast<size_t>(g_.layer_kind_of[static_cast<size_t>(i)])]);
  }
  if (w->embedding) add(costs_.embedding);
  if (w->head) add(costs_.head);
}

PassTime Builder::ChunkPass(const ChunkWork& w, bool backward, Seconds* recompute, Seconds* wgrad,
                            bool alone) const {
  PassTime t = backward ? w.bwd : w.fwd;
  if (alone) t.ep += backward ? w.bwd_ep_alone : w.fwd_ep_alone;
  if (!backward) return t;
  if (recompute != nullptr) *recompute += w.recompute;
  if (wgrad != nullptr) *wgrad += w.wgrad;
  return t;
}

// In-layer traffic (TP collectives, CP ring-attention hops, EP all-to-alls) as flows on the
// step's links, so that it shares them max-min with DP, ZeRO and PP flows (and with each other's
// replicas) where they meet. A class becomes flows only when a link class it loads is also
// loaded by other traffic of the step (any other group; another in-layer class only off NVLink,
// since a device's in-layer classes run one after the other and NVLink ports are per GPU);
// otherwise no flow could share its links and it stays priced into the pass (the flows would
// give the same time at a higher engine cost).
Status Builder::ChooseNetworkedClasses() {
  const auto mask = [&](CommGroup g, CollectiveOp op, Bytes size,
                        const RankCoords& at) -> Result<uint32_t> {
    if (layout_.GroupSize(g) <= 1 || size.value() <= 0.0) return 0u;
    Result<CollectiveCost> c = layout_.Cost(g, op, size, at);
    if (!c.ok()) return c.status();
    uint32_t m = 0;
    for (const PhaseTraffic& ph : c->phases) {
      for (size_t k = 0; k < kNumLinkClasses; ++k) {
        if (ph.bytes[k] > 0.0) m |= 1u << k;
      }
    }
    return m;
  };
  const auto add = [&](Result<uint32_t> m, uint32_t* into) -> Status {
    if (!m.ok()) return m.status();
    *into |= *m;
    return Status::Ok();
  };
  std::array<uint32_t, kInLayerClasses> in{};
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather}) {
    SHARDSIM_RETURN_IF_ERROR(
        add(mask(CommGroup::kTp, op, plan_.activation, RankCoords{}), &in[kTpTraffic]));
  }
  for (const LayerCollectives& lc : plan_.layer_collectives) {
    for (const InLayerCollective& c : lc.collectives) {
      if (c.group != CommGroup::kCp) continue;
      SHARDSIM_RETURN_IF_ERROR(
          add(mask(c.group, c.op, c.size, layout_.SlowestCpHop(RankCoords{})), &in[kCpTraffic]));
      break;  // every hop of the ring crosses the same classes
    }
  }
  if (costs_.ep.size.value() > 0.0) {
    SHARDSIM_RETURN_IF_ERROR(
        add(mask(CommGroup::kEp, CollectiveOp::kAllToAll, costs_.ep.size, RankCoords{}),
            &in[kEpTraffic]));
  }
  if ((in[kTpTraffic] | in[kCpTraffic] | in[kEpTraffic]) == 0) return Status::Ok();
  // The classes the other traffic loads: the DP groups' at a bucket's size (reduce-scatter
  // loads what all-gather does), and the class that bounds each pipeline send (a transfer
  // that leaves the node loads its NIC, whatever bounds it).
  uint32_t others = 0;
  const Bytes bucket(64.0 * (1 << 20));
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather}) {
    SHARDSIM_RETURN_IF_ERROR(add(mask(CommGroup::kGrad, op, bucket, RankCoords{}), &others));
    SHARDSIM_RETURN_IF_ERROR(add(mask(CommGroup::kExpertGrad, op, bucket, RankCoords{}), &others));
  }
  for (const CommTime& t : costs_.pp_send) {
    const bool off_node = t.bottleneck != LinkClass::kNvlink && t.bottleneck != LinkClass::kPcie;
    others |= 1u << static_cast<unsigned>(t.bottleneck);
    if (off_node) others |= 1u << static_cast<unsigned>(LinkClass::kNic);
  }
  if (sc_.parallel.pp > 1 && sc_.model.tied_embeddings) {
    SHARDSIM_RETURN_IF_ERROR(
        add(mask(CommGroup::kEmbedding, CollectiveOp::kAllReduce, bucket, RankCoords{}), &others));
  }
  const uint32_t off_nvlink = ~(1u << static_cast<unsigned>(LinkClass::kNvlink));
  for (size_t c = 0; c < kInLayerClasses; ++c) {
    uint32_t other_in = 0;
    for (size_t o = 0; o < kInLayerClasses; ++o) other_in |= o == c ? 0u : in[o];
    networked_[c] = (in[c] & others) != 0 || (in[c] & other_in & off_nvlink) != 0;
  }
  return Status::Ok();
}

// The path of class `cls`'s in-layer flows of device `d` (forward or backward pass): the plan's
// first collective of that class and pass, as the network runs it for `d`
// (StepNetwork::Flows), its phase that would take longest alone. The pass's flow moves on that
// phase's links with its weights (replicas as multiplicity), its bytes sized so that alone it
// takes the class's time in the pass (AddPass).
Result<Builder::InLayerFlow*> Builder::InLayerTemplate(const Device& d, InLayerClass cls,
                                                       bool backward) {
  const auto key = std::make_tuple(d.index, cls, backward);
  auto it = in_layer_.find(key);
  if (it != in_layer_.end()) return &it->second;
  InLayerFlow f;
  RankCoords at;
  bool found = false;
  if (cls == kEpTraffic) {
    f.group = CommGroup::kEp;
    f.op = CollectiveOp::kAllToAll;
    f.size = costs_.ep.size;
    found = f.size.value() > 0.0;
  } else {
    const CommGroup want = cls == kTpTraffic ? CommGroup::kTp : CommGroup::kCp;
    if (cls == kCpTraffic) at = layout_.SlowestCpHop(RankCoords{});
    std::vector<const LayerCollectives*> lists;
    for (const LayerCollectives& lc : plan_.layer_collectives) lists.push_back(&lc);
    lists.push_back(&plan_.embedding_collectives);
    lists.push_back(&plan_.head_collectives);
    for (const LayerCollectives* lc : lists) {
      int seen = 0;
      for (const InLayerCollective& c : lc->collectives) {
        if (c.group != want || c.regather) continue;
        // CP lists a forward then a backward hop per attention core; TP marks its pass.
        const bool bwd = want == CommGroup::kCp ? seen++ % 2 == 1 : c.pass != CommPass::kForward;
        if (bwd != backward) continue;
        f.group = c.group;
        f.op = c.op;
        f.size = c.size;
        found = true;
        break;
      }
      if (found) break;
    }
  }
  if (found) {
    Result<Comm> c = CommOf(f.group, f.op, f.size, at, d);
    if (!c.ok()) return c.status();
    f.link = c->cost->bottleneck_class;
    double longest = -1.0;
    for (const PhaseFlow& ph : *c->flows) {
      double k = 0.0;
      for (size_t l = 0; l < ph.links.size(); ++l) {
        // The representative device's weight (every-rank mode: this device's times the devices
        // loading the link alike), so the flow's bytes are the same in both modes.
        k = std::max(
            k, ph.weights[l] * ph.replicas[l] / prog_.engine.link_capacity(ph.links[l]).value());
      }
      if (k * ph.bytes.value() > longest) {
        longest = k * ph.bytes.value();
        f.seconds_per_byte = k;
        f.links = ph.links;
        f.weights = ph.weights;
      }
    }
    // For `simulate --explain`: the class's collective as the network runs it.
    CommKind kind;
    kind.category = backward ? TaskCategory::kBackward : TaskCategory::kForward;
    kind.group = f.group;
    kind.op = f.op;
    kind.algo = c->cost->algo;
    kind.size = f.size;
    kind.device = d.index;
    kind.phases = *c->flows;
    const std::tuple<int, int, int> kk{static_cast<int>(kind.category),
                                       static_cast<int>(kind.group), static_cast<int>(kind.op)};
    if (kind_index_.find(kk) == kind_index_.end()) {
      kind_index_.emplace(kk, prog_.comm_kinds.size());
      prog_.comm_kinds.push_back(std::move(kind));
    }
  }
  return &in_layer_.emplace(key, std::move(f)).first->second;
}

// A pass with in-layer traffic on networked classes runs as one stage per networked class c,
// then the rest of the pass. A stage's uncontended length is X_c = max(W_c, T_c) (T_c: the
// class's communication in the pass, exposed or hidden; W_c: the compute it can hide behind;
// BlockCost::fwd_traffic ...), and the class's traffic is one flow of alone time T_c on its
// links: on the compute stream when T_c >= W_c, else off-stream beside a delay W_c on the stream,
// the next stage waiting for both. The rest (a delay) is the analytic pass time less the stages,
// so that alone (no other flow on its links) the pass takes step_costs.cc's time (up to the
// picosecond rounding of its tasks; tests/program/in_layer_network_test.cc), and sharing a link a
// stage stretches by what its flow loses beyond its window: max(W_c, s * T_c) at a slowdown s,
// the overlap rule of step_costs.cc applied to the flow's simulated time.
// Approximations (the aggregation the engine's cost bound asks for, issue 13): one flow per
// class and pass (the pass's collectives, ring rounds and layers summed, on the path of the
// class's first collective, which the others cross too), windows summed over the pass, and the
// stages placed at the start of the pass, where the DP buckets and pipeline sends released by
// the pass before run: in the real step the transfers are spread through the pass, between its
// kernels, so a flow released at a pass boundary meets them about as the stages here do; a
// stage is cut to what is left of the pass (EP under ep_comm_overlap hides behind the paired
// pass too, DeepSeek-V3 §3.2.1).
Status Builder::AddPass(const Device& d, const TaskInfo& info, const PassTime& traffic,
                        const PassTime& window, TaskId* first, TaskId* last) {
  const PassTime& parts = info.parts;
  const Seconds total = parts.total();
  struct Stage {
    InLayerClass cls;
    Seconds x, t, w, e;
  };
  std::array<Stage, kInLayerClasses> stages{};
  size_t n = 0;
  Seconds budget = total;
  for (InLayerClass c : {kTpTraffic, kCpTraffic, kEpTraffic}) {
    if (!networked_[c]) continue;
    const Seconds t = PartOf(traffic, c);
    if (t.value() <= 0.0) continue;
    const Seconds e = PartOf(parts, c);
    const Seconds w = PartOf(window, c);
    const Seconds x = std::min(std::max(w, t), budget);
    if (x.value() <= 0.0) continue;
    stages[n++] = Stage{c, x, std::min(t, x), std::min(w, x), std::min(e, x)};
    budget = budget - x;
  }
  if (n == 0) {
    *first = *last = Add(info, d.compute, SimTime::FromSeconds(total));
    return Status::Ok();
  }
  const Seconds compute = parts.compute;
  const auto recompute_of = [&](Seconds c) {
    return compute.value() > 0.0 ? info.recompute * (c / compute) : Seconds(0);
  };
  TaskInfo a = info;
  for (size_t i = 0; i < n; ++i) {
    const Stage& st = stages[i];
    a.parts.compute = a.parts.compute - (st.x - st.e);
    Seconds& part = PartOf(a.parts, st.cls);
    part = std::max(Seconds(0), part - st.e);
  }
  a.parts.compute = std::max(Seconds(0), a.parts.compute);
  a.recompute = recompute_of(a.parts.compute);
  const bool backward = info.category == TaskCategory::kBackward;
  TaskId on_stream;  // the pass's last task on the compute stream so far
  TaskId pending;    // an off-stream flow the next stage waits for
  for (size_t i = 0; i < n; ++i) {
    const Stage& st = stages[i];
    Result<InLayerFlow*> tf = InLayerTemplate(d, st.cls, backward);
    if (!tf.ok()) return tf.status();
    InLayerFlow& f = **tf;
    TaskInfo fi = info;
    fi.activation_delta = Bytes(0);
    fi.group = f.group;
    fi.op = f.op;
    fi.bytes = f.size;
    fi.link = f.link;
    fi.parts = PassTime{};
    fi.recompute = Seconds(0);
    const bool exposed_form = st.t >= st.w;
    if (exposed_form) {
      fi.parts.compute = std::max(Seconds(0), st.x - st.e);
      PartOf(fi.parts, st.cls) = st.e;
      fi.recompute = recompute_of(fi.parts.compute);
    } else if (!on_stream.valid()) {
      // The pass's start, for the off-stream flow to start with it.
      TaskInfo si = info;
      si.activation_delta = Bytes(0);
      si.parts = PassTime{};
      si.recompute = Seconds(0);
      on_stream = *first = Add(si, d.compute, SimTime::Zero());
    }
    const Bytes bytes(f.seconds_per_byte > 0.0 ? st.t.value() / f.seconds_per_byte : 0.0);
    const ResourceId stream = exposed_form ? d.compute : ResourceId();
    const auto label = static_cast<uint32_t>(prog_.tasks->size());
    const auto category = static_cast<uint8_t>(info.category);
    const TaskId flow =
        f.first.valid()
            ? prog_.engine.AddFlowLike(f.first, stream, bytes, SimTime::Zero(), label, category)
            : prog_.engine.AddFlow(stream, bytes, SimTime::Zero(), f.links, label, category,
                                   BytesPerSec(0.0), f.weights);
    if (!f.first.valid()) f.first = flow;
    prog_.tasks->push_back(fi);
    if (pending.valid()) Dep(pending, flow);
    if (exposed_form) {
      if (!on_stream.valid()) *first = flow;
      on_stream = flow;
      pending = TaskId();
      continue;
    }
    Dep(on_stream, flow);
    TaskInfo wi = info;
    wi.activation_delta = Bytes(0);
    wi.parts = PassTime{};
    wi.parts.compute = st.x - st.e;
    PartOf(wi.parts, st.cls) = st.e;
    wi.recompute = recompute_of(wi.parts.compute);
    const TaskId w = Add(wi, d.compute, SimTime::FromSeconds(st.x));
    if (pending.valid()) Dep(pending, w);
    on_stream = w;
    pending = flow;
  }
  // The rest of the pass, after its stages (and the last off-stream flow); it allocates (frees)
  // the pass's activations when it ends.
  *last = Add(a, d.compute, SimTime::FromSeconds(budget));
  if (pending.valid()) Dep(pending, *last);
  if (!on_stream.valid()) *first = *last;
  return Status::Ok();
}

TaskId Builder::Joined(const JoinKey& key, TaskId flow) {
  if (!opt_.every_rank) return flow;
  auto it = join_task_.find(key);
  if (it == join_task_.end()) {
    TaskInfo info;
    info.category = TaskCategory::kJoin;
    it = join_task_.emplace(key, Add(info, ResourceId(), SimTime::Zero())).first;
  }
  Dep(flow, it->second);
  return it->second;
}

Status Builder::BuildDevice(const Device& d) {
  const int64_t r = d.coords.pp;
  const std::vector<ScheduleItem>& order = orders_[static_cast<size_t>(r)];
  const std::vector<ChunkWork>& chunks = chunks_[static_cast<size_t>(r)];
  const int zero = sc_.parallel.zero_stage;
  const double grad_bytes = BytesOf(sc_.training.grad_dtype);
  const double weight_bytes = mem_.weight_bytes_per_param;

  // ZeRO-1/2 parameter all-gathers: overlapped with the first forwards (Megatron-LM
  // --overlap-param-gather) they are queued first on the data stream; otherwise after the
  // optimizer step (Finish).
  if ((zero == 1 || zero == 2) && sc_.parallel.overlap_param_gather &&
      layout_.GroupSize(shard_group_) > 1) {
    for (size_t c = 0; c < chunks.size(); ++c) {
      const Bytes bytes(static_cast<double>(chunks[c].dense_params) * weight_bytes);
      Result<TaskId> t =
          AddCollective(d, TaskCategory::kParamGather, shard_group_, CollectiveOp::kAllGather,
                        bytes, d.gather, TaskId(), static_cast<int32_t>(c));
      if (!t.ok()) return t.status();
      gather_[ChunkSlot(d.index, static_cast<int32_t>(c))] =
          Joined(JoinKey{JoinKind::kParamGather, d.coords.pp, static_cast<int64_t>(c), 0, 0}, *t);
    }
  }

  // Each chunk's last pass that completes weight gradients (a whole backward or a W): its
  // gradients are then final and reduced.
  std::vector<size_t> last_grads(chunks.size(), order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i].phase == Phase::kBackward || order[i].phase == Phase::kWeight) {
      last_grads[static_cast<size_t>(order[i].chunk)] = i;
    }
  }
  for (size_t index = 0; index < order.size(); ++index) {
    const ScheduleItem& it = order[index];
    const ChunkWork& w = chunks[static_cast<size_t>(it.chunk)];
    const Key key{d.index, it.chunk, it.microbatch};
    const bool backward = it.phase != Phase::kForward;  // the whole backward, B or W
    // The task after which this micro-batch's weight gradients of the chunk are complete: the
    // whole backward, or W when the schedule splits it.
    const bool grads_done = it.phase == Phase::kBackward || it.phase == Phase::kWeight;
    TaskId first, last;
    if (zero == 3) {
      if (split_) {
        return Status::Invalid(std::string("schedule ") + Name(sc_.parallel.schedule) +
                               " with zero_stage 3 is not simulated");
      }
      SHARDSIM_RETURN_IF_ERROR(sc_.framework.gather_unit == GatherUnit::kSubmodule
                                   ? BuildSubmoduleZero3Item(d, it, &first, &last)
                                   : BuildZero3Item(d, it, &first, &last));
    } else {
      TaskInfo info;
      info.category = backward ? TaskCategory::kBackward : TaskCategory::kForward;
      info.device = d.index;
      info.chunk = it.chunk;
      info.microbatch = it.microbatch;
      Seconds wgrad;
      // DualPipe overlaps the expert all-to-alls only inside a paired forward/backward chunk
      // (arXiv 2412.19437 §3.2.1; deepseek-ai/DualPipe _forward_backward_chunk): its warm-up
      // forwards, unpaired backwards and zero-bubble B passes run their all-to-alls exposed.
      const bool paired = it.paired || (it.phase == Phase::kForward && index + 1 < order.size() &&
                                        order[index + 1].paired);
      const bool alone = pairs_only_overlap_ && !paired && it.phase != Phase::kWeight;
      info.parts = ChunkPass(w, backward, backward ? &info.recompute : nullptr, &wgrad, alone);
      info.activation_delta = backward ? Bytes(0) - w.activations : w.activations;
      if (it.phase == Phase::kInput) {
        // B: the backward less its weight-gradient kernels; it frees the chunk's activations
        // but what W will need (ChunkWork::weight_held).
        info.part = BackwardPart::kInput;
        info.parts.compute = info.parts.compute - wgrad;
        info.activation_delta = w.weight_held - w.activations;
      } else if (it.phase == Phase::kWeight) {
        info.part = BackwardPart::kWeight;
        info.parts = PassTime{};
        info.parts.compute = wgrad;
        info.recompute = Seconds(0);
        info.activation_delta = Bytes(0) - w.weight_held;
      }
      // The last backward of a chunk releases its gradients bucket by bucket: split it so each
      // bucket's reduction can start while the rest computes (Megatron-LM overlap_grad_reduce).
      const Bytes grads(static_cast<double>(w.dense_params) * grad_bytes);
      const bool reduce_here = grads_done && index == last_grads[static_cast<size_t>(it.chunk)] &&
                               zero <= 1 && layout_.GroupSize(CommGroup::kGrad) > 1;
      int64_t buckets = 1;
      if (reduce_here && sc_.parallel.overlap_grad_reduce) {
        buckets = std::clamp<int64_t>(
            static_cast<int64_t>(
                std::ceil(grads.value() / std::max(1.0, sc_.parallel.dp_bucket_bytes))),
            1, 16);
      }
      const bool weight_pass = it.phase == Phase::kWeight;
      const double per_piece = 1.0 / static_cast<double>(buckets);
      const PassTime traffic =
          weight_pass ? PassTime{} : (backward ? w.bwd_traffic : w.fwd_traffic) * per_piece;
      PassTime window =
          weight_pass ? PassTime{} : (backward ? w.bwd_window : w.fwd_window) * per_piece;
      if (alone) window.ep = Seconds(0);  // nothing to hide the all-to-alls behind
      TaskInfo piece = info;
      piece.parts = info.parts * (1.0 / static_cast<double>(buckets));
      piece.recompute = info.recompute / static_cast<double>(buckets);
      piece.buckets = static_cast<int16_t>(buckets);
      for (int64_t k = 0; k < buckets; ++k) {
        piece.bucket = static_cast<int16_t>(k);
        // Activations are freed when the whole backward is done: the last piece.
        piece.activation_delta = k + 1 == buckets ? info.activation_delta : Bytes(0);
        TaskId piece_first, t;
        SHARDSIM_RETURN_IF_ERROR(AddPass(d, piece, traffic, window, &piece_first, &t));
        if (k == 0) first = piece_first;
        last = t;
        if (!reduce_here) continue;
        const Bytes bucket = grads / static_cast<double>(buckets);
        // Without overlap the reduction waits for the whole backward pass (the last piece).
        Result<TaskId> f =
            zero == 0 ? AddCollective(d, TaskCategory::kGradReduce, CommGroup::kGrad,
                                      CollectiveOp::kAllReduce, bucket, d.grad, t, it.chunk)
                      : AddShardReduce(d, bucket, d.grad, t, it.chunk);
        if (!f.ok()) return f.status();
        waits_[static_cast<size_t>(d.index)].push_back(
            Joined(JoinKey{JoinKind::kGradBucket, d.coords.pp, it.chunk, 0, k}, *f));
      }
      if (reduce_here && w.expert_params > 0 && layout_.GroupSize(CommGroup::kExpertGrad) > 1) {
        const Bytes eg(static_cast<double>(w.expert_params) * grad_bytes);
        Result<TaskId> f =
            AddCollective(d, TaskCategory::kGradReduce, CommGroup::kExpertGrad,
                          zero == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter, eg,
                          d.grad, last, it.chunk);
        if (!f.ok()) return f.status();
        waits_[static_cast<size_t>(d.index)].push_back(
            Joined(JoinKey{JoinKind::kExpertGrad, d.coords.pp, it.chunk, 0, 0}, *f));
      }
      // ZeRO-2 keeps only its shard of the gradients: reduce-scatter after every backward.
      if (grads_done && zero == 2 && layout_.GroupSize(CommGroup::kGrad) > 1) {
        Result<TaskId> f = AddShardReduce(d, grads, d.grad, last, it.chunk, it.microbatch);
        if (!f.ok()) return f.status();
        waits_[static_cast<size_t>(d.index)].push_back(
            Joined(JoinKey{JoinKind::kZero2, d.coords.pp, it.chunk, it.microbatch, 0}, *f));
      }
    }
    if (!backward) {
      const TaskId ag = gather_[ChunkSlot(d.index, it.chunk)];
      if (ag.valid() && it.microbatch == 0) Dep(ag, first);
      fwd_first_[Slot(key)] = first;
      fwd_[Slot(key)] = last;
    } else if (it.phase != Phase::kWeight) {
      bwd_first_[Slot(key)] = first;
      bwd_[Slot(key)] = last;
      if (it.paired && index > 0 && order[index - 1].phase == Phase::kForward) {
        const ScheduleItem& f = order[index - 1];
        pair_fwd_[Slot(key)] = fwd_first_[Slot(Key{d.index, f.chunk, f.microbatch})];
      }
    }
    if (grads_done) wgt_[Slot(key)] = last;
  }
  return Status::Ok();
}

// ZeRO-3 / FSDP: each layer's parameters are all-gathered before its forward and again before
// its backward (at most 1 + prefetch_layers layers gathered at a time: the one computing and
// those prefetched; two under Megatron-Core), and its gradients reduce-scattered after its
// backward (Rajbhandari 2019 §5.3). The framework's mechanisms (sim/framework/framework.h) drop
// gathers and reductions: parameters kept unsharded are not gathered for backward, and under PP
// only by the first micro-batch's forward (torchtitan apply_fsdp with
// torch.distributed.pipelining); gradients held unsharded are reduced after the last
// micro-batch's backward only. Under FSDP1's BACKWARD_POST (SharesCollectiveStream) the
// reduce-scatters run on the gathers' stream, each enqueued after the next layer's all-gather
// (the post-backward hook's order), so a backward all-gather waits for the reduce-scatter of the
// layer two back instead of running beside it.
Status Builder::BuildZero3Item(const Device& d, const ScheduleItem& it, TaskId* first,
                               TaskId* last) {
  const ChunkWork& w = chunks_[static_cast<size_t>(d.coords.pp)][static_cast<size_t>(it.chunk)];
  const bool backward = it.phase == Phase::kBackward;
  const FrameworkSpec& fw = sc_.framework;
  const int64_t pp = sc_.parallel.pp;
  const bool kept = KeepsParamsUnsharded(fw, pp);
  const bool gather_pass = backward ? !kept : !(kept && pp > 1 && it.microbatch > 0);
  const bool gathered = layout_.GroupSize(shard_group_) > 1 && gather_pass;
  // FSDP2's reshard_after_forward: N: the backward gathers from the N-rank group the forward
  // left the parameters on (torch/distributed/fsdp/_fully_shard/_fsdp_init.py
  // _get_post_forward_mesh_info: a (shard / N, N) mesh whose inner N ranks are consecutive).
  const CommGroup gather_group = backward && fw.reshard_after_forward == Reshard::kToGroup
                                     ? CommGroup::kReshard
                                     : shard_group_;
  const bool reduced =
      layout_.GroupSize(CommGroup::kGrad) > 1 &&
      (!HoldsUnshardedGrads(fw, pp, prog_.microbatches) || it.microbatch == prog_.microbatches - 1);
  const size_t window = static_cast<size_t>(GatheredLayers(fw));
  std::vector<int64_t> layers = w.layers;
  // A chunk without decoder layers (a split that counts the embedding or the loss as a layer)
  // still runs the embedding or the head: one task for them, layer index kNoLayer.
  constexpr int64_t kNoLayer = -1;
  if (layers.empty()) layers.push_back(kNoLayer);
  if (backward) std::reverse(layers.begin(), layers.end());
  const double weight_bytes = mem_.weight_bytes_per_param;
  const double grad_bytes = BytesOf(sc_.training.grad_dtype);
  std::vector<TaskId> computed;
  const bool one_stream = SharesCollectiveStream(fw);
  // The reduce-scatter of the layer before, held until the next all-gather is enqueued (one
  // stream only).
  struct PendingReduce {
    Bytes bytes;
    TaskId after;
    int64_t layer = 0;
  };
  std::vector<PendingReduce> pending;
  auto reduce = [&](const PendingReduce& p) -> Status {
    Result<TaskId> f = AddShardReduce(d, p.bytes, one_stream ? d.gather : d.grad, p.after, it.chunk,
                                      it.microbatch, static_cast<int32_t>(p.layer));
    if (!f.ok()) return f.status();
    waits_[static_cast<size_t>(d.index)].push_back(
        Joined(JoinKey{JoinKind::kZero3Reduce, d.coords.pp, it.chunk, it.microbatch, p.layer}, *f));
    return Status::Ok();
  };
  for (size_t idx = 0; idx < layers.size(); ++idx) {
    const int64_t l = layers[idx];
    int64_t params = 0;
    PassTime parts, traffic, hide;
    Seconds recompute(0);
    Bytes acts;
    if (l != kNoLayer) {
      const LayerOps& ops = g_.layer(l);
      const BlockCost& b =
          costs_.layer_kinds[static_cast<size_t>(g_.layer_kind_of[static_cast<size_t>(l)])];
      params = Sum(ops.ops).params;
      parts = backward ? b.bwd : b.fwd;
      traffic = backward ? b.bwd_traffic : b.fwd_traffic;
      hide = backward ? b.bwd_window : b.fwd_window;
      if (backward) recompute = b.recompute.compute;
      acts = LayerActivationBytes(ops, sc_.training);
    }
    if (w.embedding && (backward ? idx + 1 == layers.size() : idx == 0)) {
      parts += backward ? costs_.embedding.bwd : costs_.embedding.fwd;
      traffic += backward ? costs_.embedding.bwd_traffic : costs_.embedding.fwd_traffic;
      hide += backward ? costs_.embedding.bwd_window : costs_.embedding.fwd_window;
      params += Sum(g_.embedding).params;
    }
    if (w.head && (backward ? idx == 0 : idx + 1 == layers.size())) {
      parts += backward ? costs_.head.bwd : costs_.head.fwd;
      traffic += backward ? costs_.head.bwd_traffic : costs_.head.fwd_traffic;
      hide += backward ? costs_.head.bwd_window : costs_.head.fwd_window;
      params += Sum(g_.head).params + Sum(g_.mtp).params;
    }
    TaskId gather;
    if (gathered) {
      const Bytes bytes(static_cast<double>(params) * weight_bytes);
      Result<TaskId> g = AddCollective(d, TaskCategory::kZero3Gather, gather_group,
                                       CollectiveOp::kAllGather, bytes, d.gather, TaskId(),
                                       it.chunk, it.microbatch, static_cast<int32_t>(l));
      if (!g.ok()) return g.status();
      // `window` gathered layers at most: this gather waits for the layer `window` back.
      if (computed.size() >= window) Dep(computed[computed.size() - window], First(*g));
      gather = Joined(JoinKey{JoinKind::kZero3Gather, d.coords.pp, it.chunk, it.microbatch,
                              2 * l + (backward ? 1 : 0)},
                      *g);
    }
    for (const PendingReduce& p : pending) SHARDSIM_RETURN_IF_ERROR(reduce(p));
    pending.clear();
    TaskInfo info;
    info.category = backward ? TaskCategory::kBackward : TaskCategory::kForward;
    info.device = d.index;
    info.chunk = it.chunk;
    info.microbatch = it.microbatch;
    info.layer = static_cast<int32_t>(l);
    info.parts = parts;
    info.recompute = recompute;
    // The embedding's and the head's saved tensors live with the first and last layer tasks.
    if (w.embedding && (backward ? idx + 1 == layers.size() : idx == 0))
      acts += Sum(g_.embedding).saved;
    if (w.head && (backward ? idx == 0 : idx + 1 == layers.size())) {
      acts += Sum(g_.head).saved + Sum(g_.mtp).saved;
    }
    info.activation_delta = backward ? Bytes(0) - acts : acts;
    TaskId pass_first, t;
    SHARDSIM_RETURN_IF_ERROR(AddPass(d, info, traffic, hide, &pass_first, &t));
    if (gather.valid()) Dep(gather, pass_first);
    computed.push_back(t);
    if (idx == 0) *first = pass_first;
    *last = t;
    if (backward && reduced) {
      const PendingReduce p{Bytes(static_cast<double>(params) * grad_bytes), t, l};
      if (one_stream) {
        pending.push_back(p);
      } else {
        SHARDSIM_RETURN_IF_ERROR(reduce(p));
      }
    }
  }
  for (const PendingReduce& p : pending) SHARDSIM_RETURN_IF_ERROR(reduce(p));
  return Status::Ok();
}

const std::vector<Builder::UnitShape>& Builder::UnitsOf(int64_t layer) {
  const int kind = g_.layer_kind_of[static_cast<size_t>(layer)];
  auto found = units_.find(kind);
  if (found != units_.end()) return found->second;
  const std::vector<Op>& ops = g_.layer(layer).ops;
  const int64_t threshold = std::max<int64_t>(1, sc_.framework.param_persistence_threshold);
  std::vector<std::vector<Op>> groups(1);
  std::vector<UnitShape> units(1);
  for (const Op& op : ops) {
    const bool gathered = op.params >= threshold;
    if (gathered && units.back().numel > 0) {
      groups.emplace_back();
      units.emplace_back();
    }
    groups.back().push_back(op);
    if (gathered) units.back().numel += op.params;
    units.back().grads += op.params;
  }
  const double fwd = OpsTime(ops, false, hw_).value();
  const double bwd = OpsTime(ops, true, hw_).value();
  for (size_t u = 0; u < units.size(); ++u) {
    units[u].fwd_share = fwd > 0.0 ? OpsTime(groups[u], false, hw_).value() / fwd
                                   : 1.0 / static_cast<double>(units.size());
    units[u].bwd_share = bwd > 0.0 ? OpsTime(groups[u], true, hw_).value() / bwd
                                   : 1.0 / static_cast<double>(units.size());
  }
  return units_.emplace(kind, std::move(units)).first->second;
}

// DeepSpeed ZeRO-3 (framework.gather_unit: submodule): the pass runs submodule by submodule;
// each submodule's parameters are all-gathered on their own, when DeepSpeed's coordinator
// fetches or prefetches them (PlanFetches, sim/program/zero3_fetch.h: stage3_prefetch_bucket_size,
// stage3_max_live_parameters, stage3_max_reuse_distance), and gradients are reduce-scattered in
// reduce_bucket_size buckets (PlanReduceBuckets). Under full recompute a layer's backward reruns
// its forward submodule by submodule first (torch.utils.checkpoint re-enters the modules' hooks),
// so its parameters are fetched for the recompute and again for the backward unless kept within
// the reuse distance. The coordinator starts afresh every pass (the forward-to-backward turn's
// reuse is not carried over). Every micro-batch gathers again: DeepSpeed has no no_sync.
Status Builder::BuildSubmoduleZero3Item(const Device& d, const ScheduleItem& it, TaskId* first,
                                        TaskId* last) {
  const ChunkWork& w = chunks_[static_cast<size_t>(d.coords.pp)][static_cast<size_t>(it.chunk)];
  const bool backward = it.phase == Phase::kBackward;
  const FrameworkSpec& fw = sc_.framework;
  const bool full = backward && sc_.training.recompute == Recompute::kFull;
  const bool gathered = layout_.GroupSize(shard_group_) > 1;
  const bool reduced = backward && layout_.GroupSize(CommGroup::kGrad) > 1 &&
                       (!HoldsUnshardedGrads(fw, sc_.parallel.pp, prog_.microbatches) ||
                        it.microbatch == prog_.microbatches - 1);
  struct Use {
    int64_t layer = -1;
    int64_t key = 0;  // the submodule: 4096 * layer + unit; -1 the embedding, -2 the head
    int64_t numel = 0;
    int64_t grads = 0;  // gradient elements ready after it (backward uses)
    PassTime parts;
    Seconds recompute;
    Bytes acts;  // activation bytes it keeps (forward) or frees (backward, negative)
  };
  std::vector<Use> uses;
  const int64_t threshold = std::max<int64_t>(1, fw.param_persistence_threshold);
  auto block = [&](int64_t key, const BlockCost& b, int64_t params, Bytes saved) {
    Use u;
    u.key = key;
    u.numel = params >= threshold ? params : 0;
    u.grads = backward ? params : 0;
    u.parts = backward ? b.bwd : b.fwd;
    if (backward) u.recompute = b.recompute.compute;
    u.acts = backward ? Bytes(0) - saved : saved;
    uses.push_back(u);
  };
  auto layer_uses = [&](int64_t l) {
    const std::vector<UnitShape>& units = UnitsOf(l);
    const BlockCost& b =
        costs_.layer_kinds[static_cast<size_t>(g_.layer_kind_of[static_cast<size_t>(l)])];
    const Bytes acts = LayerActivationBytes(g_.layer(l), sc_.training);
    const auto n = static_cast<int64_t>(units.size());
    if (!backward) {
      for (int64_t u = 0; u < n; ++u) {
        const UnitShape& s = units[static_cast<size_t>(u)];
        uses.push_back(Use{l, 4096 * l + u, s.numel, 0, b.fwd * s.fwd_share, Seconds(0),
                           u == 0 ? acts : Bytes(0)});
      }
      return;
    }
    PassTime rest = b.bwd;  // the backward without the recompute it contains
    if (full) {
      rest.compute = rest.compute - b.recompute.compute;
      rest.tp = rest.tp - b.recompute.tp;
      rest.cp = rest.cp - b.recompute.cp;
      rest.ep = rest.ep - b.recompute.ep;
      for (int64_t u = 0; u < n; ++u) {
        const UnitShape& s = units[static_cast<size_t>(u)];
        uses.push_back(Use{l, 4096 * l + u, s.numel, 0, b.recompute * s.fwd_share,
                           b.recompute.compute * s.fwd_share, Bytes(0)});
      }
    }
    for (int64_t u = n - 1; u >= 0; --u) {
      const UnitShape& s = units[static_cast<size_t>(u)];
      uses.push_back(Use{l, 4096 * l + u, s.numel, s.grads, rest * s.bwd_share,
                         full ? Seconds(0) : b.recompute.compute * s.bwd_share,
                         u == 0 ? Bytes(0) - acts : Bytes(0)});
    }
  };
  const int64_t embedding = Sum(g_.embedding).params;
  const int64_t head = Sum(g_.head).params + Sum(g_.mtp).params;
  const Bytes head_saved = Sum(g_.head).saved + Sum(g_.mtp).saved;
  if (!backward) {
    if (w.embedding) block(-1, costs_.embedding, embedding, Sum(g_.embedding).saved);
    for (int64_t l : w.layers) layer_uses(l);
    if (w.head) block(-2, costs_.head, head, head_saved);
  } else {
    if (w.head) block(-2, costs_.head, head, head_saved);
    for (auto l = w.layers.rbegin(); l != w.layers.rend(); ++l) layer_uses(*l);
    if (w.embedding) block(-1, costs_.embedding, embedding, Sum(g_.embedding).saved);
  }
  std::vector<FetchUse> trace;
  std::vector<int64_t> grads;
  for (const Use& u : uses) {
    trace.push_back(FetchUse{u.key, u.numel});
    grads.push_back(u.grads);
  }
  const std::vector<std::vector<size_t>> plan = PlanFetches(
      trace, FetchLimits{fw.prefetch_bucket_size, fw.max_live_parameters, fw.max_reuse_distance});
  std::vector<ReduceBucket> buckets;
  if (reduced) buckets = PlanReduceBuckets(grads, std::max<int64_t>(1, fw.reduce_bucket_size));
  size_t next_bucket = 0;
  const double weight_bytes = mem_.weight_bytes_per_param;
  const double grad_bytes = BytesOf(sc_.training.grad_dtype);
  std::vector<TaskId> gather_of(uses.size());
  TaskId prev;
  for (size_t i = 0; i < uses.size(); ++i) {
    const Use& u = uses[i];
    for (size_t k : gathered ? plan[i] : std::vector<size_t>{}) {
      const Use& v = uses[k];
      Result<TaskId> g =
          AddCollective(d, TaskCategory::kZero3Gather, shard_group_, CollectiveOp::kAllGather,
                        Bytes(static_cast<double>(v.numel) * weight_bytes), d.gather, prev,
                        it.chunk, it.microbatch, static_cast<int32_t>(v.layer));
      if (!g.ok()) return g.status();
      gather_of[k] = Joined(JoinKey{JoinKind::kZero3Gather, d.coords.pp, it.chunk, it.microbatch,
                                    (backward ? int64_t{1} << 40 : 0) + static_cast<int64_t>(k)},
                            *g);
    }
    TaskInfo info;
    info.category = backward ? TaskCategory::kBackward : TaskCategory::kForward;
    info.device = d.index;
    info.chunk = it.chunk;
    info.microbatch = it.microbatch;
    info.layer = static_cast<int32_t>(u.layer);
    info.parts = u.parts;
    info.recompute = u.recompute;
    info.activation_delta = u.acts;
    const TaskId t = Add(info, d.compute, SimTime::FromSeconds(u.parts.total()));
    if (gather_of[i].valid()) Dep(gather_of[i], t);
    if (i == 0) *first = t;
    *last = t;
    prev = t;
    for (; next_bucket < buckets.size() && buckets[next_bucket].after == i; ++next_bucket) {
      Result<TaskId> f =
          AddShardReduce(d, Bytes(static_cast<double>(buckets[next_bucket].numel) * grad_bytes),
                         d.grad, t, it.chunk, it.microbatch, static_cast<int32_t>(u.layer));
      if (!f.ok()) return f.status();
      waits_[static_cast<size_t>(d.index)].push_back(
          Joined(JoinKey{JoinKind::kZero3Reduce, d.coords.pp, it.chunk, it.microbatch,
                         static_cast<int64_t>(next_bucket)},
                 *f));
    }
  }
  return Status::Ok();
}

Status Builder::LinkPipeline() {
  const int64_t p = sc_.parallel.pp;
  if (p <= 1) return Status::Ok();
  const int64_t replicas = static_cast<int64_t>(prog_.devices.size()) / p;
  auto device_at = [&](const Device& d, int64_t stage) {
    return static_cast<int32_t>(stage * replicas + d.index % replicas);
  };
  for (const Device& d : prog_.devices) {
    const int64_t r = d.coords.pp;
    // The pair's cost: this rank and the next (forward), the previous one and this (backward).
    RankCoords prev_pair = d.coords;
    prev_pair.pp = (r + p - 1) % p;
    Result<Comm> next =
        CommOf(CommGroup::kPp, CollectiveOp::kSendRecv, costs_.pp_message, d.coords, d);
    if (!next.ok()) return next.status();
    Result<Comm> prev =
        CommOf(CommGroup::kPp, CollectiveOp::kSendRecv, costs_.pp_message, prev_pair, d);
    if (!prev.ok()) return prev.status();
    const std::vector<ScheduleItem>& order = orders_[static_cast<size_t>(d.coords.pp)];
    for (size_t index = 0; index < order.size(); ++index) {
      const ScheduleItem& it = order[index];
      if (it.phase == Phase::kWeight) continue;  // nothing crosses stages after a W
      const Key key{d.index, it.chunk, it.microbatch};
      TaskInfo info;
      info.category = TaskCategory::kPpSend;
      info.device = d.index;
      info.chunk = it.chunk;
      info.microbatch = it.microbatch;
      info.group = CommGroup::kPp;
      info.op = CollectiveOp::kSendRecv;
      info.bytes = costs_.pp_message;
      // Where this pass's activations (forward) or input gradient (backward, B) go.
      const bool forward = it.phase == Phase::kForward;
      const StageHop hop = NextHop(shape_, r, it.chunk, forward);
      if (!hop.exists) continue;
      const int32_t to = device_at(d, hop.rank);
      const Key target{to, hop.chunk, it.microbatch};
      const TaskId done = forward ? fwd_[Slot(key)] : bwd_[Slot(key)];
      const TaskId next_task = forward ? fwd_first_[Slot(target)] : bwd_first_[Slot(target)];
      // A paired backward's input gradient gates its forward partner too (DualPipe waits for
      // both receives before computing the pair).
      const TaskId partner = forward ? TaskId() : pair_fwd_[Slot(target)];
      if (hop.rank == r) {  // the V's turn: the next chunk is on this rank
        Dep(done, next_task);
        if (partner.valid()) Dep(done, partner);
        continue;
      }
      const TaskId s =
          AddComm(info, hop.via_next ? d.pp_next : d.pp_prev, hop.via_next ? *next : *prev);
      Dep(done, First(s));
      Dep(s, next_task);
      if (partner.valid()) Dep(s, partner);
      // DeepSpeed's PipelineEngine sends synchronously (framework.blocking_p2p;
      // deepspeed/runtime/pipe/p2p.py send: async_op must be False, dist.send): the sender's
      // next pass starts when the send has completed.
      if (sc_.framework.blocking_p2p) {
        for (size_t n = index + 1; n < order.size(); ++n) {
          const ScheduleItem& after = order[n];
          if (after.phase == Phase::kWeight) continue;  // a W has no first task recorded
          const Key k{d.index, after.chunk, after.microbatch};
          Dep(s, after.phase == Phase::kForward ? fwd_first_[Slot(k)] : bwd_first_[Slot(k)]);
          break;
        }
      }
    }
  }
  return Status::Ok();
}

Status Builder::Finish(const Device& d) {
  const int64_t r = d.coords.pp;
  const int64_t p = sc_.parallel.pp;
  const int zero = sc_.parallel.zero_stage;
  const std::vector<ChunkWork>& chunks = chunks_[static_cast<size_t>(r)];
  // Tied embeddings on a split pipeline: the first and last rank all-reduce the embedding's
  // gradient (Megatron-LM _allreduce_embedding_grads).
  if (sc_.model.tied_embeddings && p > 1 && (r == 0 || r == p - 1)) {
    const int64_t rows = plan_.rules.vocab_rows_per_rank;
    const Bytes bytes(static_cast<double>(rows * sc_.model.hidden_size) *
                      BytesOf(sc_.training.grad_dtype));
    const int32_t chunk = r == 0 ? 0 : static_cast<int32_t>(chunks.size() - 1);
    Result<TaskId> f = AddCollective(
        d, TaskCategory::kEmbeddingSync, CommGroup::kEmbedding, CollectiveOp::kAllReduce, bytes,
        d.grad, wgt_[Slot(Key{d.index, chunk, static_cast<int32_t>(prog_.microbatches - 1)})],
        chunk);
    if (!f.ok()) return f.status();
    waits_[static_cast<size_t>(d.index)].push_back(*f);
  }
  // The optimizer step over the local shard (ZeRO-1+ shards it over dp x cp), memory-bound,
  // as Megatron-LM's optimizer runs it: zero the gradient buffer for the next step, the
  // gradient norm for clipping (one read of the gradients), fp16's unscale and inf check (one
  // more), the fused optimizer (FusedOptimizerBytesPerParam: weight, gradient and states read,
  // weight and states written),
  // and the copy of the fp32 master weights into the 16-bit ones (4 read + 2 written).
  int64_t dense = 0, expert = 0;
  for (const ChunkWork& w : chunks) {
    dense += w.dense_params;
    expert += w.expert_params;
  }
  if (zero >= 1) {
    dense /= layout_.GroupSize(shard_group_);
    expert /= std::max<int64_t>(1, layout_.GroupSize(CommGroup::kExpertGrad));
  }
  const bool adam = sc_.training.optimizer == Optimizer::kAdam;
  const double grad = BytesOf(sc_.training.grad_dtype);
  const bool master = mem_.weight_bytes_per_param < 4.0;
  const double per_param =
      FusedOptimizerBytesPerParam(adam ? 2 : 1, BytesOf(sc_.training.optimizer_state_dtype)) +
      2.0 * grad + (sc_.training.precision == DType::kFp16 ? grad : 0.0) + (master ? 6.0 : 0.0);
  TaskInfo oi;
  oi.category = TaskCategory::kOptimizer;
  oi.device = d.index;
  oi.parts.compute = hw_.OptimizerStep(dense + expert, per_param);
  const TaskId opt = Add(oi, d.compute, SimTime::FromSeconds(oi.parts.compute));
  for (TaskId w : waits_[static_cast<size_t>(d.index)]) Dep(w, opt);
  // ZeRO-1/2 without overlap: gather the updated parameters before the step ends.
  if ((zero == 1 || zero == 2) && !sc_.parallel.overlap_param_gather &&
      layout_.GroupSize(shard_group_) > 1) {
    for (size_t c = 0; c < chunks.size(); ++c) {
      const Bytes bytes(static_cast<double>(chunks[c].dense_params) * mem_.weight_bytes_per_param);
      Result<TaskId> t =
          AddCollective(d, TaskCategory::kParamGather, shard_group_, CollectiveOp::kAllGather,
                        bytes, d.gather, opt, static_cast<int32_t>(c));
      if (!t.ok()) return t.status();
    }
  }
  return Status::Ok();
}

Result<StepProgram> Builder::Build() {
  const ParallelSpec& par = sc_.parallel;
  prog_.microbatches = plan_.rules.microbatches;
  shape_ = ScheduleShape{par.schedule, par.pp, par.ChunksPerRank(), prog_.microbatches};
  if (opt_.every_rank) {
    // The scenario's own bound (sim/config/validate.cc) counts the representative pipeline;
    // every rank simulates dp*cp of them.
    const double passes = par.PipelinePasses(prog_.microbatches, par.dp * par.cp);
    if (passes > static_cast<double>(kMaxSimulatedPasses)) {
      return Status::Invalid(
          "--every-rank: pp*dp*cp ranks x virtual stages x micro-batches = " +
          FormatSig(passes, 4) + " pipeline passes; one simulation holds at most " +
          std::to_string(kMaxSimulatedPasses) +
          ": simulate the representative pipeline (without --every-rank) or fewer GPUs");
    }
  }
  split_ = SplitsBackward(par.schedule);
  if (layout_.GroupSize(CommGroup::kReplica) > 1) shard_group_ = CommGroup::kShard;
  sp_shards_ = plan_.rules.sp_shards;
  pairs_only_overlap_ = par.ep_comm_overlap && (par.schedule == PipelineSchedule::kDualPipe ||
                                                par.schedule == PipelineSchedule::kDualPipeV);
  SHARDSIM_RETURN_IF_ERROR(MakeChunks());
  SHARDSIM_RETURN_IF_ERROR(ChooseNetworkedClasses());
  Result<std::vector<std::vector<ScheduleItem>>> orders = PipelineOrders(shape_);
  if (!orders.ok()) return orders.status();
  orders_ = std::move(*orders);
  MakeDevices();
  // Per device and chunk-step: a forward, a backward, two transfers and their dependencies.
  const int64_t steps =
      static_cast<int64_t>(prog_.devices.size()) * shape_.virtual_stages * prog_.microbatches;
  prog_.engine.Reserve(static_cast<int32_t>(std::min<int64_t>(4 * steps + 1024, 1 << 28)),
                       8 * steps + 1024);
  prog_.tasks->reserve(static_cast<size_t>(4 * steps + 1024));
  const size_t slots = prog_.devices.size() * static_cast<size_t>(shape_.virtual_stages) *
                       static_cast<size_t>(prog_.microbatches);
  fwd_.assign(slots, TaskId());
  bwd_.assign(slots, TaskId());
  fwd_first_.assign(slots, TaskId());
  pair_fwd_.assign(slots, TaskId());
  bwd_first_.assign(slots, TaskId());
  wgt_.assign(slots, TaskId());
  gather_.assign(prog_.devices.size() * static_cast<size_t>(shape_.virtual_stages), TaskId());
  waits_.assign(prog_.devices.size(), {});
  // `--explain` shows the ring-attention hop as the network runs it, a flow or not.
  if (sc_.parallel.cp > 1 && !prog_.devices.empty()) {
    for (bool backward : {false, true}) {
      Result<InLayerFlow*> hop = InLayerTemplate(prog_.devices.front(), kCpTraffic, backward);
      if (!hop.ok()) return hop.status();
    }
  }
  for (const Device& d : prog_.devices) SHARDSIM_RETURN_IF_ERROR(BuildDevice(d));
  SHARDSIM_RETURN_IF_ERROR(LinkPipeline());
  for (const Device& d : prog_.devices) SHARDSIM_RETURN_IF_ERROR(Finish(d));
  for (const StepLink& l : net_.links()) prog_.links.push_back(l);
  // Engine errors (a deadlock) name tasks by what they are and the rank they run on.
  std::vector<RankCoords> ranks;
  for (const Device& d : prog_.devices) ranks.push_back(d.coords);
  prog_.engine.SetTaskNamer([tasks = prog_.tasks, ranks](TaskId t) {
    const TaskInfo& i = (*tasks)[static_cast<size_t>(t.v)];
    const RankCoords& c = ranks[static_cast<size_t>(i.device)];
    return std::string(Name(i.category)) + " of chunk " + std::to_string(i.chunk) +
           ", micro-batch " + std::to_string(i.microbatch) + " on rank (pp " +
           std::to_string(c.pp) + ", dp " + std::to_string(c.dp) + ", cp " + std::to_string(c.cp) +
           ")";
  });
  return std::move(prog_);
}

}  // namespace

void ApplyBounds(const StepProgram& program, const RunResult& run) {
  std::vector<int8_t> class_of(static_cast<size_t>(program.engine.num_resources()), -1);
  for (const StepLink& l : program.links) {
    class_of[static_cast<size_t>(l.id.v)] = static_cast<int8_t>(l.link_class);
  }
  for (int32_t t = 0; t < program.engine.num_tasks(); ++t) {
    const ResourceId b = run.BoundBy(TaskId(t));
    if (!b.valid() || class_of[static_cast<size_t>(b.v)] < 0) continue;
    (*program.tasks)[static_cast<size_t>(program.engine.label(TaskId(t)))].link =
        static_cast<LinkClass>(class_of[static_cast<size_t>(b.v)]);
  }
}

Result<StepProgram> BuildStepProgram(const Scenario& scenario, const Plan& plan,
                                     const StepCosts& costs, const OpCostModel& hw,
                                     const MemoryBudget& memory, const ProgramOptions& options) {
  Builder b(scenario, plan, costs, hw, memory, options);
  return b.Build();
}

}  // namespace shardsim
