// The topologies users book today (topologies/dgx-b200 ... mi355x-8gpu): each loads, costs a
// collective in closed form through `shardsim comm`, and runs a scenario end to end; the NVL72
// racks keep 72-GPU groups on NVLink; the AMD meshes drive one link per ring hop of a pair, the
// links to the group's members otherwise (sim/collective/traffic.cc, MeshLinks).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/collective/collective.h"
#include "sim/config/loader.h"
#include "sim/topology/cluster.h"
#include "sim/topology/group.h"
#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

constexpr double kGiB = 1073741824.0;

TopologySpec Load(const std::string& name) {
  std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
  Result<TopologySpec> t = LoadTopology(name, LoadOptions{});
  EXPECT_TRUE(t.ok()) << name << ": " << t.status().ToString();
  return t.ok() ? *t : TopologySpec{};
}

nlohmann::json Comm(const std::string& args) {
  std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
  const testing::CliRun r = testing::Shardsim("comm " + args + " --json", false);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.out;
  return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

double Time(const TopologySpec& t, int64_t gpus, const Group& g, CollectiveOp op, double bytes) {
  Result<Cluster> c = Cluster::Build(t, gpus);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  Result<CollectiveCost> cost = CostCollective(*c, g, op, Bytes(bytes), CollectiveOptions{});
  EXPECT_TRUE(cost.ok()) << cost.status().ToString();
  return cost.ok() ? cost->time.value() : 0.0;
}

Group Range(int64_t first, int64_t n) { return *Group::Strided(first, {{n, 1}}); }

struct Booked {
  std::string topology;
  std::string hardware;  // the library GPU the cluster carries (its accelerator_family)
  int64_t gpus;          // two nodes (two racks for NVL72)
};

const std::vector<Booked> kBooked = {
    {"dgx-b200", "b200", 16},      {"dgx-b300", "b300", 16},      {"dgx-h200", "h200-sxm", 16},
    {"gb200-nvl72", "gb200", 144}, {"gb300-nvl72", "gb300", 144}, {"mi300x-8gpu", "mi300x", 16},
    {"mi350x-8gpu", "mi350x", 16}, {"mi355x-8gpu", "mi355x", 16},
};

TEST(BookedTopologies, EachRunsCommAndAScenarioEndToEnd) {
  const std::string dir = ::testing::TempDir();
  for (const Booked& b : kBooked) {
    SCOPED_TRACE(b.topology);
    const TopologySpec t = Load(b.topology);
    ASSERT_FALSE(t.source.empty()) << "specs are cited in the file";
    // Inside one node (rack) and across two: comm agrees with the library and names a link.
    const int64_t gpn = t.gpus_per_node;
    for (int64_t n : {gpn, b.gpus}) {
      const nlohmann::json j = Comm("--topology " + b.topology + " --gpus " + std::to_string(n) +
                                    " --op all_reduce --size 1GiB");
      ASSERT_TRUE(j.contains("time_s"));
      EXPECT_DOUBLE_EQ(j["time_s"].get<double>(),
                       Time(t, n, Range(0, n), CollectiveOp::kAllReduce, kGiB));
      EXPECT_GT(j["busbw_gbps"].get<double>(), 0.0);
    }
    // A scenario: Llama-3-8B, TP 8 inside a node, DP over the rest.
    const std::string path = dir + "/booked_" + b.topology + ".yaml";
    testing::WriteFile(
        path, "name: booked\nmodel: llama3-8b\nhardware: " + b.hardware +
                  "\ntopology: " + b.topology + "\ngpus: " + std::to_string(b.gpus) +
                  "\ntraining: {seq_len: 8192, global_batch: " + std::to_string(b.gpus / 8 * 8) +
                  ", micro_batch: 1, precision: bf16, recompute: selective}\n"
                  "parallel: {tp: 8, pp: 1, cp: 1, dp: " +
                  std::to_string(b.gpus / 8) + ", zero_stage: 1, sequence_parallel: true}\n");
    const testing::CliRun r = testing::Shardsim("simulate " + path + " --json", false);
    ASSERT_EQ(r.code, 0) << r.out;
    const nlohmann::json s = nlohmann::json::parse(r.out);
    EXPECT_GT(s["step_time_s"].get<double>(), 0.0);
    EXPECT_GT(s["mfu"].get<double>(), 0.0);
  }
}

// dgx-b200's in-node collectives are the measured fits of
// shared/reference/calibration/b200-memory-and-nvlink.yaml: latency + factor * S / (eff * 900
// GB/s).
TEST(BookedTopologies, DgxB200UsesTheMeasuredNcclFits) {
  const TopologySpec t = Load("dgx-b200");
  const double b = 900e9;
  EXPECT_NEAR(Time(t, 8, Range(0, 8), CollectiveOp::kAllGather, kGiB),
              32.288e-6 + 7.0 / 8 * kGiB / (0.6735 * b), 1e-12);
  EXPECT_NEAR(Time(t, 8, Range(0, 8), CollectiveOp::kReduceScatter, kGiB),
              33.593e-6 + 7.0 / 8 * kGiB / (0.6731 * b), 1e-12);
  EXPECT_NEAR(Time(t, 8, Range(0, 8), CollectiveOp::kAllReduce, kGiB),
              27.75e-6 + 2 * 7.0 / 8 * kGiB / (0.7424 * b), 1e-12);
  EXPECT_NEAR(Time(t, 4, Range(0, 4), CollectiveOp::kAllToAll, kGiB),
              7.3039e-6 + 3.0 / 4 * kGiB / (0.5968 * b), 1e-12);
  // Across nodes the algorithms apply (the fits are of one node).
  const nlohmann::json two = Comm("--topology dgx-b200 --gpus 16 --op all_gather --size 1GiB");
  EXPECT_NE(two.value("algorithm", std::string()), "");
}

// NVL72: the rack is one NVLink domain. 72-rank all-reduce and all-to-all stay on NVLink; a
// second rack's all-to-all is bound by the racks' 72 NICs (an all-reduce over two racks still is
// by NVLink: 72 NICs of 47 GB/s carry its inter-rack half faster).
TEST(BookedTopologies, Nvl72KeepsSeventyTwoGpusOnNvlink) {
  for (const std::string name : {"gb200-nvl72", "gb300-nvl72"}) {
    SCOPED_TRACE(name);
    for (const char* op : {"all_reduce", "all_to_all"}) {
      const nlohmann::json in = Comm("--topology " + name + " --gpus 72 --op " + op);
      EXPECT_EQ(in["bottleneck"], "nvlink (intra-node)");
    }
    const nlohmann::json out = Comm("--topology " + name + " --gpus 144 --op all_to_all");
    EXPECT_EQ(out["bottleneck"], "nic (inter-node)");
  }
}

// The Infinity Fabric mesh: a group reaches only the links to its own members. TP 2 gets one
// link (64 GB/s per direction on MI300X), a 4-GPU ring 2 links (K*_4 has 2 arc-disjoint
// Hamiltonian cycles), 8 GPUs all 7; all-to-all sends each peer its slice on that peer's link.
TEST(BookedTopologies, InfinityFabricMeshDrivesTheLinksToTheGroup) {
  const TopologySpec t = Load("mi300x-8gpu");
  ASSERT_EQ(t.intra_links, 7);
  const double link = 448e9 / 7 * 0.8;  // one link per direction through RCCL (assumed 0.8)
  const double a = 1e-6;
  EXPECT_NEAR(Time(t, 8, Range(0, 2), CollectiveOp::kAllReduce, kGiB), 2 * a + 1.0 * kGiB / link,
              1e-12);
  EXPECT_NEAR(Time(t, 8, Range(0, 4), CollectiveOp::kAllGather, kGiB),
              3 * a + 3.0 / 4 * kGiB / (2 * link), 1e-12);
  EXPECT_NEAR(Time(t, 8, Range(0, 8), CollectiveOp::kAllGather, kGiB),
              7 * a + 7.0 / 8 * kGiB / (7 * link), 1e-12);
  EXPECT_NEAR(Time(t, 8, Range(0, 8), CollectiveOp::kAllToAll, kGiB),
              a + 7.0 / 8 * kGiB / (7 * link), 1e-12);
  EXPECT_NEAR(Time(t, 8, Range(0, 2), CollectiveOp::kSendRecv, kGiB), a + kGiB / link, 1e-12);
  // A mesh has no switch: NVLS is refused where the file is read.
  TopologySpec bad = t;
  bad.nvls = true;
  Result<Cluster> c = Cluster::Build(bad, 8);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().ToString().find("intra_node.nvls"), std::string::npos);
  bad = t;
  bad.intra_links = 5;
  EXPECT_FALSE(Cluster::Build(bad, 8).ok());
}

}  // namespace
}  // namespace shardsim
