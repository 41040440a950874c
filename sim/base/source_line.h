// SourceLine: one line of an input file, as a view into the file's text shared by every node.
//
// Every node of a parsed document remembers the line it was written on, so that an error found
// long after parsing can print it under the message. Keeping a copy of the line per node made
// memory grow with nodes × line length (a 130 KB one-line config.json: 4 GB); a SourceLine is a
// reference-counted pointer to the one copy of the file's text plus the line's offset and length.
// It converts to std::string where a Diagnostic takes the line.
#ifndef SHARDSIM_BASE_SOURCE_LINE_H_
#define SHARDSIM_BASE_SOURCE_LINE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace shardsim {

class SourceLine {
 public:
  SourceLine() = default;
  // A line of its own (tests, lines made up by code).
  SourceLine(std::string line)  // NOLINT(google-explicit-constructor)
      : text_(std::make_shared<const std::string>(std::move(line))), size_(text_->size()) {}
  SourceLine(const char* line) : SourceLine(std::string(line)) {}  // NOLINT
  // The `size` bytes at `begin` of `text`.
  SourceLine(std::shared_ptr<const std::string> text, size_t begin, size_t size)
      : text_(std::move(text)), begin_(begin), size_(size) {}

  std::string_view view() const {
    return text_ ? std::string_view(*text_).substr(begin_, size_) : std::string_view();
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  operator std::string() const { return std::string(view()); }  // NOLINT

  friend bool operator==(const SourceLine& a, std::string_view b) { return a.view() == b; }

 private:
  std::shared_ptr<const std::string> text_;
  size_t begin_ = 0;
  size_t size_ = 0;
};

}  // namespace shardsim

#endif  // SHARDSIM_BASE_SOURCE_LINE_H_
