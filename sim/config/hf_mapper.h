// HfMapper: the small toolkit the per-family HF config importers are written with (internal).
#ifndef SHARDSIM_CONFIG_HF_MAPPER_H_
#define SHARDSIM_CONFIG_HF_MAPPER_H_

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

#include "sim/base/status.h"
#include "sim/config/config_node.h"

namespace shardsim {

class HfMapper {
 public:
  // `json`: the config.json mapping; `arch`: the node naming the architecture (locates constants).
  HfMapper(const ConfigNode& json, const ConfigNode& arch, std::string arch_name);

  // The first of `names` present with a non-null value, or nullptr.
  const ConfigNode* Find(std::initializer_list<const char*> names) const;
  // Copies the value of the first present HF key to our `key` ("moe.top_k" for nested blocks).
  // Required keys that are absent are reported.
  bool Copy(const std::string& key, std::initializer_list<const char*> names, bool required);
  // Writes `text` under our `key`, located at `from` (the architecture node when null).
  void Put(const std::string& key, const std::string& text, const ConfigNode* from = nullptr);
  void PutBool(const std::string& key, bool v, const ConfigNode* from = nullptr) {
    Put(key, v ? "true" : "false", from);
  }
  // Typed reads of HF keys with the transformers Config default when absent. An integer over
  // `max` (a kMaxModel* limit of spec.h, for values the importer computes with) is reported.
  bool Bool(std::initializer_list<const char*> names, bool dflt);
  std::optional<int64_t> Int(std::initializer_list<const char*> names, bool required,
                             int64_t max = std::numeric_limits<int64_t>::max());
  std::string String(std::initializer_list<const char*> names, const std::string& dflt) const;

  void Fail(const ConfigNode& at, const std::string& message);
  void FailMissing(const char* name);
  const ConfigNode& arch() const { return arch_; }
  const std::string& arch_name() const { return arch_name_; }

  Result<ConfigNode> Finish();

 private:
  const ConfigNode& json_;
  const ConfigNode& arch_;
  std::string arch_name_;
  ConfigNode out_;
  DiagnosticSink sink_;
};

}  // namespace shardsim

#endif  // SHARDSIM_CONFIG_HF_MAPPER_H_
