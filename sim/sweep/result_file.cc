#include "sim/sweep/result_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/base/strings.h"

namespace shardsim {
namespace {

Status IoError(const std::string& what, const std::string& path) {
  return Status::Invalid("cannot " + what + " '" + path + "': " + std::strerror(errno));
}

Status LineError(const std::string& path, int64_t line, const std::string& message) {
  return Status::Invalid(message, SourceLoc{path, static_cast<int>(line), 1});
}

std::string Shorten(const std::string& s) { return s.size() > 120 ? s.substr(0, 117) + "..." : s; }

}  // namespace

Result<ScannedFile> ScanResultFile(const std::string& path, const RowFormat& format,
                                   const std::function<ExpectedRow(int64_t)>& expected,
                                   int64_t max_rows) {
  ScannedFile out;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) return out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("read", path);
  out.exists = true;
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  const std::string header = format.Header();
  uint64_t pos = 0;
  int64_t line_no = 1;
  if (!header.empty()) {
    if (text.compare(0, header.size(), header) != 0) {
      // A torn header (the run died while writing it) is the only acceptable mismatch.
      const bool torn =
          text.find('\n') == std::string::npos && header.compare(0, text.size(), text) == 0;
      if (torn || text.empty()) {
        out.torn = !text.empty();
        return out;
      }
      // The header of an older shardsim: this one less the columns added at its end since.
      const std::string want = header.substr(0, header.size() - 1);
      const std::string first = text.substr(0, text.find('\n'));
      if (!first.empty() && first.size() < want.size() &&
          want.compare(0, first.size(), first) == 0 && want[first.size()] == ',') {
        return LineError(path, 1,
                         "the header lacks the columns added at the end of a row since it was "
                         "written (" +
                             Shorten(want.substr(first.size() + 1)) +
                             "): it comes from an older shardsim; run the sweep again with "
                             "--overwrite (or into another file)");
      }
      return LineError(path, 1,
                       "the header differs from this sweep's columns; it holds the results of "
                       "another sweep (expected: " +
                           Shorten(want) + ")");
    }
    out.header_ok = true;
    pos = header.size();
    out.header_end = pos;
    ++line_no;
  }
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      out.torn = true;  // the last row was being written when the run stopped
      break;
    }
    const std::string_view line(text.data() + pos, nl - pos);
    const int64_t k = static_cast<int64_t>(out.rows.size());
    if (k >= max_rows) {
      return LineError(path, line_no,
                       "more rows than this sweep (or shard) has points (" +
                           std::to_string(max_rows) + "); it holds the results of another sweep");
    }
    const ExpectedRow want = expected(k);
    const std::string prefix = format.Prefix(want.point, want.inputs);
    if (line.compare(0, prefix.size(), prefix) != 0) {
      const Result<Row> found = format.Parse(line);
      return LineError(path, line_no,
                       "row " + std::to_string(k + 1) + " is not point " +
                           std::to_string(want.point) + " of this sweep (" +
                           (found.ok() ? DescribeInputMismatch(format.input_columns(),
                                                               found->inputs, want.inputs, prefix)
                                       : "expected it to start " + Shorten(prefix)) +
                           "); it holds the results of another sweep");
    }
    Result<Row> row = format.Parse(line);
    if (!row.ok()) {
      // A row of an older shardsim (RowFormat::Parse says so) is not malformed.
      const std::string& m = row.status().message();
      const bool older = m.rfind(kOlderRowMessage, 0) == 0;
      return LineError(path, line_no, older ? m : "malformed row: " + m);
    }
    out.rows.push_back(std::move(*row));
    pos = nl + 1;
    out.ends.push_back(pos);
    ++line_no;
  }
  return out;
}

std::string DescribeInputMismatch(const std::vector<std::string>& columns,
                                  const std::vector<std::string>& found,
                                  const std::vector<std::string>& expected,
                                  const std::string& prefix) {
  std::vector<std::string> differ;
  for (size_t i = 0; i < columns.size() && i < found.size() && i < expected.size(); ++i) {
    if (found[i] != expected[i]) {
      differ.push_back(columns[i] + " is " + Shorten(found[i]) + ", the sweep's is " +
                       Shorten(expected[i]));
    }
  }
  if (differ.empty()) return "expected it to start " + Shorten(prefix);
  return Join(differ, "; ");
}

ResultWriter::~ResultWriter() {
  if (fd_ >= 0) ::close(fd_);
}

Status ResultWriter::Open(const std::string& path, uint64_t keep_bytes, const std::string& header) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd_ < 0) return IoError("open", path);
  if (::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0) return IoError("truncate", path);
  if (::lseek(fd_, 0, SEEK_END) < 0) return IoError("seek in", path);
  if (keep_bytes == 0 && !header.empty()) return Append(header);
  return Status::Ok();
}

Status ResultWriter::Append(const std::string& lines) {
  size_t done = 0;
  while (done < lines.size()) {
    const ssize_t n = ::write(fd_, lines.data() + done, lines.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return IoError("write", path_);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status ResultWriter::Close() {
  if (fd_ < 0) return Status::Ok();
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return IoError("close", path_);
  return Status::Ok();
}

}  // namespace shardsim
