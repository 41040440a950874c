// From traffic (bytes per unit of each link class) to time: capacities, sharing between concurrent
// groups, and the choice of algorithm.
#include <algorithm>
#include <array>
#include <string>

#include "sim/collective/collective.h"
#include "sim/collective/traffic.h"
#include "sim/topology/cluster.h"

namespace shardsim {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

// What one group gets from one unit of a link class.
struct Share {
  double capacity = 0.0;   // achievable bytes/s of the unit
  double effective = 0.0;  // this group's share
  int64_t sharing = 1;     // groups loading the unit at once
  int64_t ranks = 1;       // this group's ranks behind the unit
};

// Capacity shares. Concurrent groups of one kind are packed as a layout packs them: a node holds
// min(C, G/g) of them, a leaf domain min(C, G*nodes_in_domain / (g*nl)), a pod likewise. A group
// reaches the NICs attached to its own GPUs (g*k/G of them, at least one), and gets at most its
// share k/groups of the node's k NICs. NVSwitch ports are per GPU and the switch is non-blocking:
// not shared. Efficiencies: intra_node.efficiency (or nvls_efficiency for NVLS traffic) on NVLink,
// inter_node.efficiency on NICs and uplinks (measurements in topologies/PUBLISHED.md).
std::array<Share, kNumLinkClasses> Shares(const Cluster& cluster, const GroupShape& s,
                                          int64_t concurrent, const TrafficPhase& phase) {
  const bool nvls = phase.nvls;
  const TopologySpec& spec = cluster.spec();
  const ClusterLevels& lv = cluster.levels();
  std::array<Share, kNumLinkClasses> out{};
  const double g = D(s.ranks_per_node);
  const double gpn = D(lv.gpus_per_node);

  Share& nv = out[static_cast<size_t>(LinkClass::kNvlink)];
  nv.capacity = spec.intra_bandwidth * (nvls ? spec.nvls_efficiency : spec.intra_efficiency);
  // A full mesh: the phase drives phase.mesh_links of the GPU's intra_links direct links
  // (traffic.cc, MeshLinks), each intra_bandwidth / intra_links.
  if (spec.intra_links > 0) nv.capacity *= D(phase.mesh_links) / D(spec.intra_links);
  nv.effective = nv.capacity;

  const double k = D(spec.nics_per_node);
  const double nic_rate = spec.nic_bandwidth * spec.inter_efficiency;
  Share& nic = out[static_cast<size_t>(LinkClass::kNic)];
  nic.sharing = std::min(concurrent, std::max<int64_t>(1, lv.gpus_per_node / s.ranks_per_node));
  // One GPU pair's transfer runs on one NIC path (TrafficPhase::single_nic_path).
  const double reachable = phase.single_nic_path ? 1.0 : std::min(k, std::max(1.0, g * k / gpn));
  nic.capacity = k * nic_rate;
  nic.effective = std::min(reachable, k / D(nic.sharing)) * nic_rate;
  nic.ranks = phase.single_nic_path ? 1 : s.ranks_per_node;  // ranks whose bytes cross the NICs

  auto domain = [&](LinkClass c, int64_t domain_nodes, int64_t group_nodes) {
    Share& d = out[static_cast<size_t>(c)];
    const int64_t active = std::min(domain_nodes, lv.nodes);
    const int64_t fit =
        (lv.gpus_per_node * active) / std::max<int64_t>(1, s.ranks_per_node * group_nodes);
    d.sharing = std::min(concurrent, std::max<int64_t>(1, fit));
    d.capacity = cluster.NominalBandwidth(c) * spec.inter_efficiency;
    d.effective = d.capacity / D(d.sharing);
    d.ranks = s.ranks_per_node * group_nodes;
  };
  domain(LinkClass::kLeafUplink, lv.nodes_per_leaf, s.nodes_per_leaf);
  domain(LinkClass::kPodUplink, lv.nodes_per_pod, s.nodes_per_pod);
  return out;
}

struct Evaluation {
  double latency = 0.0;
  double bandwidth = 0.0;
  std::array<double, kNumLinkClasses> bytes{};
  std::array<double, kNumLinkClasses> time{};
  std::array<double, kNumLinkClasses> bottleneck_time{};  // bandwidth time each class set
  std::array<Share, kNumLinkClasses> shares{};
};

// `rated`: the NIC bytes as NCCL's tuner rates them (TrafficPhase::nic_rating), for choosing.
Evaluation Evaluate(const Cluster& cluster, const GroupShape& s, const Plan& plan,
                    int64_t concurrent, bool rated = false) {
  Evaluation e;
  for (const TrafficPhase& phase : plan.phases) {
    const auto shares = Shares(cluster, s, concurrent, phase);
    double slowest = 0.0;
    size_t which = static_cast<size_t>(LinkClass::kNvlink);
    for (size_t c = 0; c < kNumLinkClasses; ++c) {
      if (phase.bytes[c] <= 0.0) continue;
      const double scale =
          rated && c == static_cast<size_t>(LinkClass::kNic) ? phase.nic_rating : 1.0;
      const double t = scale * phase.bytes[c] / shares[c].effective;
      e.bytes[c] += phase.bytes[c];
      e.time[c] += t;
      e.shares[c] = shares[c];
      if (t > slowest) {
        slowest = t;
        which = c;
      }
    }
    e.latency += phase.latency;
    e.bandwidth += slowest;
    e.bottleneck_time[which] += slowest;
  }
  return e;
}

// The phases of `plan` as the engine runs them: bytes per unit, the ranks behind one unit and the
// efficiency of each class, from the same shares Evaluate prices (sharing between concurrent
// groups is left to the engine, which counts the replicas on each physical link).
std::vector<PhaseTraffic> PhasesOf(const Cluster& cluster, const GroupShape& s, const Plan& plan) {
  const TopologySpec& spec = cluster.spec();
  std::vector<PhaseTraffic> out;
  for (const TrafficPhase& phase : plan.phases) {
    const auto shares = Shares(cluster, s, 1, phase);
    PhaseTraffic p;
    p.latency = Seconds(phase.latency);
    p.single_nic_path = phase.single_nic_path;
    for (size_t c = 0; c < kNumLinkClasses; ++c) {
      if (phase.bytes[c] <= 0.0) continue;
      p.bytes[c] = phase.bytes[c];
      const auto lc = static_cast<LinkClass>(c);
      if (lc == LinkClass::kNvlink) {
        p.ranks[c] = 1;
        p.unit_bandwidth[c] = shares[c].capacity;
        p.efficiency[c] = shares[c].capacity / spec.intra_bandwidth;
      } else {
        p.ranks[c] = std::max<int64_t>(1, shares[c].ranks);
        p.efficiency[c] = spec.inter_efficiency;
        p.unit_bandwidth[c] =
            lc == LinkClass::kNic ? spec.nic_bandwidth * spec.inter_efficiency : shares[c].capacity;
      }
    }
    out.push_back(p);
  }
  return out;
}

LinkClass Bottleneck(const Evaluation& e) {
  size_t best = static_cast<size_t>(LinkClass::kNvlink);
  for (size_t c = 0; c < kNumLinkClasses; ++c) {
    if (e.bottleneck_time[c] > e.bottleneck_time[best]) best = c;
  }
  return static_cast<LinkClass>(best);
}

// The measured fit of `op` inside one node (TopologySpec::CollectiveFit), or null.
const CollectiveFit* FitOf(const TopologySpec& t, CollectiveOp op) {
  const CollectiveFit* f = nullptr;
  switch (op) {
    case CollectiveOp::kAllReduce:
      f = &t.fit_all_reduce;
      break;
    case CollectiveOp::kAllGather:
      f = &t.fit_all_gather;
      break;
    case CollectiveOp::kReduceScatter:
      f = &t.fit_reduce_scatter;
      break;
    case CollectiveOp::kAllToAll:
      f = &t.fit_all_to_all;
      break;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kSendRecv:
      break;
  }
  return f != nullptr && f->efficiency > 0.0 ? f : nullptr;
}

}  // namespace

Result<CollectiveCost> CostCollective(const Cluster& cluster, const GroupShape& shape,
                                      CollectiveOp op, Bytes size,
                                      const CollectiveOptions& options) {
  if (shape.ranks < 2) {
    return Status::Invalid(std::string("a collective needs at least 2 ranks; ") + Name(op) +
                           " was asked over " + std::to_string(shape.ranks));
  }
  if (size.value() < 0.0) return Status::Invalid("collective size must not be negative");
  if (options.concurrent_groups < 1) {
    return Status::Invalid("concurrent_groups must be at least 1, got " +
                           std::to_string(options.concurrent_groups));
  }
  std::vector<Algorithm> candidates = {options.algorithm};
  if (options.algorithm == Algorithm::kAuto) candidates = CandidateAlgorithms(cluster, shape, op);

  const double bytes = size.value();
  // NCCL's tuner decides between its flat algorithms, ring and the double binary tree, by its own
  // rating (the tree at 2S per node); the winner then competes with the other candidates
  // (hierarchical, NVLS, NVLS tree) at real traffic, so a faster link never selects a slower
  // algorithm through the tree's rating alone. Candidates are kept in place and named by index.
  struct Candidate {
    Plan plan;
    Evaluation real;
    double rated = 0.0;  // as NCCL's tuner rates it (real traffic unless the tree's 2S rating)
  };
  std::vector<Candidate> cand;
  cand.reserve(candidates.size());
  const auto total = [](const Evaluation& e) { return e.latency + e.bandwidth; };
  int flat = -1, other = -1, fastest = -1;  // fastest: by real traffic, to explain a rated choice
  for (Algorithm a : candidates) {
    Result<Plan> plan = PlanCollective(cluster, shape, op, bytes, a);
    if (!plan.ok()) return plan.status();
    const int i = static_cast<int>(cand.size());
    Candidate& k = cand.emplace_back();
    k.plan = std::move(*plan);
    k.real = Evaluate(cluster, shape, k.plan, options.concurrent_groups);
    k.rated = total(k.real);
    if (std::any_of(k.plan.phases.begin(), k.plan.phases.end(),
                    [](const TrafficPhase& p) { return p.nic_rating != 1.0; })) {
      k.rated = total(Evaluate(cluster, shape, k.plan, options.concurrent_groups, true));
    }
    if (a == Algorithm::kRing || a == Algorithm::kTree) {
      if (flat < 0 || k.rated < cand[flat].rated) flat = i;
    } else if (other < 0 || total(k.real) < total(cand[other].real)) {
      other = i;
    }
    if (fastest < 0 || total(k.real) < total(cand[fastest].real)) fastest = i;
  }
  const int chosen =
      flat < 0 || (other >= 0 && total(cand[other].real) < total(cand[flat].real)) ? other : flat;
  const Plan& best_plan = cand[chosen].plan;
  const Evaluation& best = cand[chosen].real;
  const Algorithm fastest_algo = cand[fastest].plan.algo;
  const double fastest_time = total(cand[fastest].real);
  // The bottleneck does not depend on the size (all bytes scale with it); for an empty message
  // it is read from a one-byte plan.
  LinkClass bottleneck = Bottleneck(best);
  if (bytes <= 0.0) {
    Result<Plan> unit = PlanCollective(cluster, shape, op, 1.0, best_plan.algo);
    bottleneck = Bottleneck(Evaluate(cluster, shape, *unit, options.concurrent_groups));
  }

  CollectiveCost cost;
  cost.algo = best_plan.algo;
  cost.latency_part = Seconds(best.latency);
  cost.bandwidth_part = Seconds(best.bandwidth);
  cost.time = Seconds(best.latency + best.bandwidth);
  cost.algbw = cost.time.value() > 0.0 ? bytes / cost.time.value() : 0.0;
  cost.busbw = cost.algbw * BusBandwidthFactor(op, shape.ranks);
  cost.bottleneck_class = bottleneck;
  cost.bottleneck = Name(bottleneck);
  cost.shape = shape;
  cost.phases = PhasesOf(cluster, shape, best_plan);
  if (fastest_algo != best_plan.algo && fastest_time < best.latency + best.bandwidth) {
    cost.choice = std::string("NCCL's tuner rates ") + Name(fastest_algo) +
                  " at algbw = busbw / 2 (2S per node) on any node count and runs " +
                  Name(best_plan.algo) + "; " + Name(fastest_algo) + " would take " +
                  FormatSeconds(Seconds(fastest_time));
  }
  for (size_t c = 0; c < kNumLinkClasses; ++c) {
    if (best.bytes[c] <= 0.0) continue;
    const Share& sh = best.shares[c];
    LinkLoad load;
    load.link_class = static_cast<LinkClass>(c);
    load.bytes_per_unit = best.bytes[c];
    load.ranks_per_unit = sh.ranks;
    load.bytes_per_rank = best.bytes[c] / D(sh.ranks);
    load.groups_sharing = sh.sharing;
    load.capacity = BytesPerSec(sh.capacity);
    load.effective_bandwidth = BytesPerSec(sh.effective);
    load.time = Seconds(best.time[c]);
    cost.loads.push_back(load);
  }
  // A group inside one node on a topology with a measured fit of this op (intra_node.collectives,
  // e.g. kernel-level NCCL timings on a B200 node): time = latency + factor * S / (efficiency *
  // bandwidth), factor the ring's bytes per rank, whatever algorithm NCCL ran (the fit covers it).
  const CollectiveFit* fit = FitOf(cluster.spec(), op);
  if (fit != nullptr && shape.nodes == 1 && options.algorithm == Algorithm::kAuto) {
    const double n = D(shape.ranks);
    const double factor = op == CollectiveOp::kAllReduce ? 2.0 * (n - 1) / n : (n - 1) / n;
    const double rate = fit->efficiency * cluster.spec().intra_bandwidth;
    cost.latency_part = Seconds(fit->latency);
    cost.bandwidth_part = Seconds(factor * bytes / rate);
    cost.time = cost.latency_part + cost.bandwidth_part;
    cost.algbw = cost.time.value() > 0.0 ? bytes / cost.time.value() : 0.0;
    cost.busbw = cost.algbw * BusBandwidthFactor(op, shape.ranks);
    cost.bottleneck_class = LinkClass::kNvlink;
    cost.bottleneck = Name(LinkClass::kNvlink);
    cost.choice = std::string("measured fit intra_node.collectives.") + Name(op) + " of '" +
                  cluster.spec().name + "' (efficiency " + FormatSig(fit->efficiency) +
                  ", latency " + FormatSeconds(Seconds(fit->latency)) + ")";
    LinkLoad load;
    load.link_class = LinkClass::kNvlink;
    load.bytes_per_unit = factor * bytes;
    load.ranks_per_unit = 1;
    load.bytes_per_rank = factor * bytes;
    load.capacity = BytesPerSec(rate);
    load.effective_bandwidth = BytesPerSec(rate);
    load.time = cost.bandwidth_part;
    cost.loads = {load};
    PhaseTraffic p;
    p.latency = cost.latency_part;
    p.bytes[static_cast<size_t>(LinkClass::kNvlink)] = factor * bytes;
    p.ranks[static_cast<size_t>(LinkClass::kNvlink)] = 1;
    p.efficiency[static_cast<size_t>(LinkClass::kNvlink)] = fit->efficiency;
    p.unit_bandwidth[static_cast<size_t>(LinkClass::kNvlink)] = rate;
    cost.phases = {p};
  }
  return cost;
}

Result<CollectiveCost> CostCollective(const Cluster& cluster, const Group& group, CollectiveOp op,
                                      Bytes size, const CollectiveOptions& options) {
  Result<GroupShape> shape = AnalyzeGroup(cluster, group);
  if (!shape.ok()) return shape.status();
  return CostCollective(cluster, *shape, op, size, options);
}

}  // namespace shardsim
