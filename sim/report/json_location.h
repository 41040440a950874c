// Locating a JSON parse error (nlohmann::json reports a byte offset) as file:line:col with the
// offending line, the way every input error of shardsim is reported.
#ifndef SHARDSIM_REPORT_JSON_LOCATION_H_
#define SHARDSIM_REPORT_JSON_LOCATION_H_

#include <cstddef>
#include <string>

#include "sim/base/status.h"

namespace shardsim {

// The 1-based line and column of byte `offset` (1-based, as nlohmann's parse_error::byte) of
// `text`, and that line's text.
struct TextLocation {
  int line = 1, col = 1;
  std::string source_line;
};
TextLocation LocateByte(const std::string& text, size_t offset);

// A kInvalidInput status at byte `offset` of `file`: "file:line:col: error: <message>".
Status JsonError(const std::string& text, const std::string& file, size_t offset,
                 const std::string& message);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_JSON_LOCATION_H_
