#include "sim/topology/cluster.h"

#include <mutex>
#include <string>
#include <utility>

#include "sim/base/units.h"
#include "sim/topology/fabric_graph.h"

namespace shardsim {

const char* Name(LinkClass c) {
  switch (c) {
    case LinkClass::kNvlink:
      return "nvlink (intra-node)";
    case LinkClass::kPcie:
      return "pcie (gpu-nic)";
    case LinkClass::kNic:
      return "nic (inter-node)";
    case LinkClass::kLeafUplink:
      return "leaf uplink (spine)";
    case LinkClass::kPodUplink:
      return "pod uplink (aggregation)";
  }
  return "?";
}

struct GraphHolder {
  std::once_flag once;
  std::unique_ptr<FabricGraph> graph;
};

namespace {

// Collects the problems of a spec, each located at its key when the spec came from a file.
class SpecChecker {
 public:
  explicit SpecChecker(const TopologySpec& spec) : spec_(spec) {}

  void Fail(const std::string& key, const std::string& message) {
    const KeyOrigin o = spec_.origins.Get(key);
    sink_.Add(o.loc, "topology '" + spec_.name + "': " + key + " " + message, o.source_line);
  }
  void Positive(const std::string& key, double v, const char* example) {
    if (!(v > 0.0)) {
      Fail(key, "must be positive, got " + FormatSig(v) + "; expected e.g. \"" + example + "\"");
    }
  }
  void Fraction(const std::string& key, double v) {
    if (!(v > 0.0 && v <= 1.0)) Fail(key, "must be in (0, 1], got " + FormatSig(v));
  }
  void AtLeastOne(const std::string& key, double v) {
    if (!(v >= 1.0)) Fail(key, "must be at least 1 (1 = non-blocking), got " + FormatSig(v));
  }
  Status ToStatus() const { return sink_.ToStatus(); }

 private:
  const TopologySpec& spec_;
  DiagnosticSink sink_;
};

Status CheckSpec(const TopologySpec& s) {
  SpecChecker c(s);
  if (s.gpus_per_node < 1) c.Fail("gpus_per_node", "must be at least 1");
  c.Positive("intra_node.bandwidth", s.intra_bandwidth, "450 GB/s");
  if (s.intra_latency < 0.0) c.Fail("intra_node.latency", "must not be negative");
  c.Fraction("intra_node.efficiency", s.intra_efficiency);
  if (s.intra_links < 0 || (s.intra_links > 0 && s.intra_links != s.gpus_per_node - 1)) {
    c.Fail("intra_node.links", "must be gpus_per_node - 1 (" + std::to_string(s.gpus_per_node - 1) +
                                   ": every GPU linked to every other, no switch), got " +
                                   std::to_string(s.intra_links) + "; leave it out for a switch");
  }
  if (s.intra_links > 0 && s.nvls) {
    c.Fail("intra_node.nvls",
           "needs an NVSwitch; a mesh (intra_node.links) has no switch to reduce in");
  }
  if (s.nvls) {
    c.Fraction("intra_node.nvls_efficiency", s.nvls_efficiency);
    if (s.nvls_latency < 0.0) c.Fail("intra_node.nvls_latency", "must not be negative");
  }
  if (s.has_inter_node) {
    if (s.nics_per_node < 1) c.Fail("inter_node.nics_per_node", "must be at least 1");
    c.Positive("inter_node.nic_bandwidth", s.nic_bandwidth, "50 GB/s");
    if (s.inter_latency < 0.0) c.Fail("inter_node.latency", "must not be negative");
    c.Fraction("inter_node.efficiency", s.inter_efficiency);
    c.AtLeastOne("inter_node.oversubscription", s.oversubscription);
    c.AtLeastOne("inter_node.pod_oversubscription", s.pod_oversubscription);
    if (s.nodes_per_leaf < 1) c.Fail("inter_node.nodes_per_leaf", "must be at least 1");
    if (s.nodes_per_pod < 0 ||
        (s.nodes_per_pod > 0 && s.nodes_per_leaf > 0 && s.nodes_per_pod % s.nodes_per_leaf != 0)) {
      c.Fail("inter_node.nodes_per_pod", "must be a multiple of nodes_per_leaf (" +
                                             std::to_string(s.nodes_per_leaf) + "), got " +
                                             std::to_string(s.nodes_per_pod));
    }
    if (s.max_nodes < 0) c.Fail("inter_node.max_nodes", "must not be negative");
  }
  return c.ToStatus();
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Cluster::Cluster(TopologySpec spec, ClusterLevels levels)
    : spec_(std::move(spec)), levels_(levels), graph_(std::make_shared<GraphHolder>()) {}

Result<Cluster> Cluster::Build(const TopologySpec& spec, int64_t gpus) {
  SHARDSIM_RETURN_IF_ERROR(CheckSpec(spec));
  const std::string problem = spec.GpusProblem(gpus);
  if (!problem.empty()) return Status::Invalid(problem);
  const int64_t gpn = spec.gpus_per_node;
  const int64_t nodes = CeilDiv(gpus, gpn);
  ClusterLevels lv;
  lv.gpus = gpus;
  lv.gpus_per_node = gpn;
  lv.nodes = nodes;
  const bool one_switch = !spec.has_inter_node || spec.fabric == FabricKind::kNone;
  lv.nodes_per_leaf = one_switch ? nodes : spec.nodes_per_leaf;
  lv.leaves = CeilDiv(nodes, lv.nodes_per_leaf);
  lv.nodes_per_pod =
      (one_switch || spec.nodes_per_pod == 0) ? lv.leaves * lv.nodes_per_leaf : spec.nodes_per_pod;
  lv.pods = CeilDiv(nodes, lv.nodes_per_pod);
  return Cluster(spec, lv);
}

double Cluster::NominalBandwidth(LinkClass c) const {
  const double k = static_cast<double>(spec_.nics_per_node);
  switch (c) {
    case LinkClass::kNvlink:
      return spec_.intra_bandwidth;
    case LinkClass::kPcie:
    case LinkClass::kNic:
      return spec_.nic_bandwidth;
    case LinkClass::kLeafUplink:
      return static_cast<double>(levels_.nodes_per_leaf) * k * spec_.nic_bandwidth /
             spec_.oversubscription;
    case LinkClass::kPodUplink:
      return static_cast<double>(levels_.nodes_per_pod) * k * spec_.nic_bandwidth /
             (spec_.oversubscription * spec_.pod_oversubscription);
  }
  return 0.0;
}

double Cluster::Efficiency(LinkClass c) const {
  return c == LinkClass::kNvlink ? spec_.intra_efficiency : spec_.inter_efficiency;
}

const FabricGraph& Cluster::graph() const {
  GraphHolder& h = *graph_;
  std::call_once(h.once, [&] { h.graph = FabricGraph::Build(spec_, levels_); });
  return *h.graph;
}

}  // namespace shardsim
