// ConfigNode: a parsed YAML/JSON document as our own tree, every node and every map key located.
//
// sim/config parses input files with yaml-cpp (only in yaml_source.cc) and converts them at once
// into this tree, so that nothing outside that one file sees yaml-cpp, and so that a value keeps
// pointing at the file, line and column it was written at after documents are merged (`base:`)
// or overridden (ScenarioDocument::Set). A node is a null, a scalar (its text as written), an
// ordered map (keys in file order, each with its own location) or a sequence.
#ifndef SHARDSIM_CONFIG_CONFIG_NODE_H_
#define SHARDSIM_CONFIG_CONFIG_NODE_H_

#include <string>
#include <string_view>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/spec.h"

namespace shardsim {

class ConfigNode {
 public:
  enum class Kind { kNull, kScalar, kMap, kSequence };

  ConfigNode() = default;
  static ConfigNode Null(KeyOrigin origin);
  static ConfigNode Scalar(std::string text, KeyOrigin origin, bool quoted = false);
  static ConfigNode Map(KeyOrigin origin);
  static ConfigNode Sequence(KeyOrigin origin);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_scalar() const { return kind_ == Kind::kScalar; }
  bool is_map() const { return kind_ == Kind::kMap; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  // "a mapping", "a list", "an empty value" or the quoted scalar text: for "got ..." messages.
  std::string Describe() const;

  // Where the node was written: file, 1-based line and column, and that line's text.
  const KeyOrigin& origin() const { return origin_; }
  const SourceLoc& loc() const { return origin_.loc; }
  void set_origin(KeyOrigin o) { origin_ = std::move(o); }

  // Scalars: the text as written (quotes removed) and whether it was quoted.
  const std::string& text() const { return text_; }
  bool quoted() const { return quoted_; }

  // Maps: keys in the order written. Find returns nullptr when the key is absent.
  size_t size() const { return children_.size(); }
  const std::string& key(size_t i) const { return keys_[i].text; }
  const KeyOrigin& key_origin(size_t i) const { return keys_[i].origin; }
  const ConfigNode& value(size_t i) const { return children_[i]; }
  ConfigNode& value(size_t i) { return children_[i]; }
  const ConfigNode* Find(std::string_view key) const;
  ConfigNode* Find(std::string_view key);
  const KeyOrigin* FindKeyOrigin(std::string_view key) const;
  // Adds `key` (replacing the value of an existing one, keeping its position).
  void Set(std::string key, KeyOrigin key_origin, ConfigNode value);
  // Adds `key`, which the caller knows is absent (the parser, which checks duplicates itself):
  // no search, so building a mapping of n keys costs n, not n^2.
  void AppendKey(std::string key, KeyOrigin key_origin, ConfigNode value);
  // Removes `key` if present.
  void Erase(std::string_view key);

  // Sequences.
  const std::vector<ConfigNode>& items() const { return children_; }
  void Append(ConfigNode item) { children_.push_back(std::move(item)); }

 private:
  struct Key {
    std::string text;
    KeyOrigin origin;
  };
  Kind kind_ = Kind::kNull;
  KeyOrigin origin_;
  std::string text_;
  bool quoted_ = false;
  std::vector<Key> keys_;             // maps only, parallel to children_
  std::vector<ConfigNode> children_;  // map values or sequence items
};

// `overlay` written over `base`: keys of overlay replace those of base, except that where both
// are mappings they merge key by key (recursively). Every node keeps its own location, so an
// error in an overridden value points at the override and one in an inherited value at the base.
ConfigNode MergeOver(const ConfigNode& base, const ConfigNode& overlay);

}  // namespace shardsim

#endif  // SHARDSIM_CONFIG_CONFIG_NODE_H_
