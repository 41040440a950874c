// Context parallelism across nodes costs what its ring hop costs: the ring's slowest hop (the
// one that leaves the node) paces every round of ring attention, and what it takes beyond the
// attention block it overlaps is exposed (sim/program/step_costs.cc, LayerCp). Before, the hop
// was priced on the representative rank's own neighbour, which sits in the same node whenever
// TP x (a few CP ranks) fill a node: a Llama-3-70B / 512-H100 sweep scored TP2 with CP4 in-node
// and CP8 / CP16 across 2-4 nodes alike (621,750 tokens/s, 0 s exposed CP).
// Also: the bottleneck rows name the link their exposed tasks ran on (Bottlenecks test below).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/hardware/op_cost.h"
#include "sim/model/op_graph.h"
#include "sim/parallel/layout.h"
#include "sim/report/simulate.h"
#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

// The quickstart (Llama-3-70B, 512 H100, DGX H100 nodes) at TP2 PP4, recompute none, v10: the
// top of the sweep in the issue. `order` places the ranks (innermost first).
Scenario Quickstart(int64_t cp, int64_t micro_batch, std::vector<std::string> order) {
  std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
  Result<Scenario> sc = LoadScenario("scenarios/quickstart.yaml", LoadOptions{});
  EXPECT_TRUE(sc.ok()) << sc.status().ToString();
  Scenario s = *sc;
  s.parallel.tp = 2;
  s.parallel.cp = cp;
  s.parallel.dp = 512 / (2 * 4 * cp);
  s.parallel.virtual_stages = 10;
  s.parallel.order = std::move(order);
  s.training.micro_batch = micro_batch;
  s.training.recompute = Recompute::kNone;
  return s;
}

const std::vector<std::string> kCpInside = {"tp", "cp", "dp", "pp"};
const std::vector<std::string> kCpAcross = {"tp", "dp", "cp", "pp"};

TEST(CpRing, SlowestHopIsTheOneLeavingTheNode) {
  // TP2 CP8 with CP next to TP: CP ranks 0-3 on node 0, 4-7 on node 1; 3 -> 4 leaves the node.
  Result<Layout> l = Layout::Make(Quickstart(8, 2, kCpInside));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->SlowestCpHop(RankCoords{}).cp, 3);
  // TP2 CP4 fills one node: no hop leaves it.
  Result<Layout> in = Layout::Make(Quickstart(4, 1, kCpInside));
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->SlowestCpHop(RankCoords{}).cp, 0);
}

// Exposed CP per layer and pass = (cp - 1) * max(0, hop - block), the hop a point-to-point of
// the local K/V on one NIC path (alpha_inter + bytes / (nic_bandwidth * efficiency)).
TEST(CpRing, ExposedHopInClosedForm) {
  const Scenario sc = Quickstart(8, 2, kCpInside);
  Result<SimResult> r = Simulate(sc);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const BlockCost& layer = r->costs.layer_kinds.front();
  const CpHop& h = layer.cp_hop;
  ASSERT_EQ(h.rounds, 7);
  EXPECT_EQ(h.from_cp, 3);
  EXPECT_EQ(h.link, LinkClass::kNic);
  // K/V of the local block: 2 (micro-batch) x 8192/8 tokens x 4 kv heads per TP rank x (128 +
  // 128) channels x 2 bytes = 4 MiB forward, twice that with the gradients backward.
  EXPECT_DOUBLE_EQ(h.fwd_bytes.value(), 2.0 * 1024 * 4 * 256 * 2);
  EXPECT_DOUBLE_EQ(h.bwd_bytes.value(), 2.0 * h.fwd_bytes.value());
  const double nic = sc.topology.nic_bandwidth * sc.topology.inter_efficiency;
  EXPECT_NEAR(h.fwd.value(), sc.topology.inter_latency + h.fwd_bytes.value() / nic, 1e-12);
  EXPECT_NEAR(h.bwd.value(), sc.topology.inter_latency + h.bwd_bytes.value() / nic, 1e-12);
  EXPECT_GT(h.fwd, h.block_fwd);  // the hop cannot hide behind attention here
  EXPECT_NEAR(layer.fwd.cp.value(), 7 * (h.fwd - h.block_fwd).value(), 1e-12);
  EXPECT_NEAR(layer.bwd.cp.value(), 7 * (h.bwd - h.block_bwd).value(), 1e-12);
  EXPECT_GT(r->breakdown.cp.value(), 0.0);
}

// The same CP degree inside a node and across nodes: same work per GPU, only the hop differs.
TEST(CpRing, InsideANodeBeatsAcrossNodesWhenTheHopCannotHide) {
  Result<SimResult> inside = Simulate(Quickstart(4, 1, kCpInside));
  Result<SimResult> across = Simulate(Quickstart(4, 1, kCpAcross));
  ASSERT_TRUE(inside.ok() && across.ok());
  EXPECT_EQ(inside->breakdown.cp.value(), 0.0);  // NVLink hop hidden behind the block
  EXPECT_EQ(inside->costs.layer_kinds.front().cp_hop.link, LinkClass::kNvlink);
  EXPECT_EQ(across->costs.layer_kinds.front().cp_hop.link, LinkClass::kNic);
  EXPECT_GT(across->breakdown.cp.value(), 0.0);
  EXPECT_LT(inside->step_time, across->step_time);
  const auto cp_row = [](const SimResult& s) {
    for (const Bottleneck& b : s.bottlenecks) {
      if (b.collective == "cp send_recv (ring attention)") return b.resource;
    }
    return std::string();
  };
  EXPECT_EQ(cp_row(*across), "nic (inter-node)");
}

// The sweep of the issue, cut to its three tied points: TP2 PP4 with CP4 (inside a node), CP8
// and CP16 (across 2 and 4 nodes) at equal work per GPU. CP4 now ranks first.
TEST(CpRing, SweepRanksCpInsideANodeFirst) {
  std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
  const std::string dir = ::testing::TempDir();
  const std::string spec = dir + "/cp_sweep.yaml";
  const std::string csv = dir + "/cp_sweep.csv";
  testing::WriteFile(spec, "base: " + std::string(SHARDSIM_SOURCE_DIR) +
                               "/scenarios/quickstart.yaml\n"
                               "training: {recompute: none}\n"
                               "parallel: {tp: 2, pp: 4, virtual_stages: 10}\n"
                               "sweep:\n"
                               "  parallel.cp: [4, 8, 16]\n"
                               "  parallel.dp: [16, 8, 4]\n"
                               "  training.micro_batch: [1, 2, 4]\n"
                               "  zip: [[parallel.cp, parallel.dp, training.micro_batch]]\n");
  std::filesystem::remove(csv);
  const testing::CliRun run = testing::Shardsim("sweep " + spec + " -o " + csv + " -j 1");
  ASSERT_EQ(run.code, 0) << run.out;
  // Rows in point order: cp 4, 8, 16. Read tokens_per_s from the CSV header's column.
  std::istringstream in(testing::ReadFile(csv));
  std::string header;
  std::getline(in, header);
  std::vector<std::string> cols;
  {
    std::istringstream h(header);
    for (std::string c; std::getline(h, c, ',');) cols.push_back(c);
  }
  const auto col = std::find(cols.begin(), cols.end(), "tokens_per_s");
  ASSERT_NE(col, cols.end()) << header;
  const size_t k = static_cast<size_t>(col - cols.begin());
  std::vector<double> tokens;
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    std::string cell;
    for (size_t i = 0; i <= k && std::getline(l, cell, ','); ++i) {
    }
    tokens.push_back(std::stod(cell));
  }
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_GT(tokens[0], tokens[1]);  // CP4 in a node over CP8 across 2 nodes
  EXPECT_GT(tokens[1], tokens[2]);  // over CP16 across 4
}

// Bottleneck rows name the engine link the exposed tasks ran on, not a probe of the dense DP
// group: DeepSeek-V3 on 2,048 H800 exposes 43 ms of gradient reduction, the expert-data-parallel
// reduce-scatter across nodes, which the old 1e8-byte probe of the dense dp x cp group (128
// consecutive GPUs, whose ring is bound by NVLink on h800-deepseek) named nvlink.
TEST(Bottlenecks, DpRowNamesTheLinkItsExposedTasksRanOn) {
  std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
  Result<Scenario> sc = LoadScenario("scenarios/deepseek-v3-h800x2048.yaml", LoadOptions{});
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  Result<SimResult> r = Simulate(*sc);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  bool found = false;
  for (const Bottleneck& b : r->bottlenecks) {
    if (b.collective != "dp reduce_scatter") continue;
    found = true;
    EXPECT_EQ(b.resource, "nic (inter-node)");
    EXPECT_GT(b.exposed.value(), 0.0);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace shardsim
