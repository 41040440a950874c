// The explicit graph of a cluster: vertices are GPUs, NVSwitch planes (one per node), NICs, leaf,
// spine and aggregation ("core") switches; every physical link is two directed links, each with a
// bandwidth (bytes/s per direction), a latency, a LinkKind and a LinkClass.
//
// Parallel physical links between the same two switches are merged into one directed link whose
// bandwidth is their sum (a leaf switch has one link to each spine carrying its share of the
// uplink capacity), so the graph of a 16,384-GPU cluster has ~50K vertices and ~130K links.
// Latencies are split so that a path sums to the configured ones: half of intra_node.latency on
// each side of the NVSwitch, half of inter_node.latency on each NIC-to-leaf link.
//
// Built with Boost.Graph (fabric_graph_impl.h); this header stays free of Boost.
#ifndef SHARDSIM_TOPOLOGY_FABRIC_GRAPH_H_
#define SHARDSIM_TOPOLOGY_FABRIC_GRAPH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/base/ids.h"
#include "sim/config/spec.h"
#include "sim/topology/link_class.h"

namespace shardsim {

struct ClusterLevels;

enum class VertexKind { kGpu, kNvSwitch, kNic, kLeaf, kSpine, kCore };
const char* Name(VertexKind k);

struct FabricVertex {
  VertexKind kind = VertexKind::kGpu;
  int32_t index = 0;  // index among the vertices of its kind
  int32_t tier = 0;   // 0 GPU, 1 NVSwitch / NIC, 2 leaf, 3 spine, 4 core; links go up or down
};

struct FabricLink {
  LinkId id;
  int32_t src = 0;
  int32_t dst = 0;
  LinkClass link_class = LinkClass::kNvlink;
  LinkKind kind = LinkKind::kNvSwitch;
  double bandwidth = 0.0;  // bytes/s, this direction
  double latency = 0.0;    // seconds
  bool up = false;         // towards the higher tier (valley-free routing goes up, then down)
};

struct FabricGraphImpl;

class FabricGraph {
 public:
  static std::unique_ptr<FabricGraph> Build(const TopologySpec& spec, const ClusterLevels& levels);
  ~FabricGraph();
  FabricGraph(const FabricGraph&) = delete;
  FabricGraph& operator=(const FabricGraph&) = delete;

  int32_t num_vertices() const;
  int32_t num_links() const;
  const FabricVertex& vertex(int32_t v) const;
  const FabricLink& link(LinkId id) const;
  // The vertex of a GPU (GPUs come first: vertex == gpu id).
  int32_t GpuVertex(GpuId gpu) const { return gpu.v; }
  // Links leaving `v`, in insertion order.
  std::vector<LinkId> OutLinks(int32_t v) const;
  // How many vertices of each kind, e.g. "16384 gpu, 2048 nvswitch, 16384 nic, 512 leaf, 64 spine".
  std::string Summary() const;

  const FabricGraphImpl& impl() const { return *impl_; }

 private:
  explicit FabricGraph(std::unique_ptr<FabricGraphImpl> impl);
  std::unique_ptr<FabricGraphImpl> impl_;
};

}  // namespace shardsim

#endif  // SHARDSIM_TOPOLOGY_FABRIC_GRAPH_H_
