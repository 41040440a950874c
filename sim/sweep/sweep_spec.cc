// Parsing a sweep spec: the sweep: block into axes, zip groups and automatic layout /
// micro-batch, and the scenario without its sweep block. The checks against the scenario reader
// live in spec_check.cc.
#include "sim/sweep/sweep_spec.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "sim/base/strings.h"
#include "sim/config/config_node.h"
#include "sim/config/library.h"
#include "sim/config/yaml_source.h"
#include "sim/sweep/axis_parser.h"
#include "sim/sweep/spec_check.h"

namespace shardsim {
namespace {

bool NeedsQuotes(const std::string& s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ') return true;
  for (char c : s) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == ' ' || c == '.' || c == '_' || c == '/' || c == '+' || c == '-';
    if (!safe) return true;
  }
  return false;
}

// `node` as flow-style YAML text (scalars quoted when they were, or when they must be).
std::string Flow(const ConfigNode& node) {
  switch (node.kind()) {
    case ConfigNode::Kind::kNull:
      return "null";
    case ConfigNode::Kind::kScalar: {
      if (!node.quoted() && !NeedsQuotes(node.text())) return node.text();
      std::string out = "\"";
      for (char c : node.text()) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      return out + "\"";
    }
    case ConfigNode::Kind::kSequence: {
      std::vector<std::string> parts;
      for (const ConfigNode& item : node.items()) parts.push_back(Flow(item));
      return "[" + Join(parts) + "]";
    }
    case ConfigNode::Kind::kMap: {
      std::vector<std::string> parts;
      for (size_t i = 0; i < node.size(); ++i) {
        const ConfigNode key = ConfigNode::Scalar(node.key(i), node.key_origin(i));
        parts.push_back(Flow(key) + ": " + Flow(node.value(i)));
      }
      return "{" + Join(parts) + "}";
    }
  }
  return "null";
}

AxisValue MakeValue(const std::string& key, const ConfigNode& n) {
  AxisValue v;
  v.origin = n.origin();
  v.yaml = Flow(n);
  v.text = n.is_scalar() ? n.text() : v.yaml;
  // A relative path written in the sweep file names a file next to it, as in a scenario.
  const bool reference = key == "model" || key == "hardware" || key == "topology";
  if (reference && n.is_scalar() && !n.text().empty()) {
    const bool hf = key == "model" && n.text().rfind("hf:", 0) == 0;
    const std::string path = hf ? n.text().substr(3) : n.text();
    if (hf || LooksLikePath(path)) {
      const ConfigNode rewritten =
          ConfigNode::Scalar((hf ? "hf:" : "") + PathRelativeTo(n, path), n.origin(), true);
      v.yaml = Flow(rewritten);
    }
  }
  return v;
}

// The text of the document with the top-level `sweep:` block blanked out (lines kept, so that
// every location in the scenario stays where it was written).
Result<std::string> WithoutSweepBlock(const std::string& text, const ConfigNode& root,
                                      size_t sweep_index) {
  const KeyOrigin& at = root.key_origin(sweep_index);
  const int first = at.loc.line;
  const int end = sweep_index + 1 < root.size() ? root.key_origin(sweep_index + 1).loc.line : 0;
  if (at.loc.col != 1 || (end != 0 && end <= first)) {
    return Status::Invalid(
        "sweep: write the sweep block in block style at the top level of the "
        "file (a line `sweep:` followed by its indented keys)",
        at.loc, at.source_line);
  }
  std::string out;
  int line = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    const bool last = nl == std::string::npos;
    if (last) nl = text.size();
    if (line < first || (end != 0 && line >= end)) out.append(text, start, nl - start);
    if (last) break;
    out += '\n';
    start = nl + 1;
    ++line;
  }
  return out;
}

}  // namespace

const std::vector<std::string>& LayoutKeys() {
  static const std::vector<std::string> kKeys = {"parallel.dp",       "parallel.tp",
                                                 "parallel.pp",       "parallel.cp",
                                                 "parallel.schedule", "parallel.virtual_stages",
                                                 "parallel.ep"};
  return kKeys;
}

bool SpecSetsKey(const SweepSpec& spec, const std::string& dotted_key, const LoadOptions& options) {
  for (const SweepDim& dim : spec.dims) {
    for (const Axis& axis : dim.axes) {
      if (axis.key == dotted_key || dotted_key.starts_with(axis.key + ".")) return true;
    }
  }
  if (!spec.base) return false;
  const Result<ConfigNode> tree = spec.base->Resolved(options);
  if (!tree.ok()) return true;
  const ConfigNode* node = &*tree;
  for (size_t start = 0; node != nullptr && start <= dotted_key.size();) {
    const size_t dot = std::min(dotted_key.find('.', start), dotted_key.size());
    node = node->is_map() ? node->Find(std::string_view(dotted_key).substr(start, dot - start))
                          : nullptr;
    start = dot + 1;
  }
  return node != nullptr && !node->is_null();
}

Result<SweepSpec> ParseSweepSpec(const std::string& text, const std::string& virtual_path,
                                 const LoadOptions& options) {
  SHARDSIM_RETURN_IF_ERROR(CheckNotEmpty(text, virtual_path));
  Result<ConfigNode> root = ParseYaml(text, virtual_path);
  if (!root.ok()) return root.status();
  if (!root->is_map()) {
    return Status::Invalid("expected a scenario with a sweep: block, got " + root->Describe(),
                           root->loc().known() ? root->loc() : SourceLoc{virtual_path, 1, 1},
                           root->origin().source_line);
  }
  size_t sweep_index = root->size();
  for (size_t i = 0; i < root->size(); ++i) {
    if (root->key(i) == "sweep") sweep_index = i;
  }
  if (sweep_index == root->size()) {
    return Status::Invalid(
        "no sweep: block (a sweep file is a scenario, or `base: "
        "scenario.yaml`, with a sweep: mapping of axes)",
        root->loc().known() ? root->loc() : SourceLoc{virtual_path, 1, 1},
        root->origin().source_line);
  }
  const ConfigNode& block = root->value(sweep_index);
  if (!block.is_map() || block.size() == 0) {
    return Status::Invalid(
        "sweep: expected a mapping of axes (`training.recompute: [none, "
        "full]`), got " +
            block.Describe(),
        block.loc(), block.origin().source_line);
  }
  Result<std::string> scenario_text = WithoutSweepBlock(text, *root, sweep_index);
  if (!scenario_text.ok()) return scenario_text.status();
  Result<ScenarioDocument> base = ScenarioDocument::ParseText(*scenario_text, virtual_path);
  if (!base.ok()) return base.status();

  SweepSpec spec;
  spec.file = virtual_path;
  spec.base = std::move(*base);
  DiagnosticSink sink;
  AxisParser p(&sink);
  std::vector<Axis> axes;
  const ConfigNode* zip = nullptr;
  for (size_t i = 0; i < block.size(); ++i) {
    const std::string& key = block.key(i);
    const KeyOrigin& key_origin = block.key_origin(i);
    const ConfigNode& v = block.value(i);
    if (key == "zip") {
      zip = &v;
      continue;
    }
    const bool is_auto = v.is_scalar() && v.text() == "auto";
    if (key == "parallel" && (is_auto || v.is_map())) {
      spec.layout.enabled = true;
      spec.layout.origin = key_origin;
      if (v.is_map()) {
        if (v.Find("auto") == nullptr) {
          p.Fail(v,
                 "parallel: a mapping here means auto with restrictions and needs auto: true "
                 "(for a list of layouts, write parallel: [{tp: 8, pp: 4}, ...])");
        }
        p.LayoutRestrictions(v, &spec.layout);
      }
      continue;
    }
    if (key == "training.micro_batch" && is_auto) {
      spec.micro_batch_auto = true;
      spec.micro_batch_origin = key_origin;
      continue;
    }
    if (is_auto) {
      p.Fail(v, key + ": auto is only for parallel and training.micro_batch; list the values");
      continue;
    }
    Axis axis{key, key_origin, {}};
    if (v.is_sequence()) {
      if (v.items().empty()) p.Fail(v, key + ": empty list; an axis needs at least one value");
      for (const ConfigNode& item : v.items()) axis.values.push_back(MakeValue(key, item));
    } else if (v.is_map() && (v.Find("from") != nullptr || v.Find("to") != nullptr)) {
      if (auto xs = p.Range(v, key, false)) {
        for (int64_t x : *xs) {
          axis.values.push_back({std::to_string(x), std::to_string(x), v.origin()});
        }
      }
    } else if (v.is_map()) {
      p.Fail(v, key +
                    ": expected a list of values, a range {from, to, mul|step} or a single "
                    "value, got a mapping (an inline mapping as a value goes in a list: [{...}])");
    } else if (v.is_null()) {
      p.FailAt(key_origin, key + ": empty value; an axis needs at least one value");
    } else {
      axis.values.push_back(MakeValue(key, v));
    }
    if (!axis.values.empty()) axes.push_back(std::move(axis));
  }
  if (spec.layout.enabled) {
    for (const Axis& a : axes) {
      if (std::find(LayoutKeys().begin(), LayoutKeys().end(), a.key) != LayoutKeys().end()) {
        p.FailAt(a.key_origin, a.key + ": cannot be an axis together with parallel: auto (line " +
                                   std::to_string(spec.layout.origin.loc.line) +
                                   "); restrict the layout instead: parallel: {auto: true, " +
                                   a.key.substr(9) + ": [...]}");
      }
    }
  }

  // Zip groups: each becomes one dimension at the place of its first axis.
  std::vector<int> group_of(axes.size(), -1);
  std::vector<std::vector<size_t>> groups;
  if (zip != nullptr) {
    std::vector<std::string> names;
    for (const Axis& a : axes) names.push_back(a.key);
    const bool shape = zip->is_sequence();
    if (!shape) p.Fail(*zip, "zip: expected a list of lists of axis keys, got " + zip->Describe());
    for (const ConfigNode& g : shape ? zip->items() : std::vector<ConfigNode>{}) {
      if (!g.is_sequence() || g.items().empty()) {
        p.Fail(g, "zip: expected a list of axis keys ([hardware, topology]), got " + g.Describe());
        continue;
      }
      std::vector<size_t> members;
      for (const ConfigNode& k : g.items()) {
        const auto it =
            k.is_scalar() ? std::find(names.begin(), names.end(), k.text()) : names.end();
        if (it == names.end()) {
          p.Fail(k, "zip: " + k.Describe() + " is not an axis of this sweep" +
                        (k.is_scalar() ? DidYouMean(k.text(), names) : std::string()));
          continue;
        }
        const size_t a = static_cast<size_t>(it - names.begin());
        if (group_of[a] != -1) {
          p.Fail(k, "zip: " + axes[a].key + " is already in a zip group");
          continue;
        }
        if (!members.empty() && axes[a].values.size() != axes[members[0]].values.size()) {
          p.Fail(k, "zip: " + axes[a].key + " has " + std::to_string(axes[a].values.size()) +
                        " values but " + axes[members[0]].key + " has " +
                        std::to_string(axes[members[0]].values.size()) +
                        "; zipped axes need the same number of values");
          continue;
        }
        group_of[a] = static_cast<int>(groups.size());
        members.push_back(a);
      }
      groups.push_back(members);
    }
  }
  std::vector<bool> placed(groups.size(), false);
  for (size_t a = 0; a < axes.size(); ++a) {
    if (group_of[a] == -1) {
      spec.dims.push_back(SweepDim{{axes[a]}});
      continue;
    }
    const size_t g = static_cast<size_t>(group_of[a]);
    if (placed[g]) continue;
    placed[g] = true;
    SweepDim dim;
    for (size_t m : groups[g]) dim.axes.push_back(axes[m]);
    spec.dims.push_back(std::move(dim));
  }
  // Every problem at once: the axes that parsed are checked even when others did not.
  sink.Merge(CheckSweepSpec(spec, options));
  if (sink.empty()) return spec;
  // In the order of the sweep file (problems in other files after it).
  std::vector<Diagnostic> diags = sink.ToStatus().diagnostics();
  std::stable_sort(diags.begin(), diags.end(), [&](const Diagnostic& a, const Diagnostic& b) {
    auto key = [&](const Diagnostic& d) {
      return std::make_tuple(d.loc.file != virtual_path, d.loc.line, d.loc.col);
    };
    return key(a) < key(b);
  });
  return Status(StatusCode::kInvalidInput, std::move(diags));
}

Result<SweepSpec> LoadSweepSpec(const std::string& path, const LoadOptions& options) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return ParseSweepSpec(*text, path, options);
}

}  // namespace shardsim
