// Memory held against what was measured and what was stated: the peak memory torchtitan's
// benchmark measured for its Llama 3 8B runs (tests/reference/memory.yaml measured_peak_memory,
// the allocator's max reserved, within 3.5%), and the layouts published as fitting or not fitting
// in 80 GB (tests/reference/memory.yaml feasibility; scenarios in tests/validation/feasibility/ and
// the BLOOM run), and the per-GPU activation memory profiled on Megatron-LM for the four models
// of Korthikanti 2022 (megatron_profiled_memory_korthikanti2022).
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/loader.h"
#include "sim/memory/allocator.h"
#include "sim/memory/budget.h"
#include "sim/parallel/plan.h"
#include "sim/report/simulate.h"

namespace shardsim {
namespace {

const std::string kDir = std::string(SHARDSIM_SOURCE_DIR) + "/tests/validation/";

// torchtitan's benchmark tables print the memory its training loop logs:
// DeviceMemoryMonitor.get_peak_stats().max_reserved_gib, torch.cuda.memory_stats()
// "reserved_bytes.all.peak" (torchtitan/components/metrics.py), the caching allocator's reserve,
// so they are compared with memory.reserved_peak_bytes (sim/memory/allocator.h). The device
// figure (nvidia-smi) and the allocated figure are printed beside it. The mechanisms (README,
// Memory): FSDP2 keeps the root group (embedding, final norm, head) unsharded from forward to
// backward; its all-gather and reduce-scatter buffers (the latter fp32, the reduce dtype) are
// cached on their own streams (StageMemory::stream_pools), each one expandable segment under
// torchtitan's PYTORCH_CUDA_ALLOC_CONF; its shards stay fp32 (the master) with no bf16 copy;
// and torchtitan's op-level SAC keeps the block's last mm output in eager mode, which the
// compiled partitioner drops (OpSacKeptBytes: the eager rows above the compiled ones). Five rows
// are within 1%; the full-AC rows (t2) are 2.6-3.3% low and t1's eager row 1.7% low, residuals the
// README names. Held within 3.5%; the eager row of each table is predicted above its compiled row.
// Beside it, the caching allocator replayed over the step (ReplayFsdp2Step, sim/memory/budget.h),
// each block's forward tensor by tensor (sim/memory/layer_forward.h): the full-AC rows (t2) within
// 0.5% (held within 1%); the op-SAC rows (t1, t3) 1.5-4.0% low (held below and within 5%), a
// residual the README names.
TEST(MemoryValidation, TorchtitanMeasuredPeaks) {
  std::ifstream in(kDir + "published.json");
  const nlohmann::json runs = nlohmann::json::parse(in)["runs"];
  std::printf("\n%-40s %10s %10s %10s %10s %10s %8s\n", "run", "allocated", "reserved", "device",
              "peak_bytes", "measured", "error");
  int checked = 0;
  const double gib = 1073741824.0;
  std::map<std::string, double> predicted_of;
  std::map<std::string, double> replayed_of;
  struct ReplayRow {
    std::string id;
    double allocated, streams, reserved, measured, err;
  };
  std::vector<ReplayRow> replay_rows;
  for (const auto& r : runs) {
    if (!r.contains("peak_memory_gib") || r["peak_memory_gib"].is_null()) continue;
    auto sc = LoadScenario(kDir + r["scenario"].get<std::string>(), LoadOptions{});
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    auto sim = Simulate(*sc);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    const DeviceStats& wd = sim->devices[static_cast<size_t>(sim->worst_device)];
    const MemoryFigures f = DeviceMemoryFigures(
        sim->memory.stages[static_cast<size_t>(wd.coords.pp)], wd.peak_activations, sc->hardware);
    const double measured = r["peak_memory_gib"]["value"].get<double>();
    // The figure the scenario's framework logs (torchtitan: reserved).
    ASSERT_EQ(sc->framework.name, Framework::kTorchtitan) << r["id"];
    const double predicted = FrameworkFigure(f, sc->framework.memory_figure).value() / gib;
    const double err = predicted / measured - 1.0;
    std::printf("%-40s %6.1f GiB %6.1f GiB %6.1f GiB %6.1f GiB %6.1f GiB %+7.1f%%\n",
                r["id"].get<std::string>().c_str(), f.allocated.value() / gib, predicted,
                f.device.value() / gib, sim->peak_memory.value() / gib, measured, err * 100.0);
    EXPECT_LE(std::fabs(err), 0.035) << r["id"];
    // The caching allocator replayed over the step (ReplayFsdp2Step), beside the closed form.
    auto plan = ShardModel(sc->model, sc->training, sc->parallel);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    auto replay =
        ReplayFsdp2Step(*plan, sc->model, sc->training, sc->parallel, sc->framework, sim->memory);
    ASSERT_TRUE(replay.ok()) << r["id"] << ": " << replay.status().ToString();
    const double replayed = replay->reserved.value() / gib;
    const double replay_err = replayed / measured - 1.0;
    replay_rows.push_back({r["id"].get<std::string>(), replay->allocated.value() / gib,
                           replay->collective_streams.value() / gib, replayed, measured,
                           replay_err});
    if (sc->training.recompute == Recompute::kFull) {
      EXPECT_LE(std::fabs(replay_err), 0.01) << r["id"];
    } else {
      // Op-level SAC: something the replay does not have is missing (README, Memory).
      EXPECT_LT(replay_err, 0.0) << r["id"];
      EXPECT_GT(replay_err, -0.05) << r["id"];
    }
    replayed_of[r["id"].get<std::string>()] = replayed;
    predicted_of[r["id"].get<std::string>()] = predicted;
    EXPECT_TRUE(sim->fits) << r["id"] << " ran, so it fits";
    ++checked;
  }
  EXPECT_EQ(checked, 10);
  std::printf("\nthe step replayed through the caching allocator (ReplayFsdp2Step):\n");
  std::printf("%-40s %10s %10s %10s %10s %8s\n", "run", "allocated", "streams", "reserved",
              "measured", "error");
  for (const ReplayRow& row : replay_rows) {
    std::printf("%-40s %6.1f GiB %6.1f GiB %6.1f GiB %6.1f GiB %+7.1f%%\n", row.id.c_str(),
                row.allocated, row.streams, row.reserved, row.measured, row.err * 100.0);
  }
  for (const std::string t : {"torchtitan_t1_8b_fsdp", "torchtitan_t3_8b_128gpu_fsdp"}) {
    std::printf("%s eager - compiled: replayed %.1f GiB\n", t.c_str(),
                replayed_of[t] - replayed_of[t + "_compile"]);
  }
  // torch.compile lowers the peak (measured 5.4 GiB in Table 1, 5.0 in Table 3).
  for (const std::string t : {"torchtitan_t1_8b_fsdp", "torchtitan_t3_8b_128gpu_fsdp"}) {
    EXPECT_GT(predicted_of[t], predicted_of[t + "_compile"] + 3.0) << t;
  }
}

// Korthikanti 2022 profiled the per-GPU activation memory of its four Table-5 models on
// Megatron-LM (A100 80GB, sequence 2048): 22B (TP8, micro-batch 4), 175B (TP8 PP8, interleaved 3),
// 530B (TP8 PP35, interleaved 3), 1T (TP8 PP64), with no recompute and with sequence parallelism
// plus selective recompute (tests/reference/memory.yaml, from Calculon's validation data). The
// scenarios are the validation table's korthikanti2022_*_sp_selective runs; "none" is the same
// with recompute none and sequence parallelism off. shardsim's figure is the first pipeline
// stage's activations at its peak (micro-batches in flight x what each saves; the first stage
// is the one the paper's formulas describe). Nothing was fitted to these figures. Held: the
// median within 2% (issue 14's target for measured Megatron runs), every row within 5%.
// The same source's model states (params_and_optimizer) are printed, not held: it gives 45.56
// GiB for both 22B and 175B at 2.77 and 2.82 billion parameters per GPU, 17.6 and 17.3 bytes a
// parameter, which no accounting of fp16 weights, gradients and Adam (16 or 18) gives; the study
// does not say how it was measured.
TEST(MemoryValidation, KorthikantiProfiledActivations) {
  const YAML::Node ref =
      YAML::LoadFile(std::string(SHARDSIM_SOURCE_DIR) + "/tests/reference/memory.yaml");
  const YAML::Node gib_of = ref["megatron_profiled_memory_korthikanti2022"]["gib"];
  ASSERT_TRUE(gib_of.IsMap());
  const double gib = 1073741824.0;
  const std::vector<std::pair<std::string, std::string>> models = {{"megatron-22b", "22b"},
                                                                   {"gpt3-175b", "175b"},
                                                                   {"turing-530b", "530b"},
                                                                   {"megatron-1t", "1t"}};
  std::printf("\n%-14s %-9s %12s %12s %8s   %14s %14s %8s\n", "model", "recompute", "activations",
              "profiled", "error", "model states", "profiled", "error");
  std::vector<double> errors;
  for (const auto& [key, scenario] : models) {
    auto sc =
        LoadScenario(kDir + "korthikanti2022_" + scenario + "_sp_selective.yaml", LoadOptions{});
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    const YAML::Node pub = gib_of[key];
    ASSERT_TRUE(pub.IsMap()) << key;
    for (const bool none : {true, false}) {
      Scenario s = *sc;
      if (none) {
        s.training.recompute = Recompute::kNone;
        s.parallel.sequence_parallel = false;
      }
      auto budget = EstimateMemory(s.model, s.training, s.parallel, s.hardware, s.framework);
      ASSERT_TRUE(budget.ok()) << key << ": " << budget.status().ToString();
      const StageMemory& first = budget->stages.front();
      const double act = first.activations.value() / gib;
      const double states =
          (first.weights.value() + first.gradients.value() + first.optimizer.value()) / gib;
      const double act_pub = pub[none ? "activations_none" : "activations_seq_sel"].as<double>();
      const double states_pub = pub["params_and_optimizer"].as<double>();
      const double err = act / act_pub - 1.0;
      errors.push_back(err);
      std::printf("%-14s %-9s %8.2f GiB %8.2f GiB %+7.1f%%   %10.2f GiB %10.2f GiB %+7.1f%%\n",
                  key.c_str(), none ? "none" : "seq+sel", act, act_pub, 100.0 * err, states,
                  states_pub, 100.0 * (states / states_pub - 1.0));
      EXPECT_LE(std::fabs(err), 0.05) << key << (none ? " none" : " seq+sel");
    }
  }
  ASSERT_EQ(errors.size(), 8u);
  std::vector<double> abs_err;
  for (double e : errors) abs_err.push_back(std::fabs(e));
  std::sort(abs_err.begin(), abs_err.end());
  const double median = 0.5 * (abs_err[3] + abs_err[4]);  // 8 figures
  std::printf("activations: median abs. error %.1f%% over %zu figures\n", 100.0 * median,
              errors.size());
  EXPECT_LE(median, 0.02);
}

TEST(MemoryValidation, PublishedFeasibility) {
  struct Case {
    const char* file;
    bool fits;
  };
  const Case cases[] = {
      {"feasibility/gpt3-175b-h100-fp8-norecompute.yaml", true},
      {"feasibility/llama3-405b-16k-norecompute.yaml", true},
      {"feasibility/gpt-neox-20b-a100-40gb.yaml", true},
      {"feasibility/mpt-7b-h100-mb6-norecompute.yaml", true},
      {"feasibility/mpt-70b-a100-mb8-norecompute.yaml", false},
      {"bloom176b_384gpu.yaml", true},
  };
  for (const Case& c : cases) {
    Result<Scenario> sc = LoadScenario(kDir + c.file, LoadOptions{});
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    Result<SimResult> sim = Simulate(*sc);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    std::printf("%-52s peak %6.1f GiB of %5.1f: %s (stated: %s)\n", c.file,
                sim->peak_memory.value() / 1073741824.0,
                sc->hardware.memory_capacity / 1073741824.0, sim->fits ? "fits" : "does not fit",
                c.fits ? "fits" : "does not fit");
    EXPECT_EQ(sim->fits, c.fits) << c.file;
  }
}

// Published layouts that, by their own account, use about all of the GPU: the model must put
// their peak within 1% of the capacity, on either side (a verdict that close is a coin toss for
// any estimate; the closed-form budget's assumptions, e.g. the 3% fragmentation reserve, are
// larger than the margin). When a mechanism moves one of them clearly to one side, move it to
// PublishedFeasibility or treat it as a gap.
TEST(MemoryValidation, LayoutsAtTheCapacityLine) {
  struct Line {
    const char* file;
    const char* statement;
  };
  const Line lines[] = {
      {"feasibility/deepseek-v3-h800-pp16-ep64.yaml",
       "DeepSeek-V3 trains PP16 EP64 ZeRO-1 without TP on 80 GB H800 with FP8 activation caching, "
       "FP8 dispatch, RMSNorm / MLA up-projection / SwiGLU recompute and BF16 moments (arXiv "
       "2412.19437 §3.2.3, §3.3.3), all modeled; DualPipe is not (docs/moe.md)"},
  };
  for (const Line& l : lines) {
    auto sc = LoadScenario(kDir + l.file, LoadOptions{});
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    auto sim = Simulate(*sc);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    const double capacity = sc->hardware.memory_capacity;
    const double off = sim->peak_memory.value() / capacity - 1.0;
    std::printf("%-52s peak %6.2f GiB of %5.2f: %+.3f%% of capacity, %s. %s\n", l.file,
                sim->peak_memory.value() / 1073741824.0, capacity / 1073741824.0, off * 100.0,
                sim->fits ? "fits" : "does not fit", l.statement);
    EXPECT_LE(std::fabs(off), 0.01) << l.file;
  }
}

}  // namespace
}  // namespace shardsim
