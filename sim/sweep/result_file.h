// Result files that survive being killed: rows are appended one whole line per write and never
// rewritten, so a file cut at any moment is a valid prefix plus, at worst, one torn last line.
// Resuming reads the prefix back, checks every complete row against the sweep (point index and
// inputs, so a file of another sweep is refused), drops a torn last line and appends from there.
#ifndef SHARDSIM_SWEEP_RESULT_FILE_H_
#define SHARDSIM_SWEEP_RESULT_FILE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/sweep/rows.h"

namespace shardsim {

struct ExpectedRow {
  int64_t point = 0;
  std::vector<std::string> inputs;
};

struct ScannedFile {
  bool exists = false;
  bool header_ok = false;      // CSV: a complete header line matching the sweep
  uint64_t header_end = 0;     // byte offset after the header
  std::vector<uint64_t> ends;  // byte offset after each complete, matching row
  std::vector<Row> rows;       // those rows, parsed
  bool torn = false;           // a last line without its line break was dropped
};

// Reads `path` (absent: exists = false) as rows of `format`. Row k must be
// `expected(k)` for k < `max_rows`. A complete line that does not match is an error naming the
// file and line (kInvalidInput): resuming must never mix two sweeps.
Result<ScannedFile> ScanResultFile(const std::string& path, const RowFormat& format,
                                   const std::function<ExpectedRow(int64_t)>& expected,
                                   int64_t max_rows);

// Why a row with `found` inputs is not the sweep's point with `expected` inputs (both parallel to
// `columns`): each column whose value differs, "training.recompute is none, the sweep's is full",
// or, when every value agrees (another point index or number form), what the line was expected to
// start with (`prefix`).
std::string DescribeInputMismatch(const std::vector<std::string>& columns,
                                  const std::vector<std::string>& found,
                                  const std::vector<std::string>& expected,
                                  const std::string& prefix);

// An append-only result file.
class ResultWriter {
 public:
  ResultWriter() = default;
  ResultWriter(const ResultWriter&) = delete;
  ResultWriter& operator=(const ResultWriter&) = delete;
  ~ResultWriter();

  // Opens `path` keeping its first `keep_bytes` bytes (0: a new file) and writes `header` when
  // nothing is kept.
  Status Open(const std::string& path, uint64_t keep_bytes, const std::string& header);
  // Appends whole lines with one write each.
  Status Append(const std::string& lines);
  Status Close();

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_RESULT_FILE_H_
