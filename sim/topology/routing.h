// Routing over the graph of a cluster: shortest paths with ECMP spreading.
//
// RouteBetween follows NCCL's paths without PXN: valley-free shortest paths (up through the
// tiers, then down: GPU -> NVSwitch -> GPU inside a node; GPU -> NIC -> leaf [-> spine [-> core ->
// spine]] -> leaf -> NIC -> GPU across nodes), and spreads a flow evenly over the equal-cost next
// hops at every switch (ECMP as switches hash flows), so each link of the route carries a
// fraction of the flow. It only visits the ancestors of the two endpoints, so its cost does not
// grow with the size of the cluster. ShortestPathRoute is the plain reference: breadth-first
// search over the whole graph (Boost.Graph), every shortest path, same per-hop ECMP split; the two
// agree on fat trees with a NIC per GPU (tests/topology/routing_test.cc). They differ on
// rail-optimized fabrics, where the plain search also forwards through a peer GPU on the
// destination's rail (what NCCL does only with PXN enabled), and when GPUs share a NIC, where it
// also loops through the NIC (RouteBetween turns only at switches: a NIC does not forward).
#ifndef SHARDSIM_TOPOLOGY_ROUTING_H_
#define SHARDSIM_TOPOLOGY_ROUTING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/ids.h"
#include "sim/base/status.h"
#include "sim/topology/link_class.h"

namespace shardsim {

class Cluster;

struct RouteHop {
  LinkId link;
  double fraction = 0.0;  // share of the flow on this link (1 on a link every path takes)
};

struct Route {
  GpuId src;
  GpuId dst;
  std::vector<RouteHop> hops;  // every link carrying part of the flow, by increasing LinkId
  int hop_count = 0;           // links on each shortest path
  double paths = 0;            // number of equal-cost paths
  double latency = 0.0;        // seconds, the largest sum of link latencies over the paths
  // The rate one flow can reach alone: min over its links of bandwidth / fraction (nominal).
  double bandwidth = 0.0;
  LinkClass bottleneck = LinkClass::kNvlink;  // class of the link that sets `bandwidth`

  std::string ToString() const;  // "gpu 0 -> gpu 9: 6 hops, 8 paths, 5.0 us, 50 GB/s (nic ...)"
};

// Valley-free ECMP route (see above). Errors: a GPU outside the cluster, or no route.
Result<Route> RouteBetween(const Cluster& cluster, GpuId src, GpuId dst);

// Reference router: every shortest path of the whole graph, by breadth-first search; O(V + E).
Result<Route> ShortestPathRoute(const Cluster& cluster, GpuId src, GpuId dst);

}  // namespace shardsim

#endif  // SHARDSIM_TOPOLOGY_ROUTING_H_
