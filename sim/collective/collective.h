// Cost of collectives (all-reduce, reduce-scatter, all-gather, all-to-all, broadcast,
// send/receive) for a group of ranks placed on a cluster, in alpha-beta form with nccl-tests'
// conventions (docs/reference.md §5):
//   ring all-reduce                  2(n-1)*a + 2(n-1)/n * S/B
//   ring reduce-scatter / all-gather  (n-1)*a +  (n-1)/n * S/B
// where S is nccl-tests' size (the whole buffer: for all-gather the output of one rank, for
// reduce-scatter its input), a the latency of one step and B the achievable bandwidth of the
// links the group's traffic crosses, shared with the other groups of the same kind that run at
// the same time. Link classes (sim/topology/link_class.h) stand for all links alike: the model
// computes the bytes one group sends across one unit of each class (a GPU's NVLink port, a node's
// NICs, a leaf domain's or a pod's uplinks) and divides by that unit's capacity share, so costing
// one collective takes the same time on 8 GPUs as on 16,384.
//
// Algorithms: ring; NCCL's double binary tree (all-reduce); hierarchical (intra-node ring
// reduce-scatter, inter-node ring all-reduce over the g rings of same-local-index GPUs, intra-node
// all-gather); NVLS (NVLink SHARP all-reduce, reduce-scatter and all-gather inside one NVSwitch
// domain); NVLS tree (NVLS inside each node, double binary tree across nodes, pipelined); direct
// (all-to-all and send/receive as concurrent point-to-point transfers). kAuto chooses between ring
// and tree as NCCL's tuner does from its own cost model (NVIDIA/nccl src/graph/tuning.cc), which
// rates the double binary tree at 2S per node even on two nodes (traffic.cc, TreePhase); that
// winner and the other plans (hierarchical, NVLS, NVLS tree) are compared at their real traffic and
// the fastest is costed. The formulas, with their sources, are in traffic.cc; tests/collective/
// checks each in closed form.
#ifndef SHARDSIM_COLLECTIVE_COLLECTIVE_H_
#define SHARDSIM_COLLECTIVE_COLLECTIVE_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/status.h"
#include "sim/base/units.h"
#include "sim/topology/group.h"
#include "sim/topology/link_class.h"

namespace shardsim {

class Cluster;

enum class CollectiveOp {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kAllToAll,
  kBroadcast,
  kSendRecv
};
enum class Algorithm { kAuto, kRing, kTree, kHierarchical, kNvls, kNvlsTree, kDirect };

// "all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast", "send_recv".
const char* Name(CollectiveOp op);
// "auto", "ring", "tree", "hierarchical", "nvls", "nvls_tree", "direct".
const char* Name(Algorithm a);
// Accepts the names above (also "allreduce", "alltoall", "sendrecv"); errors with "did you mean".
Result<CollectiveOp> ParseCollectiveOp(std::string_view text);
Result<Algorithm> ParseAlgorithm(std::string_view text);

// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): busbw = algbw * factor.
// all-reduce 2(n-1)/n; reduce-scatter, all-gather, all-to-all (n-1)/n; broadcast, send/recv 1.
double BusBandwidthFactor(CollectiveOp op, int64_t ranks);

struct CollectiveOptions {
  Algorithm algorithm = Algorithm::kAuto;
  // Groups of this kind (same shape) running the same collective at the same time, packed on the
  // GPUs as a layout packs its groups (e.g. the 8 DP groups of TP=8 share every node's NICs:
  // Placement::NumGroups(ParallelDim::kDp)). 1 = this group alone, as nccl-tests runs.
  int64_t concurrent_groups = 1;
};

// The load one group's collective puts on one link class: what the engine needs to share a class
// between concurrent collectives (DP and PP traffic on the same NICs, ...).
struct LinkLoad {
  LinkClass link_class = LinkClass::kNvlink;
  double bytes_per_unit =
      0.0;  // bytes across one unit (GPU port / node / leaf / pod), per direction
  int64_t ranks_per_unit = 0;       // this group's ranks behind one unit
  double bytes_per_rank = 0.0;      // bytes_per_unit / ranks_per_unit
  int64_t groups_sharing = 1;       // groups of this kind loading the same unit at once
  BytesPerSec capacity;             // achievable bandwidth of one unit (nominal * efficiency)
  BytesPerSec effective_bandwidth;  // this group's share of it
  Seconds time;                     // bytes_per_unit / effective_bandwidth
};

// One phase of the chosen algorithm as the engine runs it (sim/program/step_links.h): phases run
// one after the other; inside a phase every class it crosses carries its bytes at once (the
// pipelined alpha-beta model: the slowest class sets the phase's time when the group is alone).
struct PhaseTraffic {
  Seconds latency;                                   // the phase's alpha terms
  std::array<double, kNumLinkClasses> bytes{};       // per unit of each class, per direction
  std::array<int64_t, kNumLinkClasses> ranks{};      // the group's ranks whose bytes cross one unit
  std::array<double, kNumLinkClasses> efficiency{};  // of the nominal bandwidth, for these bytes
  // One unit's bandwidth for this phase in bytes/s, as the collective model costs it alone:
  // nominal * efficiency (an NVLink port, one NIC, a leaf domain's or a pod's uplinks).
  std::array<double, kNumLinkClasses> unit_bandwidth{};
  bool single_nic_path = false;  // a GPU pair's transfer: one NIC path (TrafficPhase)
};

struct CollectiveCost {
  Seconds time;            // latency_part + bandwidth_part
  Seconds latency_part;    // the alpha terms
  Seconds bandwidth_part;  // the beta terms
  Algorithm algo = Algorithm::kRing;
  double algbw = 0.0;      // bytes/s: S / time (nccl-tests)
  double busbw = 0.0;      // bytes/s: algbw * BusBandwidthFactor
  std::string bottleneck;  // Name(bottleneck_class), e.g. "nic (inter-node)"
  LinkClass bottleneck_class = LinkClass::kNvlink;
  std::vector<LinkLoad> loads;       // one per class crossed, in LinkClass order
  std::vector<PhaseTraffic> phases;  // the chosen algorithm's phases, in order
  GroupShape shape;
  // With kAuto, when NCCL's rating chose another algorithm than the one that would be fastest:
  // which one and what it would take, in words; empty otherwise.
  std::string choice;
};

// Errors (kInvalidInput): a group of fewer than 2 ranks, a negative size, concurrent_groups < 1,
// an algorithm that does not exist for the op or the topology (tree is all-reduce only; nvls needs
// intra_node.nvls, a group inside one node and all-reduce, reduce-scatter or all-gather;
// nvls_tree intra_node.nvls and several nodes; all-to-all and send/recv are direct only).
Result<CollectiveCost> CostCollective(const Cluster& cluster, const Group& group, CollectiveOp op,
                                      Bytes size, const CollectiveOptions& options);
// Same, for a group already analyzed (the engine costs many collectives of one group).
Result<CollectiveCost> CostCollective(const Cluster& cluster, const GroupShape& shape,
                                      CollectiveOp op, Bytes size,
                                      const CollectiveOptions& options);

}  // namespace shardsim

#endif  // SHARDSIM_COLLECTIVE_COLLECTIVE_H_
