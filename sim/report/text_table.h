// A plain-text table for terminal output: columns padded to their widest cell, the first column
// left-aligned and the others right-aligned unless told otherwise.
#ifndef SHARDSIM_REPORT_TEXT_TABLE_H_
#define SHARDSIM_REPORT_TEXT_TABLE_H_

#include <string>
#include <vector>

namespace shardsim {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header, std::string indent = "  ");
  // Columns whose index is in `left` are left-aligned (column 0 always is).
  void SetLeftAligned(std::vector<size_t> left) { left_ = std::move(left); }
  void AddRow(std::vector<std::string> cells);
  // A line of text spanning the table (a section title inside it).
  void AddSection(std::string title);
  std::string ToString() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;  // a row of one cell starting with '\x01' = section
  std::vector<size_t> left_;
  std::string indent_;
};

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_TEXT_TABLE_H_
