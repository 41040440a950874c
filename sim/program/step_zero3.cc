// Builder::BuildZero3Item, UnitsOf and BuildSubmoduleZero3Item: ZeRO-3 / FSDP parameter gathers
// and gradient reductions of a pass (sim/program/step_builder.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/program/step_builder.h"

namespace shardsim::step_builder {

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

}  // namespace shardsim::step_builder
