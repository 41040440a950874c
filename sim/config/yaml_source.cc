#include "sim/config/yaml_source.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/base/file_io.h"

namespace shardsim {
namespace {

// Deeper nesting than this is not a configuration file (and guards against alias cycles).
constexpr int kMaxDepth = 64;
// More nodes than this after alias expansion is an alias bomb, not a configuration file.
constexpr size_t kMaxNodes = 200000;

class Converter {
 public:
  // `text` is the document's one copy: every node's source line is a view into it.
  Converter(std::shared_ptr<const std::string> text, std::string path)
      : path_(std::move(path)), text_(std::move(text)) {
    const std::string_view t = *text_;
    size_t start = 0;
    while (start <= t.size()) {
      size_t end = t.find('\n', start);
      if (end == std::string_view::npos) end = t.size();
      line_starts_.push_back(start);
      start = end + 1;
    }
  }

  KeyOrigin OriginAt(int line0, int col0) const {
    if (line0 < 0 || col0 < 0) return KeyOrigin{SourceLoc{path_, 0, 0}, {}};
    const size_t idx = static_cast<size_t>(line0);
    if (idx >= line_starts_.size()) return KeyOrigin{SourceLoc{path_, line0 + 1, col0 + 1}, {}};
    const size_t begin = line_starts_[idx];
    size_t end = idx + 1 < line_starts_.size() ? line_starts_[idx + 1] - 1 : text_->size();
    if (end > begin && (*text_)[end - 1] == '\r') --end;
    return KeyOrigin{SourceLoc{path_, line0 + 1, col0 + 1}, SourceLine(text_, begin, end - begin)};
  }
  KeyOrigin OriginOf(const YAML::Node& n, const KeyOrigin& fallback) const {
    const YAML::Mark m = n.Mark();
    if (m.line < 0 || m.column < 0) return fallback;
    return OriginAt(m.line, m.column);
  }

  ConfigNode Convert(const YAML::Node& n, const KeyOrigin& fallback, int depth) {
    const KeyOrigin origin = OriginOf(n, fallback);
    if (depth > kMaxDepth || ++nodes_ > kMaxNodes) {
      if (!too_deep_)
        sink_.Add(origin.loc, "nesting too deep or too many nodes (alias cycle?)",
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
        // Duplicate keys found by hashing: a mapping of 100,000 keys (a 1 MB JSON object) must
        // not cost 10^10 comparisons.
        std::unordered_map<std::string, int> first_line;
        for (const auto& kv : n) {
          const KeyOrigin key_origin = OriginOf(kv.first, origin);
          if (!kv.first.IsScalar()) {
            sink_.Add(key_origin.loc, "a mapping key must be a plain name", key_origin.source_line);
            continue;
          }
          const std::string key = kv.first.Scalar();
          const auto [it, inserted] = first_line.emplace(key, key_origin.loc.line);
          if (!inserted) {
            sink_.Add(
                key_origin.loc,
                key + ": duplicate key (first written at line " + std::to_string(it->second) + ")",
                key_origin.source_line);
            continue;
          }
          map.AppendKey(key, key_origin, Convert(kv.second, key_origin, depth + 1));
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
  std::shared_ptr<const std::string> text_;
  std::vector<size_t> line_starts_;  // byte offset of each line in text_
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
  // Bounded: `model: /dev/zero` is an error, not an allocation of all memory.
  return ReadFileBounded(path, kMaxInputFileBytes);
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

Result<ConfigNode> ParseYaml(std::string_view raw, const std::string& path) {
  // shardsim reads UTF-8 text. yaml-cpp would decode a UTF-16 or UTF-32 byte-order mark, or
  // bytes that merely start like one, and read a binary file as text in another encoding.
  const bool utf16_32 =
      raw.size() >= 2 &&
      ((static_cast<unsigned char>(raw[0]) == 0xFF && static_cast<unsigned char>(raw[1]) == 0xFE) ||
       (static_cast<unsigned char>(raw[0]) == 0xFE && static_cast<unsigned char>(raw[1]) == 0xFF));
  if (const size_t nul = raw.find('\0'); utf16_32 || nul != std::string_view::npos) {
    return Status::Invalid(std::string("not a UTF-8 text file (") +
                               (utf16_32 ? "it starts with a UTF-16 or UTF-32 byte-order mark"
                                         : "a NUL byte at offset " + std::to_string(nul)) +
                               "); scenario, model, hardware and topology files are YAML in UTF-8",
                           SourceLoc{path, 1, 1});
  }
  // Old Mac line endings (CR alone) are line breaks (YAML 1.2 §5.4), but yaml-cpp reads a file of
  // them as one line. A lone CR becomes LF: same length, so every offset and column stays.
  auto text = std::make_shared<std::string>(raw);
  for (size_t i = 0; i < text->size(); ++i) {
    if ((*text)[i] == '\r' && (i + 1 == text->size() || (*text)[i + 1] != '\n')) (*text)[i] = '\n';
  }
  Converter conv(text, path);
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    int line = e.mark.line >= 0 ? e.mark.line + 1 : 0;
    int col = e.mark.column >= 0 ? e.mark.column + 1 : 0;
    std::string at = LineOf(*text, line);
    // A mapping or list left open runs to the end of the file, which yaml-cpp marks past the
    // last line: show the last line written, the caret after its end.
    std::string msg = e.msg;
    const auto blank = [](const std::string& l) { return l.find_first_not_of(" \t") == l.npos; };
    if (line > 1 && blank(at)) {
      do at = LineOf(*text, --line);
      while (line > 1 && blank(at));
      col = static_cast<int>(at.size()) + 1;
      msg += " (the file ends after this line)";
    }
    return Status::Invalid("YAML syntax error: " + msg, SourceLoc{path, line, col}, at);
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

Status CheckNotEmpty(std::string_view text, const std::string& path) {
  // Only white space and comments: YAML reads it as a null document, which every reader would
  // report without a place.
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t first = text.find_first_not_of(" \t\r\n", pos);
    if (first == std::string_view::npos) break;
    if (text[first] != '#') return Status::Ok();
    pos = text.find_first_of("\r\n", first);
    if (pos == std::string_view::npos) break;
  }
  return Status::Invalid(
      "the file is empty (nothing but white space and comments); expected a "
      "mapping of keys",
      SourceLoc{path, 1, 1});
}

Result<ConfigNode> ParseYamlFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  SHARDSIM_RETURN_IF_ERROR(CheckNotEmpty(*text, path));
  return ParseYaml(*text, path);
}

}  // namespace shardsim
