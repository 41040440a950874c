// Measured GEMM throughput tables (hardware.gemm_table, hardware.grouped_gemm_table), indexed once
// per hardware for fast lookups between measured shapes.
//
// Rows are keyed by dtype and pass (forward / backward-input / backward-weight; a table that
// names no pass serves every pass). A lookup for a pass uses that pass's rows, else the rows
// without a pass. Interpolation is in log space: log(FLOP/s) as a function of log2 of the shape.
// - When a dtype's pass-less rows form a full grid (every combination of the distinct m, n and k
//   values present exactly once, e.g. bench/h200/results/gemm_graph.csv), the lookup is
//   trilinear in the grid cell that holds the point; coordinates outside the grid are clamped to
//   its edge (no extrapolation; the H200 grid spans 128-16384 on every axis).
// - Otherwise (rows measured at model shapes, e.g. hardware/calibration/b200/gemm.csv) the lookup
//   is sim/hardware/scattered_table.h's: exact at a measured shape, the 8 nearest rows weighted
//   1/d^2 in (log2 m, log2 n, log2 k[, log2 groups]) between, and the query clamped into the
//   rows' box beyond it, where OpCostModel carries the tile curve's shape trend
//   (rate x curve(shape) / curve(clamped shape)).
// A plain table looks batched GEMMs up as one GEMM of batch*m rows (the same output tiles); a
// grouped table (MoE experts in one kernel) looks them up by (m, n, k, groups = batch).
// Tested in tests/hardware/gemm_table_test.cc and b200_tables_test.cc.
#ifndef SHARDSIM_HARDWARE_GEMM_TABLE_H_
#define SHARDSIM_HARDWARE_GEMM_TABLE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/config/spec.h"
#include "sim/hardware/scattered_table.h"

namespace shardsim {

// Where a table's rate came from (what --explain prints).
struct GemmLookup {
  double flops_per_s = 0.0;            // at the clamped shape
  KernelPass pass = KernelPass::kAny;  // the rows used
  bool grid = false;                   // trilinear in a full grid (fields below unset)
  ScatteredTable::Lookup at;           // scattered rows: exact / nearest / clamped shape
};

class GemmTable {
 public:
  GemmTable() = default;
  // `grouped`: rows are grouped GEMMs (groups >= 1), looked up by groups = batch.
  explicit GemmTable(const std::vector<GemmMeasurement>& rows, bool grouped = false);

  // Whether there are rows for `dtype` (any pass).
  bool Has(DType dtype) const;
  // Whether `dtype`'s pass-less rows form a full grid (trilinear lookups).
  bool IsGrid(DType dtype) const { return grids_[Index(dtype)].grid; }
  // The measured rate of an m x n x k GEMM (batch copies) in `pass`, or nullopt without rows for
  // `dtype` in that pass or without one. Preconditions: m, n, k, batch >= 1.
  std::optional<GemmLookup> Find(DType dtype, int64_t m, int64_t n, int64_t k, int64_t batch,
                                 KernelPass pass) const;
  // Achieved FLOP/s from the pass-less rows (or nullopt).
  std::optional<double> FlopsPerSecond(DType dtype, int64_t m, int64_t n, int64_t k,
                                       int64_t batch = 1) const;

 private:
  struct Grid {
    bool grid = false;
    std::vector<double> ms, ns, ks;  // grid axes, log2, ascending
    std::vector<double> values;      // log(rate) at [i_m][i_n][i_k]
  };
  static size_t Index(DType d) { return static_cast<size_t>(d); }
  static int Key(KernelPass p, DType d) {
    return static_cast<int>(p) * kNumDTypes + static_cast<int>(d);
  }
  double GridValue(const Grid& t, double lm, double ln, double lk) const;

  bool grouped_ = false;
  std::array<Grid, kNumDTypes> grids_;
  ScatteredTable scattered_;  // every row not served by a grid
};

}  // namespace shardsim

#endif  // SHARDSIM_HARDWARE_GEMM_TABLE_H_
