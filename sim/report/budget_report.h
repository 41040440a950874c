// `shardsim budget`: parameters, FLOPs and memory of a scenario, as text for people, JSON for
// programs (docs/reference.md §4 keys), and the per-op table behind them (--explain).
#ifndef SHARDSIM_REPORT_BUDGET_REPORT_H_
#define SHARDSIM_REPORT_BUDGET_REPORT_H_

#include <string>

#include "sim/base/status.h"
#include "sim/config/spec.h"
#include "sim/memory/budget.h"
#include "sim/model/flops.h"
#include "sim/model/op_graph.h"
#include "sim/model/params.h"

namespace shardsim {

struct BudgetReport {
  ParamCount params;
  FlopsSummary flops;
  MemoryBudget memory;
  OpGraph graph;  // per device, as the layout slices it
};

Result<BudgetReport> BuildBudget(const Scenario& scenario);
// The worst stage's total within the GPU's memory capacity (`budget` exits 1 when not).
bool BudgetFits(const Scenario& scenario, const BudgetReport& report);

std::string BudgetText(const Scenario& scenario, const BudgetReport& report);
std::string BudgetJson(const Scenario& scenario, const BudgetReport& report);
// One row per op of the embedding, of one layer of each kind, and of the head: shapes, FLOPs
// and bytes per pass, parameters and saved activations (with what training's recompute keeps
// of them), with the formula's source.
std::string ExplainOps(const OpGraph& graph, const TrainingSpec& training);

// The terms that separate operator-level model FLOPs from 6·N·D, per token (they sum exactly
// to the difference).
struct SixNdGap {
  double attention = 0;         // + the s x s attention term (not proportional to N)
  double lookup_tables = 0;     // − embedding/position tables: parameters without matmul FLOPs
  double tied_head = 0;         // + a tied output head: matmul FLOPs without extra parameters
  double norms_and_biases = 0;  // − norm and bias parameters: no matmul FLOPs
  double mtp = 0;               // + multi-token-prediction modules (not in N)
};
SixNdGap ExplainSixNd(const ModelSpec& model, const FlopsSummary& flops, const ParamCount& params);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_BUDGET_REPORT_H_
