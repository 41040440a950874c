// The traffic of each collective algorithm, per link class: internal to sim/collective.
//
// A Plan is a sequence of phases run one after the other (the hierarchical all-reduce has three;
// the others one). Each phase has its latency (the alpha terms) and the bytes one group sends
// across one unit of each link class, per direction (the beta terms before dividing by the
// bandwidth). cost.cc turns bytes into time with the cluster's capacities.
#ifndef SHARDSIM_COLLECTIVE_TRAFFIC_H_
#define SHARDSIM_COLLECTIVE_TRAFFIC_H_

#include <array>
#include <vector>

#include "sim/base/status.h"
#include "sim/collective/collective.h"
#include "sim/topology/link_class.h"

namespace shardsim {

class Cluster;
struct GroupShape;

struct TrafficPhase {
  double latency = 0.0;                         // seconds
  std::array<double, kNumLinkClasses> bytes{};  // per unit of each class, per direction
  bool nvls = false;                            // NVLink traffic at intra_node.nvls_efficiency
  // How NCCL's tuner rates this phase's NIC bytes when it picks an algorithm, relative to what
  // they are (1: as they are). kAuto compares candidates at rated bytes and reports the chosen
  // one at its real bytes: NCCL runs what its own model prefers, at the speed physics allows.
  double nic_rating = 1.0;
  // The phase's inter-node bytes leave a node through one GPU's own NIC (rail) rather than
  // spread over the NICs its group reaches: a point-to-point transfer between one GPU pair runs
  // on the one NIC path that pair uses (traffic.cc, SendRecvPhase).
  bool single_nic_path = false;
  // On a switchless full mesh (intra_node.links): how many of a GPU's direct links the phase's
  // NVLink-class bytes spread over (traffic.cc, MeshLinks); 0 on a switch.
  int64_t mesh_links = 0;
};

struct Plan {
  Algorithm algo = Algorithm::kRing;
  std::vector<TrafficPhase> phases;
};

// The algorithms that exist for `op` on this cluster and group, in the order kAuto breaks ties.
std::vector<Algorithm> CandidateAlgorithms(const Cluster& cluster, const GroupShape& shape,
                                           CollectiveOp op);

// The plan of `algo` (not kAuto) for `op` of `size` bytes. Errors when `algo` does not apply.
Result<Plan> PlanCollective(const Cluster& cluster, const GroupShape& shape, CollectiveOp op,
                            double size, Algorithm algo);

}  // namespace shardsim

#endif  // SHARDSIM_COLLECTIVE_TRAFFIC_H_
