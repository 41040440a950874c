// Cost of pricing ops (sim/hardware/op_cost.h): one GEMM, and a whole decoder layer (Llama-3 70B
// at TP 8: ~13 ops x 3 passes), with the physical curve (h100-sxm) and with the measured
// gemm_table (h200-sxm, 3,464 rows, interpolated). A sweep prices every layer kind of every
// scenario, so this is on the hot path; the table index is built once per OpCostModel.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/config/loader.h"
#include "sim/hardware/op_cost.h"
#include "sim/model/op_graph.h"

namespace shardsim {
namespace {

HardwareSpec Hardware(const std::string& name) {
  LoadOptions options;
  options.library_dirs = {SHARDSIM_SOURCE_DIR};
  Result<HardwareSpec> hw = LoadHardware(name, options);
  return hw.ok() ? *hw : HardwareSpec{};
}

LayerOps Llama70bLayer() {
  LoadOptions options;
  options.library_dirs = {SHARDSIM_SOURCE_DIR};
  Result<ModelSpec> model = LoadModel("llama3-70b", options);
  GraphOptions g;
  g.seq_len = 8192;
  g.micro_batch = 1;
  g.tp = 8;
  g.sequence_parallel = true;
  Result<OpGraph> graph = BuildOpGraph(*model, g);
  return graph->layer_kinds.front();
}

Op OneMatmul() {
  Op op;
  op.kind = OpKind::kMatmul;
  op.matmul = MatmulShape{8192, 3584, 8192, 1};  // Llama-3 70B fc1 at TP 8, one sequence
  op.fwd = {Flops(2.0 * 8192 * 3584 * 8192), Bytes(2.0 * (8192.0 * 8192 * 2 + 8192.0 * 3584))};
  return op;
}

void BM_MatmulOp(benchmark::State& state, const char* hw_name) {
  const OpCostModel model(Hardware(hw_name));
  const Op op = OneMatmul();
  for (auto _ : state) benchmark::DoNotOptimize(model.Cost(op, Pass::kForward));
}
BENCHMARK_CAPTURE(BM_MatmulOp, curve_h100, "h100-sxm");
BENCHMARK_CAPTURE(BM_MatmulOp, table_h200, "h200-sxm");

void BM_Layer(benchmark::State& state, const char* hw_name) {
  const OpCostModel model(Hardware(hw_name));
  const LayerOps layer = Llama70bLayer();
  int64_t priced = 0;
  for (auto _ : state) {
    double total = 0.0;
    for (const Op& op : layer.ops) {
      for (Pass p : {Pass::kForward, Pass::kBackwardInput, Pass::kBackwardWeight}) {
        total += model.Cost(op, p).time.value();
        ++priced;
      }
    }
    benchmark::DoNotOptimize(total);
  }
  state.counters["ops_per_layer"] = static_cast<double>(layer.ops.size());
  state.SetItemsProcessed(priced);
}
BENCHMARK_CAPTURE(BM_Layer, curve_h100, "h100-sxm");
BENCHMARK_CAPTURE(BM_Layer, table_h200, "h200-sxm");

// What one OpCostModel costs to build (once per hardware per scenario).
void BM_BuildModel(benchmark::State& state, const char* hw_name) {
  const HardwareSpec hw = Hardware(hw_name);
  for (auto _ : state) benchmark::DoNotOptimize(OpCostModel(hw));
}
BENCHMARK_CAPTURE(BM_BuildModel, curve_h100, "h100-sxm");
BENCHMARK_CAPTURE(BM_BuildModel, table_h200, "h200-sxm");

// The convenience free function builds a model per call: fine for one op, not for a layer.
void BM_CostOfFreeFunction(benchmark::State& state, const char* hw_name) {
  const HardwareSpec hw = Hardware(hw_name);
  const Op op = OneMatmul();
  for (auto _ : state) benchmark::DoNotOptimize(CostOf(op, Pass::kForward, hw));
}
BENCHMARK_CAPTURE(BM_CostOfFreeFunction, curve_h100, "h100-sxm");
BENCHMARK_CAPTURE(BM_CostOfFreeFunction, table_h200, "h200-sxm");

}  // namespace
}  // namespace shardsim

BENCHMARK_MAIN();
