// The `storage:` (topology or scenario) and `reliability:` blocks: values read with their units,
// the scenario's storage over the topology's key by key, and located errors.
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "tests/config/test_util.h"

namespace shardsim {
namespace {

using testing_util::BuildText;
using testing_util::Head;

constexpr const char* kTraining = "gpus: 8\ntraining: {seq_len: 4096, global_batch: 256}\n";

TEST(ReliabilityConfig, AbsentBlocksLeaveTheDefaultsToGoodput) {
  Result<Scenario> s = BuildText(Head() + kTraining);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->reliability.interruptions_per_gpu_hour.has_value());
  EXPECT_FALSE(s->reliability.restart_time.has_value());
  EXPECT_FALSE(s->reliability.async_checkpoint);
  EXPECT_FALSE(s->storage.aggregate_write_bandwidth.has_value());
}

TEST(ReliabilityConfig, ReadsEveryKey) {
  Result<Scenario> s = BuildText(
      Head() + kTraining +
      "reliability:\n  interruptions_per_gpu_hour: 2e-5\n  planned_interruptions_per_gpu_hour: 0\n"
      "  restart_time: 5 min\n  checkpoint_interval: 30 min\n  async_checkpoint: true\n"
      "  straggler_cv: 0.02\n"
      "storage: {write_bandwidth_per_node: 400 Gb/s, aggregate_write_bandwidth: 1 TB/s, "
      "host_copy_bandwidth: 50 GB/s}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(*s->reliability.interruptions_per_gpu_hour, 2e-5);
  EXPECT_DOUBLE_EQ(*s->reliability.planned_interruptions_per_gpu_hour, 0.0);
  EXPECT_DOUBLE_EQ(*s->reliability.restart_time, 300.0);
  EXPECT_DOUBLE_EQ(*s->reliability.checkpoint_interval, 1800.0);
  EXPECT_TRUE(s->reliability.async_checkpoint);
  EXPECT_DOUBLE_EQ(*s->reliability.straggler_cv, 0.02);
  EXPECT_DOUBLE_EQ(*s->storage.write_bandwidth_per_node, 50e9);
  EXPECT_DOUBLE_EQ(*s->storage.aggregate_write_bandwidth, 1e12);
  EXPECT_DOUBLE_EQ(*s->storage.host_copy_bandwidth, 50e9);
}

// A topology's storage block, and a scenario's over it key by key.
TEST(ReliabilityConfig, ScenarioStorageOverridesTheTopologys) {
  const std::string topo =
      "topology: {base: test-dgx, storage: {write_bandwidth_per_node: 10 GB/s, "
      "aggregate_write_bandwidth: 500 GB/s}}\n";
  Result<Scenario> s = BuildText("model: tiny-llama\nhardware: test-gpu\n" + topo + kTraining +
                                 "storage: {aggregate_write_bandwidth: 3 TB/s}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(*s->topology.storage.aggregate_write_bandwidth, 500e9);
  EXPECT_DOUBLE_EQ(*s->storage.write_bandwidth_per_node, 10e9);
  EXPECT_DOUBLE_EQ(*s->storage.aggregate_write_bandwidth, 3e12);
}

TEST(ReliabilityConfig, LocatedErrors) {
  Result<Scenario> s = BuildText(Head() + kTraining +
                                 "reliability:\n  interruptions_per_gpu_hour: -1\n"
                                 "  restart_time: 10\n  straggler_cv: 2\n  restrat_time: 1 s\n"
                                 "storage: {write_bandwidth_per_node: 0 GB/s}\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:7:3: error: reliability.interruptions_per_gpu_hour: "
            "must not be negative, got -1\n"
            "      interruptions_per_gpu_hour: -1\n"
            "      ^\n"
            "tests/config/data/inline.yaml:8:17: error: reliability.restart_time: \"10\" has no "
            "unit; expected e.g. \"5 us\"\n"
            "      restart_time: 10\n"
            "                    ^\n"
            "tests/config/data/inline.yaml:9:3: error: reliability.straggler_cv: must be below 1 "
            "(a standard deviation over the mean step time, e.g. 0.02), got 2\n"
            "      straggler_cv: 2\n"
            "      ^\n"
            "tests/config/data/inline.yaml:10:3: error: reliability.restrat_time: unknown key; "
            "did you mean 'restart_time'?\n"
            "      restrat_time: 1 s\n"
            "      ^\n"
            "tests/config/data/inline.yaml:11:37: error: storage.write_bandwidth_per_node: must "
            "be positive, got \"0 GB/s\"\n"
            "    storage: {write_bandwidth_per_node: 0 GB/s}\n"
            "                                        ^");
}

}  // namespace
}  // namespace shardsim
