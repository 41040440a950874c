// One training step end to end (op graph, costs, layout, task graph, engine run, report data),
// for the scenarios of issue 4, and the simulation cost against the data-parallel degree (it
// must not grow: the representative pipeline stands for every replica). Also `budget` on the
// largest model of the reference runs (Megatron-LM's 1T GPT, 1,008B) and on DeepSeek-V3 (the
// largest op graph: MLA, 256 routed experts, multi-token prediction) (issue 2).
#include <benchmark/benchmark.h>

#include <string>
#include <utility>

#include "sim/config/loader.h"
#include "sim/report/budget_report.h"
#include "sim/report/simulate.h"

namespace shardsim {
namespace {

Scenario Load(const std::string& file) {
  auto sc = LoadScenario(std::string(SHARDSIM_SOURCE_DIR) + "/" + file, LoadOptions{});
  if (!sc.ok()) {
    std::fprintf(stderr, "%s\n", sc.status().ToString().c_str());
    std::abort();
  }
  return *sc;
}

void RunScenario(benchmark::State& state, const std::string& file) {
  const Scenario sc = Load(file);
  int64_t tasks = 0;
  for (auto _ : state) {
    auto r = Simulate(sc);
    if (!r.ok()) state.SkipWithError(r.status().message().c_str());
    tasks = r->tasks;
    benchmark::DoNotOptimize(r->step_time);
  }
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["scenarios/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_Llama3_70B_H100x1024(benchmark::State& s) {
  RunScenario(s, "scenarios/llama3-70b-h100x1024.yaml");
}
void BM_Llama3_405B_H100x16384(benchmark::State& s) {
  RunScenario(s, "scenarios/llama3-405b-h100x16k.yaml");
}
void BM_Gpt3_175B_A100x1024(benchmark::State& s) {
  RunScenario(s, "scenarios/gpt3-175b-a100x1024.yaml");
}
BENCHMARK(BM_Llama3_70B_H100x1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Llama3_405B_H100x16384)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gpt3_175B_A100x1024)->Unit(benchmark::kMillisecond);

// Llama-3-70B, TP8 PP4, 32 micro-batches per step, at DP state.range(0) on `sc`'s cluster.
void RunDpScaling(benchmark::State& state, Scenario sc) {
  const int64_t dp = state.range(0);
  sc.parallel.dp = dp;
  sc.gpus = dp * 32;
  sc.training.global_batch = 32 * dp;
  sc.topology.max_nodes = 0;
  for (auto _ : state) {
    auto r = Simulate(sc);
    if (!r.ok()) state.SkipWithError(r.status().message().c_str());
    benchmark::DoNotOptimize(r->step_time);
  }
  state.counters["gpus"] = static_cast<double>(sc.gpus);
}

// DP from 8 to 2,048 (256 to 65,536 GPUs) on dgx-h100.
void BM_DpScaling(benchmark::State& state) {
  RunDpScaling(state, Load("scenarios/llama3-70b-h100x1024.yaml"));
}
BENCHMARK(BM_DpScaling)->RangeMultiplier(4)->Range(8, 2048)->Unit(benchmark::kMillisecond);

// The same on dgx-a100 (A100s, 20-node leaf domains): DP groups that do not line up with the
// leaf domains (DP 64: 64 nodes = 3.2 leaf domains), whose shapes were once found by visiting
// every member (issue 17).
void BM_DpScalingDgxA100(benchmark::State& state) {
  Scenario a100 = Load("scenarios/gpt3-175b-a100x1024.yaml");
  Scenario sc = Load("scenarios/llama3-70b-h100x1024.yaml");
  sc.hardware = a100.hardware;
  sc.topology = a100.topology;
  RunDpScaling(state, std::move(sc));
}
BENCHMARK(BM_DpScalingDgxA100)->RangeMultiplier(4)->Range(8, 2048)->Unit(benchmark::kMillisecond);

void RunBudget(benchmark::State& state, const std::string& file) {
  const Scenario sc = Load(file);
  for (auto _ : state) {
    auto r = BuildBudget(sc);
    if (!r.ok()) state.SkipWithError(r.status().message().c_str());
    benchmark::DoNotOptimize(r->params.total);
  }
}
void BM_BudgetLargestModel(benchmark::State& s) {
  RunBudget(s, "tests/validation/narayanan2021_t1_1008.0b.yaml");
}
void BM_BudgetDeepSeekV3(benchmark::State& s) {
  RunBudget(s, "scenarios/deepseek-v3-h800x2048.yaml");
}
BENCHMARK(BM_BudgetLargestModel)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_BudgetDeepSeekV3)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace shardsim

BENCHMARK_MAIN();
