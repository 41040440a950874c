#include "sim/program/step_costs.h"

#include <algorithm>
#include <string>

#include "sim/hardware/op_cost.h"
#include "sim/model/recompute.h"

namespace shardsim {

PassTime& PassTime::operator+=(const PassTime& o) {
  compute += o.compute;
  tp += o.tp;
  cp += o.cp;
  ep += o.ep;
  return *this;
}

PassTime PassTime::operator*(double f) const {
  return PassTime{compute * f, tp * f, cp * f, ep * f};
}

CommTime ToCommTime(const CollectiveCost& c) {
  return CommTime{c.latency_part, c.bandwidth_part, c.bottleneck_class, c.algo};
}

Seconds OpsTime(const std::vector<Op>& ops, bool backward, const OpCostModel& hw) {
  Seconds t;
  for (const Op& op : ops) {
    if (backward) {
      t += hw.Cost(op, Pass::kBackwardInput).time + hw.Cost(op, Pass::kBackwardWeight).time;
    } else {
      t += hw.Cost(op, Pass::kForward).time;
    }
  }
  return t;
}

Seconds WeightGradTime(const std::vector<Op>& ops, const OpCostModel& hw) {
  Seconds t;
  for (const Op& op : ops) t += hw.Cost(op, Pass::kBackwardWeight).time;
  return t;
}

namespace {

// Whether `op` is a tensor-parallel GEMM of the attention region (q/k/v ... output projection)
// or of the MLP region; `column_only` keeps the column-parallel ones.
bool InRegion(const Op& op, bool attention, bool column_only) {
  if (op.kind != OpKind::kMatmul) return false;
  const bool column = op.tp_split == TpSplit::kColumn;
  const bool split = column || op.tp_split == TpSplit::kRow || op.tp_split == TpSplit::kExperts;
  if (!split || (column_only && !column)) return false;
  return (op.region == Region::kAttention) == attention;
}

// Everything a block's pricing needs.
struct Pricer {
  const Scenario& sc;
  const Plan& plan;
  const OpGraph& g;
  const Layout& layout;
  const OpCostModel& hw;
  RankCoords at;     // the representative rank
  RankCoords cp_at;  // the CP rank of its ring whose hop is the slowest (Layout::SlowestCpHop)
  Bytes act;         // one full activation tensor of the micro-batch: T x h
  bool sp;
  int64_t tp;
  Seconds ep_pass;  // a MoE layer's dispatch + combine in one pass (zero without EP)

  Result<Seconds> Coll(CommGroup grp, CollectiveOp op, Bytes size) const {
    Result<CollectiveCost> c = layout.Cost(grp, op, size, at);
    if (!c.ok()) return c.status();
    return c->time;
  }

  // GEMM time of a region's matmuls (what TP communication can hide behind): forward, or the
  // input-gradient GEMMs of backward.
  Seconds RegionGemm(const std::vector<Op>& ops, bool attention, bool backward,
                     bool column_only = false) const {
    Seconds t;
    for (const Op& op : ops) {
      if (!InRegion(op, attention, column_only)) continue;
      t += backward ? hw.Cost(op, Pass::kBackwardInput).time : hw.Cost(op, Pass::kForward).time;
    }
    return t;
  }

  // Tensor-parallel communication of one layer's two regions (attention, MLP), exposed part in
  // fwd/bwd. Megatron-LM (Shoeybi 2019 §3): each region is column- then row-parallel, needing
  // one all-reduce forward (g) and one backward (f); with sequence parallelism (Korthikanti 2022
  // §4.2.2) each becomes an all-gather + reduce-scatter pair, and backward re-gathers the saved
  // sharded input for the weight gradient, overlapped with the input-gradient GEMM. With
  // tp_comm_overlap (Transformer Engine userbuffers) each region's collectives are pipelined
  // with its GEMMs and only what exceeds them is exposed.
  // The block's collectives are the plan's (LayerCollectives: the TP ones of `collectives`).
  Status LayerTp(const std::vector<Op>& ops, const std::vector<InLayerCollective>& collectives,
                 BlockCost& b) const {
    for (Region region : {Region::kAttention, Region::kMlp}) {
      const bool attention = region == Region::kAttention;
      Seconds fwd_comm, bwd_comm, regather;
      bool any = false;
      for (const InLayerCollective& c : collectives) {
        if (c.group != CommGroup::kTp || c.region != region) continue;
        Result<Seconds> t = Coll(c.group, c.op, c.size);
        if (!t.ok()) return t.status();
        any = true;
        (c.regather ? regather : c.pass == CommPass::kForward ? fwd_comm : bwd_comm) += *t;
      }
      if (!any) continue;
      const Seconds gemm_fwd = RegionGemm(ops, attention, false);
      const Seconds gemm_bwd = RegionGemm(ops, attention, true);
      b.tp_comm_total += fwd_comm + bwd_comm + regather;
      b.fwd_traffic.tp += fwd_comm;
      b.bwd_traffic.tp += bwd_comm + regather;
      if (sc.parallel.tp_comm_overlap) {
        b.fwd.tp += std::max(Seconds(0), fwd_comm - gemm_fwd);
        b.bwd.tp += std::max(Seconds(0), bwd_comm + regather - gemm_bwd);
        b.fwd_window.tp += gemm_fwd;
        b.bwd_window.tp += gemm_bwd;
      } else {
        // The re-gather runs beside the column GEMM's input-gradient GEMM (Korthikanti 2022
        // §4.2.2); the rest is on the compute stream.
        const Seconds column_dgrad = RegionGemm(ops, attention, true, true);
        b.fwd.tp += fwd_comm;
        b.bwd.tp += bwd_comm + std::max(Seconds(0), regather - column_dgrad);
        if (regather.value() > 0.0) b.bwd_window.tp += column_dgrad;
      }
    }
    return Status::Ok();
  }

  // Ring attention (Liu et al. 2023; Megatron-Core context parallelism): cp - 1 rounds, each
  // passing the local K and V (backward: also their gradients) to the next rank while the
  // current block is computed; only what a transfer takes beyond its block is exposed. Every
  // rank waits each round for its predecessor's block, so the ring's slowest hop (the one that
  // leaves the node, or the leaf domain, when the ring spans several; Layout::SlowestCpHop)
  // paces all ranks: the hop is priced on that pair's path, a single GPU-to-GPU transfer on one
  // NIC when it crosses nodes (sim/collective, SendRecvPhase).
  // The hops are the plan's (LayerCollectives: a forward and a backward CP send_recv per
  // attention core of the layer, in op order).
  Status LayerCp(const std::vector<Op>& ops, const std::vector<InLayerCollective>& collectives,
                 BlockCost& b) const {
    const int64_t cp = sc.parallel.cp;
    if (cp <= 1) return Status::Ok();
    std::vector<const InLayerCollective*> hops;
    for (const InLayerCollective& c : collectives) {
      if (c.group == CommGroup::kCp) hops.push_back(&c);
    }
    size_t next = 0;
    for (const Op& op : ops) {
      if (op.kind != OpKind::kAttention) continue;
      if (next + 2 > hops.size()) {
        return Status::Invalid("plan: no ring-attention hop for " + op.name);
      }
      const InLayerCollective& fwd_hop = *hops[next];
      const InLayerCollective& bwd_hop = *hops[next + 1];
      next += 2;
      const Bytes kv = fwd_hop.size;
      Result<CollectiveCost> fwd = layout.Cost(fwd_hop.group, fwd_hop.op, kv, cp_at);
      if (!fwd.ok()) return fwd.status();
      Result<CollectiveCost> bwd = layout.Cost(bwd_hop.group, bwd_hop.op, bwd_hop.size, cp_at);
      if (!bwd.ok()) return bwd.status();
      const double rounds = static_cast<double>(fwd_hop.times);
      const double per = 1.0 / static_cast<double>(cp);
      const Seconds block_fwd = hw.Cost(op, Pass::kForward).time * per;
      const Seconds block_bwd = hw.Cost(op, Pass::kBackwardInput).time * per;
      b.fwd.cp += std::max(Seconds(0), fwd->time - block_fwd) * rounds;
      b.bwd.cp += std::max(Seconds(0), bwd->time - block_bwd) * rounds;
      b.fwd_traffic.cp += fwd->time * rounds;
      b.bwd_traffic.cp += bwd->time * rounds;
      b.fwd_window.cp += block_fwd * rounds;
      b.bwd_window.cp += block_bwd * rounds;
      if (b.cp_hop.rounds == 0) {
        CpHop& h = b.cp_hop;
        h.from_cp = cp_at.cp;
        h.to_cp = (cp_at.cp + 1) % cp;
        h.fwd_bytes = kv;
        h.bwd_bytes = bwd_hop.size;
        h.fwd = fwd->time;
        h.bwd = bwd->time;
        h.block_fwd = block_fwd;
        h.block_bwd = block_bwd;
        h.link = fwd->bottleneck_class;
        h.rounds = fwd_hop.times;
      }
    }
    return Status::Ok();
  }

  // Expert all-to-alls of one MoE layer: a dispatch and a combine forward, and again backward
  // (their gradients), `ep_pass` per pass (PriceEpAllToAll); with fp8_dispatch the dispatch of
  // each pass moves fp8 tokens (StepCosts::ep_dispatch; DeepSeek-V3 §3.3.3: dispatch in FP8 forward
  // and the matching activation gradient backward, both combines in BF16). Without overlap they run
  // on the compute stream. With ep_comm_overlap, as DeepSeek-V3's DualPipe (arXiv 2412.19437
  // §3.2.1: "overlap the computation and communication within a pair of individual forward and
  // backward chunks") and Megatron-Core's EP all-to-all overlap do, a forward chunk's all-to-alls
  // run under the paired backward chunk's computation and the other way round: the layer's four
  // all-to-alls (A in all) run beside its forward plus backward compute (C). The communication
  // kernels hold kEpCommSms of the GPU's SMs while they run (DeepSeek-V3 §3.2.2: "only 20 SMs
  // are sufficient to fully utilize the bandwidths of IB and NVLink"), a fraction f during
  // which the compute runs on the rest: the pair takes max(A, C + f*A), and what exceeds C is
  // exposed, split evenly between the passes. Steady state only: the pipeline's warm-up
  // forwards have no backward to pair with.
  Status LayerEp(const std::vector<Op>& ops, BlockCost& b) const {
    if (ep_pass.value() <= 0.0) return Status::Ok();
    const bool moe = std::any_of(ops.begin(), ops.end(), [](const Op& op) {
      return op.tp_split == TpSplit::kExperts && op.kind == OpKind::kMatmul;
    });
    if (!moe) return Status::Ok();
    b.ep_alone = ep_pass;
    b.fwd_traffic.ep += ep_pass;
    b.bwd_traffic.ep += ep_pass;
    if (sc.parallel.ep_comm_overlap) {
      constexpr double kEpCommSms = 20.0;
      const double f = std::min(1.0, kEpCommSms / static_cast<double>(sc.hardware.sm_count));
      const Seconds a = ep_pass * 2.0;
      const Seconds c = b.fwd.compute + b.bwd.compute;
      const Seconds exposed = std::max(a - c, a * f);
      b.fwd.ep += exposed * 0.5;
      b.bwd.ep += exposed * 0.5;
      // What the all-to-alls can hide behind, per pass: half the pair's compute (the pair takes
      // max(A, C + f*A), so A hides while A <= C / (1 - f) ~ C).
      b.fwd_window.ep += c * 0.5;
      b.bwd_window.ep += c * 0.5;
    } else {
      b.fwd.ep += ep_pass;
      b.bwd.ep += ep_pass;
    }
    return Status::Ok();
  }

  Result<BlockCost> Layer(const LayerOps& layer, const LayerCollectives& collectives) const {
    BlockCost b;
    b.fwd.compute = OpsTime(layer.ops, false, hw);
    b.bwd.compute = OpsTime(layer.ops, true, hw);
    b.wgrad = WeightGradTime(layer.ops, hw);
    SHARDSIM_RETURN_IF_ERROR(LayerTp(layer.ops, collectives.collectives, b));
    SHARDSIM_RETURN_IF_ERROR(LayerCp(layer.ops, collectives.collectives, b));
    SHARDSIM_RETURN_IF_ERROR(LayerEp(layer.ops, b));
    // Recompute re-runs forward work inside the backward pass (sim/model/recompute.h): the
    // whole layer with its collectives (full), the attention core (selective), or the ops the
    // op-level policy did not keep (selective_ops).
    if (sc.training.recompute == Recompute::kFull) {
      b.recompute = b.fwd;
      b.bwd_traffic += b.fwd_traffic;
      b.bwd_window += b.fwd_window;
    } else {
      // A share of a matmul (selective_ops: the framework calls not saved) takes that share of
      // its forward time: the calls split its output columns over the same input.
      int64_t mm_calls = 0;
      for (const Op& op : layer.ops) {
        const double redo = RecomputedShare(sc.training, op, &mm_calls);
        if (redo > 0.0) b.recompute.compute += redo * hw.Cost(op, Pass::kForward).time;
      }
    }
    b.bwd += b.recompute;
    return b;
  }

  // Vocab-parallel embedding: partial lookups all-reduced (reduce-scattered with SP) forward;
  // with SP the backward all-gathers the gradient.
  Result<BlockCost> Embedding() const {
    BlockCost b;
    b.fwd.compute = OpsTime(g.embedding, false, hw);
    b.bwd.compute = OpsTime(g.embedding, true, hw);
    b.wgrad = WeightGradTime(g.embedding, hw);
    for (const InLayerCollective& c : plan.embedding_collectives.collectives) {
      Result<Seconds> t = Coll(c.group, c.op, c.size);
      if (!t.ok()) return t.status();
      (c.pass == CommPass::kForward ? b.fwd.tp : b.bwd.tp) += *t;
      (c.pass == CommPass::kForward ? b.fwd_traffic.tp : b.bwd_traffic.tp) += *t;
      b.tp_comm_total += *t;
    }
    return b;
  }

  // Final norm, vocab-parallel head and cross-entropy (three small all-reduces of per-token
  // fp32 statistics), then the MTP modules, priced like a layer plus a head.
  Result<BlockCost> Head() const {
    BlockCost b;
    b.fwd.compute = OpsTime(g.head, false, hw) + OpsTime(g.mtp, false, hw);
    b.bwd.compute = OpsTime(g.head, true, hw) + OpsTime(g.mtp, true, hw);
    b.wgrad = WeightGradTime(g.head, hw) + WeightGradTime(g.mtp, hw);
    if (tp > 1) {
      // The plan's head collectives, once per head: the main one and each MTP module's.
      const int heads = 1 + static_cast<int>(sc.model.mtp_depth);
      Seconds fwd, bwd;
      for (const InLayerCollective& c : plan.head_collectives.collectives) {
        Result<Seconds> t = Coll(c.group, c.op, c.size);
        if (!t.ok()) return t.status();
        (c.pass == CommPass::kForward ? fwd : bwd) += *t * static_cast<double>(c.times);
      }
      b.fwd.tp += fwd * static_cast<double>(heads);
      b.bwd.tp += bwd * static_cast<double>(heads);
      b.fwd_traffic.tp += fwd * static_cast<double>(heads);
      b.bwd_traffic.tp += bwd * static_cast<double>(heads);
      b.tp_comm_total += (fwd + bwd) * static_cast<double>(heads);
      if (!g.mtp.empty()) {
        // The MTP block's own layer communication, as for a decoder layer.
        // Its TP collectives are a decoder layer's (the same activation, per block).
        BlockCost mtp;
        SHARDSIM_RETURN_IF_ERROR(LayerTp(g.mtp, plan.layer_collectives.front().collectives, mtp));
        b.fwd.tp += mtp.fwd.tp * static_cast<double>(sc.model.mtp_depth);
        b.bwd.tp += mtp.bwd.tp * static_cast<double>(sc.model.mtp_depth);
        b.fwd_traffic.tp += mtp.fwd_traffic.tp * static_cast<double>(sc.model.mtp_depth);
        b.bwd_traffic.tp += mtp.bwd_traffic.tp * static_cast<double>(sc.model.mtp_depth);
        b.fwd_window.tp += mtp.fwd_window.tp * static_cast<double>(sc.model.mtp_depth);
        b.bwd_window.tp += mtp.bwd_window.tp * static_cast<double>(sc.model.mtp_depth);
        b.tp_comm_total += mtp.tp_comm_total * static_cast<double>(sc.model.mtp_depth);
      }
    }
    if (!g.mtp.empty()) {
      // Each MTP module's transformer block routes its tokens like a decoder layer: its expert
      // all-to-alls, hidden behind that block's share of the modules' compute.
      const double depth = static_cast<double>(sc.model.mtp_depth);
      BlockCost mtp;
      mtp.fwd.compute = OpsTime(g.mtp, false, hw) / depth;
      mtp.bwd.compute = OpsTime(g.mtp, true, hw) / depth;
      SHARDSIM_RETURN_IF_ERROR(LayerEp(g.mtp, mtp));
      b.fwd.ep += mtp.fwd.ep * depth;
      b.bwd.ep += mtp.bwd.ep * depth;
      b.fwd_traffic.ep += mtp.fwd_traffic.ep * depth;
      b.bwd_traffic.ep += mtp.bwd_traffic.ep * depth;
      b.fwd_window.ep += mtp.fwd_window.ep * depth;
      b.bwd_window.ep += mtp.bwd_window.ep * depth;
    }
    return b;
  }
};

}  // namespace

// Expert parallelism (Lepikhin et al. 2020, GShard §2.2; Megatron-Core's all-to-all token
// dispatcher): each of the ep ranks routes its T tokens to top_k experts each, and the dispatch
// carries every routed copy to its expert's rank: T * top_k * h activation bytes per rank, the
// nccl-tests all-to-all size S. Experts are spread evenly over the group, so a rank keeps S/ep
// and sends S * (ep - 1)/ep, of which S * (ep - g)/ep leaves its node (g ranks of the group per
// node); the collective model prices that on the classes the group crosses (sim/collective:
// alpha + the slowest class's bytes over its bandwidth). The busiest rank receives
// MoeLoadFactor times the mean — the capacity factor's padding or the routing imbalance, the
// same factor that stretches its expert GEMMs (sim/model/layer_ops.cc) — so S carries it too.
//
// Node-limited routing, moe.max_nodes_per_token = M (DeepSeek-V3, arXiv 2412.19437 §3.2.2:
// "we limit each token to be dispatched to at most 4 nodes ... it will first be transmitted
// via IB to the GPUs with the same in-node index on its target nodes ... instantaneously
// forwarded via NVLink to specific GPUs that host their target experts"): a token crosses the
// network once per remote node it reaches instead of once per routed copy. With its M nodes
// among the group's N uniform, that is M * (N - 1)/N transfers of h per token against
// top_k * (ep - g)/ep, never more. NVLink then carries every copy not on the GPU that received
// it: S * (g - 1)/g per rank instead of S * (g - 1)/ep, overlapped with the IB transfers (the
// slowest class sets the time, plus one NVLink hop of latency). Checked in closed form by
// tests/program/ep_all_to_all_test.cc.
Result<EpAllToAll> PriceEpAllToAll(const Scenario& sc, const Layout& layout, Bytes act) {
  EpAllToAll out;
  if (sc.parallel.ep <= 1 || !sc.model.moe) return out;
  const MoeSpec& moe = *sc.model.moe;
  const auto d = [](int64_t v) { return static_cast<double>(v); };
  out.size = act * (d(moe.top_k) * MoeLoadFactor(moe));
  Result<CollectiveCost> c =
      layout.Cost(CommGroup::kEp, CollectiveOp::kAllToAll, out.size, RankCoords{});
  if (!c.ok()) return c.status();
  const GroupShape& s = c->shape;
  const double n = d(s.ranks);
  const double g = d(s.ranks_per_node);
  const double nodes = d(s.nodes);
  out.sent_per_rank = out.size * ((n - 1.0) / n);
  double cross = (n - g) / n;  // fraction of S leaving the node: one transfer per routed copy
  double inter_scale = 1.0;    // node-limited routing's effect on the inter-node classes
  double nvlink_scale = 1.0;   // and on NVLink (forwarding inside the target node)
  const bool limited = moe.max_nodes_per_token > 0 && s.nodes > 1;
  if (limited) {
    const double m = std::min(d(moe.max_nodes_per_token), nodes);
    const double node_limited = m * (nodes - 1.0) / nodes / d(moe.top_k);
    inter_scale = std::min(1.0, node_limited / cross);
    nvlink_scale = n / g;  // (g - 1)/g over (g - 1)/n
    cross *= inter_scale;
  }
  out.cross_node_per_rank = out.size * cross;
  double slowest = 0.0;
  for (const LinkLoad& l : c->loads) {
    const bool nvlink = l.link_class == LinkClass::kNvlink;
    const double t = l.time.value() * (nvlink ? nvlink_scale : inter_scale);
    if (t > slowest) {
      slowest = t;
      out.bottleneck = l.link_class;
    }
  }
  const double hop = limited && s.ranks_per_node > 1 ? layout.cluster().IntraLatency() : 0.0;
  out.time = Seconds(c->latency_part.value() + hop + slowest);
  return out;
}

Result<StepCosts> PriceStep(const Scenario& sc, const Plan& plan, const OpCostModel& hw) {
  const OpGraph& g = plan.graph;
  const Layout& layout = plan.layout;
  const double act_bytes = ActivationBytes(sc.training.precision);
  const Bytes act = plan.activation;
  Result<EpAllToAll> ep = PriceEpAllToAll(sc, layout, act);
  if (!ep.ok()) return ep.status();
  StepCosts out;
  out.ep = *ep;
  out.ep_dispatch = *ep;
  if (sc.training.fp8_dispatch && sc.training.precision == DType::kFp8) {
    Result<EpAllToAll> fp8 = PriceEpAllToAll(sc, layout, act * (1.0 / act_bytes));  // 1 B/element
    if (!fp8.ok()) return fp8.status();
    out.ep_dispatch = *fp8;
  }
  Pricer p{sc,
           plan,
           g,
           layout,
           hw,
           RankCoords{},
           layout.SlowestCpHop(RankCoords{}),
           act,
           plan.rules.sequence_parallel,
           sc.parallel.tp,
           out.ep_dispatch.time + out.ep.time};
  for (size_t k = 0; k < g.layer_kinds.size(); ++k) {
    Result<BlockCost> b = p.Layer(g.layer_kinds[k], plan.layer_collectives[k]);
    if (!b.ok()) return b.status();
    out.layer_kinds.push_back(*b);
  }
  Result<BlockCost> emb = p.Embedding();
  if (!emb.ok()) return emb.status();
  out.embedding = *emb;
  Result<BlockCost> head = p.Head();
  if (!head.ok()) return head.status();
  out.head = *head;
  // Pipeline transfers carry the sequence-sharded activation (1/t of it per TP rank): sequence
  // parallelism shards it, and without SP Megatron's scatter/gather optimization does
  // (Narayanan 2021 §4.1).
  out.pp_message = act / static_cast<double>(sc.parallel.tp);
  if (sc.parallel.pp > 1) {
    for (int64_t r = 0; r < sc.parallel.pp; ++r) {
      RankCoords at;
      at.pp = r;
      Result<CollectiveCost> c =
          layout.Cost(CommGroup::kPp, CollectiveOp::kSendRecv, out.pp_message, at);
      if (!c.ok()) return c.status();
      out.pp_send.push_back(ToCommTime(*c));
    }
  }
  return out;
}

}  // namespace shardsim
