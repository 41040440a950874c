#include "sim/config/config_node.h"

#include <utility>

namespace shardsim {

ConfigNode ConfigNode::Null(KeyOrigin origin) {
  ConfigNode n;
  n.kind_ = Kind::kNull;
  n.origin_ = std::move(origin);
  return n;
}

ConfigNode ConfigNode::Scalar(std::string text, KeyOrigin origin, bool quoted) {
  ConfigNode n;
  n.kind_ = Kind::kScalar;
  n.text_ = std::move(text);
  n.origin_ = std::move(origin);
  n.quoted_ = quoted;
  return n;
}

ConfigNode ConfigNode::Map(KeyOrigin origin) {
  ConfigNode n;
  n.kind_ = Kind::kMap;
  n.origin_ = std::move(origin);
  return n;
}

ConfigNode ConfigNode::Sequence(KeyOrigin origin) {
  ConfigNode n;
  n.kind_ = Kind::kSequence;
  n.origin_ = std::move(origin);
  return n;
}

std::string ConfigNode::Describe() const {
  switch (kind_) {
    case Kind::kNull:
      return "an empty value";
    case Kind::kScalar:
      return "\"" + text_ + "\"";
    case Kind::kMap:
      return "a mapping";
    case Kind::kSequence:
      return "a list";
  }
  return "?";
}

const ConfigNode* ConfigNode::Find(std::string_view key) const {
  if (kind_ != Kind::kMap) return nullptr;
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i].text == key) return &children_[i];
  }
  return nullptr;
}

ConfigNode* ConfigNode::Find(std::string_view key) {
  return const_cast<ConfigNode*>(static_cast<const ConfigNode*>(this)->Find(key));
}

const KeyOrigin* ConfigNode::FindKeyOrigin(std::string_view key) const {
  if (kind_ != Kind::kMap) return nullptr;
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i].text == key) return &keys_[i].origin;
  }
  return nullptr;
}

void ConfigNode::Set(std::string key, KeyOrigin key_origin, ConfigNode value) {
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i].text == key) {
      keys_[i].origin = std::move(key_origin);
      children_[i] = std::move(value);
      return;
    }
  }
  keys_.push_back(Key{std::move(key), std::move(key_origin)});
  children_.push_back(std::move(value));
}

void ConfigNode::AppendKey(std::string key, KeyOrigin key_origin, ConfigNode value) {
  keys_.push_back(Key{std::move(key), std::move(key_origin)});
  children_.push_back(std::move(value));
}

void ConfigNode::Erase(std::string_view key) {
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i].text == key) {
      keys_.erase(keys_.begin() + static_cast<std::ptrdiff_t>(i));
      children_.erase(children_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
}

ConfigNode MergeOver(const ConfigNode& base, const ConfigNode& overlay) {
  if (!base.is_map() || !overlay.is_map()) return overlay;
  ConfigNode merged = base;
  merged.set_origin(overlay.origin());
  for (size_t i = 0; i < overlay.size(); ++i) {
    const std::string& k = overlay.key(i);
    const ConfigNode* old = merged.Find(k);
    if (old != nullptr && old->is_map() && overlay.value(i).is_map()) {
      merged.Set(k, overlay.key_origin(i), MergeOver(*old, overlay.value(i)));
    } else {
      merged.Set(k, overlay.key_origin(i), overlay.value(i));
    }
  }
  return merged;
}

}  // namespace shardsim
