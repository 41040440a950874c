#include "sim/report/interval.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "sim/base/strings.h"
#include "sim/base/units.h"
#include "sim/config/yaml_source.h"
#include "sim/report/json_location.h"

namespace shardsim {

using Json = nlohmann::ordered_json;

std::string HardwareFamily(const std::string& hardware_name) {
  return hardware_name.substr(0, hardware_name.find('-'));
}

std::string PrecisionClass(DType precision) {
  switch (precision) {
    case DType::kBf16:
    case DType::kFp16:
      return "bf16/fp16";
    default:
      return Name(precision);
  }
}

std::string ScenarioFramework(const Scenario& sc) { return Name(sc.framework.name); }

std::string ModelKind(const Scenario& sc) { return sc.model.moe.has_value() ? "moe" : "dense"; }

IntervalKey IntervalKeyOf(const Scenario& sc) {
  return IntervalKey{HardwareFamily(sc.hardware.name), PrecisionClass(sc.training.precision),
                     ScenarioFramework(sc), ModelKind(sc)};
}

namespace {

// The split-conformal interval of `e` (sorted, not empty): [e_(k), e_(n+1-k)], its median and
// nominal coverage (interval.h).
struct Conformal {
  double low = 0.0, high = 0.0, median = 0.0, coverage = 0.0;
};
Conformal ConformalOf(const std::vector<double>& e) {
  const int n = static_cast<int>(e.size());
  const int k =
      std::max(1, static_cast<int>(std::floor((n + 1) * (1.0 - kIntervalCoverage) / 2.0 + 1e-9)));
  Conformal c;
  c.low = e[static_cast<size_t>(k - 1)];
  c.high = e[static_cast<size_t>(n - k)];
  c.median = n % 2 ? e[static_cast<size_t>(n / 2)]
                   : 0.5 * (e[static_cast<size_t>(n / 2 - 1)] + e[static_cast<size_t>(n / 2)]);
  c.coverage = static_cast<double>(n + 1 - 2 * k) / static_cast<double>(n + 1);
  return c;
}

std::string Pct(double e) { return (e >= 0 ? "+" : "") + FormatSig(100.0 * e, 3) + "%"; }

}  // namespace

PredictionInterval IntervalFor(const ResidualSet& set, const IntervalKey& key,
                               const std::string& exclude_id) {
  PredictionInterval p;
  p.source = set.file;
  struct Level {
    bool family, precision, framework, kind;
  };
  const Level levels[] = {{true, true, true, true},
                          {true, true, false, true},
                          {true, false, false, true},
                          {false, false, false, true},
                          {false, false, false, false}};
  bool family_seen = false;
  for (const ResidualRow& r : set.rows) {
    family_seen = family_seen || (r.id != exclude_id && r.hardware_family == key.hardware_family &&
                                  r.kind == key.kind);
  }
  // Runs of another kind are another population. A MoE group names its kind at every level
  // ("gb300 moe"); a dense one only once pooled ("all dense runs"), so the groups of the runs
  // that were all dense keep their names ("h100 fp8 nemo").
  const std::string kind_label = key.kind == "dense" ? "" : " " + key.kind;
  for (const Level& l : levels) {
    std::vector<double> e;
    for (const ResidualRow& r : set.rows) {
      if (r.id == exclude_id) continue;
      if (l.kind && r.kind != key.kind) continue;
      if (l.family && r.hardware_family != key.hardware_family) continue;
      if (l.precision && r.precision != key.precision) continue;
      if (l.framework && r.framework != key.framework) continue;
      e.push_back(r.error);
    }
    const bool last = !l.family;
    if (static_cast<int>(e.size()) < kMinGroupRuns && !(last && !e.empty())) continue;
    std::sort(e.begin(), e.end());
    const int n = static_cast<int>(e.size());
    const Conformal c = ConformalOf(e);
    p.available = true;
    p.runs = n;
    p.error_low = c.low;
    p.error_high = c.high;
    p.median_error = c.median;
    p.coverage = c.coverage;
    p.hardware_validated = l.family;
    p.kind = l.kind ? key.kind : "any";
    if (l.framework) {
      p.group = key.hardware_family + " " + key.precision + " " + key.framework + kind_label;
    } else if (l.precision) {
      p.group = key.hardware_family + " " + key.precision + kind_label;
    } else if (l.family) {
      p.group = key.hardware_family + kind_label;
    } else if (l.kind) {
      p.group = "all " + key.kind + " runs";
    } else {
      p.group = "all runs";
    }
    p.note = std::to_string(n) + " validation runs (" + p.group + ")";
    if (!l.family) {
      const std::string which = l.kind ? key.kind + " " : "";
      p.note = std::string(family_seen ? "too few " : "no ") + key.kind + " validation runs on " +
               key.hardware_family + " hardware" + ": wider interval from all " +
               std::to_string(n) + " " + which + "validation runs";
      // Hardware without its own runs is no better known than validated hardware: the pooled
      // interval is widened to span the interval of every group a validated scenario of the
      // kind can get (each (family), (family, precision) and (family, precision, framework) of
      // at least kMinGroupRuns runs), so it is never narrower on either side than any of them.
      std::map<std::string, std::vector<double>> groups;
      for (const ResidualRow& r : set.rows) {
        if (r.id == exclude_id || (l.kind && r.kind != key.kind)) continue;
        const std::string k = r.kind == "dense" ? "" : " " + r.kind;
        groups[r.hardware_family + k].push_back(r.error);
        groups[r.hardware_family + " " + r.precision + k].push_back(r.error);
        groups[r.hardware_family + " " + r.precision + " " + r.framework + k].push_back(r.error);
      }
      std::string low_group, high_group;
      for (auto& [name, ge] : groups) {
        if (static_cast<int>(ge.size()) < kMinGroupRuns) continue;
        std::sort(ge.begin(), ge.end());
        const Conformal g = ConformalOf(ge);
        if (g.low < p.error_low) {
          p.error_low = g.low;
          low_group = name;
        }
        if (g.high > p.error_high) {
          p.error_high = g.high;
          high_group = name;
        }
      }
      p.note += " (" + Pct(c.low) + " to " + Pct(c.high) + "), widened to span every validated " +
                which + "group's interval";
      if (!low_group.empty() || !high_group.empty()) {
        p.note +=
            " (" + (low_group.empty() ? "" : "low " + Pct(p.error_low) + " from " + low_group) +
            (low_group.empty() || high_group.empty() ? "" : ", ") +
            (high_group.empty() ? "" : "high " + Pct(p.error_high) + " from " + high_group) + ")";
      }
    }
    return p;
  }
  p.note = "no validation residuals";
  return p;
}

Result<ResidualSet> ParseResiduals(const std::string& text, const std::string& file) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    return JsonError(text, file, e.byte, std::string("residuals: not JSON: ") + e.what());
  }
  ResidualSet set;
  set.file = file;
  if (!j.is_object() || !j.contains("runs") || !j["runs"].is_array()) {
    return Status::Invalid("runs: expected {\"runs\": [...]} of validation residuals",
                           SourceLoc{file, 1, 1});
  }
  size_t i = 0;
  for (const Json& r : j["runs"]) {
    const std::string where = "runs[" + std::to_string(i++) + "]";
    const bool ok = r.is_object() && r.contains("id") && r["id"].is_string() &&
                    r.contains("hardware_family") && r["hardware_family"].is_string() &&
                    r.contains("precision") && r["precision"].is_string() &&
                    r.contains("framework") && r["framework"].is_string() && r.contains("error") &&
                    r["error"].is_number();
    if (!ok) {
      return Status::Invalid(where +
                                 ": expected {id, hardware_family, precision, framework, "
                                 "error (number)}",
                             SourceLoc{file, 1, 1});
    }
    ResidualRow row{r["id"], r["hardware_family"], r["precision"], r["framework"],
                    r["error"].get<double>()};
    if (r.contains("kind")) {
      if (!r["kind"].is_string() || (r["kind"] != "dense" && r["kind"] != "moe")) {
        return Status::Invalid(where + ".kind: expected \"dense\" or \"moe\"",
                               SourceLoc{file, 1, 1});
      }
      row.kind = r["kind"];
    }
    set.rows.push_back(std::move(row));
  }
  return set;
}

Result<ResidualSet> ReadResiduals(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return ParseResiduals(*text, path);
}

std::string ResidualsJson(const std::vector<ResidualRow>& rows) {
  std::string out =
      "{\n  \"about\": \"Validation residuals: error = published step time / predicted - 1 of "
      "every held run of tests/validation/reference_runs_test.cc (known outliers left out) and "
      "of the out-of-sample runs of tests/validation/out_of_sample_test.cc. "
      "Written by Residuals.FileIsCurrent of tests/validation/residuals_test.cc "
      "(SHARDSIM_UPDATE_RESIDUALS=1); do not "
      "edit. Read by simulate and check-claim for their prediction intervals "
      "(sim/report/interval.h).\",\n  \"runs\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const ResidualRow& r = rows[i];
    char err[32];
    std::snprintf(err, sizeof(err), "%.6f", r.error);
    out += "    {\"id\": " + Json(r.id).dump() +
           ", \"hardware_family\": " + Json(r.hardware_family).dump() +
           ", \"precision\": " + Json(r.precision).dump() +
           ", \"framework\": " + Json(r.framework).dump() + ", \"error\": " + err +
           ", \"kind\": " + Json(r.kind).dump() + "}" + (i + 1 < rows.size() ? ",\n" : "\n");
  }
  out += "  ]\n}\n";
  return out;
}

}  // namespace shardsim
