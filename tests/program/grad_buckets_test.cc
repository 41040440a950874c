// Gradient buckets (sim/program/step_program.h BucketGradients): ceil(grads / dp_bucket_size)
// asked, at most kMaxGradBuckets simulated; the program records the bucketing it ran and splits
// the last backward into that many pieces, each with its reduction.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "sim/config/loader.h"
#include "sim/program/step_program.h"
#include "sim/report/simulate.h"
#include "tests/model/test_models.h"
#include "tests/topology/test_specs.h"

namespace shardsim {
namespace {

TEST(GradBuckets, ClosedForm) {
  // 1 GiB of gradients: 40 MB buckets -> ceil(1073741824 / 4e7) = 27 asked, 16 simulated.
  GradBuckets b = BucketGradients(Bytes(1073741824.0), 40e6);
  EXPECT_EQ(b.requested, 27);
  EXPECT_EQ(b.simulated, kMaxGradBuckets);
  EXPECT_TRUE(b.capped());
  EXPECT_DOUBLE_EQ(b.simulated_size().value(), 1073741824.0 / 16.0);
  // 256 MiB buckets: exactly 4, honoured.
  b = BucketGradients(Bytes(1073741824.0), 268435456.0);
  EXPECT_EQ(b.requested, 4);
  EXPECT_EQ(b.simulated, 4);
  EXPECT_FALSE(b.capped());
  // One byte more than 4 buckets: 5.
  EXPECT_EQ(BucketGradients(Bytes(1073741825.0), 268435456.0).requested, 5);
  // A bucket larger than the gradients: one.
  EXPECT_EQ(BucketGradients(Bytes(1e6), 40e6).simulated, 1);
  // A 1-byte bucket of 1 PB of gradients: counted without overflow, still 16 simulated.
  b = BucketGradients(Bytes(1e15), 1.0);
  EXPECT_EQ(b.requested, 1000000000000000);
  EXPECT_EQ(b.simulated, kMaxGradBuckets);
}

Scenario Dp2(double bucket_bytes) {
  Scenario sc;
  sc.name = "buckets";
  sc.model = testing::Gpt(8, 2048, 16, 51200, 2048);
  auto hw = LoadHardware("h100-sxm", LoadOptions{});
  EXPECT_TRUE(hw.ok());
  sc.hardware = *hw;
  sc.topology = testing::DgxH100();
  sc.gpus = 2;
  sc.training.seq_len = 2048;
  sc.training.micro_batch = 1;
  sc.training.global_batch = 8;
  sc.training.precision = DType::kBf16;
  sc.parallel.dp = 2;
  sc.parallel.zero_stage = 1;
  sc.parallel.overlap_grad_reduce = true;
  sc.parallel.dp_bucket_bytes = bucket_bytes;
  return sc;
}

// The pieces of device 0's last backward (TaskInfo::buckets) are the simulated buckets, and the
// program reports what was asked.
TEST(GradBuckets, ProgramSplitsTheLastBackwardInTheSimulatedBuckets) {
  for (double size : {1e9, 40e6, 4e6, 1024.0}) {
    Result<SimResult> r = Simulate(Dp2(size));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const GradBuckets& b = r->program->grad_buckets;
    ASSERT_GT(b.grads.value(), 0.0);
    EXPECT_EQ(b.requested, BucketGradients(b.grads, size).requested) << size;
    EXPECT_EQ(b.simulated, BucketGradients(b.grads, size).simulated) << size;
    std::set<int> pieces;
    int reductions = 0;
    for (const TaskInfo& t : *r->program->tasks) {
      if (t.category == TaskCategory::kBackward && t.buckets > 1) pieces.insert(t.bucket);
      if (t.category == TaskCategory::kGradReduce && t.phase == 0) ++reductions;
    }
    EXPECT_EQ(static_cast<int64_t>(std::max<size_t>(1, pieces.size())), b.simulated) << size;
    EXPECT_GE(reductions, b.simulated) << size;
  }
  // 4 MB and 1 KiB both hit the cap: the same step.
  Result<SimResult> small = Simulate(Dp2(4e6));
  Result<SimResult> tiny = Simulate(Dp2(1024.0));
  ASSERT_TRUE(small.ok() && tiny.ok());
  EXPECT_TRUE(small->program->grad_buckets.capped());
  EXPECT_EQ(small->step_time.value(), tiny->step_time.value());
}

}  // namespace
}  // namespace shardsim
