// Classes of links: the unit in which shardsim reasons about network load.
//
// All links of one class are alike by symmetry (every GPU's NVLink port, every node's NICs, every
// leaf domain's uplinks), so a collective is costed per class rather than per link or per flow:
// that keeps the cost of one collective independent of the GPU count. The graph of the cluster
// (fabric_graph.h) labels each directed link with its class; the collective model
// (sim/collective) reports which class is the bottleneck.
#ifndef SHARDSIM_TOPOLOGY_LINK_CLASS_H_
#define SHARDSIM_TOPOLOGY_LINK_CLASS_H_

namespace shardsim {

enum class LinkClass {
  kNvlink,      // a GPU's port into the NVLink/NVSwitch domain of its node (per GPU)
  kPcie,        // GPU to NIC inside a node (never the bottleneck in the class model)
  kNic,         // the NICs of a node, to the leaf (ToR / rail) switches (per node)
  kLeafUplink,  // the uplinks of a leaf domain to the spine layer (per leaf domain)
  kPodUplink,   // the uplinks of a pod to the aggregation layer (per pod; 3-tier fabrics)
};

inline constexpr int kNumLinkClasses = 5;

// Printed in reports and in `bottleneck`: "nvlink (intra-node)", "nic (inter-node)",
// "leaf uplink (spine)", "pod uplink (aggregation)", "pcie (gpu-nic)".
const char* Name(LinkClass c);

}  // namespace shardsim

#endif  // SHARDSIM_TOPOLOGY_LINK_CLASS_H_
