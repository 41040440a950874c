#include "sim/program/step_links.h"

#include <algorithm>
#include <array>
#include <string>

#include "sim/topology/cluster.h"

namespace shardsim {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

// GPUs g in [0, x) whose coordinate along a dimension of `stride` and `size` is `r`.
int64_t CountBelow(int64_t x, int64_t stride, int64_t size, int64_t r) {
  const int64_t period = stride * size;
  const int64_t rem = x % period;
  return (x / period) * stride + std::clamp<int64_t>(rem - r * stride, 0, stride);
}

}  // namespace

double StepNetwork::Capacity(LinkClass c) const {
  const Cluster& cl = layout_.cluster();
  const TopologySpec& spec = cl.spec();
  switch (c) {
    case LinkClass::kNvlink:
      return spec.intra_bandwidth * spec.intra_efficiency;
    case LinkClass::kPcie:
    case LinkClass::kNic:
      return spec.nic_bandwidth * spec.inter_efficiency *
             std::max(1.0, D(spec.nics_per_node) / D(cl.gpus_per_node()));
    case LinkClass::kLeafUplink:
    case LinkClass::kPodUplink:
      return cl.NominalBandwidth(c) * spec.inter_efficiency;
  }
  return 0.0;
}

StepNetwork::Unit StepNetwork::UnitOf(LinkClass c, int64_t gpu) const {
  const Cluster& cl = layout_.cluster();
  const ClusterLevels& lv = cl.levels();
  const int64_t gpn = lv.gpus_per_node;
  const int64_t node = gpu / gpn;
  Unit u{gpu, gpu, gpu + 1};
  switch (c) {
    case LinkClass::kNvlink:
    case LinkClass::kPcie:
      return u;
    case LinkClass::kNic: {
      const int64_t k = cl.spec().nics_per_node;
      if (k >= gpn || k <= 0) return u;
      const int64_t nic = (gpu % gpn) * k / gpn;
      u.id = node * k + nic;
      u.first = node * gpn + (nic * gpn + k - 1) / k;
      u.last = std::min(lv.gpus, node * gpn + ((nic + 1) * gpn + k - 1) / k);
      return u;
    }
    case LinkClass::kLeafUplink:
    case LinkClass::kPodUplink: {
      const int64_t per = c == LinkClass::kLeafUplink ? lv.nodes_per_leaf : lv.nodes_per_pod;
      u.id = node / per;
      u.first = u.id * per * gpn;
      u.last = std::min(lv.gpus, (u.id + 1) * per * gpn);
      return u;
    }
  }
  return u;
}

double StepNetwork::Multiplicity(const Unit& u, const RankCoords& at, bool every_rank) const {
  const Placement& pl = layout_.placement();
  if (every_rank) {
    // This device's tp lanes behind the unit; its dp/cp replicas are simulated on their own.
    RankCoords c = at;
    c.tp = 0;
    const int64_t gpu0 = pl.GpuOf(c).v;
    const int64_t stride = pl.Stride(ParallelDim::kTp);
    int64_t n = 0;
    for (int64_t t = 0; t < pl.Size(ParallelDim::kTp); ++t) {
      const int64_t g = gpu0 + t * stride;
      n += g >= u.first && g < u.last ? 1 : 0;
    }
    return D(std::max<int64_t>(1, n));
  }
  // Every GPU of this pipeline stage behind the unit.
  const int64_t stride = pl.Stride(ParallelDim::kPp);
  const int64_t size = pl.Size(ParallelDim::kPp);
  const int64_t n =
      CountBelow(u.last, stride, size, at.pp) - CountBelow(u.first, stride, size, at.pp);
  return D(std::max<int64_t>(1, n));
}

ResourceId StepNetwork::LinkOf(LinkClass c, int64_t unit, Engine& engine) {
  const std::pair<int, int64_t> key{static_cast<int>(c), unit};
  auto it = index_.find(key);
  if (it != index_.end()) return links_[it->second].id;
  const Cluster& cl = layout_.cluster();
  const int64_t k = cl.spec().nics_per_node;
  const int64_t gpn = cl.gpus_per_node();
  std::string name;
  switch (c) {
    case LinkClass::kNvlink:
      name = "port of gpu " + std::to_string(unit);
      break;
    case LinkClass::kPcie:
      name = "pcie of gpu " + std::to_string(unit);
      break;
    case LinkClass::kNic:
      name = k >= gpn || k <= 0
                 ? "nic of gpu " + std::to_string(unit)
                 : "nic " + std::to_string(unit % k) + " of node " + std::to_string(unit / k);
      break;
    case LinkClass::kLeafUplink:
      name = "uplinks of leaf domain " + std::to_string(unit);
      break;
    case LinkClass::kPodUplink:
      name = "uplinks of pod " + std::to_string(unit);
      break;
  }
  StepLink l;
  l.link_class = c;
  l.unit = unit;
  // The class first: what errors and reports match on (e.g. simulate.cc's clock overflow).
  l.id = engine.AddLink(std::string(Name(c)) + ": " + name, BytesPerSec(Capacity(c)));
  index_.emplace(key, links_.size());
  links_.push_back(l);
  return l.id;
}

std::vector<PhaseFlow> StepNetwork::Flows(const CollectiveCost& cost, const RankCoords& at,
                                          Engine& engine) {
  const TopologySpec& spec = layout_.cluster().spec();
  RankCoords lane = at;
  lane.tp = 0;
  const int64_t gpu = layout_.placement().GpuOf(lane).v;
  std::vector<PhaseFlow> out;
  out.reserve(cost.phases.size());
  for (const PhaseTraffic& p : cost.phases) {
    PhaseFlow f;
    f.latency = SimTime::FromSeconds(p.latency);
    // Per class: the rank's bytes b, the unit, the multiplicity m, and the time b would take on
    // the unit alone (without the replicas: the same in both modes).
    struct Leg {
      LinkClass c;
      double b, m, replicas, eff_ratio, alone;
      int64_t unit;
    };
    // At most one leg per class: a fixed array, so that pricing a phase does not allocate.
    std::array<Leg, kNumLinkClasses> legs{};
    size_t num_legs = 0;
    size_t bound = 0;
    for (size_t c = 0; c < kNumLinkClasses; ++c) {
      if (p.bytes[c] <= 0.0) continue;
      const auto lc = static_cast<LinkClass>(c);
      const double b = p.bytes[c] / D(std::max<int64_t>(1, p.ranks[c]));
      const Unit u = UnitOf(lc, gpu);
      const double m = lc == LinkClass::kNvlink ? 1.0 : Multiplicity(u, at, every_rank_);
      const double replicas =
          lc == LinkClass::kNvlink || !every_rank_ ? 1.0 : Multiplicity(u, at, false) / m;
      const double base = lc == LinkClass::kNvlink ? spec.intra_efficiency : spec.inter_efficiency;
      const double eff = p.efficiency[c] > 0.0 ? p.efficiency[c] : base;
      const double ratio = base / eff;
      legs[num_legs] = Leg{lc, b, m, replicas, ratio, b * ratio / Capacity(lc), u.id};
      if (legs[num_legs].alone > legs[bound].alone) bound = num_legs;
      ++num_legs;
    }
    // F: the rank's bytes on the class that would bound it alone, so that on that link the flow's
    // weight is its multiplicity and flows of other kinds share it byte for byte.
    const double most = num_legs == 0 ? 0.0 : legs[bound].b;
    f.bytes = Bytes(most);
    f.links.reserve(num_legs);
    f.weights.reserve(num_legs);
    f.classes.reserve(num_legs);
    f.link_bytes.reserve(num_legs);
    f.multiplicity.reserve(num_legs);
    f.replicas.reserve(num_legs);
    for (size_t i = 0; i < num_legs; ++i) {
      const Leg& l = legs[i];
      f.links.push_back(LinkOf(l.c, l.unit, engine));
      f.weights.push_back(l.b / most * l.eff_ratio * l.m);
      f.classes.push_back(l.c);
      f.link_bytes.push_back(l.b * l.m);
      f.multiplicity.push_back(l.m);
      f.replicas.push_back(l.replicas);
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace shardsim
