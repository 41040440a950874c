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

std::string Diagnostic::ToString() const {
  std::string s = loc.ToString();
  if (!s.empty()) s += ": ";
  s += "error: " + message;
  if (!source_line.empty() && loc.line > 0) {
    s += "\n    " + source_line + "\n    ";
    s += std::string(static_cast<size_t>(std::max(0, loc.col - 1)), ' ') + "^";
  }
  return s;
}

Status Status::Invalid(std::string message, SourceLoc loc, std::string source_line) {
  return Status(StatusCode::kInvalidInput,
                {Diagnostic{std::move(loc), std::move(message), std::move(source_line)}});
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
