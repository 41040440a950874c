// A table of measured kernel rates at scattered shapes (measured where models run, not on a box
// grid), with the lookup every measured kernel table of a hardware file shares: GEMMs by pass,
// grouped GEMMs, fused attention (sim/hardware/gemm_table.h, op_cost.h).
//
// Each row is a key (the pass, or pass x dtype) and up to four shape coordinates, taken as log2
// (m, n, k, groups; or batch*heads, seq, head dims). Rows of the same key and shape are merged
// by the geometric mean of their rates. A lookup:
//   - clamps the query, axis by axis, into the box the key's rows span (the caller carries the
//     shape trend beyond the box with its fitted curve: rate = table(clamped) x curve(query) /
//     curve(clamped), OpCostModel);
//   - returns the row's rate at an exact match; otherwise the weighted geometric mean of the
//     kNearest rows, weights 1/d^2 in log2 coordinates (inverse distance weighting, Shepard
//     1968). kNearest = 8: on the B200 GEMM tables, leave-one-out errors (median 3.5-4.9% by pass)
//     match weighting every row while the worst case halves (hardware/calibration/fit_b200.py).
// Tested in tests/hardware/scattered_table_test.cc.
#ifndef SHARDSIM_HARDWARE_SCATTERED_TABLE_H_
#define SHARDSIM_HARDWARE_SCATTERED_TABLE_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace shardsim {

class ScatteredTable {
 public:
  static constexpr int kDims = 4;
  static constexpr size_t kNearest = 8;
  using Shape = std::array<int64_t, kDims>;  // positive entries; unused axes 1

  struct Row {
    int key = 0;
    Shape shape{1, 1, 1, 1};
    double rate = 0.0;  // > 0
  };
  struct Lookup {
    double rate = 0.0;          // at the clamped shape
    Shape clamped{1, 1, 1, 1};  // the query moved into the rows' box (== query inside it)
    bool outside = false;       // the query was outside the box on some axis
    bool exact = false;         // a measured row at the clamped shape
    Shape nearest{1, 1, 1, 1};  // the closest measured row
    int rows = 0;               // rows weighted (1 when exact)
  };

  ScatteredTable() = default;
  explicit ScatteredTable(const std::vector<Row>& rows);

  bool Has(int key) const { return tables_.count(key) > 0; }
  size_t size(int key) const;
  // Preconditions: every query entry >= 1.
  std::optional<Lookup> Find(int key, const Shape& query) const;

 private:
  struct Point {
    std::array<double, kDims> x;
    Shape shape;
    double log_rate;
  };
  struct PerKey {
    std::vector<Point> points;
    std::array<int64_t, kDims> lo, hi;
  };
  std::map<int, PerKey> tables_;
};

}  // namespace shardsim

#endif  // SHARDSIM_HARDWARE_SCATTERED_TABLE_H_
