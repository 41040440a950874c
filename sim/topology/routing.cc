#include "sim/topology/routing.h"

#include <algorithm>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "sim/base/units.h"
#include "sim/topology/cluster.h"
#include "sim/topology/fabric_graph_impl.h"

namespace shardsim {
namespace {

using VertexDesc = BoostGraph::vertex_descriptor;

// Per-vertex state of a flow being pushed through a DAG of shortest paths.
struct Arrival {
  double flow = 0.0;     // fraction of the flow reaching the vertex
  double paths = 0.0;    // shortest paths reaching it
  double latency = 0.0;  // largest latency of those paths
};

// Accumulates the links a flow uses.
class FlowAccumulator {
 public:
  explicit FlowAccumulator(const FabricGraphImpl& g) : g_(g) {}

  // Sends `from`'s flow split evenly over `links`; returns nothing, updates `next`.
  void Split(const Arrival& from, const std::vector<int32_t>& links,
             std::map<int32_t, Arrival>* next) {
    const double share = from.flow / static_cast<double>(links.size());
    for (int32_t l : links) {
      const FabricLink& link = g_.links[static_cast<size_t>(l)];
      fraction_[l] += share;
      Arrival& a = (*next)[link.dst];
      a.flow += share;
      a.paths += from.paths;
      a.latency = std::max(a.latency, from.latency + link.latency);
    }
  }

  Route Finish(GpuId src, GpuId dst, int hop_count, const Arrival& at_dst) const {
    Route r;
    r.src = src;
    r.dst = dst;
    r.hop_count = hop_count;
    r.paths = at_dst.paths;
    r.latency = at_dst.latency;
    r.bandwidth = std::numeric_limits<double>::infinity();
    for (const auto& [l, f] : fraction_) {
      r.hops.push_back(RouteHop{LinkId(l), f});
      const FabricLink& link = g_.links[static_cast<size_t>(l)];
      const double rate = link.bandwidth / f;
      if (rate < r.bandwidth) {
        r.bandwidth = rate;
        r.bottleneck = link.link_class;
      }
    }
    if (r.hops.empty()) r.bandwidth = 0.0;
    return r;
  }

 private:
  const FabricGraphImpl& g_;
  std::map<int32_t, double> fraction_;  // ordered: deterministic output
};

// Breadth-first search along up-links only: the ancestors of `start` with their distance.
std::map<int32_t, int> UpClosure(const FabricGraphImpl& g, int32_t start,
                                 std::vector<int32_t>* order) {
  std::map<int32_t, int> dist;
  dist[start] = 0;
  order->push_back(start);
  for (size_t i = 0; i < order->size(); ++i) {
    const int32_t v = (*order)[i];
    for (auto [it, end] = boost::out_edges(static_cast<VertexDesc>(v), g.graph); it != end; ++it) {
      const FabricLink& link = g.links[static_cast<size_t>(g.graph[*it].link)];
      if (!link.up || dist.count(link.dst) != 0) continue;
      dist[link.dst] = dist[v] + 1;
      order->push_back(link.dst);
    }
  }
  return dist;
}

// A path may turn from going up to going down only at a switch (or at dst itself): a NIC does not
// forward from one GPU to another over PCIe.
bool CanTurn(const FabricGraphImpl& g, int32_t v, int32_t dst) {
  const VertexKind k = g.vertices[static_cast<size_t>(v)].kind;
  return v == dst || (k != VertexKind::kGpu && k != VertexKind::kNic);
}

Status CheckEndpoints(const Cluster& cluster, GpuId src, GpuId dst) {
  for (GpuId g : {src, dst}) {
    if (!cluster.Contains(g)) {
      return Status::Invalid("gpu " + std::to_string(g.v) + " is not in the cluster (0.." +
                             std::to_string(cluster.num_gpus() - 1) + ")");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string Route::ToString() const {
  return "gpu " + std::to_string(src.v) + " -> gpu " + std::to_string(dst.v) + ": " +
         std::to_string(hop_count) + " hops, " +
         std::to_string(static_cast<int64_t>(std::llround(paths))) + " paths, " +
         FormatSeconds(Seconds(latency)) + ", " + FormatRate(bandwidth, "B/s") + " (" +
         Name(bottleneck) + ")";
}

Result<Route> RouteBetween(const Cluster& cluster, GpuId src, GpuId dst) {
  SHARDSIM_RETURN_IF_ERROR(CheckEndpoints(cluster, src, dst));
  const FabricGraphImpl& g = cluster.graph().impl();
  std::vector<int32_t> order_a, order_b;
  const std::map<int32_t, int> da = UpClosure(g, src.v, &order_a);
  const std::map<int32_t, int> db = UpClosure(g, dst.v, &order_b);

  // remaining[v]: length of the shortest valley-free path from v (still going up) to dst.
  constexpr int kNone = std::numeric_limits<int>::max();
  std::map<int32_t, int> remaining;
  for (auto it = order_a.rbegin(); it != order_a.rend(); ++it) {
    const int32_t v = *it;
    int best = kNone;
    if (auto b = db.find(v); b != db.end() && CanTurn(g, v, dst.v)) best = b->second;
    for (auto [e, end] = boost::out_edges(static_cast<VertexDesc>(v), g.graph); e != end; ++e) {
      const FabricLink& link = g.links[static_cast<size_t>(g.graph[*e].link)];
      if (!link.up) continue;
      auto w = remaining.find(link.dst);
      if (w != remaining.end() && w->second != kNone) best = std::min(best, w->second + 1);
    }
    remaining[v] = best;
  }
  const int hop_count = remaining[src.v];
  if (hop_count == kNone) {
    return Status::Internal("no route from gpu " + std::to_string(src.v) + " to gpu " +
                            std::to_string(dst.v));
  }

  // Up phase in breadth-first order, then down phase by decreasing distance to dst.
  FlowAccumulator acc(g);
  std::map<int32_t, Arrival> up, down;
  up[src.v] = Arrival{1.0, 1.0, 0.0};
  for (const int32_t v : order_a) {
    auto at = up.find(v);
    if (at == up.end()) continue;
    const int r = remaining[v];
    std::vector<int32_t> next;
    for (auto [e, end] = boost::out_edges(static_cast<VertexDesc>(v), g.graph); e != end; ++e) {
      const FabricLink& link = g.links[static_cast<size_t>(g.graph[*e].link)];
      if (link.up && remaining.count(link.dst) != 0 && remaining[link.dst] != kNone &&
          remaining[link.dst] + 1 == r) {
        next.push_back(g.graph[*e].link);
      }
    }
    const bool turn = db.count(v) != 0 && db.at(v) == r && CanTurn(g, v, dst.v);
    const double options = static_cast<double>(next.size()) + (turn ? 1.0 : 0.0);
    Arrival share = at->second;
    share.flow /= options;
    if (turn) {
      Arrival& d = down[v];
      d.flow += share.flow;
      d.paths += share.paths;
      d.latency = std::max(d.latency, share.latency);
    }
    if (!next.empty()) {
      Arrival scaled = at->second;
      scaled.flow = share.flow * static_cast<double>(next.size());
      acc.Split(scaled, next, &up);
    }
  }
  for (auto it = order_b.rbegin(); it != order_b.rend(); ++it) {
    const int32_t v = *it;
    auto at = down.find(v);
    if (at == down.end() || v == dst.v) continue;
    std::vector<int32_t> next;
    for (auto [e, end] = boost::out_edges(static_cast<VertexDesc>(v), g.graph); e != end; ++e) {
      const FabricLink& link = g.links[static_cast<size_t>(g.graph[*e].link)];
      auto u = db.find(link.dst);
      if (!link.up && u != db.end() && u->second + 1 == db.at(v)) next.push_back(g.graph[*e].link);
    }
    acc.Split(at->second, next, &down);
  }
  return acc.Finish(src, dst, hop_count, down[dst.v]);
}

Result<Route> ShortestPathRoute(const Cluster& cluster, GpuId src, GpuId dst) {
  SHARDSIM_RETURN_IF_ERROR(CheckEndpoints(cluster, src, dst));
  const FabricGraphImpl& g = cluster.graph().impl();
  // Every link has its reverse, so hops from v to dst equal hops from dst to v.
  std::vector<int> dist(g.vertices.size(), -1);
  dist[static_cast<size_t>(dst.v)] = 0;
  boost::breadth_first_search(
      g.graph, static_cast<VertexDesc>(dst.v),
      boost::visitor(boost::make_bfs_visitor(
          boost::record_distances(dist.data(), boost::on_tree_edge()))));
  const int hop_count = dist[static_cast<size_t>(src.v)];
  if (hop_count < 0) {
    return Status::Internal("no route from gpu " + std::to_string(src.v) + " to gpu " +
                            std::to_string(dst.v));
  }
  FlowAccumulator acc(g);
  std::map<int32_t, Arrival> layer;
  layer[src.v] = Arrival{1.0, 1.0, 0.0};
  Arrival at_dst = src == dst ? layer[src.v] : Arrival{};
  for (int d = hop_count; d > 0; --d) {
    std::map<int32_t, Arrival> next_layer;
    for (const auto& [v, arrival] : layer) {
      std::vector<int32_t> next;
      for (auto [e, end] = boost::out_edges(static_cast<VertexDesc>(v), g.graph); e != end; ++e) {
        const int32_t l = g.graph[*e].link;
        if (dist[static_cast<size_t>(g.links[static_cast<size_t>(l)].dst)] == d - 1) {
          next.push_back(l);
        }
      }
      acc.Split(arrival, next, &next_layer);
    }
    layer = std::move(next_layer);
    if (d == 1) at_dst = layer[dst.v];
  }
  return acc.Finish(src, dst, hop_count, at_dst);
}

}  // namespace shardsim
