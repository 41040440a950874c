// Reading the values of sweep axes: integer lists and ranges, and the restrictions of
// `parallel: auto`, each problem reported at its node (internal to sim/sweep).
#ifndef SHARDSIM_SWEEP_AXIS_PARSER_H_
#define SHARDSIM_SWEEP_AXIS_PARSER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/config_node.h"

namespace shardsim {

struct LayoutAuto;

class AxisParser {
 public:
  explicit AxisParser(DiagnosticSink* sink) : sink_(sink) {}

  void Fail(const ConfigNode& at, const std::string& message);
  void FailAt(const KeyOrigin& at, const std::string& message);

  // An integer list: a scalar, a list of scalars or a range {from, to, mul|step}; messages name
  // `key`. nullopt after reporting a problem.
  std::optional<std::vector<int64_t>> Ints(const ConfigNode& node, const std::string& key,
                                           bool positive);
  // {from, to, mul} (geometric) or {from, to, step} (arithmetic, step 1 by default), inclusive.
  std::optional<std::vector<int64_t>> Range(const ConfigNode& node, const std::string& key,
                                            bool positive);
  // The keys of `parallel: {auto: true, tp: [...], ...}` into *out.
  void LayoutRestrictions(const ConfigNode& node, LayoutAuto* out);

 private:
  void Schedules(const ConfigNode& v, LayoutAuto* out);

  DiagnosticSink* sink_;
};

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_AXIS_PARSER_H_
