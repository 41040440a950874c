#include "sim/base/status.h"

#include <algorithm>

namespace shardsim {

std::string SourceLoc::ToString() const {
  if (file.empty() && line <= 0) return "";
  std::string s = file;
  if (line > 0) {
    s += ":" + std::to_string(line);
    if (col > 0) s += ":" + std::to_string(col);
  }
  return s;
}

void Diagnostic::ClipSourceLine() {
  if (window_col > 0 || source_line.size() <= kMaxSourceLine) return;
  const size_t col0 = static_cast<size_t>(std::max(0, loc.col - 1));
  const size_t begin =
      std::min(col0 > kMaxSourceLine / 2 ? col0 - kMaxSourceLine / 2 : 0, source_line.size());
  const bool cut_end = begin + kMaxSourceLine < source_line.size();
  source_line = source_line.substr(begin, kMaxSourceLine) + (cut_end ? "..." : "");
  window_col = static_cast<int>(begin) + 1;
}

std::string Diagnostic::ToString() const {
  std::string s = loc.ToString();
  if (!s.empty()) s += ": ";
  s += "error: " + message;
  if (!source_line.empty() && loc.line > 0) {
    Diagnostic d = *this;
    d.ClipSourceLine();
    // A window that starts inside the line is marked "..." (the caret moves by those three).
    const bool cut_start = d.window_col > 1;
    s += "\n    " + std::string(cut_start ? "..." : "") + d.source_line + "\n    ";
    const int caret = d.window_col > 0 ? loc.col - d.window_col + (cut_start ? 3 : 0) : loc.col - 1;
    s += std::string(static_cast<size_t>(std::max(0, caret)), ' ') + "^";
  }
  return s;
}

Status Status::Invalid(std::string message, SourceLoc loc, std::string source_line) {
  Diagnostic d{std::move(loc), std::move(message), std::move(source_line)};
  d.ClipSourceLine();
  return Status(StatusCode::kInvalidInput, {std::move(d)});
}

Status Status::NotFound(std::string message, SourceLoc loc) {
  return Status(StatusCode::kNotFound, {Diagnostic{std::move(loc), std::move(message), {}}});
}

Status Status::Infeasible(std::string message) {
  return Status(StatusCode::kInfeasible, {Diagnostic{{}, std::move(message), {}}});
}

Status Status::Internal(std::string message) {
  return Status(StatusCode::kInternal, {Diagnostic{{}, std::move(message), {}}});
}

std::string Status::message() const {
  return diagnostics_.empty() ? std::string() : diagnostics_.front().message;
}

std::string Status::ToString() const {
  std::string s;
  for (const Diagnostic& d : diagnostics_) {
    if (!s.empty()) s += "\n";
    s += d.ToString();
  }
  return s;
}

Status DiagnosticSink::ToStatus(StatusCode code) const {
  if (diagnostics_.empty()) return Status::Ok();
  return Status(code, diagnostics_);
}

}  // namespace shardsim
