// Reading input files into ConfigNode trees: the only place in shardsim that touches yaml-cpp.
//
// yaml-cpp reads YAML and JSON alike. Its exceptions stop here: a syntax error becomes a
// Diagnostic "file:line:col: error: YAML syntax error: ..." with the offending line and a caret.
// Duplicate keys, non-scalar keys and pathological nesting (alias bombs) are errors too.
#ifndef SHARDSIM_CONFIG_YAML_SOURCE_H_
#define SHARDSIM_CONFIG_YAML_SOURCE_H_

#include <string>
#include <string_view>

#include "sim/base/status.h"
#include "sim/config/config_node.h"

namespace shardsim {

// The whole content of a text file; "cannot open 'PATH': REASON" when it cannot be read, and an
// error past kMaxInputFileBytes (sim/base/file_io.h).
Result<std::string> ReadTextFile(const std::string& path);

// Parses YAML or JSON `text`; locations name the file `path` (which need not exist).
Result<ConfigNode> ParseYaml(std::string_view text, const std::string& path);

// An error at PATH:1:1 when `text` holds nothing but white space and comments (a document that
// YAML reads as null), so that an empty file is named as such, with a place.
Status CheckNotEmpty(std::string_view text, const std::string& path);

// ReadTextFile (bounded: kMaxInputFileBytes) + CheckNotEmpty + ParseYaml.
Result<ConfigNode> ParseYamlFile(const std::string& path);

// Line `line` (1-based) of `text` without its line break; "" when out of range.
std::string LineOf(std::string_view text, int line);

}  // namespace shardsim

#endif  // SHARDSIM_CONFIG_YAML_SOURCE_H_
