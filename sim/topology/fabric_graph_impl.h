// Internals of FabricGraph shared by the .cc files of sim/topology (the only module that includes
// Boost.Graph). Not for use outside sim/topology.
#ifndef SHARDSIM_TOPOLOGY_FABRIC_GRAPH_IMPL_H_
#define SHARDSIM_TOPOLOGY_FABRIC_GRAPH_IMPL_H_

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <vector>

#include "sim/topology/fabric_graph.h"

namespace shardsim {

// Vertex and edge bundles carry indexes into FabricGraphImpl's vectors.
struct BoostVertex {
  int32_t id = 0;
};
struct BoostEdge {
  int32_t link = 0;  // LinkId value
};

using BoostGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, BoostVertex, BoostEdge>;

struct FabricGraphImpl {
  BoostGraph graph;
  std::vector<FabricVertex> vertices;
  std::vector<FabricLink> links;
  // Per vertex, its links going up (routing climbs these without scanning a switch's downlinks),
  // and per link, the id of the link in the other direction.
  std::vector<std::vector<int32_t>> up_links;
  std::vector<int32_t> twin;
  // First vertex of each kind (GPUs start at 0).
  int32_t first_nvswitch = 0;
  int32_t first_nic = 0;
  int32_t first_leaf = 0;
  int32_t first_spine = 0;
  int32_t first_core = 0;
};

}  // namespace shardsim

#endif  // SHARDSIM_TOPOLOGY_FABRIC_GRAPH_IMPL_H_
