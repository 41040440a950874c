#include "sim/sweep/spec_check.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "sim/config/value_reader.h"
#include "sim/sweep/sweep_spec.h"

namespace shardsim {
namespace {

// At most this many combinations of the model axes are tried for each value (a value is a spec
// error only when it fails with every model the sweep names).
constexpr size_t kMaxModelCombos = 64;

bool Covers(const std::string& assigned, const std::string& key) {
  return assigned == key || key.rfind(assigned + ".", 0) == 0;
}

std::optional<int64_t> IntOf(const std::vector<Assignment>& as, const std::string& key) {
  std::optional<int64_t> out;
  for (const Assignment& a : as) {
    if (a.key != key) continue;
    Result<int64_t> v = ParseInteger(a.yaml);
    out = v.ok() ? std::optional<int64_t>(*v) : std::nullopt;
  }
  return out;
}

// Whether an assignment sets `key`, a mapping above it, or a key below it (then the probe must
// leave `key` as the base has it).
bool Assigned(const std::vector<Assignment>& as, const std::string& key) {
  return std::any_of(as.begin(), as.end(),
                     [&](const Assignment& a) { return Covers(a.key, key) || Covers(key, a.key); });
}

// Validation messages are about these scenario keys; a value probe ignores them when they are
// not located at the value itself (they depend on the rest of the layout, not on the value).
// So is a hardware on a cluster of another accelerator family (ValidateScenario's "topology:
// X carries F GPUs (accelerator_family ...) but hardware ..."): it depends on the pair, which a
// zipped hardware/topology axis may give point by point.
// A typo is never the layout's: "training.recompte: unknown key" or "training.recompute: \"ful\"
// is not one of ..." in the base fails every point (they ran as "invalid", exit 1, after
// --dry-run had passed), so it is the spec's error, at its key. Nor is a value the scenario
// reader refuses on its own, its type or its range ("training.seq_len: must be positive, got
// -5", "training.tokens: expected a quantity ..."): sim/config/value_reader.cc and the reader's
// own checks word them so, and ValidateScenario's layout checks never do.
bool IsValueMessage(const std::string& message) {
  for (const char* own :
       {": unknown key", " is not one of ", ": must be positive", ": must not be negative",
        ": must be between ", ": must be in (", ": expected a", ": expected true"}) {
    if (message.find(own) != std::string::npos) return true;
  }
  return false;
}

bool IsLayoutMessage(const std::string& message) {
  if (IsValueMessage(message)) return false;
  for (const char* p : {"gpus:", "parallel.", "training."}) {
    if (message.rfind(p, 0) == 0) return true;
  }
  return message.rfind("topology: ", 0) == 0 &&
         message.find(" GPUs (accelerator_family") != std::string::npos;
}

// The interleaved schedule's micro-batch group is checked against the schedule, pp and
// micro-batches of each point (sim/config/validate.cc), which the probe's permissive layout does
// not have: those messages are the points' problems even when located at the value. Its type
// ("expected a non-negative integer") stays the value's.
bool IsGroupLayoutMessage(const std::string& message) {
  return message.rfind("parallel.microbatch_group_size_per_vp_stage: ", 0) == 0 &&
         (message.find(" needs schedule interleaved_1f1b") != std::string::npos ||
          message.find("Megatron-LM") != std::string::npos);
}

// One dimension's assignments at value `i`.
std::vector<Assignment> AssignmentsOf(const SweepDim& dim, size_t i) {
  std::vector<Assignment> out;
  for (const Axis& a : dim.axes) out.push_back({a.key, a.values[i].yaml});
  return out;
}

bool IsModelDim(const SweepDim& dim) {
  return std::any_of(dim.axes.begin(), dim.axes.end(), [](const Axis& a) {
    return a.key == "model" || a.key.rfind("model.", 0) == 0;
  });
}

class SpecChecker {
 public:
  SpecChecker(const SweepSpec& spec, const LoadOptions& options) : spec_(spec), options_(options) {}

  // Diagnostics of the probe of `assignments`: Set failures and Build failures.
  std::vector<Diagnostic> Probe(const std::vector<Assignment>& assignments) {
    Result<ScenarioDocument> doc = ProbeDocument(*spec_.base, assignments);
    if (!doc.ok()) return doc.status().diagnostics();
    Result<Scenario> s = doc->Build(options_);
    return s.ok() ? std::vector<Diagnostic>{} : s.status().diagnostics();
  }

  // Diagnostics located at one of `dim`'s values, moved to where that value is written in the
  // sweep file (unknown keys: to the axis key).
  std::vector<Diagnostic> AtDim(const std::vector<Diagnostic>& diags, const SweepDim& dim,
                                size_t i) const {
    std::vector<Diagnostic> out;
    for (const Diagnostic& d : diags) {
      if (IsGroupLayoutMessage(d.message)) continue;
      for (const Axis& a : dim.axes) {
        if (d.loc.file != SetLocation(a.key)) continue;
        const bool key_problem = d.message.find("unknown key") != std::string::npos ||
                                 d.message.rfind("cannot set", 0) == 0 ||
                                 d.message.find("not a dotted key path") != std::string::npos;
        const KeyOrigin& at = key_problem ? a.key_origin : a.values[i].origin;
        out.push_back({at.loc, d.message, at.source_line});
        break;
      }
    }
    return out;
  }

  Status Run() {
    DiagnosticSink sink;
    std::set<std::string> seen;
    auto report = [&](const Diagnostic& d) {
      if (seen.insert(d.ToString()).second) sink.Add(d);
    };
    // The base with every axis at its first value.
    std::vector<Assignment> first;
    for (const SweepDim& dim : spec_.dims) {
      for (const Assignment& a : AssignmentsOf(dim, 0)) first.push_back(a);
    }
    std::set<std::string> base_errors;
    // The base's own values where the probe below replaces them with a permissive layout
    // (degrees, micro-batch, gpus): read as written, only what the reader refuses of a value on
    // its own is kept ("training.micro_batch: must be positive, got 0").
    {
      ScenarioDocument raw = *spec_.base;
      bool set = true;
      for (const Assignment& a : first) set = set && raw.Set(a.key, a.yaml).ok();
      if (set) {
        Result<Scenario> s = raw.Build(options_);
        for (const Diagnostic& d : s.ok() ? std::vector<Diagnostic>{} : s.status().diagnostics()) {
          if (d.loc.file.rfind("<set ", 0) == 0 || !IsValueMessage(d.message)) continue;
          base_errors.insert(d.ToString());
          report(d);
        }
      }
    }
    for (const Diagnostic& d : Probe(first)) {
      if (d.loc.file.rfind("<set ", 0) == 0) continue;  // a value's or the probe's own
      // The layout arithmetic of the first combination is that point's problem, not the spec's.
      if (IsLayoutMessage(d.message)) continue;
      base_errors.insert(d.ToString());
      report(d);
    }
    for (size_t di = 0; di < spec_.dims.size(); ++di) {
      const SweepDim& dim = spec_.dims[di];
      const std::vector<std::vector<Assignment>> combos = ModelCombos(di);
      for (size_t i = 0; i < dim.size(); ++i) {
        std::vector<Diagnostic> failures;
        bool works_somewhere = false;
        for (const std::vector<Assignment>& combo : combos) {
          std::vector<Assignment> as = combo;
          for (const Assignment& a : AssignmentsOf(dim, i)) as.push_back(a);
          const std::vector<Diagnostic> diags = Probe(as);
          std::vector<Diagnostic> mine = AtDim(diags, dim, i);
          // Problems in library files this value pulls in (a broken model file).
          for (const Diagnostic& d : diags) {
            if (d.loc.file.rfind("<set ", 0) == 0) continue;
            if (base_errors.count(d.ToString()) != 0 || IsLayoutMessage(d.message)) continue;
            mine.push_back(d);
          }
          if (mine.empty()) {
            works_somewhere = true;
            break;
          }
          if (failures.empty()) failures = mine;
        }
        if (works_somewhere) continue;
        for (const Diagnostic& d : failures) report(d);
      }
    }
    return sink.ToStatus();
  }

 private:
  // Every combination of the model-defining dimensions other than `skip` (capped), each as
  // assignments; one empty combination when there are none.
  std::vector<std::vector<Assignment>> ModelCombos(size_t skip) const {
    std::vector<std::vector<Assignment>> combos = {{}};
    for (size_t di = 0; di < spec_.dims.size(); ++di) {
      const SweepDim& dim = spec_.dims[di];
      if (di == skip || !IsModelDim(dim)) continue;
      std::vector<std::vector<Assignment>> next;
      for (const std::vector<Assignment>& c : combos) {
        for (size_t i = 0; i < dim.size() && next.size() < kMaxModelCombos; ++i) {
          std::vector<Assignment> x = c;
          for (const Assignment& a : AssignmentsOf(dim, i)) x.push_back(a);
          next.push_back(std::move(x));
        }
      }
      combos = std::move(next);
    }
    return combos;
  }

  const SweepSpec& spec_;
  const LoadOptions& options_;
};

}  // namespace

std::string SetLocation(const std::string& key) { return "<set " + key + ">"; }

Result<ScenarioDocument> ProbeDocument(const ScenarioDocument& base,
                                       const std::vector<Assignment>& as) {
  const bool interleaved = std::any_of(as.begin(), as.end(), [](const Assignment& a) {
    return a.key == "parallel.schedule" && a.yaml == "interleaved_1f1b";
  });
  const std::optional<int64_t> v = IntOf(as, "parallel.virtual_stages");
  const bool wants_pp2 = interleaved || (v && *v > 1);
  const std::optional<int64_t> ep = IntOf(as, "parallel.ep");
  int64_t tp = IntOf(as, "parallel.tp").value_or(1);
  int64_t pp = IntOf(as, "parallel.pp").value_or(wants_pp2 ? 2 : 1);
  int64_t cp = IntOf(as, "parallel.cp").value_or(1);
  int64_t dp = IntOf(as, "parallel.dp").value_or(ep.value_or(1));
  const std::optional<int64_t> gpus = IntOf(as, "gpus");
  if (gpus && !Assigned(as, "parallel.dp")) {
    const int64_t rest = std::max<int64_t>(1, tp * pp * cp);
    dp = *gpus % rest == 0 ? std::max<int64_t>(1, *gpus / rest) : 1;
  }
  std::vector<Assignment> permissive = {
      {"parallel.dp", std::to_string(dp)},
      {"parallel.tp", std::to_string(tp)},
      {"parallel.pp", std::to_string(pp)},
      {"parallel.cp", std::to_string(cp)},
      {"parallel.ep", "1"},
      {"parallel.schedule", wants_pp2 ? "interleaved_1f1b" : "1f1b"},
      {"parallel.virtual_stages", wants_pp2 ? std::to_string(v.value_or(2)) : "1"},
      {"training.micro_batch", "1"},
      {"gpus", std::to_string(dp * tp * pp * cp)},
  };
  // The interleaved schedule's micro-batch group belongs to its pp and micro-batches: the default
  // (0: pp) unless checked.
  permissive.push_back({"parallel.microbatch_group_size_per_vp_stage", "0"});
  // An uneven pipeline split belongs to its pp: kept when pp is checked, else made even.
  if (!Assigned(as, "parallel.pp")) {
    permissive.push_back({"parallel.first_stage_layers", "0"});
    permissive.push_back({"parallel.last_stage_layers", "0"});
    permissive.push_back({"parallel.pipeline_layout", "\"\""});
  }
  ScenarioDocument doc = base;
  for (const Assignment& p : permissive) {
    if (Assigned(as, p.key)) continue;
    Status s = doc.Set(p.key, p.yaml);
    if (!s.ok()) return s;
  }
  for (const Assignment& a : as) {
    Status s = doc.Set(a.key, a.yaml);
    if (!s.ok()) {
      // Located at the value, like every other problem of an assigned value.
      std::vector<Diagnostic> ds = s.diagnostics();
      for (Diagnostic& d : ds) d.loc = SourceLoc{SetLocation(a.key), 1, 1};
      return Status(s.code(), ds);
    }
  }
  return doc;
}

Status CheckSweepSpec(const SweepSpec& spec, const LoadOptions& options) {
  return SpecChecker(spec, options).Run();
}

}  // namespace shardsim
