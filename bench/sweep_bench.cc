// Sweep throughput: scenarios per second (and per core) for realistic spaces, every layout,
// micro-batch and recompute mode of
//   * GPT-3 175B on 1,024 A100s (scenarios/sweeps/gpt3-175b-a100x1024.yaml, 70,200 points),
//   * Llama-3-70B on 512 H100s (scenarios/sweeps/llama3-70b-h100x512.yaml, 37,464 points),
// at --jobs 1 and 2, and the 175B sample under --prune-to-top 10 (its top 10 only simulated). The
// sampled benchmarks run a deterministic 1/N of each space (its shard 1/N: every N-th point, so
// cheap and expensive layouts are drawn alike); the exhaustive one runs the whole 175B space once
// at --jobs 2 (minutes: select it with
// --benchmark_filter=Exhaustive). Targets (issue 5): exhaustive 175B/1,024 under 60 s on 2
// cores; --jobs 2 at least 1.7x --jobs 1. Figures measured are in docs/sweep.md.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "sim/cli/commands.h"
#include "sim/sweep/point_space.h"
#include "sim/sweep/runner.h"
#include "sim/sweep/sweep_spec.h"

namespace shardsim {
namespace {

const PointSpace& Space(const std::string& spec_path) {
  static std::map<std::string, PointSpace>* spaces = new std::map<std::string, PointSpace>();
  auto it = spaces->find(spec_path);
  if (it == spaces->end()) {
    std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
    Result<SweepSpec> spec = LoadSweepSpec(spec_path, LoadOptions{});
    if (!spec.ok()) std::abort();
    Result<PointSpace> space = PointSpace::Enumerate(*spec, LoadOptions{});
    if (!space.ok()) std::abort();
    it = spaces->emplace(spec_path, std::move(*space)).first;
  }
  return it->second;
}

// range(0): threads (--jobs); `stride`: every stride-th point (1 = the whole space);
// `prune_to_top`: sweep --prune-to-top (0: every point simulated).
void BM_Sweep(benchmark::State& state, const std::string& spec, int64_t stride,
              int64_t prune_to_top = 0) {
  const PointSpace& space = Space(spec);
  SweepRunOptions o;
  o.jobs = static_cast<int>(state.range(0));
  o.shard = Shard{0, stride};
  o.prune_to_top = prune_to_top;
  int64_t points = 0, feasible = 0;
  for (auto _ : state) {
    Result<SweepRun> run = RunSweep(space, o, LoadOptions{});
    if (!run.ok()) {
      state.SkipWithError(run.status().message().c_str());
      return;
    }
    points += run->summary.total();
    feasible = run->summary.feasible();
  }
  state.counters["points"] = static_cast<double>(ShardSize(o.shard, space.size()));
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["points_per_s"] =
      benchmark::Counter(static_cast<double>(points), benchmark::Counter::kIsRate);
  state.counters["points_per_s_per_core"] = benchmark::Counter(
      static_cast<double>(points) / static_cast<double>(o.jobs), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_Sweep, gpt3_175b_a100x1024_every40th,
                  std::string("scenarios/sweeps/gpt3-175b-a100x1024.yaml"), 40)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Sweep, gpt3_175b_a100x1024_every40th_top10,
                  std::string("scenarios/sweeps/gpt3-175b-a100x1024.yaml"), 40, 10)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Sweep, llama3_70b_h100x512_every16th,
                  std::string("scenarios/sweeps/llama3-70b-h100x512.yaml"), 16)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Sweep, Exhaustive_gpt3_175b_a100x1024,
                  std::string("scenarios/sweeps/gpt3-175b-a100x1024.yaml"), 1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace
}  // namespace shardsim

// The allocator as the sweep command sets it.
int main(int argc, char** argv) {
  shardsim::TuneAllocatorForManySimulations();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
