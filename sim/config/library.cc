#include "sim/config/library.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

#include "sim/base/strings.h"
#include "sim/config/hf_import.h"
#include "sim/config/yaml_source.h"

namespace shardsim {
namespace fs = std::filesystem;

namespace {

// A base: chain longer than this is a mistake even without a cycle.
constexpr size_t kMaxChain = 32;

Status Located(const ConfigNode& at, const std::string& message,
               StatusCode code = StatusCode::kInvalidInput) {
  return Status(code, {Diagnostic{at.loc(), message, at.origin().source_line}});
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

const char* KindName(DocKind kind) {
  switch (kind) {
    case DocKind::kModel:
      return "model";
    case DocKind::kHardware:
      return "hardware";
    case DocKind::kTopology:
      return "topology";
    case DocKind::kScenario:
      return "scenario";
  }
  return "?";
}

const char* LibraryFolder(DocKind kind) {
  switch (kind) {
    case DocKind::kModel:
      return "models";
    case DocKind::kHardware:
      return "hardware";
    case DocKind::kTopology:
      return "topologies";
    case DocKind::kScenario:
      return "scenarios";
  }
  return "?";
}

std::vector<std::string> LibraryDirs(const LoadOptions& options) {
  if (!options.library_dirs.empty()) return options.library_dirs;
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("SHARDSIM_LIBRARY"); env != nullptr) {
    std::string_view rest(env);
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const std::string_view part = rest.substr(0, colon);
      if (!part.empty()) dirs.emplace_back(part);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
#ifdef SHARDSIM_DEFAULT_LIBRARY
  dirs.emplace_back(SHARDSIM_DEFAULT_LIBRARY);
#endif
  return dirs;
}

Result<ConfigNode> FileCache::Parse(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = files_.find(path);
    if (it != files_.end()) return it->second;
  }
  Result<ConfigNode> parsed = ParseYamlFile(path);  // outside the lock: may be slow
  std::lock_guard<std::mutex> lock(mu_);
  return files_.emplace(path, std::move(parsed)).first->second;
}

template <class Spec>
bool FileCache::Find(const std::map<std::string, Spec>& parts, const std::string& key, Spec* out) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = parts.find(key);
  if (it == parts.end()) return false;
  *out = it->second;
  return true;
}

template <class Spec>
void FileCache::Store(std::map<std::string, Spec>* parts, const std::string& key,
                      const Spec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  parts->emplace(key, spec);
}

bool FileCache::FindPart(const std::string& key, ModelSpec* out) { return Find(models_, key, out); }
bool FileCache::FindPart(const std::string& key, HardwareSpec* out) {
  return Find(hardware_, key, out);
}
bool FileCache::FindPart(const std::string& key, TopologySpec* out) {
  return Find(topologies_, key, out);
}
void FileCache::StorePart(const std::string& key, const ModelSpec& spec) {
  Store(&models_, key, spec);
}
void FileCache::StorePart(const std::string& key, const HardwareSpec& spec) {
  Store(&hardware_, key, spec);
}
void FileCache::StorePart(const std::string& key, const TopologySpec& spec) {
  Store(&topologies_, key, spec);
}

bool LooksLikePath(const std::string& ref) {
  return ref.find('/') != std::string::npos || EndsWith(ref, ".yaml") || EndsWith(ref, ".yml") ||
         EndsWith(ref, ".json");
}

std::string PathRelativeTo(const ConfigNode& node, const std::string& path) {
  const fs::path p(path);
  if (p.is_absolute()) return p.lexically_normal().string();
  const fs::path dir = fs::path(node.loc().file).parent_path();
  return (dir / p).lexically_normal().string();
}

Resolver::Resolver(std::vector<std::string> library_dirs, FileCache* cache)
    : dirs_(std::move(library_dirs)), cache_(cache) {}

Result<ConfigNode> Resolver::ParseFile(const std::string& path) {
  if (cache_ != nullptr) return cache_->Parse(path);
  return ParseYamlFile(path);
}

Result<std::string> Resolver::FindInLibrary(DocKind kind, const std::string& name,
                                            const ConfigNode& ref, const std::string& key) const {
  const std::string folder = LibraryFolder(kind);
  std::vector<std::string> names;
  for (const std::string& dir : dirs_) {
    const fs::path candidate = fs::path(dir) / folder / (name + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return candidate.lexically_normal().string();
    for (fs::directory_iterator it(fs::path(dir) / folder, ec), end; !ec && it != end;
         it.increment(ec)) {
      if (it->path().extension() == ".yaml") names.push_back(it->path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  // Close names: within the same typo distance as DidYouMean, nearest first, at most five.
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  std::vector<std::pair<size_t, std::string>> close;
  for (const std::string& n : names) {
    const size_t d = EditDistance(ToLower(name), ToLower(n));
    if (d <= limit) close.emplace_back(d, n);
  }
  std::sort(close.begin(), close.end());
  if (close.size() > 5) close.resize(5);
  std::vector<std::string> where;
  for (const std::string& dir : dirs_) where.push_back((fs::path(dir) / folder).string() + "/");
  std::string message =
      key + ": no " + KindName(kind) + " named '" + name + "' in " +
      (where.empty() ? std::string("the library (no library folder set)") : Join(where));
  if (!close.empty()) {
    std::vector<std::string> close_names;
    for (const auto& c : close) close_names.push_back(c.second);
    message += "; close names: " + Join(close_names);
  } else if (!names.empty()) {
    message += "; none of its " + std::to_string(names.size()) + " entries is close";
  }
  return Located(ref, message);
}

namespace {

// A scenario that names its model, hardware or topology (`model: llama3-70b`) and one built on
// it that sets keys below it (`model: {num_layers: 40}`, or a sweep axis `model.num_layers`):
// the keys refine the named entry, as if the base had said `model: {base: llama3-70b}`, rather
// than replace it with a mapping that has only those keys. An overlay with its own `base` or
// `hf_config` still replaces the reference.
void RefineLibraryReferences(ConfigNode& base, const ConfigNode& overlay) {
  for (const char* key : {"model", "hardware", "topology"}) {
    ConfigNode* named = base.Find(key);
    const ConfigNode* keys = overlay.Find(key);
    if (named == nullptr || keys == nullptr || !named->is_scalar() || !keys->is_map()) continue;
    if (keys->Find("base") != nullptr || keys->Find("hf_config") != nullptr) continue;
    ConfigNode refined = ConfigNode::Map(named->origin());
    refined.Set("base", named->origin(), *named);
    *named = std::move(refined);
  }
  // The same for a framework profile: `framework: torchtitan` refined by
  // `framework: {reshard_after_forward: false}` keeps its name.
  ConfigNode* named = base.Find("framework");
  const ConfigNode* keys = overlay.Find("framework");
  if (named != nullptr && keys != nullptr && named->is_scalar() && keys->is_map() &&
      keys->Find("name") == nullptr) {
    ConfigNode refined = ConfigNode::Map(named->origin());
    refined.Set("name", named->origin(), *named);
    *named = std::move(refined);
  }
}

// A hardware overlay that restates the sustained clocks restates them for every dtype: the base's
// per-dtype fractions go unless the overlay writes its own (`sustained_compute_fraction: 1` means
// burst clocks throughout, as `calibrate`'s profiled overlays and ideal-kernel checks intend).
void RestateClocks(const ConfigNode& overlay, ConfigNode* merged) {
  if (overlay.Find("sustained_compute_fraction") != nullptr &&
      overlay.Find("sustained_compute_fraction_by_dtype") == nullptr) {
    merged->Erase("sustained_compute_fraction_by_dtype");
  }
}

}  // namespace

Result<ResolvedDoc> Resolver::Resolve(DocKind kind, const ConfigNode& ref, const std::string& key) {
  if (ref.is_scalar()) {
    const std::string& text = ref.text();
    if (kind == DocKind::kModel && text.rfind("hf:", 0) == 0) {
      return ResolveHf(PathRelativeTo(ref, text.substr(3)), ref, key);
    }
    if (LooksLikePath(text)) return ResolveFile(kind, PathRelativeTo(ref, text), ref, key);
    Result<std::string> path = FindInLibrary(kind, text, ref, key);
    if (!path.ok()) return path.status();
    return ResolveFile(kind, *path, ref, key);
  }
  if (!ref.is_map()) {
    return Located(ref, key + ": expected a " + KindName(kind) +
                            " name, a path or a mapping, got " + ref.Describe());
  }
  const ConfigNode* base = ref.Find("base");
  const ConfigNode* hf = kind == DocKind::kModel ? ref.Find("hf_config") : nullptr;
  if (base == nullptr && hf == nullptr) return ResolvedDoc{ref, ref.loc().file, true};
  const std::string prefix = key.empty() ? std::string() : key + ".";
  if (base != nullptr && hf != nullptr) {
    return Located(*hf, prefix + "hf_config: cannot be combined with 'base' (line " +
                            std::to_string(base->loc().line) + ")");
  }
  if (hf != nullptr && !hf->is_scalar()) {
    return Located(*hf,
                   prefix + "hf_config: expected a path to a config.json, got " + hf->Describe());
  }
  Result<ResolvedDoc> parent =
      base != nullptr ? Resolve(kind, *base, prefix + "base")
                      : ResolveHf(PathRelativeTo(*hf, hf->text()), *hf, prefix + "hf_config");
  if (!parent.ok()) return parent.status();
  ConfigNode overlay = ref;
  overlay.Erase("base");
  overlay.Erase("hf_config");
  if (kind == DocKind::kScenario) RefineLibraryReferences(parent->tree, overlay);
  ConfigNode merged = MergeOver(parent->tree, overlay);
  if (kind == DocKind::kHardware) RestateClocks(overlay, &merged);
  return ResolvedDoc{std::move(merged), ref.loc().file, true};
}

Result<ResolvedDoc> Resolver::ResolveFile(DocKind kind, const std::string& path,
                                          const ConfigNode& ref, const std::string& key) {
  std::error_code ec;
  const std::string canonical = fs::weakly_canonical(fs::path(path), ec).string();
  const std::string id = ec ? path : canonical;
  if (std::find(stack_.begin(), stack_.end(), id) != stack_.end()) {
    std::vector<std::string> chain(stack_display_.begin(), stack_display_.end());
    const auto first = std::find(stack_.begin(), stack_.end(), id) - stack_.begin();
    chain.erase(chain.begin(), chain.begin() + first);
    chain.push_back(path);
    return Located(ref, key + ": cycle of base references: " + Join(chain, " -> "));
  }
  if (stack_.size() >= kMaxChain) {
    return Located(ref, key + ": base chain deeper than " + std::to_string(kMaxChain) + " files");
  }
  Result<ConfigNode> tree = ParseFile(path);
  if (!tree.ok()) {
    // A file that cannot be read, or is too large to: no place of its own, so at the reference.
    if (tree.status().code() == StatusCode::kNotFound ||
        !tree.status().diagnostics().front().loc.known()) {
      return Located(ref, key + ": " + tree.status().message());
    }
    return tree.status();
  }
  if (kind == DocKind::kModel && tree->is_map() && tree->Find("architectures") != nullptr) {
    Result<ConfigNode> model = HfConfigToModelTree(*tree);
    if (!model.ok()) return model.status();
    return ResolvedDoc{std::move(*model), path, false};
  }
  if (!tree->is_map()) {
    return Status::Invalid(
        std::string("expected a mapping of ") + KindName(kind) + " keys, got " + tree->Describe(),
        SourceLoc{path, tree->loc().line, tree->loc().col}, tree->origin().source_line);
  }
  stack_.push_back(id);
  stack_display_.push_back(path);
  Result<ResolvedDoc> doc = Resolve(kind, *tree, "");
  stack_.pop_back();
  stack_display_.pop_back();
  if (!doc.ok()) return doc.status();
  doc->file = path;
  doc->is_inline = false;
  return doc;
}

Result<ResolvedDoc> Resolver::ResolveHf(const std::string& path, const ConfigNode& ref,
                                        const std::string& key) {
  Result<ConfigNode> tree = ParseFile(path);
  if (!tree.ok()) {
    // A file that cannot be read, or is too large to: no place of its own, so at the reference.
    if (tree.status().code() == StatusCode::kNotFound ||
        !tree.status().diagnostics().front().loc.known()) {
      return Located(ref, key + ": " + tree.status().message());
    }
    return tree.status();
  }
  Result<ConfigNode> model = HfConfigToModelTree(*tree);
  if (!model.ok()) return model.status();
  return ResolvedDoc{std::move(*model), path, false};
}

}  // namespace shardsim
