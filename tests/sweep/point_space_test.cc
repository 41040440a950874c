// Enumeration order, inputs and the scenario of each point.
#include "sim/sweep/point_space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

const char* kHead = R"(name: t
model: gpt3-350m
hardware: a100-sxm4-40gb
topology: dgx-a100
gpus: 16
training: {seq_len: 2048, global_batch: 32}
parallel: {tp: 2, pp: 2}
)";

Result<PointSpace> Space(const std::string& sweep) {
  const LoadOptions lib = sweep_test::Lib();
  Result<SweepSpec> spec = ParseSweepSpec(kHead + sweep, "tests/sweep/data/inline.yaml", lib);
  if (!spec.ok()) return spec.status();
  return PointSpace::Enumerate(*spec, lib);
}

TEST(PointSpace, CartesianFirstAxisOutermost) {
  Result<PointSpace> s = Space("sweep:\n  training.recompute: [none, full]\n  gpus: [8, 16, 32]\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 6);
  EXPECT_EQ(s->input_columns(), (std::vector<std::string>{"training.recompute", "gpus"}));
  EXPECT_EQ(s->Inputs(0), (std::vector<std::string>{"none", "8"}));
  EXPECT_EQ(s->Inputs(1), (std::vector<std::string>{"none", "16"}));
  EXPECT_EQ(s->Inputs(3), (std::vector<std::string>{"full", "8"}));
  EXPECT_EQ(s->Inputs(5), (std::vector<std::string>{"full", "32"}));
  const LoadOptions lib = sweep_test::Lib();
  Result<Scenario> sc = s->Document(4)->Build(lib);
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->training.recompute, Recompute::kFull);
  EXPECT_EQ(sc->gpus, 16);
  EXPECT_EQ(sc->parallel.dp, 4);  // derived: 16 / (tp 2 * pp 2)
}

TEST(PointSpace, ZipAdvancesTogether) {
  Result<PointSpace> s = Space(
      "sweep:\n  hardware: [a100-sxm4-40gb, h100-sxm]\n  topology: [dgx-a100, dgx-h100]\n"
      "  gpus: [8, 16]\n  zip: [[hardware, topology]]\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->size(), 4);
  EXPECT_EQ(s->Inputs(2), (std::vector<std::string>{"h100-sxm", "dgx-h100", "8"}));
}

TEST(PointSpace, AutoLayoutsThenMicroBatchesInnermost) {
  Result<PointSpace> s = Space(
      "sweep:\n  training.recompute: [none, full]\n"
      "  parallel: {auto: true, tp: [1], pp: [1], cp: [1]}\n  training.micro_batch: auto\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // One layout (dp 16) per recompute mode; micro-batches divide 32 / 16 = 2: {1, 2}.
  ASSERT_EQ(s->size(), 4);
  EXPECT_EQ(s->input_columns().size(), 1u + 7u + 1u);
  EXPECT_EQ(s->Inputs(1),
            (std::vector<std::string>{"none", "16", "1", "1", "1", "1f1b", "1", "1", "2"}));
  EXPECT_EQ(s->Inputs(2).front(), "full");
  EXPECT_EQ(s->Gpus(0), 16);
}

// A base that sets Megatron-LM's micro-batch group: the interleaved layouts keep it (each
// validated against its own pp and micro-batches), the other schedules drop it, as Megatron-LM
// reads it only in the interleaved schedule.
// The same whether the base or a sweep axis gives it: the layouts are searched without it.
TEST(PointSpace, AutoLayoutsKeepTheMicrobatchGroupWhereInterleaved) {
  const LoadOptions lib = sweep_test::Lib();
  for (const bool axis : {false, true}) {
    std::string head = kHead;
    head.replace(head.find("parallel: {tp: 2, pp: 2}"), 24,
                 axis ? "parallel: {}" : "parallel: {microbatch_group_size_per_vp_stage: 4}");
    Result<SweepSpec> spec =
        ParseSweepSpec(head + "sweep:\n  parallel: {auto: true, tp: [1], cp: [1]}\n" +
                           (axis ? "  parallel.microbatch_group_size_per_vp_stage: [4]\n" : ""),
                       "tests/sweep/data/inline.yaml", lib);
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    Result<PointSpace> s = PointSpace::Enumerate(*spec, lib);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    int kept = 0, refused = 0, dropped = 0;
    for (int64_t i = 0; i < s->size(); ++i) {
      const std::vector<std::string> in = s->Inputs(i);
      const std::vector<std::string>& cols = s->input_columns();
      ASSERT_EQ(in.size(), cols.size());
      const auto col = [&](const std::string& name) {
        return in[static_cast<size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin())];
      };
      const int64_t pp = std::stoll(col("parallel.pp"));
      const std::string schedule = col("parallel.schedule");
      Result<Scenario> sc = s->Document(i)->Build(lib);
      if (schedule != "interleaved_1f1b") {
        ASSERT_TRUE(sc.ok()) << schedule << " pp " << pp << ": " << sc.status().ToString();
        EXPECT_EQ(sc->parallel.microbatch_group_size_per_vp_stage, 0);
        ++dropped;
      } else if (pp <= 4) {  // 32 / (16 / pp) = 2·pp micro-batches: 4 fits pp 2 and 4
        ASSERT_TRUE(sc.ok()) << "pp " << pp << ": " << sc.status().ToString();
        EXPECT_EQ(sc->parallel.microbatch_group_size_per_vp_stage, 4);
        ++kept;
      } else {
        ASSERT_FALSE(sc.ok()) << "pp " << pp;
        EXPECT_EQ(sc.status().diagnostics().front().message.find(
                      "parallel.microbatch_group_size_per_vp_stage: 4 is below pp"),
                  0u)
            << sc.status().ToString();
        ++refused;
      }
    }
    EXPECT_GT(kept, 0) << axis;
    EXPECT_GT(refused, 0) << axis;
    EXPECT_GT(dropped, 0) << axis;
  }
}

TEST(PointSpace, CombinationWithoutValidLayoutIsOneInfeasiblePoint) {
  Result<PointSpace> s = Space("sweep:\n  gpus: [16, 7]\n  parallel: auto\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const int64_t last = s->size() - 1;
  EXPECT_EQ(s->Problem(last),
            "parallel: auto: no layout of 7 GPUs passes validation for model gpt3-350m (16 heads, "
            "24 layers), seq_len 2048, global_batch 32");
  EXPECT_EQ(s->Inputs(last), (std::vector<std::string>{"7", "", "", "", "", "", "", ""}));
  EXPECT_TRUE(s->Problem(0).empty());
}

TEST(PointSpace, AutoNeedsTheGpuCount) {
  const LoadOptions lib = sweep_test::Lib();
  Result<SweepSpec> spec = ParseSweepSpec(
      "model: gpt3-350m\nhardware: a100-sxm4-40gb\ntopology: dgx-a100\n"
      "training: {seq_len: 2048, global_batch: 32}\nsweep:\n  parallel: auto\n",
      "tests/sweep/data/inline.yaml", lib);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  Result<PointSpace> s = PointSpace::Enumerate(*spec, lib);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().diagnostics().front().loc.ToString() + ": " + s.status().message(),
            "tests/sweep/data/inline.yaml:6:3: parallel: auto needs the GPU count: set gpus in "
            "the scenario or sweep it (gpus: [256, 512])");
}

}  // namespace
}  // namespace shardsim
