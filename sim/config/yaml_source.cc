#include "sim/config/yaml_source.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace shardsim {
namespace {

// Deeper nesting than this is not a configuration file (and guards against alias cycles).
constexpr int kMaxDepth = 64;
// More nodes than this after alias expansion is an alias bomb, not a configuration file.
constexpr size_t kMaxNodes = 200000;

class Converter {
 public:
  Converter(std::string_view text, std::string path) : path_(std::move(path)) {
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines_.emplace_back(line);
      start = end + 1;
    }
  }

  KeyOrigin OriginAt(int line0, int col0) const {
    if (line0 < 0 || col0 < 0) return KeyOrigin{SourceLoc{path_, 0, 0}, {}};
    const size_t idx = static_cast<size_t>(line0);
    return KeyOrigin{SourceLoc{path_, line0 + 1, col0 + 1},
                     idx < lines_.size() ? lines_[idx] : std::string()};
  }
  KeyOrigin OriginOf(const YAML::Node& n, const KeyOrigin& fallback) const {
    const YAML::Mark m = n.Mark();
    if (m.line < 0 || m.column < 0) return fallback;
    return OriginAt(m.line, m.column);
  }

  ConfigNode Convert(const YAML::Node& n, const KeyOrigin& fallback, int depth) {
    const KeyOrigin origin = OriginOf(n, fallback);
    if (depth > kMaxDepth || ++nodes_ > kMaxNodes) {
      if (!too_deep_) sink_.Add(origin.loc, "nesting too deep or too many nodes (alias cycle?)",
                                origin.source_line);
      too_deep_ = true;
      return ConfigNode::Null(origin);
    }
    switch (n.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return ConfigNode::Null(origin);
      case YAML::NodeType::Scalar:
        return ConfigNode::Scalar(n.Scalar(), origin, n.Tag() == "!");
      case YAML::NodeType::Sequence: {
        ConfigNode seq = ConfigNode::Sequence(origin);
        for (const YAML::Node& item : n) seq.Append(Convert(item, origin, depth + 1));
        return seq;
      }
      case YAML::NodeType::Map: {
        ConfigNode map = ConfigNode::Map(origin);
        for (const auto& kv : n) {
          const KeyOrigin key_origin = OriginOf(kv.first, origin);
          if (!kv.first.IsScalar()) {
            sink_.Add(key_origin.loc, "a mapping key must be a plain name", key_origin.source_line);
            continue;
          }
          const std::string key = kv.first.Scalar();
          if (const KeyOrigin* first = map.FindKeyOrigin(key)) {
            sink_.Add(key_origin.loc,
                      key + ": duplicate key (first written at line " +
                          std::to_string(first->loc.line) + ")",
                      key_origin.source_line);
            continue;
          }
          map.Set(key, key_origin, Convert(kv.second, key_origin, depth + 1));
        }
        return map;
      }
    }
    return ConfigNode::Null(origin);
  }

  const std::string& path() const { return path_; }
  DiagnosticSink& sink() { return sink_; }

 private:
  std::string path_;
  std::vector<std::string> lines_;
  DiagnosticSink sink_;
  size_t nodes_ = 0;
  bool too_deep_ = false;
};

}  // namespace

Result<std::string> ReadTextFile(const std::string& path) {
  // A directory opens as an empty stream on Linux: it would read as an empty document.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::NotFound("cannot read '" + path + "': it is a directory, not a YAML file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    return Status::NotFound("cannot open '" + path + "': " +
                            (err != 0 ? std::strerror(err) : "unreadable"));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::NotFound("cannot read '" + path + "'");
  return ss.str();
}

std::string LineOf(std::string_view text, int line) {
  if (line <= 0) return "";
  size_t start = 0;
  for (int i = 1; i < line; ++i) {
    start = text.find('\n', start);
    if (start == std::string_view::npos) return "";
    ++start;
  }
  size_t end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  std::string_view s = text.substr(start, end - start);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return std::string(s);
}

Result<ConfigNode> ParseYaml(std::string_view text, const std::string& path) {
  Converter conv(text, path);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    const int line = e.mark.line >= 0 ? e.mark.line + 1 : 0;
    const int col = e.mark.column >= 0 ? e.mark.column + 1 : 0;
    return Status::Invalid("YAML syntax error: " + e.msg, SourceLoc{path, line, col},
                           LineOf(text, line));
  }
  ConfigNode tree;
  try {
    tree = conv.Convert(root, KeyOrigin{SourceLoc{path, 0, 0}, {}}, 0);
  } catch (const YAML::Exception& e) {
    return Status::Invalid("YAML error: " + e.msg, SourceLoc{path, 0, 0});
  }
  if (!conv.sink().empty()) return conv.sink().ToStatus();
  return tree;
}

Result<ConfigNode> ParseYamlFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return ParseYaml(*text, path);
}

}  // namespace shardsim
