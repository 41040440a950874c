// Hot paths of sim/topology and sim/collective: costing one collective on 1K-16K GPU clusters
// (must not grow with the GPU count), route lookup on a 16,384-GPU graph, and building that graph.
#include <benchmark/benchmark.h>

#include "sim/collective/collective.h"
#include "sim/config/spec.h"
#include "sim/topology/cluster.h"
#include "sim/topology/fabric_graph.h"
#include "sim/topology/group.h"
#include "sim/topology/routing.h"

namespace shardsim {
namespace {

// DGX H100 SuperPOD-like fabric (topologies/dgx-h100.yaml).
TopologySpec DgxH100() {
  TopologySpec t;
  t.name = "dgx-h100";
  t.gpus_per_node = 8;
  t.intra_bandwidth = 450e9;
  t.intra_efficiency = 0.8;
  t.nvls = true;
  t.nics_per_node = 8;
  t.nic_bandwidth = 50e9;
  t.inter_efficiency = 0.94;
  t.fabric = FabricKind::kRailOptimized;
  t.nodes_per_leaf = 32;
  return t;
}

// One all-reduce over every GPU (strided group: O(1) to describe and to analyze).
void BM_CostFullClusterAllReduce(benchmark::State& state) {
  const int64_t gpus = state.range(0);
  const Cluster cluster = *Cluster::Build(DgxH100(), gpus);
  const Group all = *Group::Strided(0, {{gpus, 1}});
  CollectiveOptions options;
  for (auto _ : state) {
    Result<CollectiveCost> c =
        CostCollective(cluster, all, CollectiveOp::kAllReduce, Bytes(1e9), options);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_CostFullClusterAllReduce)->Arg(1024)->Arg(4096)->Arg(16384);

// The gradient all-reduce of one DP group with TP=8, all DP groups running at once.
void BM_CostDataParallelAllReduce(benchmark::State& state) {
  const int64_t gpus = state.range(0);
  const Cluster cluster = *Cluster::Build(DgxH100(), gpus);
  const Group dp = *Group::Strided(3, {{gpus / 8, 8}});
  CollectiveOptions options;
  options.concurrent_groups = 8;
  for (auto _ : state) {
    Result<CollectiveCost> c =
        CostCollective(cluster, dp, CollectiveOp::kAllReduce, Bytes(1e9), options);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_CostDataParallelAllReduce)->Arg(1024)->Arg(4096)->Arg(16384);

// For contrast: the same group given as an explicit list is analyzed by enumeration, O(ranks).
void BM_CostExplicitGroupAllReduce(benchmark::State& state) {
  const int64_t gpus = state.range(0);
  const Cluster cluster = *Cluster::Build(DgxH100(), gpus);
  const Group dp = *Group::Explicit(Group::Strided(3, {{gpus / 8, 8}})->Members());
  CollectiveOptions options;
  for (auto _ : state) {
    Result<CollectiveCost> c =
        CostCollective(cluster, dp, CollectiveOp::kAllReduce, Bytes(1e9), options);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_CostExplicitGroupAllReduce)->Arg(1024)->Arg(4096)->Arg(16384);

// Valley-free ECMP route between two GPUs in different scalable units of a 16,384-GPU cluster.
void BM_RouteLookup(benchmark::State& state) {
  const Cluster cluster = *Cluster::Build(DgxH100(), state.range(0));
  cluster.graph();  // built once, outside the timing
  const GpuId src(5);
  const GpuId dst(static_cast<int32_t>(state.range(0) - 6));
  for (auto _ : state) {
    Result<Route> r = RouteBetween(cluster, src, dst);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_RouteLookup)->Arg(1024)->Arg(16384);

void BM_BuildGraph(benchmark::State& state) {
  const TopologySpec spec = DgxH100();
  for (auto _ : state) {
    const Cluster cluster = *Cluster::Build(spec, state.range(0));
    benchmark::DoNotOptimize(cluster.graph().num_links());
  }
}
BENCHMARK(BM_BuildGraph)->Arg(16384)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace shardsim

BENCHMARK_MAIN();
