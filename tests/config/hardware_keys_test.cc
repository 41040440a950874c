// The hardware keys family, default_topology and price_per_gpu_hour, the topology key
// accelerator_family, and the error for a cluster of another accelerator (mi300x on dgx-h100 ran
// silently with the H100 cluster's NVLink and NICs).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sim/config/loader.h"

namespace shardsim {
namespace {

LoadOptions SourceTree() {
  std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
  return LoadOptions{{"."}};
}

Result<Scenario> Build(const std::string& text) {
  const LoadOptions lib = SourceTree();
  Result<ScenarioDocument> doc = ScenarioDocument::ParseText(text, "tests/config/data/s.yaml");
  if (!doc.ok()) return doc.status();
  return doc->Build(lib);
}

const char* kTraining = "gpus: 8\ntraining: {seq_len: 2048, global_batch: 8}\nparallel: {dp: 8}\n";

TEST(HardwareKeys, EveryLibraryAcceleratorNamesItsFamilyAndCluster) {
  const LoadOptions lib = SourceTree();
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("hardware")) {
    if (e.path().extension() != ".yaml") continue;
    Result<HardwareSpec> hw = LoadHardware(e.path().stem().string(), lib);
    ASSERT_TRUE(hw.ok()) << hw.status().ToString();
    EXPECT_FALSE(hw->default_topology.empty()) << hw->name;
    EXPECT_FALSE(hw->family.empty()) << hw->name;
    ++n;
  }
  EXPECT_GE(n, 7);
  Result<HardwareSpec> h100 = LoadHardware("h100-sxm", lib);
  ASSERT_TRUE(h100.ok());
  EXPECT_EQ(h100->family, "hopper");
  EXPECT_EQ(h100->default_topology, "dgx-h100");
  // default_topology is a name resolved only when used: mi300x's cluster file may not exist.
  Result<HardwareSpec> mi = LoadHardware("mi300x", lib);
  ASSERT_TRUE(mi.ok()) << mi.status().ToString();
  EXPECT_EQ(mi->default_topology, "mi300x-8gpu");
}

TEST(HardwareKeys, MismatchedClusterIsAnErrorAtTheTopologyKey) {
  Result<Scenario> s =
      Build(std::string("model: gpt3-350m\nhardware: mi300x\ntopology: dgx-h100\n") + kTraining);
  ASSERT_FALSE(s.ok());
  const std::string msg = s.status().ToString();
  EXPECT_NE(msg.find("tests/config/data/s.yaml:3:11: error: topology: dgx-h100 carries hopper "
                     "GPUs (accelerator_family, topologies/dgx-h100.yaml:"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find(") but hardware mi300x is cdna3 (family, hardware/mi300x.yaml:"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("name a topology of cdna3 GPUs (mi300x's default_topology is mi300x-8gpu), "
                     "or override topology.accelerator_family if the cluster is meant"),
            std::string::npos)
      << msg;
  // Same family: fine (an H200 on the H100 cluster's board); an override says the cluster is
  // meant.
  EXPECT_TRUE(
      Build(std::string("model: gpt3-350m\nhardware: h200-sxm\ntopology: dgx-h100\n") + kTraining)
          .ok());
  Result<Scenario> meant =
      Build(std::string("model: gpt3-350m\nhardware: mi300x\ntopology: {base: dgx-h100, "
                        "accelerator_family: cdna3}\n") +
            kTraining);
  EXPECT_TRUE(meant.ok()) << meant.status().ToString();
}

TEST(HardwareKeys, PricePerGpuHour) {
  const std::string head = "model: gpt3-350m\ntopology: dgx-h100\n";
  Result<Scenario> s =
      Build(head + "hardware: {base: h100-sxm, price_per_gpu_hour: 2.5 USD}\n" + kTraining);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(s->hardware.price_per_gpu_hour, 2.5);
  Result<Scenario> bare =
      Build(head + "hardware: {base: h100-sxm, price_per_gpu_hour: 3}\n" + kTraining);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_DOUBLE_EQ(bare->hardware.price_per_gpu_hour, 3.0);
  Result<Scenario> none = Build(head + "hardware: h100-sxm\n" + kTraining);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->hardware.price_per_gpu_hour, 0.0);
  for (const char* bad : {"2.5 EUR", "-1 USD", "0 USD", "cheap"}) {
    Result<Scenario> b =
        Build(head + "hardware: {base: h100-sxm, price_per_gpu_hour: " + bad + "}\n" + kTraining);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.status().ToString().find(
                  "error: hardware.price_per_gpu_hour: expected a positive price in US dollars "
                  "per GPU-hour, e.g. \"2.5 USD\", got "),
              std::string::npos)
        << b.status().ToString();
  }
}

}  // namespace
}  // namespace shardsim
