// A cluster: `gpus` GPUs laid out on the topology described by a TopologySpec.
//
// GPUs are numbered node-major (GPU g sits on node g / gpus_per_node, local index
// g % gpus_per_node); nodes are grouped into leaf domains (nodes_per_leaf nodes under one leaf
// switch, or one rail group of leaf switches for a rail-optimized fabric) and leaf domains into
// pods (nodes_per_pod nodes; 3-tier Clos fabrics such as Meta's Llama 3 RoCE cluster).
//
// A Cluster answers two kinds of questions:
//  - the hierarchy and the capacity of each link class (what the collective model needs; O(1),
//    independent of the GPU count), and
//  - the explicit graph of GPUs, NVSwitches, NICs, leaf, spine and aggregation switches and their
//    directed links (FabricGraph, built with Boost.Graph on first use and shared by copies) for
//    routing and inspection.
// Builders (per TopologySpec::fabric): a single NVSwitch node (no inter_node block), fat_tree
// (one leaf switch per leaf domain, spine over-subscription), rail_optimized (DGX SuperPOD: NIC i
// of every node of a scalable unit on rail leaf i), clos (ToR per leaf domain, non-blocking pods,
// over-subscribed aggregation above the pods).
#ifndef SHARDSIM_TOPOLOGY_CLUSTER_H_
#define SHARDSIM_TOPOLOGY_CLUSTER_H_

#include <cstdint>
#include <memory>

#include "sim/base/ids.h"
#include "sim/base/status.h"
#include "sim/config/spec.h"
#include "sim/topology/link_class.h"

namespace shardsim {

class FabricGraph;
struct GraphHolder;

// The shape of the cluster's hierarchy. All counts are of what this cluster uses, except
// nodes_per_leaf and nodes_per_pod, which are the size of one domain (the switches' radix), so
// that uplink capacities do not depend on how much of a domain is populated.
struct ClusterLevels {
  int64_t gpus = 0;
  int64_t gpus_per_node = 0;
  int64_t nodes = 0;
  int64_t nodes_per_leaf = 0;  // nodes of one leaf domain
  int64_t leaves = 0;          // leaf domains used
  int64_t nodes_per_pod = 0;   // nodes of one pod (a multiple of nodes_per_leaf)
  int64_t pods = 0;            // pods used
};

class Cluster {
 public:
  // Checks the spec (positive bandwidths, efficiencies in (0, 1], over-subscription >= 1, ...) and
  // that `gpus` fits it: a whole number of nodes (or part of one node), within max_nodes, and a
  // single node when the topology has no inter-node network. Errors point at the spec's keys.
  static Result<Cluster> Build(const TopologySpec& spec, int64_t gpus);

  const TopologySpec& spec() const { return spec_; }
  const ClusterLevels& levels() const { return levels_; }
  int64_t num_gpus() const { return levels_.gpus; }
  int64_t gpus_per_node() const { return levels_.gpus_per_node; }
  int64_t num_nodes() const { return levels_.nodes; }

  int64_t NodeOf(GpuId gpu) const { return gpu.v / levels_.gpus_per_node; }
  int64_t LocalIndexOf(GpuId gpu) const { return gpu.v % levels_.gpus_per_node; }
  int64_t LeafOf(int64_t node) const { return node / levels_.nodes_per_leaf; }
  int64_t PodOf(int64_t node) const { return node / levels_.nodes_per_pod; }
  bool Contains(GpuId gpu) const { return gpu.v >= 0 && gpu.v < levels_.gpus; }

  // Nominal capacity of one unit of a class, bytes/s per direction: one GPU's NVLink port, one
  // NIC (kNic: per NIC, a node has nics_per_node of them), one leaf domain's uplinks
  // (nodes_per_leaf * nics_per_node * nic_bandwidth / oversubscription), one pod's uplinks
  // (that, times the leaf domains of a pod, / pod_oversubscription). kPcie: the NIC bandwidth.
  double NominalBandwidth(LinkClass c) const;
  // Fraction of the nominal capacity that NCCL reaches on this class (intra_node.efficiency for
  // NVLink, inter_node.efficiency for NICs and switch uplinks).
  double Efficiency(LinkClass c) const;
  // Latency of one intra-node / inter-node hop, seconds.
  double IntraLatency() const { return spec_.intra_latency; }
  double InterLatency() const { return spec_.inter_latency; }

  // The explicit graph (built on first call, thread-safe, shared by copies of this Cluster).
  const FabricGraph& graph() const;

 private:
  Cluster(TopologySpec spec, ClusterLevels levels);

  TopologySpec spec_;
  ClusterLevels levels_;
  std::shared_ptr<GraphHolder> graph_;
};

}  // namespace shardsim

#endif  // SHARDSIM_TOPOLOGY_CLUSTER_H_
