// The points of a sweep, enumerated once in a deterministic order and addressed by index.
//
// Order: the explicit axes as a mixed-radix number (the first axis written is the most
// significant digit), then for each combination its automatic layouts (layout_space.h order),
// then its automatic micro-batch sizes (ascending). A combination whose layouts cannot be
// expanded (its scenario does not read, or no layout of its GPU count is valid) is one point that
// carries the problem, so that it is counted and explained like any infeasible point.
// Point indices are what shards, resumed files and merged files agree on.
#ifndef SHARDSIM_SWEEP_POINT_SPACE_H_
#define SHARDSIM_SWEEP_POINT_SPACE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/loader.h"
#include "sim/sweep/layout_space.h"
#include "sim/sweep/spec_check.h"
#include "sim/sweep/sweep_spec.h"

namespace shardsim {

class FileCache;

class PointSpace {
 public:
  // Expands every combination (one probe Build per combination when the layout or the
  // micro-batch is automatic). Errors (kInvalidInput): a GPU count that is missing or not a
  // positive integer under parallel: auto, or a space larger than kMaxPoints.
  static Result<PointSpace> Enumerate(const SweepSpec& spec, const LoadOptions& options);

  static constexpr int64_t kMaxPoints = 50'000'000;

  int64_t size() const { return size_; }
  // The scenario keys whose values vary, in row order.
  const std::vector<std::string>& input_columns() const { return columns_; }
  // The values of point `i`, parallel to input_columns() ("" where a layout could not be
  // expanded).
  std::vector<std::string> Inputs(int64_t i) const;
  // The base scenario with point `i`'s values set.
  Result<ScenarioDocument> Document(int64_t i) const;
  // Why point `i` could not be expanded into layouts (a combination problem), or "".
  const std::string& Problem(int64_t i) const;
  // The GPU count of point `i` when it is known before building it (automatic layouts), else 0.
  int64_t Gpus(int64_t i) const;
  // ExpectedMaxStdNormal(gpus) (the goodput's straggler factor), computed once in Enumerate for
  // every GPU count the sweep is known to take (the combinations' under automatic layouts, else
  // a `gpus` axis's values and the base scenario's), when some point has training.tokens;
  // nullopt for another count.
  std::optional<double> StragglerExpectedMax(int64_t gpus) const;
  const SweepSpec& spec() const { return spec_; }

 private:
  struct Combo {
    int64_t gpus = 0;
    std::string problem;
    std::vector<LayoutChoice> layouts;
    bool sets_group = false;  // the scenario writes parallel.microbatch_group_size_per_vp_stage
  };
  struct Point {
    int64_t combo = 0;
    int32_t layout = -1;      // index into the combo's layouts; -1: none
    int64_t micro_batch = 0;  // automatic micro-batch; 0: none
  };

  explicit PointSpace(SweepSpec spec) : spec_(std::move(spec)) {}
  bool automatic() const { return spec_.layout.enabled || spec_.micro_batch_auto; }
  std::vector<size_t> ComboDigits(int64_t combo) const;
  std::vector<Assignment> ComboAssignments(int64_t combo) const;
  Status Expand(int64_t combo, const LoadOptions& options, FileCache* cache);
  Point PointAt(int64_t i) const;

  SweepSpec spec_;
  std::vector<std::string> columns_;
  int64_t combos_ = 1;
  int64_t size_ = 0;
  std::vector<Combo> combo_info_;  // automatic sweeps only
  std::vector<Point> points_;      // automatic sweeps only (else point i is combination i)
  std::map<int64_t, double> straggler_max_;  // GPU count -> ExpectedMaxStdNormal
  std::string no_problem_;
};

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_POINT_SPACE_H_
