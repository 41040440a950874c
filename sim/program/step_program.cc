#include "sim/program/step_program.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "sim/hardware/op_cost.h"
#include "sim/memory/budget.h"
#include "sim/model/recompute.h"
#include "sim/parallel/stages.h"
#include "sim/program/step_builder.h"
#include "sim/program/step_links.h"
#include "sim/program/zero3_fetch.h"
#include "sim/schedule/schedule.h"

namespace shardsim {

// Megatron-LM's DDP buckets the gradients in buckets of bucket_size (param_and_grad_buffer.py);
// the simulation splits the last backward in at most kMaxGradBuckets pieces (step_program.h).
GradBuckets BucketGradients(Bytes grads, double dp_bucket_bytes) {
  GradBuckets b;
  b.grads = grads;
  const double n = std::ceil(grads.value() / std::max(1.0, dp_bucket_bytes));
  // A double first: a 1-byte bucket of petabytes of gradients must not overflow the count.
  b.requested = n >= 9e18 ? INT64_MAX : std::max<int64_t>(1, static_cast<int64_t>(n));
  b.simulated = std::min(b.requested, kMaxGradBuckets);
  return b;
}

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

namespace step_builder {

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

// A pass's task info for `it` (its micro-batch included): the chunk's forward, backward, B or W
// with its parts, recompute and the activation bytes it keeps or frees.
TaskInfo Builder::PassInfo(const Device& d, const ChunkWork& w, const ScheduleItem& it,
                           bool alone) const {
  const bool backward = it.phase != Phase::kForward;
  TaskInfo info;
  info.category = backward ? TaskCategory::kBackward : TaskCategory::kForward;
  info.device = d.index;
  info.chunk = it.chunk;
  info.microbatch = it.microbatch;
  Seconds wgrad;
  info.parts = ChunkPass(w, backward, backward ? &info.recompute : nullptr, &wgrad, alone);
  info.activation_delta = backward ? Bytes(0) - w.activations : w.activations;
  if (it.phase == Phase::kInput) {
    // B: the backward less its weight-gradient kernels; it frees the chunk's activations but
    // what W will need (ChunkWork::weight_held).
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
  return info;
}

// The task of a pass that is a single task (AddPass with no in-layer flow, one bucket): what
// BuildDevice's general path below computes for it, for any micro-batch (set per copy).
Builder::OncePass Builder::PassOnce(const Device& d, const ChunkWork& w, const ScheduleItem& it,
                                    bool alone) const {
  OncePass o;
  o.info = PassInfo(d, w, it, alone);
  // One piece: the general path's parts * (1 / 1) and recompute / 1 are these exactly.
  o.duration = SimTime::FromSeconds(o.info.parts.total());
  o.built = true;
  return o;
}

Status Builder::BuildDevice(const Device& d) {
  const int64_t r = d.coords.pp;
  const std::vector<ScheduleItem>& order = (*orders_)[static_cast<size_t>(r)];
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

  // PassOnce's tasks and the passes replayed (StampedPass), by (chunk, phase, alone).
  std::vector<OncePass> once(chunks.size() * 4 * 2);
  std::vector<PassStamp> stamps(any_networked_ ? once.size() : 0);
  const bool dp_grads = layout_.GroupSize(CommGroup::kGrad) > 1;
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
    const int32_t item_begin = prog_.engine.num_tasks();
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
      // DualPipe overlaps the expert all-to-alls only inside a paired forward/backward chunk
      // (arXiv 2412.19437 §3.2.1; deepseek-ai/DualPipe _forward_backward_chunk): its warm-up
      // forwards, unpaired backwards and zero-bubble B passes run their all-to-alls exposed.
      const bool paired = it.paired || (it.phase == Phase::kForward && index + 1 < order.size() &&
                                        order[index + 1].paired);
      const bool alone = pairs_only_overlap_ && !paired && it.phase != Phase::kWeight;
      const bool reduce_here =
          grads_done && index == last_grads[static_cast<size_t>(it.chunk)] && zero <= 1 && dp_grads;
      const size_t at =
          (static_cast<size_t>(it.chunk) * 4 + static_cast<size_t>(it.phase)) * 2 + (alone ? 1 : 0);
      // A pass that is one task (no gradient buckets, no in-layer flows): the same task for
      // every micro-batch of its chunk, phase and pairing, built once (PassOnce) and copied.
      const bool same_each_microbatch = !reduce_here && opt_.replay_passes;
      if (same_each_microbatch && any_networked_ && Replayable(stamps[at])) {
        Replay(stamps[at], it.microbatch, &first, &last);
      } else if (same_each_microbatch && !any_networked_) {
        if (!once[at].built) once[at] = PassOnce(d, w, it, alone);
        const TaskId t = prog_.engine.AddDelay(d.compute, once[at].duration,
                                               static_cast<uint32_t>(prog_.tasks->size()),
                                               static_cast<uint8_t>(once[at].info.category));
        prog_.tasks->emplace_back(once[at].info).microbatch = it.microbatch;
        first = last = t;
      } else {
        TaskInfo info = PassInfo(d, w, it, alone);
        // The last backward of a chunk releases its gradients bucket by bucket: split it so each
        // bucket's reduction can start while the rest computes (Megatron-LM overlap_grad_reduce).
        const Bytes grads(static_cast<double>(w.dense_params) * grad_bytes);
        int64_t buckets = 1;
        if (reduce_here && sc_.parallel.overlap_grad_reduce) {
          const GradBuckets b = BucketGradients(grads, sc_.parallel.dp_bucket_bytes);
          buckets = b.simulated;
          if (b.grads.value() > prog_.grad_buckets.grads.value()) prog_.grad_buckets = b;
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
          // Without gradient buckets the pass is the same for every micro-batch of its chunk,
          // phase and pairing: built once, replayed for the others.
          SHARDSIM_RETURN_IF_ERROR(
              same_each_microbatch
                  ? StampedPass(&stamps[at], d, piece, traffic, window, &piece_first, &t)
                  : AddPass(d, piece, traffic, window, &piece_first, &t));
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
      }
      // ZeRO-2 keeps only its shard of the gradients: reduce-scatter after every backward.
      if (grads_done && zero == 2 && dp_grads) {
        const Bytes grads(static_cast<double>(w.dense_params) * grad_bytes);
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
    if (period_ > 0) item_tasks_[ItemSlot(key, it.phase)] = {item_begin, prog_.engine.num_tasks()};
  }
  return Status::Ok();
}

Status Builder::LinkPipeline() {
  const int64_t p = sc_.parallel.pp;
  if (p <= 1) return Status::Ok();
  const int64_t replicas = static_cast<int64_t>(prog_.devices.size()) / p;
  // NextHop of every (rank, chunk, direction), once: [(rank * chunks + chunk) * 2 + forward].
  const auto chunks = static_cast<size_t>(shape_.virtual_stages);
  std::vector<StageHop> hops(static_cast<size_t>(p) * chunks * 2);
  for (int64_t r = 0; r < p; ++r) {
    for (size_t c = 0; c < chunks; ++c) {
      for (bool forward : {false, true}) {
        hops[(static_cast<size_t>(r) * chunks + c) * 2 + (forward ? 1 : 0)] =
            NextHop(shape_, r, static_cast<int32_t>(c), forward);
      }
    }
  }
  for (const Device& d : prog_.devices) {
    const int64_t r = d.coords.pp;
    const int64_t replica = d.index % replicas;  // the device at stage s is s * replicas + this
    // The pair's cost: this rank and the next (forward), the previous one and this (backward).
    RankCoords prev_pair = d.coords;
    prev_pair.pp = (r + p - 1) % p;
    Result<Comm> next =
        CommOf(CommGroup::kPp, CollectiveOp::kSendRecv, costs_.pp_message, d.coords, d);
    if (!next.ok()) return next.status();
    Result<Comm> prev =
        CommOf(CommGroup::kPp, CollectiveOp::kSendRecv, costs_.pp_message, prev_pair, d);
    if (!prev.ok()) return prev.status();
    const std::vector<ScheduleItem>& order = (*orders_)[static_cast<size_t>(d.coords.pp)];
    TaskInfo info;
    info.category = TaskCategory::kPpSend;
    info.device = d.index;
    info.group = CommGroup::kPp;
    info.op = CollectiveOp::kSendRecv;
    info.bytes = costs_.pp_message;
    for (size_t index = 0; index < order.size(); ++index) {
      const ScheduleItem& it = order[index];
      if (it.phase == Phase::kWeight) continue;  // nothing crosses stages after a W
      const Key key{d.index, it.chunk, it.microbatch};
      info.chunk = it.chunk;
      info.microbatch = it.microbatch;
      // Where this pass's activations (forward) or input gradient (backward, B) go.
      const bool forward = it.phase == Phase::kForward;
      const StageHop& hop =
          hops[(static_cast<size_t>(r) * chunks + static_cast<size_t>(it.chunk)) * 2 +
               (forward ? 1 : 0)];
      if (!hop.exists) continue;
      const auto to = static_cast<int32_t>(hop.rank * replicas + replica);
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
      const int32_t send_begin = prog_.engine.num_tasks();
      const TaskId s =
          AddComm(info, hop.via_next ? d.pp_next : d.pp_prev, hop.via_next ? *next : *prev);
      if (period_ > 0)
        send_tasks_[ItemSlot(key, it.phase)] = {send_begin, prog_.engine.num_tasks()};
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

// A task's counterpart is the task built in the same place of the same schedule item (pass, or
// transfer after it) of the same device and chunk, one period of the schedule later: 1F1B
// repeats micro-batch by micro-batch, Megatron-LM's interleaved schedule in groups of N
// micro-batches per chunk (schedules.py get_schedule_table: N = microbatch_group_size_per_vp_stage,
// pp by default; sim/schedule/schedule.h; a last group shorter than N only ends the chains). Items
// are mapped where they built as many tasks (item_tasks_, send_tasks_). The engine checks the map
// and uses it only where it preserves the graph (Engine::SetCounterparts), so a task that does not
// repeat (the last backward's gradient buckets, the optimizer) only ends a chain.
//
// Named only where it pays (PeriodOf: 0 elsewhere). Checking costs the engine about a tenth of
// simulating a task, and a warm-up and a cool-down of a few periods never repeat; measured with
// callgrind on `simulate` (README, Speed): 4 periods (Mixtral 8x7B, interleaved) +17%, 8 (Llama 3
// 70B) +3%, 12 (GPT-3 175B) -6%, 96 (GPT-3 175B, 1F1B) -10%, 384 -19%. GPipe has no steady
// state (every forward's backward waits, so what is pending grows micro-batch by micro-batch;
// named, GPT-3 1F1B's layout in GPipe cost 17% more). DualPipe's main loop (step 4 of
// deepseek-ai/DualPipe's step(): F0 B1 then F1 B0, one micro-batch of each stream) repeats
// micro-batch by micro-batch, but its warm-up and cool-down span several pp micro-batches: named
// from 6 pp on (DeepSeek-V3, 120 micro-batches over 16 stages, -14%; 240, -25%; Llama 3 70B on 4
// stages, 128: DualPipe -2%, V -7%; 64: +1%, V -1%; 32: +3%; not named below: 405B's 64 over 16
// stages skipped nothing, +8%). The zero-bubble schedules are not named: on GPT-3 175B, Llama 3
// 70B and Mixtral nothing repeated (ZB-H1 +8% to +17%, ZB-V +9% to +13%; ZB-H1 repeated on
// DeepSeek-V3, -4%, and the quickstart layout, +4%). Under ZB-H1 on GPT-3 175B rank 0 settles
// into a constant period while the uneven stages drift against it, each by a constant amount a
// period (+4.78 ms, -0.82 ms), using up the deferred W passes' slack: a transient that outlasts
// the step's 96 micro-batches.
int64_t Builder::PeriodOf() const {
  int64_t period = 0;
  switch (shape_.schedule) {
    case PipelineSchedule::k1F1B:
      period = 1;
      break;
    case PipelineSchedule::kInterleaved1F1B:
      period = MicrobatchGroup(shape_);
      break;
    case PipelineSchedule::kDualPipe:
    case PipelineSchedule::kDualPipeV:
      if (prog_.microbatches < kDualPipeMinPerStage * sc_.parallel.pp) return 0;
      period = 1;
      break;
    default:
      return 0;
  }
  return opt_.periods && prog_.microbatches >= kMinPeriods * period ? period : 0;
}

std::vector<int32_t> Builder::Counterparts() const {
  const auto period = static_cast<size_t>(period_);
  if (period == 0) return {};
  std::vector<int32_t> next(static_cast<size_t>(prog_.engine.num_tasks()), -1);
  const auto mbs = static_cast<size_t>(prog_.microbatches);
  const size_t gap = period * kPhases;
  for (const std::vector<TaskRange>* table : {&item_tasks_, &send_tasks_}) {
    for (size_t slot = 0; slot < table->size(); slot += mbs * kPhases) {
      const size_t end = slot + mbs * kPhases - gap;  // period <= mbs (PeriodOf)
      for (size_t i = slot; i < end; ++i) {
        const TaskRange& a = (*table)[i];
        if (a.end == a.begin) continue;  // a phase that built nothing
        const TaskRange& b = (*table)[i + gap];
        if (a.end - a.begin != b.end - b.begin) continue;
        for (int32_t k = 0; k < a.end - a.begin; ++k) {
          next[static_cast<size_t>(a.begin + k)] = b.begin + k;
        }
      }
    }
  }
  return next;
}

Result<StepProgram> Builder::Build() {
  const ParallelSpec& par = sc_.parallel;
  prog_.microbatches = plan_.rules.microbatches;
  shape_ = ShapeOf(par, prog_.microbatches);
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
  shard_size_ = layout_.GroupSize(shard_group_);
  replica_size_ = layout_.GroupSize(CommGroup::kReplica);
  sp_shards_ = plan_.rules.sp_shards;
  pairs_only_overlap_ = par.ep_comm_overlap && (par.schedule == PipelineSchedule::kDualPipe ||
                                                par.schedule == PipelineSchedule::kDualPipeV);
  SHARDSIM_RETURN_IF_ERROR(MakeChunks());
  SHARDSIM_RETURN_IF_ERROR(ChooseNetworkedClasses());
  OrderCache own;  // when the caller shares none (RunStep shares EstimateMemory's)
  Result<std::shared_ptr<const OrderCache::Orders>> orders =
      (opt_.orders != nullptr ? opt_.orders : &own)->Get(shape_);
  if (!orders.ok()) return orders.status();
  orders_ = std::move(*orders);
  MakeDevices();
  // Per device and chunk-step: a forward, a backward (B and W when split), two transfers and
  // their dependencies; a pass with in-layer flows is up to 2 + 2 tasks per networked class
  // (AddPass), and ZeRO-3 runs its passes layer by layer with a gather and a reduction each. An
  // upper bound, so that neither the engine's tables nor the infos move while they grow (the
  // pages reserved beyond what is used are never touched).
  const int64_t steps =
      static_cast<int64_t>(prog_.devices.size()) * shape_.virtual_stages * prog_.microbatches;
  const auto networked =
      static_cast<int64_t>(std::count(networked_.begin(), networked_.end(), true));
  const int64_t per_pass = any_networked_ ? 2 + 2 * networked : 1;
  int64_t per_step = (split_ ? 3 : 2) * per_pass + 2;
  if (par.zero_stage == 3) {
    size_t layers = 1;
    for (const std::vector<ChunkWork>& rank : chunks_) {
      for (const ChunkWork& w : rank) layers = std::max(layers, w.layers.size());
    }
    per_step += static_cast<int64_t>(layers) * 2 * (per_pass + 4);
  }
  // Each chunk's gradient buckets, expert gradients and parameter gathers: collectives of a few
  // phases each (a hierarchical or cross-pod one has up to one per level, twice under HSDP).
  const int64_t chunk_comms = static_cast<int64_t>(prog_.devices.size()) * shape_.virtual_stages *
                              (kMaxGradBuckets + 4) * 2 * 4;
  const int64_t tasks = std::min<int64_t>(per_step * steps + chunk_comms + 1024, 1 << 28);
  prog_.engine.Reserve(static_cast<int32_t>(tasks), 2 * tasks);
  prog_.tasks->reserve(static_cast<size_t>(tasks));
  const size_t slots = prog_.devices.size() * static_cast<size_t>(shape_.virtual_stages) *
                       static_cast<size_t>(prog_.microbatches);
  fwd_.assign(slots, TaskId());
  bwd_.assign(slots, TaskId());
  fwd_first_.assign(slots, TaskId());
  pair_fwd_.assign(slots, TaskId());
  bwd_first_.assign(slots, TaskId());
  wgt_.assign(slots, TaskId());
  period_ = PeriodOf();
  if (period_ > 0) {
    item_tasks_.assign(slots * kPhases, TaskRange{});
    send_tasks_.assign(slots * kPhases, TaskRange{});
  }
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
  if (period_ > 0) prog_.engine.SetCounterparts(Counterparts());
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

}  // namespace step_builder

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
  step_builder::Builder b(scenario, plan, costs, hw, memory, options);
  return b.Build();
}

}  // namespace shardsim
