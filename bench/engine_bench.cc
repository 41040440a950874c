// Event-loop throughput of the engine (sim/engine): delay chains, many streams, flow-heavy
// graphs. Counters: tasks/s (simulated tasks per wall-clock second, Run() only unless the name
// says Build) and events/s. Graphs are built once outside the timed loop; Run() is const.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/engine/engine.h"
#include "sim/parallel/plan.h"
#include "sim/program/step_run.h"

namespace shardsim {
namespace {

SimTime Ps(int64_t ps) { return SimTime::FromPicos(ps); }

void RunAndCount(benchmark::State& state, const Engine& e) {
  RunStats stats;
  for (auto _ : state) {
    auto r = e.Run();
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      return;
    }
    stats = r->stats();
    benchmark::DoNotOptimize(r->makespan());
  }
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["tasks/s"] =
      benchmark::Counter(iterations * e.num_tasks(), benchmark::Counter::kIsRate);
  const double tasks = e.num_tasks();
  state.counters["events/s"] = benchmark::Counter(iterations * static_cast<double>(stats.events),
                                                  benchmark::Counter::kIsRate);
  state.counters["tasks"] = tasks;
  state.counters["resources"] = e.num_resources();
  state.counters["events/task"] = static_cast<double>(stats.events) / tasks;
  state.counters["reshared/task"] = static_cast<double>(stats.reshared_flows) / tasks;
  state.counters["max_queue"] = static_cast<double>(stats.max_queue);
  state.counters["max_active"] = static_cast<double>(stats.max_active_flows);
}

// N delays on one stream: released by stream order, one event in flight.
void BM_DelayChainOnStream(benchmark::State& state) {
  const auto n = static_cast<int32_t>(state.range(0));
  Engine e;
  e.Reserve(n, 0);
  const ResourceId s = e.AddStream("s");
  for (int32_t i = 0; i < n; ++i) e.AddDelay(s, Ps(1000 + i % 7), 0, 0);
  RunAndCount(state, e);
}
BENCHMARK(BM_DelayChainOnStream)->Arg(1 << 10)->Arg(1 << 17)->Unit(benchmark::kMicrosecond);

// N delays on no stream, each depending on the previous one.
void BM_DelayChainByDependencies(benchmark::State& state) {
  const auto n = static_cast<int32_t>(state.range(0));
  Engine e;
  e.Reserve(n, n);
  TaskId prev;
  for (int32_t i = 0; i < n; ++i) {
    const TaskId t = e.AddDelay(ResourceId(), Ps(1000 + i % 7), 0, 0);
    if (prev.valid()) e.AddDependency(prev, t);
    prev = t;
  }
  RunAndCount(state, e);
}
BENCHMARK(BM_DelayChainByDependencies)->Arg(1 << 17)->Unit(benchmark::kMicrosecond);

// Building the graph and running it, as one scenario of a sweep does.
void BM_DelayChainBuildAndRun(benchmark::State& state) {
  const auto n = static_cast<int32_t>(state.range(0));
  for (auto _ : state) {
    Engine e;
    e.Reserve(n, n);
    const ResourceId s = e.AddStream("s");
    TaskId prev;
    for (int32_t i = 0; i < n; ++i) {
      const TaskId t = e.AddDelay(s, Ps(1000 + i % 7), 0, 0);
      if (prev.valid()) e.AddDependency(prev, t);
      prev = t;
    }
    auto r = e.Run();
    benchmark::DoNotOptimize(r->makespan());
  }
  state.counters["tasks/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(n),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DelayChainBuildAndRun)->Arg(1 << 17)->Unit(benchmark::kMicrosecond);

// S streams x K tasks, task k of stream s depending on task k of stream s-1 (a wavefront, like
// pipeline stages): up to S events in flight.
void BM_ManyStreams(benchmark::State& state) {
  const auto streams = static_cast<int32_t>(state.range(0));
  const int32_t per_stream = (1 << 17) / streams;
  Engine e;
  e.Reserve(streams * per_stream, int64_t{streams} * per_stream);
  std::vector<ResourceId> s;
  for (int32_t i = 0; i < streams; ++i) s.push_back(e.AddStream("s" + std::to_string(i)));
  std::vector<TaskId> prev_row(static_cast<size_t>(per_stream));
  for (int32_t i = 0; i < streams; ++i) {
    for (int32_t k = 0; k < per_stream; ++k) {
      const TaskId t = e.AddDelay(s[static_cast<size_t>(i)], Ps(1000 + (i * 31 + k) % 97), 0, 0);
      if (i > 0) e.AddDependency(prev_row[static_cast<size_t>(k)], t);
      prev_row[static_cast<size_t>(k)] = t;
    }
  }
  RunAndCount(state, e);
}
BENCHMARK(BM_ManyStreams)->Arg(8)->Arg(64)->Arg(1024)->Unit(benchmark::kMicrosecond);

// A pipeline-like step: P stages x M micro-batches x L layers. Per layer a compute delay on the
// stage's compute stream, then a tensor-parallel flow over the stage's NVLink (tp stream); per
// micro-batch a flow to the next stage over a link shared by all stage boundaries (pp stream).
// About a third of the tasks are flows, a few active at a time.
void BM_PipelineLike(benchmark::State& state) {
  const auto stages = static_cast<int32_t>(state.range(0));
  const auto micro = static_cast<int32_t>(state.range(1));
  const int32_t layers = 12;
  Engine e;
  const ResourceId fabric = e.AddLink("fabric", BytesPerSec(50e9));
  std::vector<TaskId> prev_stage_out(static_cast<size_t>(micro));
  for (int32_t p = 0; p < stages; ++p) {
    const std::string name = "stage" + std::to_string(p);
    const ResourceId compute = e.AddStream(name + ".compute");
    const ResourceId tp = e.AddStream(name + ".tp");
    const ResourceId pp = e.AddStream(name + ".pp");
    const ResourceId nvlink = e.AddLink(name + ".nvlink", BytesPerSec(450e9));
    const std::vector<ResourceId> tp_links{nvlink};
    const std::vector<ResourceId> pp_links{fabric};
    for (int32_t m = 0; m < micro; ++m) {
      TaskId prev = prev_stage_out[static_cast<size_t>(m)];
      for (int32_t l = 0; l < layers; ++l) {
        const TaskId c = e.AddDelay(compute, Ps(400'000'000), 0, 0);
        if (prev.valid()) e.AddDependency(prev, c);
        const TaskId ar = e.AddFlow(tp, Bytes(64e6), Ps(5'000'000), tp_links, 1, 1);
        e.AddDependency(c, ar);
        prev = ar;
      }
      const TaskId send = e.AddFlow(pp, Bytes(32e6), Ps(10'000'000), pp_links, 2, 2);
      e.AddDependency(prev, send);
      prev_stage_out[static_cast<size_t>(m)] = send;
    }
  }
  RunAndCount(state, e);
}
BENCHMARK(BM_PipelineLike)->Args({8, 32})->Args({16, 128})->Unit(benchmark::kMicrosecond);

// Worst case for sharing: W waves of F flows all crossing one shared link plus a private one;
// every flow end changes the rates of every other flow in its wave.
void BM_FlowsOnOneSharedLink(benchmark::State& state) {
  const auto flows = static_cast<int32_t>(state.range(0));
  const int32_t waves = (1 << 14) / flows;
  Engine e;
  const ResourceId shared = e.AddLink("spine", BytesPerSec(400e9));
  std::vector<ResourceId> nic;
  for (int32_t f = 0; f < flows; ++f)
    nic.push_back(e.AddLink("nic" + std::to_string(f), BytesPerSec(50e9)));
  std::vector<TaskId> prev(static_cast<size_t>(flows));
  for (int32_t w = 0; w < waves; ++w) {
    for (int32_t f = 0; f < flows; ++f) {
      const std::vector<ResourceId> path{nic[static_cast<size_t>(f)], shared};
      const TaskId t =
          e.AddFlow(ResourceId(), Bytes(1e6 * (1 + (f * 7 + w) % 13)), Ps(1'000'000), path, 0, 0);
      if (prev[static_cast<size_t>(f)].valid()) e.AddDependency(prev[static_cast<size_t>(f)], t);
      prev[static_cast<size_t>(f)] = t;
    }
  }
  RunAndCount(state, e);
}
BENCHMARK(BM_FlowsOnOneSharedLink)->Arg(8)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

// The task graph of a shipped scenario's step (built once by sim/program), run by the engine:
// what `simulate` pays in Engine::Run on the layouts of the README's speed table.
void RunScenarioGraph(benchmark::State& state, const std::string& file) {
  auto sc = LoadScenario(std::string(SHARDSIM_SOURCE_DIR) + "/" + file, LoadOptions{});
  if (!sc.ok()) {
    std::fprintf(stderr, "%s\n", sc.status().ToString().c_str());
    std::abort();
  }
  auto plan = MakePlan(*sc);
  if (!plan.ok()) {
    std::fprintf(stderr, "%s\n", plan.status().ToString().c_str());
    std::abort();
  }
  auto step = RunStep(*sc, std::make_shared<const Plan>(std::move(*plan)), ProgramOptions{});
  if (!step.ok()) {
    std::fprintf(stderr, "%s\n", step.status().ToString().c_str());
    std::abort();
  }
  RunAndCount(state, step->program->engine);
}
void BM_ScenarioGpt3_175B(benchmark::State& s) {
  RunScenarioGraph(s, "scenarios/gpt3-175b-a100x1024.yaml");
}
void BM_ScenarioLlama3_405B(benchmark::State& s) {
  RunScenarioGraph(s, "scenarios/llama3-405b-h100x16k.yaml");
}
void BM_ScenarioDeepSeekV3(benchmark::State& s) {
  RunScenarioGraph(s, "scenarios/deepseek-v3-h800x2048.yaml");
}
BENCHMARK(BM_ScenarioGpt3_175B)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScenarioLlama3_405B)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ScenarioDeepSeekV3)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace shardsim

BENCHMARK_MAIN();
