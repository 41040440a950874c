// A measured GEMM throughput table (hardware.gemm_table), indexed once per hardware for fast
// lookups between measured shapes.
//
// Interpolation is in log space: log(FLOP/s) as a function of (log2 m, log2 n, log2 k).
// - When a dtype's rows form a full grid (every combination of the distinct m, n and k values
//   present exactly once, e.g. bench/h200/results/gemm_graph.csv), the lookup is trilinear in
//   the grid cell that holds the point; coordinates outside the grid are clamped to its edge
//   (no extrapolation).
// - Otherwise (scattered rows) the lookup weights the measured rows by inverse squared distance
//   in (log2 m, log2 n, log2 k); an exact match returns that row.
// Batched GEMMs are looked up as one GEMM of batch*m rows (the same number of output tiles).
// Tested in tests/hardware/gemm_table_test.cc.
#ifndef SHARDSIM_HARDWARE_GEMM_TABLE_H_
#define SHARDSIM_HARDWARE_GEMM_TABLE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "sim/config/spec.h"

namespace shardsim {

class GemmTable {
 public:
  GemmTable() = default;
  explicit GemmTable(const std::vector<GemmMeasurement>& rows);

  // Whether there are rows for `dtype`.
  bool Has(DType dtype) const { return !tables_[Index(dtype)].empty(); }
  // Whether `dtype`'s rows form a full grid (trilinear lookups).
  bool IsGrid(DType dtype) const { return tables_[Index(dtype)].grid; }
  // Achieved FLOP/s of an m x n x k GEMM (batch copies), or nullopt without rows for `dtype`.
  // Preconditions: m, n, k, batch >= 1.
  std::optional<double> FlopsPerSecond(DType dtype, int64_t m, int64_t n, int64_t k,
                                       int64_t batch = 1) const;

 private:
  struct Point {
    double lm, ln, lk, log_rate;
  };
  struct PerDType {
    bool empty() const { return points.empty(); }
    bool grid = false;
    std::vector<double> ms, ns, ks;  // grid axes, log2, ascending (grid only)
    std::vector<double> values;      // log(rate) at [i_m][i_n][i_k] (grid only)
    std::vector<Point> points;       // every row (both layouts)
  };
  static size_t Index(DType d) { return static_cast<size_t>(d); }
  double Grid(const PerDType& t, double lm, double ln, double lk) const;
  double Scattered(const PerDType& t, double lm, double ln, double lk) const;

  std::array<PerDType, 5> tables_;
};

}  // namespace shardsim

#endif  // SHARDSIM_HARDWARE_GEMM_TABLE_H_
