// A sweep specification: a base scenario and the axes it varies (`shardsim sweep`).
//
// Two forms, both YAML:
//   * a scenario with a `sweep:` block (the block is removed before the scenario is read);
//   * a sweep file `{base: path/scenario.yaml, sweep: {...}}` (base relative to the sweep file).
// The `sweep:` block maps dotted scenario keys to axes:
//   <key>: [v1, v2, ...]               explicit values (scalars or mappings, e.g. inline hardware)
//   <key>: {from: 1, to: 8, mul: 2}    integer range, geometric (1, 2, 4, 8) or `step: s`
//   arithmetic <key>: v                           a single value (a one-value axis) parallel: auto
//   every valid (dp, tp, pp, cp, schedule, virtual stages) parallel: {auto: true, tp: [4, 8],
//   schedule: [1f1b], ...}   the same, restricted training.micro_batch: auto         every
//   micro-batch size dividing global_batch / dp zip: [[hardware, topology], ...]   axes of a group
//   advance together (same length)
// Points are the cartesian product of the explicit axes (first written = outermost), then the
// automatic layout, then the automatic micro-batch (innermost). sim/sweep/point_space.h
// enumerates them. This module owns parsing and the checks that make a bad spec exit 2 with
// file:line:col (unknown axis key, empty axis, a value the scenario reader rejects).
#ifndef SHARDSIM_SWEEP_SWEEP_SPEC_H_
#define SHARDSIM_SWEEP_SWEEP_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/loader.h"
#include "sim/config/spec.h"

namespace shardsim {

// One value of an axis: YAML text for ScenarioDocument::Set, and where it was written.
struct AxisValue {
  std::string yaml;  // "8", "selective", "{base: h100-sxm, memory: {capacity: 96 GiB}}"
  std::string text;  // as reported in result rows (scalars: the text; mappings: `yaml`)
  KeyOrigin origin;
};

struct Axis {
  std::string key;  // dotted scenario key, "parallel.tp"
  KeyOrigin key_origin;
  std::vector<AxisValue> values;
};

// A dimension of the product: one axis, or a zip group of axes of equal length.
struct SweepDim {
  std::vector<Axis> axes;
  size_t size() const { return axes.front().values.size(); }
};

// `parallel: auto` and its optional restrictions (empty = unrestricted).
struct LayoutAuto {
  bool enabled = false;
  KeyOrigin origin;
  std::vector<int64_t> dp, tp, pp, cp, virtual_stages, ep;
  std::vector<PipelineSchedule> schedules;
};

struct SweepSpec {
  std::string file;                      // the sweep file
  std::optional<ScenarioDocument> base;  // the scenario without its sweep block
  std::vector<SweepDim> dims;            // explicit axes, outermost first
  LayoutAuto layout;
  bool micro_batch_auto = false;
  KeyOrigin micro_batch_origin;
};

// Parses the spec (either form) and checks every axis key and value against the base scenario
// (ScenarioDocument::Set + Build on a permissive layout; see spec_check.cc). All problems are
// returned at once, each located in the sweep file; kInvalidInput (exit 2).
Result<SweepSpec> LoadSweepSpec(const std::string& path, const LoadOptions& options);
// The same from text, named `virtual_path` in messages (tests).
Result<SweepSpec> ParseSweepSpec(const std::string& text, const std::string& virtual_path,
                                 const LoadOptions& options);

// Whether some point of `spec` has `dotted_key` ("training.tokens"): the base scenario (with its
// own `base:` chain) writes it, or an axis sets it or a mapping above it. Lets a command refuse,
// before running anything, an option that needs a key no point has; when the base cannot be
// read, says yes and leaves the verdict to the points.
bool SpecSetsKey(const SweepSpec& spec, const std::string& dotted_key, const LoadOptions& options);

// Scenario keys a layout sweep sets for every point (the input columns of `parallel: auto`).
const std::vector<std::string>& LayoutKeys();

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_SWEEP_SPEC_H_
