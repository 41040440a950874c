// Per-algorithm traffic of the collectives, with sources. Notation (GroupShape): n ranks, g ranks
// per node, N nodes, nl group nodes per leaf domain (L domains), np per pod (P pods); S the
// nccl-tests size; a_intra / a_inter the latency of one intra- / inter-node step.
//
// Bytes are per unit of a class per direction: per GPU NVLink port, per node (all its NICs), per
// leaf domain (all its uplinks), per pod. Checked in closed form by
// tests/collective/collective_test.cc.
#include "sim/collective/traffic.h"

#include <cmath>
#include <string>

#include "sim/topology/cluster.h"
#include "sim/topology/group.h"

namespace shardsim {
namespace {

constexpr size_t kNv = static_cast<size_t>(LinkClass::kNvlink);
constexpr size_t kNic = static_cast<size_t>(LinkClass::kNic);
constexpr size_t kLeaf = static_cast<size_t>(LinkClass::kLeafUplink);
constexpr size_t kPod = static_cast<size_t>(LinkClass::kPodUplink);

double D(int64_t v) { return static_cast<double>(v); }

struct Ctx {
  const Cluster& cluster;
  const GroupShape& s;
  double size;
  double a_intra() const { return cluster.IntraLatency(); }
  double a_inter() const { return cluster.InterLatency(); }
};

// Ring (Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce algorithms for clusters of
// workstations", JPDC 69(2); nccl-tests doc/PERFORMANCE.md): every rank sends `factor` * S to its
// successor: 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter / all-gather, 1 for a pipelined
// broadcast chain. NCCL orders the ring node by node, so each node, leaf domain and pod is
// entered and left once (NCCL runs one ring per NIC, each leaving through its own NIC: the
// node's NICs together carry factor * S). Inside a node of g ranks, g - 1 of every g ring edges
// are NVLink when the ring also leaves the node. Latency, as NCCL's tuner models it
// (src/graph/tuning.cc): (steps - inter_steps) * a_intra + inter_steps * a_inter.
TrafficPhase RingPhase(const Ctx& c, double factor, int64_t steps, int64_t inter_steps) {
  const GroupShape& s = c.s;
  TrafficPhase p;
  const double moved = factor * c.size;
  if (s.ranks_per_node > 1) {
    p.bytes[kNv] = s.nodes > 1 ? moved * D(s.ranks_per_node - 1) / D(s.ranks_per_node) : moved;
  }
  if (s.nodes > 1) p.bytes[kNic] = moved;
  if (s.leaves > 1) p.bytes[kLeaf] = moved;
  if (s.pods > 1) p.bytes[kPod] = moved;
  p.latency = D(steps - inter_steps) * c.a_intra() + D(inter_steps) * c.a_inter();
  return p;
}

// NCCL's double binary tree all-reduce (Sanders, Speck & Traeff 2009, "Two-tree algorithms for
// full bandwidth broadcast, reduction and scan", Parallel Computing 35(12); NCCL 2.4): a chain
// inside each node, two binary trees of S/2 each across nodes, every node interior in at most one.
// An interior node sends S/2 up and S/2 to each of two children in one tree and S/2 up in the
// other: 2S per direction (NCCL's tuner: tree algbw = busbw / 2); with 2 nodes each sends only S.
// An interior chain GPU sends S up and S down: 2S (S with 2 GPUs). Latency (tuning.cc):
// 2 * ((g - 1) * a_intra + log2(N) * a_inter).
// NCCL's tuner converts the tree's bus bandwidth to algorithm bandwidth with the ratio 0.5 at any
// node count (tuning.cc: "ratio = (a != NCCL_ALGO_RING) ? .5 : nRanks / nsteps"), i.e. it rates a
// node as sending 2S even with 2 nodes; so it prefers the ring for large messages on two nodes
// (it does run the tree for small ones). nic_rating = 2 carries that rating into kAuto's choice.
TrafficPhase TreePhase(const Ctx& c) {
  const GroupShape& s = c.s;
  TrafficPhase p;
  const int64_t g = s.ranks_per_node;
  if (g >= 3) p.bytes[kNv] = 2 * c.size;
  if (g == 2) p.bytes[kNv] = c.size;
  if (s.nodes >= 3) p.bytes[kNic] = 2 * c.size;
  if (s.nodes == 2) {
    p.bytes[kNic] = c.size;
    p.nic_rating = 2.0;
  }
  if (s.leaves > 1) p.bytes[kLeaf] = c.size;  // one subtree edge per tree leaves each domain
  if (s.pods > 1) p.bytes[kPod] = c.size;
  const double depth = s.nodes > 1 ? std::ceil(std::log2(D(s.nodes))) : 0.0;
  p.latency = 2 * (D(g - 1) * c.a_intra() + depth * c.a_inter());
  return p;
}

// One intra-node ring step of the hierarchical algorithms: reduce-scatter or all-gather of S over
// the g ranks of a node, (g - 1)/g * S per NVLink port, (g - 1) * a_intra.
TrafficPhase IntraPhase(const Ctx& c) {
  TrafficPhase p;
  const int64_t g = c.s.ranks_per_node;
  p.bytes[kNv] = c.size * D(g - 1) / D(g);
  p.latency = D(g - 1) * c.a_intra();
  return p;
}

// The inter-node step of the hierarchical algorithms: g rings (one per local index) over the N
// nodes, each on S/g, running at once through the node's NICs: the node sends factor * S.
// (Jia et al. 2018, "Highly scalable deep learning training system with mixed-precision",
// arXiv 1807.11205, hierarchical all-reduce.)
TrafficPhase InterPhase(const Ctx& c, double factor, int64_t steps) {
  const GroupShape& s = c.s;
  TrafficPhase p;
  p.bytes[kNic] = factor * c.size;
  if (s.leaves > 1) p.bytes[kLeaf] = factor * c.size;
  if (s.pods > 1) p.bytes[kPod] = factor * c.size;
  p.latency = D(steps) * c.a_inter();
  return p;
}

// NVLink SHARP all-reduce inside one NVSwitch domain: each GPU reduces 1/n of the buffer with
// multimem.ld_reduce (the switch reads that slice from all n GPUs: every GPU sends S in total and
// receives S/n) and multicasts it with multimem.st (sends S/n, receives S from all): (n+1)/n * S
// per direction, at intra_node.nvls_efficiency. Latency: intra_node.nvls_latency (NCCL's tuner
// uses 23-25 us for NVLS on NVLink, src/graph/tuning.cc hwLat).
TrafficPhase NvlsPhase(const Ctx& c) {
  TrafficPhase p;
  const double n = D(c.s.ranks);
  p.bytes[kNv] = (n + 1) / n * c.size;
  p.nvls = true;
  p.latency = c.cluster.spec().nvls_latency;
  return p;
}

// NVLink SHARP reduce-scatter and all-gather inside one NVSwitch domain (NCCL runs both on NVLS:
// NVIDIA/nccl src/graph/tuning.cc, 2.20.3, admits NCCL_ALGO_NVLS for ncclFuncReduceScatter and
// ncclFuncAllGather, single node unless CollNet). Reduce-scatter: each GPU multimem.ld_reduces
// its slice, so the switch reads all n slices of every GPU (sends S, receives S/n); all-gather:
// each GPU multimem.st's its slice once and the switch multicasts it (sends S/n, receives S).
// S. Jeaugey (NVIDIA/nccl#1083, #1506): "NVLS: Send S, Receive S/N ... Ring: Send (N-1)*S/N,
// Receive (N-1)*S/N ... the total operation time will be limited by the largest size which is
// higher with NVLS"; measured on 8 H100 at 1 GB: NVLS all-gather ~300 GB/s busbw against the
// ring's ~350 (#1506). So the heavier direction carries S, at intra_node.nvls_efficiency, with
// the NVLS latency: kAuto keeps the ring unless NVLS is faster (it is not on NVLink 4 at 0.686).
TrafficPhase NvlsRsAgPhase(const Ctx& c) {
  TrafficPhase p;
  p.bytes[kNv] = c.size;
  p.nvls = true;
  p.latency = c.cluster.spec().nvls_latency;
  return p;
}

// NCCL's NVLS tree all-reduce across nodes: inside each node an NVLS reduce-scatter and all-gather
// ((g+1)/g * S per NVLink port at intra_node.nvls_efficiency, as NvlsPhase with n = g), across
// nodes the double binary tree of TreePhase over the g slices (a node's NICs carry 2S, S with two
// nodes), pipelined: the slower of the two sets the rate (NCCL's tuner: NVLS-tree bandwidth =
// min(intra, inter or inter / 2 beyond two nodes), src/graph/tuning.cc). Latency:
// nvls_latency + 2 * log2(N) * a_inter (tuning.cc: intraLat + 2 * log2i(nNodes) * interLat).
TrafficPhase NvlsTreePhase(const Ctx& c) {
  const GroupShape& s = c.s;
  TrafficPhase p = TreePhase(c);
  const double g = D(s.ranks_per_node);
  p.bytes[kNv] = (g + 1) / g * c.size;
  p.nvls = true;
  p.nic_rating = 1.0;  // the tuner rates NVLS tree at the inter-node bandwidth on two nodes
  const double depth = std::ceil(std::log2(D(s.nodes)));
  p.latency = c.cluster.spec().nvls_latency + 2 * depth * c.a_inter();
  return p;
}

// All-to-all as n - 1 concurrent sends: each rank sends S/n to every other rank (nccl-tests'
// alltoall size convention). NVLink carries the (g - 1) local slices; a node sends the slices of
// its g ranks to the n - g remote ranks; a leaf domain (pod) those of its ranks to the ranks
// outside it. Latency: one step of the farthest hop.
TrafficPhase AllToAllPhase(const Ctx& c) {
  const GroupShape& s = c.s;
  TrafficPhase p;
  const double n = D(s.ranks);
  const double g = D(s.ranks_per_node);
  const double in_leaf = g * D(s.nodes_per_leaf);
  const double in_pod = g * D(s.nodes_per_pod);
  p.bytes[kNv] = (g - 1) / n * c.size;
  if (s.nodes > 1) p.bytes[kNic] = g * (n - g) / n * c.size;
  if (s.leaves > 1) p.bytes[kLeaf] = in_leaf * (n - in_leaf) / n * c.size;
  if (s.pods > 1) p.bytes[kPod] = in_pod * (n - in_pod) / n * c.size;
  p.latency = s.nodes > 1 ? c.a_inter() : c.a_intra();
  return p;
}

// Send/receive: every rank sends S to the next rank of the group (a shift; with 2 ranks, one
// exchange, as nccl-tests' sendrecv_perf). t = a + S/B (Thakur, Rabenseifner & Gropp 2005,
// "Optimization of collective communication operations in MPICH", IJHPCA 19(1)). A shift over a
// group ordered node by node crosses each node boundary on one GPU pair (rank g-1 of a node to
// rank 0 of the next), and a GPU pair's transfer leaves through the sending GPU's own NIC: B is
// one NIC path whether the group holds 2 ranks or 16 on those nodes (single_nic_path; NCCL's
// p2p channels take the NIC local to the GPU, ncclTopoGetLocalNet in src/graph/search.cc). The
// ranks inside a node shift over NVLink at the same time, S per port.
TrafficPhase SendRecvPhase(const Ctx& c) {
  const GroupShape& s = c.s;
  TrafficPhase p;
  if (s.ranks_per_node > 1) p.bytes[kNv] = c.size;
  if (s.nodes > 1) p.bytes[kNic] = c.size;
  if (s.leaves > 1) p.bytes[kLeaf] = c.size;
  if (s.pods > 1) p.bytes[kPod] = c.size;
  p.single_nic_path = true;
  p.latency = s.nodes > 1 ? c.a_inter() : c.a_intra();
  return p;
}

Result<Plan> PlanPhases(const Cluster& cluster, const GroupShape& s, CollectiveOp op, double size,
                        Algorithm algo);

// Links of a full mesh (intra_node.links = gpus_per_node - 1, no switch: AMD Infinity Fabric)
// that a group of g ranks per node drives at once. Only the g - 1 links to the group's own
// members carry its traffic. All-to-all and the other direct patterns send each peer its share
// over that peer's own link: all g - 1 (send/receive: the one link of the pair). A ring uses one
// link per hop; NCCL/RCCL run several rings (channels), at most one per arc-disjoint directed
// Hamiltonian cycle of the group's complete sub-mesh: g - 1 of them for every g except 4 and 6
// (Tillson 1980, "A Hamiltonian decomposition of K*_2m, 2m >= 8", J. Combin. Theory B 29), where
// the most are 2 and 4. Trees and hierarchical steps inside the node run as such rings.
int64_t MeshLinks(const Ctx& c, bool direct, bool pair) {
  if (c.cluster.spec().intra_links <= 0) return 0;
  const int64_t g = c.s.ranks_per_node;
  if (g < 2) return 0;
  if (pair) return 1;
  if (direct) return g - 1;
  if (g == 4) return 2;
  if (g == 6) return 4;
  return g - 1;
}

Status NotFor(Algorithm a, CollectiveOp op, const std::string& why) {
  return Status::Invalid(std::string("algorithm '") + Name(a) + "' does not apply to " + Name(op) +
                         ": " + why);
}

}  // namespace

std::vector<Algorithm> CandidateAlgorithms(const Cluster& cluster, const GroupShape& s,
                                           CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: {
      std::vector<Algorithm> out = {Algorithm::kRing};
      if (s.nodes > 1) out.push_back(Algorithm::kTree);
      if (s.nodes > 1 && s.ranks_per_node > 1) out.push_back(Algorithm::kHierarchical);
      if (cluster.spec().nvls && s.nodes == 1) out.push_back(Algorithm::kNvls);
      if (cluster.spec().nvls && s.nodes > 1 && s.ranks_per_node > 1) {
        out.push_back(Algorithm::kNvlsTree);
      }
      return out;
    }
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      if (s.nodes > 1 && s.ranks_per_node > 1) return {Algorithm::kRing, Algorithm::kHierarchical};
      if (cluster.spec().nvls && s.nodes == 1) return {Algorithm::kRing, Algorithm::kNvls};
      return {Algorithm::kRing};
    case CollectiveOp::kBroadcast:
      return {Algorithm::kRing};
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kSendRecv:
      return {Algorithm::kDirect};
  }
  return {};
}

Result<Plan> PlanCollective(const Cluster& cluster, const GroupShape& s, CollectiveOp op,
                            double size, Algorithm algo) {
  Result<Plan> plan = PlanPhases(cluster, s, op, size, algo);
  if (!plan.ok()) return plan;
  const Ctx c{cluster, s, size};
  const bool direct = algo == Algorithm::kDirect;
  const bool pair = direct && op == CollectiveOp::kSendRecv;
  for (TrafficPhase& p : plan->phases) p.mesh_links = MeshLinks(c, direct, pair);
  return plan;
}

namespace {

Result<Plan> PlanPhases(const Cluster& cluster, const GroupShape& s, CollectiveOp op, double size,
                        Algorithm algo) {
  const Ctx c{cluster, s, size};
  const int64_t n = s.ranks;
  const int64_t nodes = s.nodes;
  const bool all_reduce = op == CollectiveOp::kAllReduce;
  const bool rs_ag = op == CollectiveOp::kReduceScatter || op == CollectiveOp::kAllGather;
  const bool direct_only = op == CollectiveOp::kAllToAll || op == CollectiveOp::kSendRecv;
  Plan plan;
  plan.algo = algo;
  if (direct_only && algo != Algorithm::kDirect) {
    return NotFor(algo, op, "it runs as direct point-to-point transfers (algorithm 'direct')");
  }
  switch (algo) {
    case Algorithm::kAuto:
      return Status::Internal("PlanCollective needs a concrete algorithm");
    case Algorithm::kRing:
      if (all_reduce) {
        plan.phases.push_back(RingPhase(c, 2.0 * D(n - 1) / D(n), 2 * (n - 1), 2 * (nodes - 1)));
      } else if (rs_ag) {
        plan.phases.push_back(RingPhase(c, D(n - 1) / D(n), n - 1, nodes - 1));
      } else {
        plan.phases.push_back(RingPhase(c, 1.0, n - 1, nodes - 1));
      }
      return plan;
    case Algorithm::kTree:
      if (!all_reduce) return NotFor(algo, op, "NCCL's double binary tree is all_reduce only");
      plan.phases.push_back(TreePhase(c));
      return plan;
    case Algorithm::kHierarchical: {
      if (!all_reduce && !rs_ag) return NotFor(algo, op, "use 'ring'");
      const bool intra = s.ranks_per_node > 1;
      const bool inter = nodes > 1;
      const double nf = D(nodes);
      if (op != CollectiveOp::kAllGather && intra) plan.phases.push_back(IntraPhase(c));
      if (inter && all_reduce) {
        plan.phases.push_back(InterPhase(c, 2 * (nf - 1) / nf, 2 * (nodes - 1)));
      }
      if (inter && rs_ag) plan.phases.push_back(InterPhase(c, (nf - 1) / nf, nodes - 1));
      if (op != CollectiveOp::kReduceScatter && intra) plan.phases.push_back(IntraPhase(c));
      return plan;
    }
    case Algorithm::kNvls:
      if (!all_reduce && !rs_ag) {
        return NotFor(algo, op,
                      "NCCL runs NVLink SHARP for all_reduce, reduce_scatter and all_gather only");
      }
      if (!cluster.spec().nvls) {
        return NotFor(algo, op,
                      "topology '" + cluster.spec().name +
                          "' has no NVLink SHARP switch (intra_node.nvls is false)");
      }
      if (nodes > 1) {
        return NotFor(algo, op,
                      "NVLS runs inside one NVSwitch domain and the group spans " +
                          std::to_string(nodes) + " nodes");
      }
      plan.phases.push_back(all_reduce ? NvlsPhase(c) : NvlsRsAgPhase(c));
      return plan;
    case Algorithm::kNvlsTree:
      if (!all_reduce) return NotFor(algo, op, "NVLink SHARP is modeled for all_reduce only");
      if (!cluster.spec().nvls) {
        return NotFor(algo, op,
                      "topology '" + cluster.spec().name +
                          "' has no NVLink SHARP switch (intra_node.nvls is false)");
      }
      if (nodes < 2 || s.ranks_per_node < 2) {
        return NotFor(algo, op, "the NVLS tree needs several nodes with several ranks each");
      }
      plan.phases.push_back(NvlsTreePhase(c));
      return plan;
    case Algorithm::kDirect:
      if (!direct_only) return NotFor(algo, op, "use 'ring' or 'auto'");
      plan.phases.push_back(op == CollectiveOp::kAllToAll ? AllToAllPhase(c) : SendRecvPhase(c));
      return plan;
  }
  return Status::Internal("unknown algorithm");
}

}  // namespace

}  // namespace shardsim
