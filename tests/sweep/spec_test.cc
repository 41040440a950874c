// Sweep specs: axes, ranges, zip, auto, and the exact text of every error (file:line:col, key).
#include <gtest/gtest.h>

#include "sim/sweep/sweep_spec.h"
#include "tests/sweep/sweep_test_util.h"

namespace shardsim {
namespace {

using sweep_test::Lib;

const char* kHead = R"(name: t
model: gpt3-350m
hardware: a100-sxm4-40gb
topology: dgx-a100
gpus: 16
training:
  seq_len: 2048
  global_batch: 32
)";

Result<SweepSpec> Parse(const std::string& sweep, const std::string& head = kHead) {
  const LoadOptions lib = Lib();
  return ParseSweepSpec(head + sweep, "tests/sweep/data/inline.yaml", lib);
}

std::vector<std::string> Values(const Axis& a) {
  std::vector<std::string> out;
  for (const AxisValue& v : a.values) out.push_back(v.text);
  return out;
}

TEST(SweepSpec, AxesInFileOrderWithListsRangesAndSingleValues) {
  Result<SweepSpec> s = Parse(
      "sweep:\n"
      "  training.recompute: [none, selective, full]\n"
      "  gpus: {from: 8, to: 64, mul: 2}\n"
      "  training.micro_batch: {from: 1, to: 4, step: 1}\n"
      "  parallel.zero_stage: 1\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->dims.size(), 4u);
  EXPECT_EQ(s->dims[0].axes[0].key, "training.recompute");
  EXPECT_EQ(Values(s->dims[0].axes[0]), (std::vector<std::string>{"none", "selective", "full"}));
  EXPECT_EQ(Values(s->dims[1].axes[0]), (std::vector<std::string>{"8", "16", "32", "64"}));
  EXPECT_EQ(Values(s->dims[2].axes[0]), (std::vector<std::string>{"1", "2", "3", "4"}));
  EXPECT_EQ(Values(s->dims[3].axes[0]), (std::vector<std::string>{"1"}));
  EXPECT_FALSE(s->layout.enabled);
  EXPECT_FALSE(s->micro_batch_auto);
  EXPECT_EQ(s->dims[0].axes[0].key_origin.loc.line, 10);
}

TEST(SweepSpec, GeometricRangeStopsAtTo) {
  Result<SweepSpec> s = Parse("sweep:\n  gpus: {from: 2, to: 50, mul: 4}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Values(s->dims[0].axes[0]), (std::vector<std::string>{"2", "8", "32"}));
}

TEST(SweepSpec, ZipGroupsBecomeOneDimensionAtTheirFirstAxis) {
  Result<SweepSpec> s = Parse(
      "sweep:\n"
      "  training.recompute: [none, full]\n"
      "  hardware: [a100-sxm4-40gb, h100-sxm]\n"
      "  gpus: [8, 16]\n"
      "  topology: [dgx-a100, dgx-h100]\n"
      "  zip: [[hardware, topology]]\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->dims.size(), 3u);
  ASSERT_EQ(s->dims[1].axes.size(), 2u);
  EXPECT_EQ(s->dims[1].axes[0].key, "hardware");
  EXPECT_EQ(s->dims[1].axes[1].key, "topology");
  EXPECT_EQ(s->dims[2].axes[0].key, "gpus");
}

TEST(SweepSpec, ParallelAutoWithRestrictionsAndMicroBatchAuto) {
  Result<SweepSpec> s = Parse(
      "sweep:\n"
      "  parallel: {auto: true, tp: [1, 2, 4], cp: 1, schedule: [1f1b, interleaved_1f1b],\n"
      "             virtual_stages: {from: 2, to: 4, step: 1}}\n"
      "  training.micro_batch: auto\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->layout.enabled);
  EXPECT_EQ(s->layout.tp, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(s->layout.cp, (std::vector<int64_t>{1}));
  EXPECT_EQ(s->layout.virtual_stages, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(s->layout.schedules, (std::vector<PipelineSchedule>{
                                     PipelineSchedule::k1F1B, PipelineSchedule::kInterleaved1F1B}));
  EXPECT_TRUE(s->micro_batch_auto);
  EXPECT_TRUE(s->dims.empty());
}

TEST(SweepSpec, InlineMappingValuesAreFlowYaml) {
  Result<SweepSpec> s = Parse(
      "sweep:\n"
      "  hardware: [a100-sxm4-40gb, {base: a100-sxm4-40gb, memory: {capacity: 80 GiB}}]\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->dims[0].axes[0].values[1].yaml,
            "{base: a100-sxm4-40gb, memory: {capacity: 80 GiB}}");
}

TEST(SweepSpec, SweepFileNamingABaseScenario) {
  const LoadOptions lib = Lib();
  Result<SweepSpec> s = ParseSweepSpec(
      "base: ../../../scenarios/quickstart.yaml\n"
      "training: {seq_len: 4096}\n"
      "sweep:\n"
      "  training.recompute: [selective, full]\n",
      "tests/sweep/data/inline.yaml", lib);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Result<Scenario> sc = s->base->Build(lib);
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  EXPECT_EQ(sc->model.name, "llama3-70b");
  EXPECT_EQ(sc->training.seq_len, 4096);
  EXPECT_EQ(sc->gpus, 512);
}

TEST(SweepSpec, LayoutDependentCombinationsAreNotSpecErrors) {
  // gpus 24 leaves dp = 3, which does not divide the global batch; cp 3 does not divide the
  // sequence into 2*cp chunks; tp 32 does not divide gpt3-350m's 16 heads but divides
  // llama3-8b's 32. Each is a property of a combination, counted as infeasible points.
  Result<SweepSpec> s = Parse(
      "sweep:\n"
      "  model: [gpt3-350m, llama3-8b]\n"
      "  gpus: [16, 24, 32]\n"
      "  parallel.cp: [1, 3]\n"
      "  parallel.tp: [1, 32]\n");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
}

TEST(SweepSpec, MicrobatchGroupValuesAreCheckedPointByPoint) {
  // Megatron-LM's micro-batch group depends on the point's schedule, pp and micro-batches (here
  // 1f1b, which takes none: every point is invalid, with the reason); its type is the value's.
  Result<SweepSpec> s = Parse("sweep:\n  parallel.microbatch_group_size_per_vp_stage: [4, 8]\n");
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  Result<SweepSpec> bad = Parse("sweep:\n  parallel.microbatch_group_size_per_vp_stage: [4, -1]\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().diagnostics().front().message,
            "parallel.microbatch_group_size_per_vp_stage: must not be negative, got -1");
}

TEST(SweepSpec, EveryBadAxisReportedAtOnceInFileOrder) {
  const LoadOptions lib = Lib();
  Result<SweepSpec> s = LoadSweepSpec("tests/sweep/data/bad.yaml", lib);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
  const std::string lib_dir = SHARDSIM_SOURCE_DIR;
  EXPECT_EQ(s.status().ToString(),
            "tests/sweep/data/bad.yaml:10:3: error: parallel.tpp: unknown key; did you mean 'tp'?\n"
            "      parallel.tpp: [1, 2]\n"
            "      ^\n"
            "tests/sweep/data/bad.yaml:11:23: error: training.recompute: empty list; an axis "
            "needs at least one value\n"
            "      training.recompute: []\n"
            "                          ^\n"
            "tests/sweep/data/bad.yaml:12:28: error: parallel.zero_stage: must be between 0 and 3, "
            "got 5\n"
            "      parallel.zero_stage: [0, 5]\n"
            "                               ^\n"
            "tests/sweep/data/bad.yaml:13:30: error: hardware: no hardware named 'h100-sxmm' in " +
                lib_dir +
                "/hardware/; close names: h100-sxm, h200-sxm, h800-sxm\n"
                "      hardware: [a100-sxm4-40gb, h100-sxmm]\n"
                "                                 ^\n"
                "tests/sweep/data/bad.yaml:14:17: error: parallel.tp: 3 does not divide "
                "model.num_heads (16, " +
                lib_dir +
                "/models/gpt3-350m.yaml:5:12)\n"
                "      parallel.tp: [3, 4]\n"
                "                    ^\n"
                "tests/sweep/data/bad.yaml:14:17: error: parallel.tp: 3 does not divide "
                "model.ffn_hidden_size (4096, " +
                lib_dir +
                "/models/gpt3-350m.yaml:6:18)\n"
                "      parallel.tp: [3, 4]\n"
                "                    ^");
}

struct BadCase {
  const char* sweep;
  const char* error;  // the first diagnostic, without its source line
};

class SweepSpecErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(SweepSpecErrors, ExactText) {
  const std::string sweep = GetParam().sweep;
  Result<SweepSpec> s =
      sweep.empty() ? Parse("{name: t, model: gpt3-350m, gpus: 16, sweep: {gpus: [8]}}\n", "")
                    : Parse(sweep);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
  const Diagnostic& d = s.status().diagnostics().front();
  EXPECT_EQ(d.loc.ToString() + ": " + d.message, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SweepSpecErrors,
    ::testing::Values(
        BadCase{"sweep:\n  training.recompute:\n",
                "tests/sweep/data/inline.yaml:10:3: training.recompute: empty value; an axis "
                "needs at least one value"},
        BadCase{"sweep:\n  gpus: {from: 8, to: 4, step: 1}\n",
                "tests/sweep/data/inline.yaml:10:9: gpus: empty range (from 8 is above to 4); an "
                "axis needs at least one value"},
        BadCase{"sweep:\n  gpus: {from: 8, to: 64, mull: 2}\n",
                "tests/sweep/data/inline.yaml:10:27: gpus.mull: unknown key of a range; did you "
                "mean 'mul'? (a range is {from, to, mul} or {from, to, step})"},
        BadCase{"sweep:\n  gpus: {from: 8, to: 64, mul: 1}\n",
                "tests/sweep/data/inline.yaml:10:32: gpus.mul: a geometric range needs mul >= 2, "
                "got 1"},
        BadCase{"sweep:\n  parallel.zero_stage: {from: 0, to: 3, mul: 2}\n",
                "tests/sweep/data/inline.yaml:10:31: parallel.zero_stage.from: a geometric range "
                "(mul) needs from >= 1, got 0"},
        BadCase{"sweep:\n  training.recompute: auto\n",
                "tests/sweep/data/inline.yaml:10:23: training.recompute: auto is only for "
                "parallel and training.micro_batch; list the values"},
        BadCase{"sweep:\n  parallel: auto\n  parallel.tp: [1, 2]\n",
                "tests/sweep/data/inline.yaml:11:3: parallel.tp: cannot be an axis together with "
                "parallel: auto (line 10); restrict the layout instead: parallel: {auto: true, "
                "tp: [...]}"},
        BadCase{"sweep:\n  parallel: {auto: true, tpp: [1]}\n",
                "tests/sweep/data/inline.yaml:10:26: parallel.tpp: unknown key of parallel: "
                "auto; did you mean 'tp'? (it restricts dp, tp, pp, cp, virtual_stages, "
                "schedule and ep)"},
        BadCase{
            "sweep:\n  parallel: {auto: true, schedule: [1f1bb]}\n",
            "tests/sweep/data/inline.yaml:10:37: parallel.schedule: \"1f1bb\" is not one of "
            "gpipe, 1f1b, interleaved_1f1b, zb_h1, zb_h2, zb_v, dualpipe, dualpipe_v; did you mean "
            "'1f1b'?"},
        BadCase{"sweep:\n  hardware: [a100-sxm4-40gb]\n  zip: [[hardware, topolgy]]\n",
                "tests/sweep/data/inline.yaml:11:20: zip: \"topolgy\" is not an axis of this "
                "sweep"},
        BadCase{"sweep:\n  hardware: [a100-sxm4-40gb, h100-sxm]\n  topology: [dgx-a100]\n"
                "  zip: [[hardware, topology]]\n",
                "tests/sweep/data/inline.yaml:12:20: zip: topology has 1 values but hardware "
                "has 2; zipped axes need the same number of values"},
        BadCase{"sweep:\n  gpus.count: [1]\n",
                "tests/sweep/data/inline.yaml:10:3: cannot set 'gpus.count': 'gpus' is \"16\", "
                "not a mapping"},
        BadCase{"sweep:\n  hardware.memory.capacity: [40 GiB, 80]\n",
                "tests/sweep/data/inline.yaml:10:38: hardware.memory.capacity: \"80\" has no "
                "unit; expected e.g. \"80 GiB\""},
        BadCase{"sweep: [1, 2]\n",
                "tests/sweep/data/inline.yaml:9:8: sweep: expected a mapping of axes "
                "(`training.recompute: [none, full]`), got a list"},
        BadCase{"",  // the whole document in flow style (kHead is not prepended: see below)
                "tests/sweep/data/inline.yaml:1:39: sweep: write the sweep block in block style "
                "at the top level of the file (a line `sweep:` followed by its indented keys)"}),
    [](const ::testing::TestParamInfo<SweepSpecErrors::ParamType>& param) {
      return "case" + std::to_string(param.index);
    });

TEST(SweepSpec, NoSweepBlock) {
  Result<SweepSpec> s = Parse("");
  ASSERT_FALSE(s.ok());
  // At the mapping that lacks it (issue 19).
  EXPECT_EQ(s.status().ToString(),
            "tests/sweep/data/inline.yaml:1:1: error: no sweep: block (a sweep file is a scenario, "
            "or `base: scenario.yaml`, with a sweep: mapping of axes)\n    name: t\n    ^");
}

}  // namespace
}  // namespace shardsim
