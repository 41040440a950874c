// Resolving references to model / hardware / topology / scenario documents (internal to config).
//
// A reference is a bare library name, a path, an inline mapping, or (models) an HF config. The
// Resolver turns it into one merged ConfigNode tree: `base:` chains are followed (relative paths
// from the folder of the file that wrote them) and overlaid key by key, HF configs are converted
// to model keys, cycles are reported instead of followed. Files are parsed through a FileCache,
// which copies of a ScenarioDocument share across threads.
#ifndef SHARDSIM_CONFIG_LIBRARY_H_
#define SHARDSIM_CONFIG_LIBRARY_H_

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/config_node.h"
#include "sim/config/loader.h"

namespace shardsim {

enum class DocKind { kModel, kHardware, kTopology, kScenario };
const char* KindName(DocKind kind);       // "model", "hardware", "topology", "scenario"
const char* LibraryFolder(DocKind kind);  // "models", "hardware", "topologies", "scenarios"

// Parsed files by path; thread-safe. Files are assumed not to change while a cache lives.
class FileCache {
 public:
  Result<ConfigNode> Parse(const std::string& path);

  // The model, hardware or topology a scenario names by a library name or a path, as read once
  // (scenario_reader.cc ReadPart): `key` spells out everything the spec is read from (the
  // reference as written and where, the library folders). A sweep names the same ones at every
  // point; reading them again gives the same spec. FindPart returns false when not stored.
  bool FindPart(const std::string& key, ModelSpec* out);
  bool FindPart(const std::string& key, HardwareSpec* out);
  bool FindPart(const std::string& key, TopologySpec* out);
  void StorePart(const std::string& key, const ModelSpec& spec);
  void StorePart(const std::string& key, const HardwareSpec& spec);
  void StorePart(const std::string& key, const TopologySpec& spec);

 private:
  template <class Spec>
  bool Find(const std::map<std::string, Spec>& parts, const std::string& key, Spec* out);
  template <class Spec>
  void Store(std::map<std::string, Spec>* parts, const std::string& key, const Spec& spec);

  std::mutex mu_;
  std::map<std::string, Result<ConfigNode>> files_;
  std::map<std::string, ModelSpec> models_;
  std::map<std::string, HardwareSpec> hardware_;
  std::map<std::string, TopologySpec> topologies_;
};

// True when `ref` names a file rather than a library entry (ends in .yaml/.yml/.json or has '/').
bool LooksLikePath(const std::string& ref);
// `path` relative to the folder of the file `node` was written in (unless absolute).
std::string PathRelativeTo(const ConfigNode& node, const std::string& path);

struct ResolvedDoc {
  ConfigNode tree;   // the merged document
  std::string file;  // the file it was read from (for an inline mapping: the file holding it)
  bool is_inline = false;
};

class Resolver {
 public:
  // `cache` may be null (files are then parsed on each use).
  Resolver(std::vector<std::string> library_dirs, FileCache* cache);

  // Resolves `ref` (the value written under `key`, e.g. "model") to a document of `kind`.
  Result<ResolvedDoc> Resolve(DocKind kind, const ConfigNode& ref, const std::string& key);
  // Resolves the document in file `path`; `ref` locates errors about opening it.
  Result<ResolvedDoc> ResolveFile(DocKind kind, const std::string& path, const ConfigNode& ref,
                                  const std::string& key);
  // The cache given to the constructor (may be null) and the library folders searched.
  FileCache* cache() const { return cache_; }
  const std::vector<std::string>& dirs() const { return dirs_; }
  // The path of library entry `name` of `kind`, or an error listing close names.
  Result<std::string> FindInLibrary(DocKind kind, const std::string& name, const ConfigNode& ref,
                                    const std::string& key) const;

 private:
  Result<ConfigNode> ParseFile(const std::string& path);
  Result<ResolvedDoc> ResolveHf(const std::string& path, const ConfigNode& ref,
                                const std::string& key);

  std::vector<std::string> dirs_;
  FileCache* cache_;
  std::vector<std::string> stack_;          // canonical paths being resolved
  std::vector<std::string> stack_display_;  // the same, as written
};

}  // namespace shardsim

#endif  // SHARDSIM_CONFIG_LIBRARY_H_
