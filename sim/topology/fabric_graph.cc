// Building the explicit graph of a cluster (see fabric_graph.h and cluster.h).
#include "sim/topology/fabric_graph.h"

#include <algorithm>
#include <array>
#include <string>

#include "sim/topology/cluster.h"
#include "sim/topology/fabric_graph_impl.h"

namespace shardsim {

const char* Name(VertexKind k) {
  switch (k) {
    case VertexKind::kGpu:
      return "gpu";
    case VertexKind::kNvSwitch:
      return "nvswitch";
    case VertexKind::kNic:
      return "nic";
    case VertexKind::kLeaf:
      return "leaf";
    case VertexKind::kSpine:
      return "spine";
    case VertexKind::kCore:
      return "core";
  }
  return "?";
}

namespace {

class Builder {
 public:
  explicit Builder(FabricGraphImpl* g) : g_(g) {}

  int32_t AddVertex(VertexKind kind, int32_t index, int32_t tier) {
    const int32_t id = static_cast<int32_t>(g_->vertices.size());
    g_->vertices.push_back(FabricVertex{kind, index, tier});
    g_->up_links.emplace_back();
    boost::add_vertex(BoostVertex{id}, g_->graph);
    return id;
  }

  // One physical link as two directed links; `lower` is the vertex of the lower tier.
  void AddDuplex(int32_t lower, int32_t upper, LinkClass cls, LinkKind kind, double bandwidth,
                 double latency) {
    const int32_t up = AddDirected(lower, upper, cls, kind, bandwidth, latency, true);
    const int32_t down = AddDirected(upper, lower, cls, kind, bandwidth, latency, false);
    g_->twin.push_back(down);
    g_->twin.push_back(up);
    g_->up_links[static_cast<size_t>(lower)].push_back(up);
  }

 private:
  int32_t AddDirected(int32_t src, int32_t dst, LinkClass cls, LinkKind kind, double bandwidth,
                      double latency, bool up) {
    const int32_t id = static_cast<int32_t>(g_->links.size());
    g_->links.push_back(FabricLink{LinkId(id), src, dst, cls, kind, bandwidth, latency, up});
    boost::add_edge(static_cast<BoostGraph::vertex_descriptor>(src),
                    static_cast<BoostGraph::vertex_descriptor>(dst), BoostEdge{id}, g_->graph);
    return id;
  }

  FabricGraphImpl* g_;
};

int32_t I32(int64_t v) { return static_cast<int32_t>(v); }

}  // namespace

std::unique_ptr<FabricGraph> FabricGraph::Build(const TopologySpec& spec, const ClusterLevels& lv) {
  auto impl = std::make_unique<FabricGraphImpl>();
  Builder b(impl.get());
  const int64_t gpn = lv.gpus_per_node;

  // GPUs, then one NVSwitch plane per node, each GPU linked to its node's plane.
  for (int64_t gpu = 0; gpu < lv.gpus; ++gpu) b.AddVertex(VertexKind::kGpu, I32(gpu), 0);
  impl->first_nvswitch = I32(lv.gpus);
  for (int64_t node = 0; node < lv.nodes; ++node) b.AddVertex(VertexKind::kNvSwitch, I32(node), 1);
  for (int64_t gpu = 0; gpu < lv.gpus; ++gpu) {
    b.AddDuplex(I32(gpu), impl->first_nvswitch + I32(gpu / gpn), LinkClass::kNvlink,
                spec.intra_kind, spec.intra_bandwidth, spec.intra_latency / 2);
  }
  impl->first_nic = I32(impl->vertices.size());
  impl->first_leaf = impl->first_nic;
  impl->first_spine = impl->first_nic;
  impl->first_core = impl->first_nic;
  if (lv.nodes <= 1) return std::unique_ptr<FabricGraph>(new FabricGraph(std::move(impl)));

  // NICs: node-major; GPU i of a node reaches NIC i*k/G (k < G: G/k GPUs share a NIC) or NICs
  // [i*k/G, (i+1)*k/G) (k >= G).
  const int64_t k = spec.nics_per_node;
  for (int64_t nic = 0; nic < lv.nodes * k; ++nic) b.AddVertex(VertexKind::kNic, I32(nic), 1);
  for (int64_t gpu = 0; gpu < lv.gpus; ++gpu) {
    const int64_t node = gpu / gpn;
    const int64_t local = gpu % gpn;
    const int64_t first = local * k / gpn;
    const int64_t last = std::max(first + 1, (local + 1) * k / gpn);
    for (int64_t j = first; j < last; ++j) {
      b.AddDuplex(I32(gpu), impl->first_nic + I32(node * k + j), LinkClass::kPcie, LinkKind::kPcie,
                  spec.nic_bandwidth, 0.0);
    }
  }

  // Leaf switches: one per leaf domain, or one per rail (NIC index) for rail-optimized fabrics.
  const bool rails = spec.fabric == FabricKind::kRailOptimized;
  const int64_t leaf_switches_per_domain = rails ? k : 1;
  impl->first_leaf = I32(impl->vertices.size());
  const int64_t num_leaf_switches = lv.leaves * leaf_switches_per_domain;
  for (int64_t s = 0; s < num_leaf_switches; ++s) b.AddVertex(VertexKind::kLeaf, I32(s), 2);
  for (int64_t node = 0; node < lv.nodes; ++node) {
    const int64_t domain = node / lv.nodes_per_leaf;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t leaf = domain * leaf_switches_per_domain + (rails ? j : 0);
      b.AddDuplex(impl->first_nic + I32(node * k + j), impl->first_leaf + I32(leaf),
                  LinkClass::kNic, spec.inter_kind, spec.nic_bandwidth, spec.inter_latency / 2);
    }
  }
  impl->first_spine = I32(impl->vertices.size());
  impl->first_core = impl->first_spine;
  if (num_leaf_switches <= 1) return std::unique_ptr<FabricGraph>(new FabricGraph(std::move(impl)));

  // Spines: `k` per pod (the count only shapes ECMP fan-out; capacities are aggregates). Each leaf
  // switch has one merged link to every spine of its pod carrying (its downlink capacity) /
  // (oversubscription * spines). Downlink capacity is that of a fully populated domain.
  const int64_t spines_per_pod = std::max<int64_t>(1, k);
  const int64_t leaf_down = lv.nodes_per_leaf * (rails ? 1 : k);  // NIC ports under one switch
  const double leaf_up_per_spine = static_cast<double>(leaf_down) * spec.nic_bandwidth /
                                   (spec.oversubscription * static_cast<double>(spines_per_pod));
  const int64_t domains_per_pod = lv.nodes_per_pod / lv.nodes_per_leaf;
  for (int64_t s = 0; s < lv.pods * spines_per_pod; ++s) {
    b.AddVertex(VertexKind::kSpine, I32(s), 3);
  }
  for (int64_t leaf = 0; leaf < num_leaf_switches; ++leaf) {
    const int64_t pod = (leaf / leaf_switches_per_domain) / domains_per_pod;
    for (int64_t s = 0; s < spines_per_pod; ++s) {
      b.AddDuplex(impl->first_leaf + I32(leaf), impl->first_spine + I32(pod * spines_per_pod + s),
                  LinkClass::kLeafUplink, spec.inter_kind, leaf_up_per_spine, 0.0);
    }
  }
  impl->first_core = I32(impl->vertices.size());
  if (lv.pods <= 1) return std::unique_ptr<FabricGraph>(new FabricGraph(std::move(impl)));

  // Aggregation ("core") switches above the pods, `k` of them, each linked to every spine.
  const int64_t cores = std::max<int64_t>(1, k);
  const double spine_down =
      static_cast<double>(domains_per_pod * leaf_switches_per_domain) * leaf_up_per_spine;
  const double spine_up_per_core =
      spine_down / (spec.pod_oversubscription * static_cast<double>(cores));
  for (int64_t c = 0; c < cores; ++c) b.AddVertex(VertexKind::kCore, I32(c), 4);
  for (int64_t s = 0; s < lv.pods * spines_per_pod; ++s) {
    for (int64_t c = 0; c < cores; ++c) {
      b.AddDuplex(impl->first_spine + I32(s), impl->first_core + I32(c), LinkClass::kPodUplink,
                  spec.inter_kind, spine_up_per_core, 0.0);
    }
  }
  return std::unique_ptr<FabricGraph>(new FabricGraph(std::move(impl)));
}

FabricGraph::FabricGraph(std::unique_ptr<FabricGraphImpl> impl) : impl_(std::move(impl)) {}
FabricGraph::~FabricGraph() = default;

int32_t FabricGraph::num_vertices() const { return static_cast<int32_t>(impl_->vertices.size()); }
int32_t FabricGraph::num_links() const { return static_cast<int32_t>(impl_->links.size()); }
const FabricVertex& FabricGraph::vertex(int32_t v) const {
  return impl_->vertices[static_cast<size_t>(v)];
}
const FabricLink& FabricGraph::link(LinkId id) const {
  return impl_->links[static_cast<size_t>(id.v)];
}

std::vector<LinkId> FabricGraph::OutLinks(int32_t v) const {
  std::vector<LinkId> out;
  const auto vd = static_cast<BoostGraph::vertex_descriptor>(v);
  for (auto [it, end] = boost::out_edges(vd, impl_->graph); it != end; ++it) {
    out.push_back(LinkId(impl_->graph[*it].link));
  }
  return out;
}

std::string FabricGraph::Summary() const {
  std::array<int64_t, 6> counts{};
  for (const FabricVertex& v : impl_->vertices) ++counts[static_cast<size_t>(v.kind)];
  std::string s;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    if (!s.empty()) s += ", ";
    s += std::to_string(counts[i]) + " " + Name(static_cast<VertexKind>(i));
  }
  s += "; " + std::to_string(impl_->links.size()) + " directed links";
  return s;
}

}  // namespace shardsim
