// Builder::ChooseNetworkedClasses, InLayerTemplate and AddPass: in-layer TP/CP/EP traffic as
// flows on the step's links (sim/program/step_builder.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/program/step_builder.h"

namespace shardsim::step_builder {

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
    any_networked_ = any_networked_ || networked_[c];
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
  // Indexed by (device, class, pass); sized for every device when first used (all are made by
  // then, so it is never resized after and the pointers returned stay valid).
  const size_t key =
      (static_cast<size_t>(d.index) * kInLayerClasses + cls) * 2 + (backward ? 1 : 0);
  if (in_layer_.empty()) in_layer_.resize(prog_.devices.size() * kInLayerClasses * 2);
  if (key < in_layer_.size() && in_layer_[key].made) return &in_layer_[key];
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
  f.made = true;
  if (key >= in_layer_.size()) in_layer_.resize(key + 1);
  in_layer_[key] = std::move(f);
  return &in_layer_[key];
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
  if (!any_networked_) {  // every class priced into the pass: one task (as n == 0 below)
    *first = *last = Add(info, d.compute, SimTime::FromSeconds(info.parts.total()));
    return Status::Ok();
  }
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
    if (pending.valid()) PassDep(pending, flow);
    if (exposed_form) {
      if (!on_stream.valid()) *first = flow;
      on_stream = flow;
      pending = TaskId();
      continue;
    }
    PassDep(on_stream, flow);
    TaskInfo wi = info;
    wi.activation_delta = Bytes(0);
    wi.parts = PassTime{};
    wi.parts.compute = st.x - st.e;
    PartOf(wi.parts, st.cls) = st.e;
    wi.recompute = recompute_of(wi.parts.compute);
    const TaskId w = Add(wi, d.compute, SimTime::FromSeconds(st.x));
    if (pending.valid()) PassDep(pending, w);
    on_stream = w;
    pending = flow;
  }
  // The rest of the pass, after its stages (and the last off-stream flow); it allocates (frees)
  // the pass's activations when it ends.
  *last = Add(a, d.compute, SimTime::FromSeconds(budget));
  if (pending.valid()) PassDep(pending, *last);
  if (!on_stream.valid()) *first = *last;
  return Status::Ok();
}

void Builder::Replay(const PassStamp& stamp, int32_t microbatch, TaskId* first, TaskId* last) {
  std::vector<TaskInfo>& infos = *prog_.tasks;
  const size_t label = infos.size();  // == the first copy's id: each task's label is its id
  infos.insert(infos.end(), stamp.infos.begin(), stamp.infos.end());
  for (size_t k = label; k < infos.size(); ++k) infos[k].microbatch = microbatch;
  const TaskId base = prog_.engine.AppendCopies(stamp.recorded, stamp.count,
                                                static_cast<uint32_t>(label), stamp.deps);
  *first = TaskId(base.v + stamp.first);
  *last = TaskId(base.v + stamp.last);
}

Status Builder::StampedPass(PassStamp* stamp, const Device& d, const TaskInfo& info,
                            const PassTime& traffic, const PassTime& window, TaskId* first,
                            TaskId* last) {
  if (Replayable(*stamp)) {
    Replay(*stamp, info.microbatch, first, last);
    return Status::Ok();
  }
  if (stamp->built) return AddPass(d, info, traffic, window, first, last);
  // Record: the tasks AddPass adds are consecutive (it adds no other task in between).
  const int32_t base = prog_.engine.num_tasks();
  std::vector<std::pair<int32_t, int32_t>> deps;
  recording_ = &deps;
  const Status st = AddPass(d, info, traffic, window, first, last);
  recording_ = nullptr;
  SHARDSIM_RETURN_IF_ERROR(st);
  const int32_t end = prog_.engine.num_tasks();
  stamp->built = true;
  stamp->replayable = first->v >= base && first->v < end && last->v >= base && last->v < end;
  for (const auto& [before, after] : deps) {
    stamp->replayable =
        stamp->replayable && before >= base && before < end && after >= base && after < end;
    stamp->deps.emplace_back(before - base, after - base);
  }
  stamp->recorded = TaskId(base);
  stamp->count = end - base;
  stamp->infos.assign(prog_.tasks->begin() + base, prog_.tasks->begin() + end);
  stamp->first = first->v - base;
  stamp->last = last->v - base;
  return Status::Ok();
}

}  // namespace shardsim::step_builder
