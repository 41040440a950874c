#include "sim/sweep/axis_parser.h"

#include <algorithm>
#include <map>

#include "sim/base/strings.h"
#include "sim/config/value_reader.h"
#include "sim/sweep/sweep_spec.h"

namespace shardsim {
namespace {

// Largest number of values one range may produce: a typo ({from: 1, to: 1e9}) must not allocate
// a billion strings.
constexpr int64_t kMaxRangeValues = 100000;

const std::vector<PipelineSchedule> kSchedules = {
    PipelineSchedule::kGpipe,    PipelineSchedule::k1F1B,     PipelineSchedule::kInterleaved1F1B,
    PipelineSchedule::kZbH1,     PipelineSchedule::kZbH2,     PipelineSchedule::kZbV,
    PipelineSchedule::kDualPipe, PipelineSchedule::kDualPipeV};

}  // namespace

void AxisParser::Fail(const ConfigNode& at, const std::string& message) {
  sink_->Add(at.loc(), message, at.origin().source_line);
}
void AxisParser::FailAt(const KeyOrigin& at, const std::string& message) {
  sink_->Add(at.loc, message, at.source_line);
}

std::optional<std::vector<int64_t>> AxisParser::Ints(const ConfigNode& node, const std::string& key,
                                                     bool positive) {
  std::vector<int64_t> out;
  auto one = [&](const ConfigNode& n) {
    Result<int64_t> v = n.is_scalar() ? ParseInteger(n.text()) : Status::Invalid("");
    if (!v.ok() || (positive && *v < 1)) {
      Fail(n, key + ": expected " + (positive ? "a positive integer" : "an integer") + ", got " +
                  n.Describe());
      return false;
    }
    out.push_back(*v);
    return true;
  };
  if (node.is_scalar()) {
    if (!one(node)) return std::nullopt;
  } else if (node.is_sequence()) {
    if (node.items().empty()) {
      Fail(node, key + ": empty list; an axis needs at least one value");
      return std::nullopt;
    }
    for (const ConfigNode& item : node.items()) {
      if (!one(item)) return std::nullopt;
    }
  } else if (node.is_map()) {
    return Range(node, key, positive);
  } else {
    Fail(node, key + ": empty value; an axis needs at least one value");
    return std::nullopt;
  }
  return out;
}

std::optional<std::vector<int64_t>> AxisParser::Range(const ConfigNode& node,
                                                      const std::string& key, bool positive) {
  std::map<std::string, int64_t> v;
  bool ok = true;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string& k = node.key(i);
    if (k != "from" && k != "to" && k != "mul" && k != "step") {
      FailAt(node.key_origin(i), key + "." + k + ": unknown key of a range" +
                                     DidYouMean(k, {"from", "to", "mul", "step"}) +
                                     " (a range is {from, to, mul} or {from, to, step})");
      ok = false;
      continue;
    }
    const ConfigNode& n = node.value(i);
    Result<int64_t> x = n.is_scalar() ? ParseInteger(n.text()) : Status::Invalid("");
    if (!x.ok()) {
      Fail(n, key + "." + k + ": expected an integer, got " + n.Describe());
      ok = false;
      continue;
    }
    v[k] = *x;
  }
  if (!ok) return std::nullopt;
  if (v.count("from") == 0 || v.count("to") == 0) {
    Fail(node, key +
                   ": a range needs from and to ({from: 1, to: 8, mul: 2} or "
                   "{from: 1, to: 8, step: 1})");
    return std::nullopt;
  }
  if (v.count("mul") != 0 && v.count("step") != 0) {
    Fail(node, key + ": a range takes mul or step, not both");
    return std::nullopt;
  }
  const int64_t from = v["from"], to = v["to"];
  if (positive && from < 1) {
    Fail(*node.Find("from"),
         key + ".from: expected a positive integer, got " + std::to_string(from));
    return std::nullopt;
  }
  std::vector<int64_t> out;
  if (v.count("mul") != 0) {
    const int64_t mul = v["mul"];
    if (from < 1) {
      Fail(*node.Find("from"),
           key + ".from: a geometric range (mul) needs from >= 1, got " + std::to_string(from));
      return std::nullopt;
    }
    if (mul < 2) {
      Fail(*node.Find("mul"),
           key + ".mul: a geometric range needs mul >= 2, got " + std::to_string(mul));
      return std::nullopt;
    }
    for (int64_t x = from; x <= to; x *= mul) {
      out.push_back(x);
      if (x > to / mul) break;
    }
  } else {
    const int64_t step = v.count("step") != 0 ? v["step"] : 1;
    if (step < 1) {
      Fail(*node.Find("step"),
           key + ".step: expected a positive integer, got " + std::to_string(step));
      return std::nullopt;
    }
    // In checked arithmetic: to - from overflows for from: -9e18, to: 9e18, and x += step past
    // INT64_MAX wrapped round (to: 9223372036854775807 never ended, then bad_alloc).
    int64_t span = 0;
    if (to >= from && (__builtin_sub_overflow(to, from, &span) || span / step >= kMaxRangeValues)) {
      Fail(node, key + ": the range has more than " + std::to_string(kMaxRangeValues) + " values");
      return std::nullopt;
    }
    if (to >= from) {
      for (int64_t x = from;; x += step) {
        out.push_back(x);
        if (to - x < step) break;  // to - x >= 0 cannot overflow; x + step stays <= to
      }
    }
  }
  if (out.empty()) {
    Fail(node, key + ": empty range (from " + std::to_string(from) + " is above to " +
                   std::to_string(to) + "); an axis needs at least one value");
    return std::nullopt;
  }
  return out;
}

void AxisParser::LayoutRestrictions(const ConfigNode& node, LayoutAuto* out) {
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string& k = node.key(i);
    const ConfigNode& v = node.value(i);
    const std::string key = "parallel." + k;
    std::vector<int64_t>* ints = nullptr;
    if (k == "auto") {
      if (!v.is_scalar() || v.text() != "true") {
        Fail(v, "parallel.auto: expected true, got " + v.Describe() +
                    " (for a list of layouts, write parallel: [{tp: 8, pp: 4}, ...])");
      }
      continue;
    }
    if (k == "dp") ints = &out->dp;
    if (k == "tp") ints = &out->tp;
    if (k == "pp") ints = &out->pp;
    if (k == "cp") ints = &out->cp;
    if (k == "virtual_stages") ints = &out->virtual_stages;
    if (k == "ep") ints = &out->ep;
    if (ints != nullptr) {
      if (auto xs = Ints(v, key, true)) *ints = *xs;
      continue;
    }
    if (k == "schedule") {
      Schedules(v, out);
      continue;
    }
    FailAt(node.key_origin(i),
           key + ": unknown key of parallel: auto" +
               DidYouMean(k, {"auto", "dp", "tp", "pp", "cp", "virtual_stages", "schedule", "ep"}) +
               " (it restricts dp, tp, pp, cp, virtual_stages, schedule and ep)");
  }
}

void AxisParser::Schedules(const ConfigNode& v, LayoutAuto* out) {
  std::vector<const ConfigNode*> items;
  if (v.is_scalar()) items.push_back(&v);
  if (v.is_sequence()) {
    for (const ConfigNode& n : v.items()) items.push_back(&n);
  }
  if (items.empty()) {
    Fail(v, "parallel.schedule: expected a list of schedules, got " + v.Describe());
    return;
  }
  std::vector<std::string> names;
  for (PipelineSchedule s : kSchedules) names.emplace_back(Name(s));
  for (const ConfigNode* n : items) {
    const auto it = n->is_scalar() ? std::find(names.begin(), names.end(), n->text()) : names.end();
    if (it == names.end()) {
      Fail(*n, "parallel.schedule: " + n->Describe() + " is not one of " + Join(names) +
                   (n->is_scalar() ? DidYouMean(n->text(), names) : std::string()));
      continue;
    }
    out->schedules.push_back(kSchedules[static_cast<size_t>(it - names.begin())]);
  }
}

}  // namespace shardsim
