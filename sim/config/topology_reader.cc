// Reading a topology document (topologies/<name>.yaml or inline).
#include <filesystem>
#include <utility>
#include <vector>

#include "sim/config/readers.h"
#include "sim/config/value_reader.h"

namespace shardsim {
namespace {

const std::vector<LinkKind> kLinks = {
    LinkKind::kNvSwitch, LinkKind::kNvLink,   LinkKind::kPcie,          LinkKind::kInfiniBand,
    LinkKind::kRoce,     LinkKind::kEthernet, LinkKind::kInfinityFabric};
const std::vector<FabricKind> kFabrics = {FabricKind::kNone, FabricKind::kFatTree,
                                          FabricKind::kRailOptimized, FabricKind::kClos};

}  // namespace

Status ReadTopology(const ResolvedDoc& doc, const KeyOrigin& where, const std::string& msg_prefix,
                    TopologySpec* out) {
  DiagnosticSink sink;
  TopologySpec t;
  t.origins.set_file(doc.file);
  MapReader r(&doc.tree, where, msg_prefix, "", &sink, &t.origins);
  if (!r.String("name", &t.name)) {
    t.name = doc.is_inline ? "inline" : std::filesystem::path(doc.file).stem().string();
  }
  r.PositiveInt("gpus_per_node", &t.gpus_per_node, Need::kRequired);

  MapReader intra = r.Sub("intra_node", Need::kRequired);
  intra.Enum("kind", &t.intra_kind, kLinks);
  intra.Quantity("bandwidth", Dimension::kBandwidth, &t.intra_bandwidth, Need::kRequired);
  intra.Quantity("latency", Dimension::kTime, &t.intra_latency, Need::kOptional, true);
  intra.Fraction("efficiency", &t.intra_efficiency);
  intra.Bool("nvls", &t.nvls);
  intra.Fraction("nvls_efficiency", &t.nvls_efficiency);
  intra.Quantity("nvls_latency", Dimension::kTime, &t.nvls_latency, Need::kOptional, true);
  intra.NonNegativeInt("links", &t.intra_links);
  MapReader fits = intra.Sub("collectives");
  if (fits.present()) {
    for (const auto& [key, fit] :
         {std::pair<const char*, CollectiveFit*>{"all_reduce", &t.fit_all_reduce},
          {"all_gather", &t.fit_all_gather},
          {"reduce_scatter", &t.fit_reduce_scatter},
          {"all_to_all", &t.fit_all_to_all}}) {
      MapReader f = fits.Sub(key);
      if (!f.present()) continue;
      f.Fraction("efficiency", &fit->efficiency, Need::kRequired);
      f.Quantity("latency", Dimension::kTime, &fit->latency, Need::kRequired, true);
      f.Finish();
    }
    fits.Finish();
  }
  intra.Finish();

  MapReader inter = r.Sub("inter_node");
  t.has_inter_node = inter.present();
  if (inter.present()) {
    inter.Enum("kind", &t.inter_kind, kLinks);
    inter.PositiveInt("nics_per_node", &t.nics_per_node);
    inter.Quantity("nic_bandwidth", Dimension::kBandwidth, &t.nic_bandwidth, Need::kRequired);
    inter.Quantity("latency", Dimension::kTime, &t.inter_latency, Need::kOptional, true);
    inter.Fraction("efficiency", &t.inter_efficiency);
    inter.Enum("fabric", &t.fabric, kFabrics);
    for (const auto& [key, field] :
         {std::pair<const char*, double*>{"oversubscription", &t.oversubscription},
          {"pod_oversubscription", &t.pod_oversubscription}}) {
      double over = 0.0;
      if (!inter.Number(key, &over)) continue;
      if (over >= 1.0) {
        *field = over;
      } else {
        const ConfigNode& n = *inter.node()->Find(key);
        inter.Error(n, key, "must be at least 1 (1 = non-blocking), got " + n.text());
      }
    }
    inter.PositiveInt("nodes_per_leaf", &t.nodes_per_leaf);
    inter.NonNegativeInt("nodes_per_pod", &t.nodes_per_pod);
    inter.NonNegativeInt("max_nodes", &t.max_nodes);
    inter.Finish();
  }
  ReadStorage(r, &t.storage);
  r.String("accelerator_family", &t.accelerator_family);
  r.AcceptFreeText(&t.source);
  r.Finish();
  if (!sink.empty()) return sink.ToStatus();
  *out = std::move(t);
  return Status::Ok();
}

}  // namespace shardsim
