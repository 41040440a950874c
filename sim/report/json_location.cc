#include "sim/report/json_location.h"

#include <algorithm>

namespace shardsim {

TextLocation LocateByte(const std::string& text, size_t offset) {
  TextLocation loc;
  const size_t at = std::min(offset == 0 ? 0 : offset - 1, text.size());
  size_t line_start = 0;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++loc.line;
      line_start = i + 1;
    }
  }
  loc.col = static_cast<int>(at - line_start) + 1;
  size_t end = text.find('\n', line_start);
  if (end == std::string::npos) end = text.size();
  // A line too long to print (a trace written on one line) is left out; the location stays.
  if (end - line_start <= 200) loc.source_line = text.substr(line_start, end - line_start);
  return loc;
}

Status JsonError(const std::string& text, const std::string& file, size_t offset,
                 const std::string& message) {
  const TextLocation loc = LocateByte(text, offset);
  return Status::Invalid(message, SourceLoc{file, loc.line, loc.col}, loc.source_line);
}

}  // namespace shardsim
