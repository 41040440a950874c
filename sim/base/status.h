// Status and Result: how every library function of shardsim reports failure.
//
// The library never prints and never exits; it returns a Status (or a Result<T> holding either a
// value or a Status). A Status carries one or more Diagnostics, each with the file, line and
// column it refers to, so that the CLI can print every problem of an input at once in the form
//   file:line:col: error: message
//       offending source line
//       ^
// Only sim/cli turns a Status into text on stderr and an exit code (StatusCode decides which).
#ifndef SHARDSIM_BASE_STATUS_H_
#define SHARDSIM_BASE_STATUS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardsim {

// What kind of failure a Status is. The CLI maps kInvalidInput to exit code 2, kInfeasible to 1,
// and everything else to 2 with an "internal error" prefix.
enum class StatusCode { kOk, kInvalidInput, kNotFound, kInfeasible, kInternal };

// A place in a source file. line and col are 1-based; line 0 means "no position known".
struct SourceLoc {
  std::string file;
  int line = 0;
  int col = 0;

  bool known() const { return line > 0; }
  // "file:line:col", "file" or "" depending on what is known.
  std::string ToString() const;
};

// One problem found in an input, with where it is.
struct Diagnostic {
  SourceLoc loc;
  std::string message;
  // The offending source line, printed under the message with a caret at loc.col; empty if none.
  std::string source_line;
  // 0, or (a line too long to print whole, kept as a window around loc.col) the 1-based column
  // of the line at which source_line starts; "..." marks where the window cuts the line.
  int window_col = 0;

  // Cuts a source_line over kMaxSourceLine characters to a window around loc.col, so that a
  // diagnostic of a 1 MB one-line file costs and prints a line, not a megabyte.
  void ClipSourceLine();
  static constexpr size_t kMaxSourceLine = 200;

  // "file:line:col: error: message" plus the source line and caret when known.
  std::string ToString() const;
};

class Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::vector<Diagnostic> diagnostics)
      : code_(code), diagnostics_(std::move(diagnostics)) {}

  static Status Ok() { return Status(); }
  static Status Invalid(std::string message, SourceLoc loc = {}, std::string source_line = {});
  static Status NotFound(std::string message, SourceLoc loc = {});
  static Status Infeasible(std::string message);
  static Status Internal(std::string message);

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  // The first diagnostic's message ("" when ok); handy in tests.
  std::string message() const;
  // Every diagnostic, one ToString() each, joined by newlines.
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::vector<Diagnostic> diagnostics_;
};

// Collects diagnostics while a whole input is checked, so the user sees every problem at once.
class DiagnosticSink {
 public:
  void Add(Diagnostic d) {
    d.ClipSourceLine();
    diagnostics_.push_back(std::move(d));
  }
  void Add(SourceLoc loc, std::string message, std::string source_line = {}) {
    Add(Diagnostic{std::move(loc), std::move(message), std::move(source_line)});
  }
  void Merge(const Status& s) {
    for (const Diagnostic& d : s.diagnostics()) diagnostics_.push_back(d);
  }
  bool empty() const { return diagnostics_.empty(); }
  size_t size() const { return diagnostics_.size(); }
  // Ok if nothing was added, otherwise an error Status of `code` holding everything added.
  Status ToStatus(StatusCode code = StatusCode::kInvalidInput) const;

 private:
  std::vector<Diagnostic> diagnostics_;
};

// Either a value of T or an error Status. Construct from a T or from a non-ok Status.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace shardsim

// Returns early from the enclosing function when `expr` (a Status) is not ok.
#define SHARDSIM_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::shardsim::Status shardsim_status_ = (expr);        \
    if (!shardsim_status_.ok()) return shardsim_status_; \
  } while (0)

#endif  // SHARDSIM_BASE_STATUS_H_
