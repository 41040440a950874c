#include "sim/config/loader.h"

#include <filesystem>
#include <utility>

#include "sim/config/config_node.h"
#include "sim/config/library.h"
#include "sim/config/readers.h"
#include "sim/config/yaml_source.h"

namespace shardsim {
namespace {

// A value YAML reads as a plain scalar of exactly its text: letters, digits and '_' ("8", "1f1b",
// "interleaved_1f1b", "true"), but not a null ("null", "Null", "NULL"). ScenarioDocument::Set
// makes the node itself for those (the parser costs ~25k instructions a value, and a sweep sets
// a dozen per point); tests/config/document_test.cc holds it to the parser's node.
bool PlainWord(const std::string& v) {
  if (v.empty() || v == "null" || v == "Null" || v == "NULL") return false;
  for (char c : v) {
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && c != '_') return false;
  }
  return true;
}

// A reference given on a command line or in code: a scalar located nowhere in particular, so
// relative paths resolve from the working directory.
ConfigNode TopLevelRef(const std::string& name_or_path) {
  return ConfigNode::Scalar(name_or_path, KeyOrigin{SourceLoc{}, {}});
}

template <class Spec, class ReadFn>
Result<Spec> LoadPart(DocKind kind, const std::string& name_or_path, const LoadOptions& options,
                      ReadFn read) {
  Resolver resolver(LibraryDirs(options), nullptr);
  const ConfigNode ref = TopLevelRef(name_or_path);
  Result<ResolvedDoc> doc = resolver.Resolve(kind, ref, KindName(kind));
  if (!doc.ok()) return doc.status();
  Spec spec;
  Status s = read(*doc, DocWhere(*doc, nullptr), std::string(), &spec);
  if (!s.ok()) return s;
  return spec;
}

}  // namespace

Result<ModelSpec> LoadModel(const std::string& name_or_path, const LoadOptions& options) {
  Result<ModelSpec> m = LoadPart<ModelSpec>(DocKind::kModel, name_or_path, options, ReadModel);
  if (!m.ok()) return m;
  Status s = ValidateModel(*m);
  if (!s.ok()) return s;
  return m;
}

Result<HardwareSpec> LoadHardware(const std::string& name_or_path, const LoadOptions& options) {
  return LoadPart<HardwareSpec>(DocKind::kHardware, name_or_path, options, ReadHardware);
}

Result<TopologySpec> LoadTopology(const std::string& name_or_path, const LoadOptions& options) {
  return LoadPart<TopologySpec>(DocKind::kTopology, name_or_path, options, ReadTopology);
}

Result<ModelSpec> ImportHfConfig(const std::string& path) {
  return LoadModel("hf:" + path, LoadOptions{{}});
}

Result<Scenario> LoadScenario(const std::string& path, const LoadOptions& options) {
  Result<ScenarioDocument> doc = ScenarioDocument::Parse(path);
  if (!doc.ok()) return doc.status();
  return doc->Build(options);
}

// ---------------------------------------------------------------- ScenarioDocument

ScenarioDocument::ScenarioDocument(std::string path, std::unique_ptr<ConfigNode> tree)
    : path_(std::move(path)), tree_(std::move(tree)), cache_(std::make_shared<FileCache>()) {}
ScenarioDocument::ScenarioDocument(const ScenarioDocument& o)
    : path_(o.path_), tree_(std::make_unique<ConfigNode>(*o.tree_)), cache_(o.cache_) {}
ScenarioDocument& ScenarioDocument::operator=(const ScenarioDocument& o) {
  if (this != &o) {
    path_ = o.path_;
    tree_ = std::make_unique<ConfigNode>(*o.tree_);
    cache_ = o.cache_;
  }
  return *this;
}
ScenarioDocument::ScenarioDocument(ScenarioDocument&&) noexcept = default;
ScenarioDocument& ScenarioDocument::operator=(ScenarioDocument&&) noexcept = default;
ScenarioDocument::~ScenarioDocument() = default;

Result<ScenarioDocument> ScenarioDocument::Parse(const std::string& path) {
  Result<ConfigNode> tree = ParseYamlFile(path);
  if (!tree.ok()) return tree.status();
  return ScenarioDocument(path, std::make_unique<ConfigNode>(std::move(*tree)));
}

Result<ScenarioDocument> ScenarioDocument::ParseText(const std::string& text,
                                                     const std::string& virtual_path) {
  Result<ConfigNode> tree = ParseYaml(text, virtual_path);
  if (!tree.ok()) return tree.status();
  return ScenarioDocument(virtual_path, std::make_unique<ConfigNode>(std::move(*tree)));
}

Status ScenarioDocument::Set(const std::string& dotted_key, const std::string& yaml_value) {
  const std::string where = "<set " + dotted_key + ">";
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t dot = dotted_key.find('.', start);
    parts.push_back(dotted_key.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const std::string& p : parts) {
    if (p.empty()) return Status::Invalid("'" + dotted_key + "' is not a dotted key path");
  }
  const KeyOrigin origin{SourceLoc{where, 1, 1}, yaml_value};
  Result<ConfigNode> value = PlainWord(yaml_value)
                                 ? Result<ConfigNode>(ConfigNode::Scalar(yaml_value, origin))
                                 : ParseYaml(yaml_value, where);
  if (!value.ok()) return value.status();
  if (!tree_->is_map()) *tree_ = ConfigNode::Map(tree_->origin());
  ConfigNode* node = tree_.get();
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    ConfigNode* child = node->Find(parts[i]);
    if (child == nullptr || child->is_null()) {
      node->Set(parts[i], origin, ConfigNode::Map(origin));
      child = node->Find(parts[i]);
    } else if (child->is_scalar() && node == tree_.get() &&
               (parts[i] == "model" || parts[i] == "hardware" || parts[i] == "topology")) {
      // A library reference being refined: NAME becomes {base: NAME, <key>: <value>}.
      ConfigNode refined = ConfigNode::Map(child->origin());
      refined.Set("base", child->origin(), *child);
      *child = std::move(refined);
    } else if (child->is_scalar() && node == tree_.get() && parts[i] == "framework") {
      // A framework profile being overridden: NAME becomes {name: NAME, <key>: <value>}.
      ConfigNode refined = ConfigNode::Map(child->origin());
      refined.Set("name", child->origin(), *child);
      *child = std::move(refined);
    } else if (!child->is_map()) {
      return Status::Invalid("cannot set '" + dotted_key + "': '" + parts[i] + "' is " +
                                 child->Describe() + ", not a mapping",
                             child->loc(), child->origin().source_line);
    }
    node = child;
  }
  node->Set(parts.back(), origin, std::move(*value));
  return Status::Ok();
}

Result<ConfigNode> ScenarioDocument::Resolved(const LoadOptions& options) const {
  if (!tree_->is_map()) return *tree_;
  Resolver resolver(LibraryDirs(options), cache_.get());
  Result<ResolvedDoc> doc = resolver.Resolve(DocKind::kScenario, *tree_, "");
  if (!doc.ok()) return doc.status();
  return std::move(doc->tree);
}

Result<Scenario> ScenarioDocument::Build(const LoadOptions& options) const {
  if (!tree_->is_map()) {
    return Status::Invalid("expected a mapping of scenario keys, got " + tree_->Describe(),
                           SourceLoc{path_, 0, 0});
  }
  Resolver resolver(LibraryDirs(options), cache_.get());
  Result<ResolvedDoc> doc = resolver.Resolve(DocKind::kScenario, *tree_, "");
  if (!doc.ok()) return doc.status();
  doc->file = path_;
  doc->is_inline = false;
  Scenario scenario;
  Status s = ReadScenario(*doc, &resolver, &scenario);
  if (!s.ok()) return s;
  s = ValidateScenario(scenario);
  if (!s.ok()) return s;
  return scenario;
}

}  // namespace shardsim
