#include "sim/cli/comm_topologies.h"

#include "sim/base/strings.h"

namespace shardsim {
namespace {

// Values of topologies/<name>.yaml (sources and measurements there and in PUBLISHED.md).
TopologySpec Node(std::string name, double nvlink, bool nvls) {
  TopologySpec t;
  t.name = std::move(name);
  t.gpus_per_node = 8;
  t.intra_kind = LinkKind::kNvSwitch;
  t.intra_bandwidth = nvlink;
  t.intra_latency = 1e-6;
  t.intra_efficiency = 0.8;
  t.nvls = nvls;
  t.nvls_efficiency = 0.686;
  t.nvls_latency = 25e-6;
  return t;
}

void Fabric(TopologySpec* t, LinkKind kind, double nic, double efficiency, FabricKind fabric,
            int64_t nodes_per_leaf, double oversubscription) {
  t->has_inter_node = true;
  t->inter_kind = kind;
  t->nics_per_node = 8;
  t->nic_bandwidth = nic;
  t->inter_latency = 5e-6;
  t->inter_efficiency = efficiency;
  t->fabric = fabric;
  t->nodes_per_leaf = nodes_per_leaf;
  t->oversubscription = oversubscription;
}

std::vector<TopologySpec> Builtins() {
  std::vector<TopologySpec> out;
  TopologySpec a100 = Node("dgx-a100", 300e9, false);
  Fabric(&a100, LinkKind::kInfiniBand, 25e9, 0.96, FabricKind::kRailOptimized, 20, 1);
  out.push_back(a100);
  TopologySpec h100 = Node("dgx-h100", 450e9, true);
  Fabric(&h100, LinkKind::kInfiniBand, 50e9, 0.94, FabricKind::kRailOptimized, 32, 1);
  out.push_back(h100);
  TopologySpec one = Node("hgx-h100-1node", 450e9, true);
  one.has_inter_node = false;
  out.push_back(one);
  TopologySpec h200 = h100;
  h200.name = "dgx-h200";
  out.push_back(h200);
  TopologySpec llama = Node("llama3-roce", 450e9, true);
  Fabric(&llama, LinkKind::kRoce, 50e9, 0.94, FabricKind::kClos, 2, 1);
  llama.nodes_per_pod = 384;
  llama.pod_oversubscription = 7;
  llama.max_nodes = 3072;
  out.push_back(llama);
  TopologySpec h800 = Node("h800-deepseek", 200e9, true);
  Fabric(&h800, LinkKind::kInfiniBand, 50e9, 0.94, FabricKind::kRailOptimized, 32, 1);
  out.push_back(h800);
  TopologySpec fat = Node("h100-fat-tree-2to1", 450e9, true);
  Fabric(&fat, LinkKind::kInfiniBand, 50e9, 0.94, FabricKind::kFatTree, 16, 2);
  out.push_back(fat);
  return out;
}

}  // namespace

std::vector<std::string> BuiltinTopologyNames() {
  std::vector<std::string> names;
  for (const TopologySpec& t : Builtins()) names.push_back(t.name);
  return names;
}

Result<TopologySpec> FindTopology(const std::string& name, const std::string& library_dir) {
  (void)library_dir;  // used once topologies are read from files
  for (const TopologySpec& t : Builtins()) {
    if (t.name == name) return t;
  }
  const std::vector<std::string> names = BuiltinTopologyNames();
  if (name.find('/') != std::string::npos || name.find(".yaml") != std::string::npos) {
    return Status::Invalid("--topology " + name +
                           ": reading topology files needs the YAML loader (sim/config), not "
                           "built yet; use one of " + Join(names));
  }
  return Status::Invalid("unknown topology '" + name + "' (known: " + Join(names) + ")" +
                         DidYouMean(name, names));
}

}  // namespace shardsim
