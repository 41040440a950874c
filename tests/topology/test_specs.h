// TopologySpecs built in code for the tests, mirroring topologies/*.yaml (a test checks that the
// files load to the same values once the YAML loader is available), plus small synthetic ones.
#ifndef SHARDSIM_TESTS_TOPOLOGY_TEST_SPECS_H_
#define SHARDSIM_TESTS_TOPOLOGY_TEST_SPECS_H_

#include "sim/base/units.h"
#include "sim/config/spec.h"

namespace shardsim::testing {

inline TopologySpec DgxA100() {
  TopologySpec t;
  t.name = "dgx-a100";
  t.gpus_per_node = 8;
  t.intra_kind = LinkKind::kNvSwitch;
  t.intra_bandwidth = 300e9;
  t.intra_latency = 1e-6;
  t.intra_efficiency = 0.8;
  t.has_inter_node = true;
  t.inter_kind = LinkKind::kInfiniBand;
  t.nics_per_node = 8;
  t.nic_bandwidth = 200e9 / 8;
  t.inter_latency = 5e-6;
  t.inter_efficiency = 0.96;
  t.fabric = FabricKind::kRailOptimized;
  t.nodes_per_leaf = 20;
  t.oversubscription = 1;
  return t;
}

inline TopologySpec DgxH100() {
  TopologySpec t;
  t.name = "dgx-h100";
  t.gpus_per_node = 8;
  t.intra_kind = LinkKind::kNvSwitch;
  t.intra_bandwidth = 450e9;
  t.intra_latency = 1e-6;
  t.intra_efficiency = 0.8;
  t.nvls = true;
  t.nvls_efficiency = 0.686;
  t.nvls_latency = 25e-6;
  t.has_inter_node = true;
  t.inter_kind = LinkKind::kInfiniBand;
  t.nics_per_node = 8;
  t.nic_bandwidth = 400e9 / 8;
  t.inter_latency = 5e-6;
  t.inter_efficiency = 0.94;
  t.fabric = FabricKind::kRailOptimized;
  t.nodes_per_leaf = 32;
  t.oversubscription = 1;
  return t;
}

inline TopologySpec HgxH100OneNode() {
  TopologySpec t = DgxH100();
  t.name = "hgx-h100-1node";
  t.has_inter_node = false;
  return t;
}

inline TopologySpec DgxH200() {
  TopologySpec t = DgxH100();
  t.name = "dgx-h200";
  return t;
}

inline TopologySpec Llama3Roce() {
  TopologySpec t = DgxH100();
  t.name = "llama3-roce";
  t.inter_kind = LinkKind::kRoce;
  t.fabric = FabricKind::kClos;
  t.nodes_per_leaf = 2;
  t.nodes_per_pod = 384;
  t.oversubscription = 1;
  t.pod_oversubscription = 7;
  t.max_nodes = 3072;
  return t;
}

inline TopologySpec H800DeepSeek() {
  TopologySpec t = DgxH100();
  t.name = "h800-deepseek";
  t.intra_bandwidth = 200e9;
  t.nic_bandwidth = 50e9;
  return t;
}

inline TopologySpec H100FatTree2To1() {
  TopologySpec t = DgxH100();
  t.name = "h100-fat-tree-2to1";
  t.fabric = FabricKind::kFatTree;
  t.nodes_per_leaf = 16;
  t.oversubscription = 2;
  return t;
}

// Booked systems (topologies/dgx-b200.yaml ... mi355x-8gpu.yaml).
inline TopologySpec DgxB200() {
  TopologySpec t = DgxH100();
  t.name = "dgx-b200";
  t.intra_bandwidth = 900e9;
  t.intra_efficiency = 0.673;
  t.fit_all_reduce = {0.7424, 27.75e-6};
  t.fit_all_gather = {0.6735, 32.288e-6};
  t.fit_reduce_scatter = {0.6731, 33.593e-6};
  t.fit_all_to_all = {0.5968, 7.3039e-6};
  return t;
}

inline TopologySpec DgxB300() {
  TopologySpec t = DgxH100();
  t.name = "dgx-b300";
  t.intra_bandwidth = 900e9;
  t.intra_efficiency = 0.673;
  t.nic_bandwidth = 800e9 / 8;
  return t;
}

inline TopologySpec Nvl72(const char* name, double nic) {
  TopologySpec t = DgxH100();
  t.name = name;
  t.gpus_per_node = 72;
  t.intra_bandwidth = 900e9;
  t.intra_efficiency = 0.673;
  t.nics_per_node = 72;
  t.nic_bandwidth = nic;
  t.nodes_per_leaf = 8;
  return t;
}

inline TopologySpec AmdMesh(const char* name, double intra) {
  TopologySpec t = DgxH100();
  t.name = name;
  t.intra_kind = LinkKind::kInfinityFabric;
  t.intra_bandwidth = intra;
  t.intra_links = 7;
  t.nvls = false;
  t.inter_kind = LinkKind::kRoce;
  return t;
}

// A small uniform test fabric: `gpn` GPUs per node at `intra` bytes/s, `nics` NICs of `nic`
// bytes/s, efficiencies 1, latencies 1 us / 5 us, fat tree with `per_leaf` nodes per leaf.
inline TopologySpec Uniform(int64_t gpn, double intra, int64_t nics, double nic,
                            int64_t per_leaf = 4, double oversubscription = 1.0) {
  TopologySpec t;
  t.name = "uniform";
  t.gpus_per_node = gpn;
  t.intra_bandwidth = intra;
  t.intra_latency = 1e-6;
  t.intra_efficiency = 1.0;
  t.nics_per_node = nics;
  t.nic_bandwidth = nic;
  t.inter_latency = 5e-6;
  t.inter_efficiency = 1.0;
  t.fabric = FabricKind::kFatTree;
  t.nodes_per_leaf = per_leaf;
  t.oversubscription = oversubscription;
  return t;
}

}  // namespace shardsim::testing

#endif  // SHARDSIM_TESTS_TOPOLOGY_TEST_SPECS_H_
