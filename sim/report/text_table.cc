#include "sim/report/text_table.h"

#include <algorithm>

namespace shardsim {

TextTable::TextTable(std::vector<std::string> header, std::string indent)
    : header_(std::move(header)), indent_(std::move(indent)) {}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::AddSection(std::string title) { rows_.push_back({"\x01" + title}); }

std::string TextTable::ToString() const {
  std::vector<size_t> width(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) width[i] = header_[i].size();
  for (const auto& row : rows_) {
    if (row.size() == 1 && !row[0].empty() && row[0][0] == '\x01') continue;
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = indent_;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string& c = i < cells.size() ? cells[i] : std::string();
      const bool left = i == 0 || std::find(left_.begin(), left_.end(), i) != left_.end();
      const std::string pad(width[i] - std::min(width[i], c.size()), ' ');
      if (i > 0) s += "  ";
      s += left ? c + pad : pad + c;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };
  bool header = false;
  for (const std::string& h : header_) header = header || !h.empty();
  std::string out = header ? line(header_) : std::string();
  for (const auto& row : rows_) {
    if (row.size() == 1 && !row[0].empty() && row[0][0] == '\x01') {
      out += indent_ + row[0].substr(1) + "\n";
    } else {
      out += line(row);
    }
  }
  return out;
}

}  // namespace shardsim
