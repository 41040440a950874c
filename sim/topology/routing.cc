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

// Breadth-first search along up-links only: the ancestors of `start` with their distance, and
// for each ancestor the up-links into it from one level below (its parents towards `start`).
std::map<int32_t, int> UpClosure(const FabricGraphImpl& g, int32_t start,
                                 std::vector<int32_t>* order,
                                 std::map<int32_t, std::vector<int32_t>>* into) {
  std::map<int32_t, int> dist;
  dist[start] = 0;
  order->push_back(start);
  for (size_t i = 0; i < order->size(); ++i) {
    const int32_t v = (*order)[i];
    for (const int32_t l : g.up_links[static_cast<size_t>(v)]) {
      const int32_t w = g.links[static_cast<size_t>(l)].dst;
      auto [it, added] = dist.emplace(w, dist[v] + 1);
      if (added) order->push_back(w);
      if (it->second == dist[v] + 1) (*into)[w].push_back(l);
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
  std::map<int32_t, std::vector<int32_t>> into_a, into_b;
  UpClosure(g, src.v, &order_a, &into_a);
  const std::map<int32_t, int> db = UpClosure(g, dst.v, &order_b, &into_b);
  auto dst_distance = [&](int32_t v) {
    auto it = db.find(v);
    return it == db.end() ? -1 : it->second;
  };

  // remaining[v]: length of the shortest valley-free path from v (still going up) to dst.
  constexpr int kNone = std::numeric_limits<int>::max();
  std::map<int32_t, int> remaining;
  for (auto it = order_a.rbegin(); it != order_a.rend(); ++it) {
    const int32_t v = *it;
    int best = kNone;
    if (dst_distance(v) >= 0 && CanTurn(g, v, dst.v)) best = dst_distance(v);
    for (const int32_t l : g.up_links[static_cast<size_t>(v)]) {
      const int r = remaining.at(g.links[static_cast<size_t>(l)].dst);
      if (r != kNone) best = std::min(best, r + 1);
    }
    remaining[v] = best;
  }
  const int hop_count = remaining.at(src.v);
  if (hop_count == kNone) {
    return Status::Internal("no route from gpu " + std::to_string(src.v) + " to gpu " +
                            std::to_string(dst.v));
  }

  // Up phase in breadth-first order, then down phase by decreasing distance to dst. At each
  // vertex the flow splits evenly over the equal-cost next hops (turning down counts as one).
  FlowAccumulator acc(g);
  std::map<int32_t, Arrival> up, down;
  up[src.v] = Arrival{1.0, 1.0, 0.0};
  for (const int32_t v : order_a) {
    auto at = up.find(v);
    if (at == up.end()) continue;
    const int r = remaining.at(v);
    std::vector<int32_t> next;
    for (const int32_t l : g.up_links[static_cast<size_t>(v)]) {
      const int rw = remaining.at(g.links[static_cast<size_t>(l)].dst);
      if (rw != kNone && rw + 1 == r) next.push_back(l);
    }
    const bool turn = dst_distance(v) == r && CanTurn(g, v, dst.v);
    const double options = static_cast<double>(next.size()) + (turn ? 1.0 : 0.0);
    const double share = at->second.flow / options;
    if (turn) {
      Arrival& d = down[v];
      d.flow += share;
      d.paths += at->second.paths;
      d.latency = std::max(d.latency, at->second.latency);
    }
    if (!next.empty()) {
      Arrival scaled = at->second;
      scaled.flow = share * static_cast<double>(next.size());
      acc.Split(scaled, next, &up);
    }
  }
  for (auto it = order_b.rbegin(); it != order_b.rend(); ++it) {
    const int32_t v = *it;
    auto at = down.find(v);
    if (at == down.end() || v == dst.v) continue;
    std::vector<int32_t> next;
    for (const int32_t l : into_b[v]) next.push_back(g.twin[static_cast<size_t>(l)]);
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
  boost::breadth_first_search(g.graph, static_cast<VertexDesc>(dst.v),
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
