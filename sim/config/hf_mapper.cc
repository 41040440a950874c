#include "sim/config/hf_mapper.h"

#include "sim/base/strings.h"
#include "sim/config/value_reader.h"

namespace shardsim {

HfMapper::HfMapper(const ConfigNode& json, const ConfigNode& arch, std::string arch_name)
    : json_(json),
      arch_(arch),
      arch_name_(std::move(arch_name)),
      out_(ConfigNode::Map(json.origin())) {}

const ConfigNode* HfMapper::Find(std::initializer_list<const char*> names) const {
  for (const char* n : names) {
    const ConfigNode* v = json_.Find(n);
    if (v != nullptr && !v->is_null()) return v;
  }
  return nullptr;
}

void HfMapper::Put(const std::string& key, const std::string& text, const ConfigNode* from) {
  const ConfigNode& at = from != nullptr ? *from : arch_;
  ConfigNode value = ConfigNode::Scalar(text, at.origin());
  const size_t dot = key.find('.');
  if (dot == std::string::npos) {
    out_.Set(key, at.origin(), std::move(value));
    return;
  }
  const std::string block = key.substr(0, dot);
  ConfigNode* sub = out_.Find(block);
  if (sub == nullptr) {
    out_.Set(block, arch_.origin(), ConfigNode::Map(arch_.origin()));
    sub = out_.Find(block);
  }
  sub->Set(key.substr(dot + 1), at.origin(), std::move(value));
}

bool HfMapper::Copy(const std::string& key, std::initializer_list<const char*> names,
                    bool required) {
  const ConfigNode* v = Find(names);
  if (v == nullptr) {
    if (required) FailMissing(*names.begin());
    return false;
  }
  if (!IsNumberNode(*v)) {
    Fail(*v, std::string(*names.begin()) + ": " + NotANumber(*v, "a number"));
    return false;
  }
  Put(key, v->text(), v);
  return true;
}

bool HfMapper::Bool(std::initializer_list<const char*> names, bool dflt) {
  const ConfigNode* v = Find(names);
  if (v == nullptr) return dflt;
  if (v->is_scalar() && (v->text() == "true" || v->text() == "false")) return v->text() == "true";
  Fail(*v, std::string(*names.begin()) + ": expected true or false, got " + v->Describe());
  return dflt;
}

std::optional<int64_t> HfMapper::Int(std::initializer_list<const char*> names, bool required,
                                     int64_t max) {
  const ConfigNode* v = Find(names);
  if (v == nullptr) {
    if (required) FailMissing(*names.begin());
    return std::nullopt;
  }
  // A JSON string ("4096") is not a number, as in the YAML readers (IsNumberNode).
  Result<int64_t> i = IsNumberNode(*v)
                          ? ParseInteger(v->text())
                          : Result<int64_t>(Status::Invalid(NotANumber(*v, "an integer")));
  if (!i.ok()) {
    Fail(*v, std::string(*names.begin()) + ": " + i.status().message());
    return std::nullopt;
  }
  if (*i > max) {
    Fail(*v, std::string(*names.begin()) + ": must be at most " + std::to_string(max) + ", got " +
                 std::to_string(*i));
    return std::nullopt;
  }
  return *i;
}

std::string HfMapper::String(std::initializer_list<const char*> names,
                             const std::string& dflt) const {
  const ConfigNode* v = Find(names);
  return v != nullptr && v->is_scalar() ? v->text() : dflt;
}

void HfMapper::Fail(const ConfigNode& at, const std::string& message) {
  sink_.Add(at.loc(), message, at.origin().source_line);
}

void HfMapper::FailMissing(const char* name) {
  sink_.Add(arch_.loc(), std::string(name) + ": missing (" + arch_name_ + " needs it)",
            arch_.origin().source_line);
}

Result<ConfigNode> HfMapper::Finish() {
  if (!sink_.empty()) return sink_.ToStatus();
  return out_;
}

}  // namespace shardsim
