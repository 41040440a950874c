// End-to-end tests of `shardsim comm`: output contract (docs/reference.md §4), nccl-tests table
// layout, exit codes and error messages.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "tests/cli/run_cli.h"
#include "tests/topology/test_specs.h"

namespace shardsim {
namespace {

using testing::CliRun;
using testing::Shardsim;

TEST(CommCli, JsonHasTheContractKeys) {
  const CliRun r = Shardsim("comm --topology dgx-h100 --gpus 8 --op all_reduce --size 1GiB --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"time_s", "algbw_gbps", "busbw_gbps", "algorithm", "bottleneck"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  // nccl-tests' definitions: algbw = S / t, busbw = algbw * 2(n-1)/n.
  const double t = j["time_s"];
  EXPECT_NEAR(j["algbw_gbps"].get<double>(), 1073741824.0 / t / 1e9, 1e-9);
  EXPECT_NEAR(j["busbw_gbps"].get<double>(), j["algbw_gbps"].get<double>() * 2 * 7 / 8, 1e-9);
  EXPECT_EQ(j["algorithm"], "nvls");
  EXPECT_EQ(j["bottleneck"], "nvlink (intra-node)");
}

TEST(CommCli, RanksPerNodeSpreadsTheGroup) {
  const CliRun r =
      Shardsim("comm --topology dgx-a100 --gpus 8 --ranks-per-node 1 --algo ring --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nodes"], 8);
  EXPECT_EQ(j["ranks_per_node"], 1);
  EXPECT_EQ(j["bottleneck"], "nic (inter-node)");
}

TEST(CommCli, SweepTableInNcclTestsLayout) {
  const CliRun r = Shardsim("comm --topology dgx-a100 --gpus 16 --op all_gather --sizes 1KiB:1MiB");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("#       size         count      type   redop    root     time   algbw   "
                       "busbw"),
            std::string::npos)
      << r.out;
  // 1 KiB, 2 KiB, ..., 1 MiB: 11 rows; the first row's columns.
  EXPECT_NE(r.out.find("\n        1024           256     float    none      -1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n     1048576        262144     float    none      -1"),
            std::string::npos);
}

TEST(CommCli, SweepJsonHasOneResultPerSize) {
  const CliRun r = Shardsim("comm --topology dgx-h100 --gpus 8 --sizes 1MiB:64MiB:4 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["results"].size(), 4u);  // 1, 4, 16, 64 MiB
  EXPECT_EQ(j["results"][3]["size_bytes"], 67108864.0);
}

// Sizes are whole bytes, each listed once: 1.5^k rounds 2.25 to 2 again (dropped) and 7.59 to 8.
TEST(CommCli, SweepSizesAreWholeBytesEachOnce) {
  const CliRun r = Shardsim("comm --topology dgx-h100 --gpus 8 --sizes 1:64:1.5 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::vector<double> sizes;
  for (const nlohmann::json& row : j["results"]) sizes.push_back(row["size_bytes"]);
  EXPECT_EQ(sizes, (std::vector<double>{1, 2, 3, 5, 8, 11, 17, 26, 38, 58}));
}

TEST(CommCli, BadInputExitsWithTwoAndSaysWhy) {
  struct Case {
    const char* args;
    const char* message;
  };
  const Case cases[] = {
      {"comm --topology hgx-h100-1node --gpus 16",
       "error: topology 'hgx-h100-1node' is a single node of 8 GPUs (no inter_node block); 16 "
       "GPUs do not fit"},
      {"comm --topology dgx-h100 --gpus 12",
       "error: 12 GPUs do not fill whole nodes of topology 'dgx-h100' (8 GPUs per node); use a "
       "multiple of 8"},
      {"comm --topology dgx-h100 --gpus 8 --size -1GiB",
       "error: --size: size must not be negative, got -1GiB"},
      {"comm --topology dgx-h100 --gpus 1",
       "error: a collective needs at least 2 ranks; all_reduce was asked over 1"},
      {"comm --topology dgx-a100 --gpus 8 --algo nvls",
       "error: algorithm 'nvls' does not apply to all_reduce: topology 'dgx-a100' has no NVLink "
       "SHARP switch (intra_node.nvls is false)"},
      {"comm --topology dgx-h100 --gpus 8 --size 8G",
       "error: --size: \"8G\": unknown unit \"G\"; expected e.g. \"80 GiB\" (units: B, KB, MB, GB, "
       "TB, PB, KiB, MiB, GiB, TiB, PiB)"},
      {"comm --topology dgx-h100 --gpus 8 --size 1.5",
       "error: --size: 1.5 is not a whole number of bytes; sizes are whole bytes, e.g. 2 or 1KiB"},
      {"comm --topology dgx-h100 --gpus 8 --sizes 1.5:1KiB",
       "error: --sizes: 1.5 is not a whole number of bytes; sizes are whole bytes, e.g. 2 or "
       "1KiB"},
      // It aborted with std::bad_alloc (exit 134).
      {"comm --topology dgx-h100 --gpus 99999999992 --size 1GiB",
       "error: --gpus must be between 1 and 16777216 (2^24), got 99999999992"},
      {"comm --topology dgx-h100 --gpus 0",
       "error: --gpus must be between 1 and 16777216 (2^24), got 0"},
      // It printed a time of 3.6e18 s.
      {"comm --topology dgx-h100 --gpus 8 --size 1e30",
       "error: --size: size must be at most 1PiB (1125899906842624 bytes), got 1e30"},
      {"comm --topology dgx-h100 --gpus 8 --ranks-per-node 0",
       "error: --ranks-per-node must be at least 1, got 0"},
      {"comm --topology dgx-h100 --gpus 8 --ranks-per-node -4",
       "error: --ranks-per-node must be at least 1, got -4"},
      // It printed the first 200 of them (1024 B five times, ending at 1045 B).
      {"comm --topology dgx-h100 --gpus 8 --sizes 1KiB:8GiB:1.0001",
       "error: --sizes: \"1KiB:8GiB:1.0001\" gives more than 200 sizes (use a larger FACTOR or a "
       "narrower range)"},
      // A factor this close to 1 takes a billion steps to pass 1 GiB: refused as fast.
      {"comm --topology dgx-h100 --gpus 8 --sizes 1:1GiB:1.000000001",
       "error: --sizes: \"1:1GiB:1.000000001\" gives more than 200 sizes (use a larger FACTOR or "
       "a narrower range)"},
  };
  const CliRun unknown = Shardsim("comm --topology dgx-h10 --gpus 8");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_EQ(unknown.out, "error: topology: no topology named 'dgx-h10' in " +
                             std::string(SHARDSIM_SOURCE_DIR) +
                             "/topologies/; close names: dgx-h100, dgx-a100, dgx-h200\n");
  for (const Case& c : cases) {
    const CliRun r = Shardsim(c.args);
    EXPECT_EQ(r.code, 2) << c.args;
    EXPECT_EQ(r.out, std::string(c.message) + "\n") << c.args;
  }
  EXPECT_EQ(Shardsim("comm --gpus 8").code, 2);
}

// topologies/*.yaml load through sim/config to the specs the tests build in code.
TEST(TopologyFiles, LoadToTheTestSpecs) {
  LoadOptions options;
  options.library_dirs = {SHARDSIM_SOURCE_DIR};
  int files = 0;
  for (const TopologySpec& t :
       {testing::DgxA100(), testing::DgxH100(), testing::HgxH100OneNode(), testing::DgxH200(),
        testing::Llama3Roce(), testing::H800DeepSeek(), testing::H100FatTree2To1(),
        testing::DgxB200(), testing::DgxB300(), testing::Nvl72("gb200-nvl72", 400e9 / 8),
        testing::Nvl72("gb300-nvl72", 800e9 / 8), testing::AmdMesh("mi300x-8gpu", 448e9),
        testing::AmdMesh("mi350x-8gpu", 537.6e9), testing::AmdMesh("mi355x-8gpu", 537.6e9)}) {
    Result<TopologySpec> b = LoadTopology(t.name, options);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    ++files;
    EXPECT_EQ(b->name, t.name);
    EXPECT_FALSE(b->source.empty()) << t.name;
    EXPECT_EQ(b->gpus_per_node, t.gpus_per_node) << t.name;
    EXPECT_DOUBLE_EQ(b->intra_bandwidth, t.intra_bandwidth) << t.name;
    EXPECT_DOUBLE_EQ(b->intra_latency, t.intra_latency) << t.name;
    EXPECT_DOUBLE_EQ(b->intra_efficiency, t.intra_efficiency) << t.name;
    EXPECT_EQ(b->nvls, t.nvls) << t.name;
    EXPECT_DOUBLE_EQ(b->nvls_efficiency, t.nvls_efficiency) << t.name;
    EXPECT_DOUBLE_EQ(b->nvls_latency, t.nvls_latency) << t.name;
    EXPECT_EQ(b->intra_kind, t.intra_kind) << t.name;
    EXPECT_EQ(b->intra_links, t.intra_links) << t.name;
    for (const auto& [got, want] : {std::pair{b->fit_all_reduce, t.fit_all_reduce},
                                    {b->fit_all_gather, t.fit_all_gather},
                                    {b->fit_reduce_scatter, t.fit_reduce_scatter},
                                    {b->fit_all_to_all, t.fit_all_to_all}}) {
      EXPECT_DOUBLE_EQ(got.efficiency, want.efficiency) << t.name;
      EXPECT_DOUBLE_EQ(got.latency, want.latency) << t.name;
    }
    EXPECT_EQ(b->has_inter_node, t.has_inter_node) << t.name;
    if (!t.has_inter_node) continue;
    EXPECT_EQ(b->inter_kind, t.inter_kind) << t.name;
    EXPECT_DOUBLE_EQ(b->nic_bandwidth, t.nic_bandwidth) << t.name;
    EXPECT_EQ(b->nics_per_node, t.nics_per_node) << t.name;
    EXPECT_DOUBLE_EQ(b->inter_latency, t.inter_latency) << t.name;
    EXPECT_DOUBLE_EQ(b->inter_efficiency, t.inter_efficiency) << t.name;
    EXPECT_EQ(b->fabric, t.fabric) << t.name;
    EXPECT_EQ(b->nodes_per_leaf, t.nodes_per_leaf) << t.name;
    EXPECT_EQ(b->nodes_per_pod, t.nodes_per_pod) << t.name;
    EXPECT_DOUBLE_EQ(b->oversubscription, t.oversubscription) << t.name;
    EXPECT_DOUBLE_EQ(b->pod_oversubscription, t.pod_oversubscription) << t.name;
    EXPECT_EQ(b->max_nodes, t.max_nodes) << t.name;
  }
  // Every file of topologies/ is one of them.
  int on_disk = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(SHARDSIM_SOURCE_DIR) + "/topologies")) {
    if (e.path().extension() == ".yaml") ++on_disk;
  }
  EXPECT_EQ(on_disk, files);
}

// A bad value in a file is reported at its line by the loader and by Cluster::Build.
TEST(TopologyFiles, ZeroBandwidthIsAnErrorAtTheKey) {
  const std::string dir = ::testing::TempDir() + "/shardsim_topo";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/zero.yaml";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("name: zero\ngpus_per_node: 8\nintra_node:\n  bandwidth: 0 GB/s\n", f);
  std::fclose(f);
  const CliRun r = Shardsim("comm --topology " + path + " --gpus 8");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("zero.yaml:4:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bandwidth"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace shardsim
