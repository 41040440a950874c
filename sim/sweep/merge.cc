#include "sim/sweep/merge.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "sim/base/file_io.h"
#include "sim/sweep/point_space.h"
#include "sim/sweep/result_file.h"

namespace shardsim {
namespace {

// The largest shard file merge reads: 4 GiB (some ten million rows).
constexpr uint64_t kMaxShardFileBytes = uint64_t{4} << 30;

struct Line {
  Row row;  // parsed once, for the checks and the summary
  size_t file = 0;
  int64_t line_no = 0;
  std::string text;  // with its line break
};

Status At(const std::string& path, int64_t line, const std::string& message) {
  return Status::Invalid(message, SourceLoc{path, static_cast<int>(line), line > 0 ? 1 : 0});
}

// What is wrong with the outputs of `row` ("" when nothing): merge copies rows byte for byte and
// ranks them, so a row edited by hand (tokens_per_s=1e300, a negative time) would rank first.
// Every number must be finite and, but for the headroom (negative when it does not fit), not
// negative; executed_fraction_of_peak lies in [0, 1] and MFU and HFU in [0, max(1,
// flops_convention_over_executed)] (the bubble fraction, bubble over work, may pass 1); and the
// throughputs must be what the step gives: tokens_per_s = tokens_per_step / step_time_s and
// tokens_per_s_per_gpu = tokens_per_s / gpus (to 1e-6, as sim/program computes them).
std::string CheckRowValues(const Row& row) {
  for (size_t i = 0; i < kMetricCount; ++i) {
    const Metric m = static_cast<Metric>(i);
    if (!row.has(m)) continue;
    const double v = row[m];
    if (!std::isfinite(v)) return std::string(ColumnName(m)) + " is not a finite number";
    if (v < 0.0 && m != Metric::kMemoryHeadroom) {
      return std::string(ColumnName(m)) + " is negative (" + FormatNumber(v) + ")";
    }
  }
  if (row.has(Metric::kExecutedFractionOfPeak) && row[Metric::kExecutedFractionOfPeak] > 1.0) {
    return "executed_fraction_of_peak is above 1 (" +
           FormatNumber(row[Metric::kExecutedFractionOfPeak]) + ")";
  }
  // MFU and HFU may pass 1 by as much as the conventions count beyond what was executed
  // (flops_convention_over_executed; sim/report/flops_note.h), never more.
  const double bound = row.has(Metric::kFlopsConventionOverExecuted)
                           ? std::max(1.0, row[Metric::kFlopsConventionOverExecuted])
                           : 1.0;
  for (Metric m : {Metric::kMfu, Metric::kHfu}) {
    if (row.has(m) && row[m] > bound * (1.0 + 1e-12)) {
      return std::string(ColumnName(m)) + " is above " + FormatNumber(bound) + " (" +
             FormatNumber(row[m]) + ")" +
             (bound > 1.0 ? ", its flops_convention_over_executed" : "");
    }
  }
  const auto near = [](double a, double b) {
    return std::fabs(a - b) <= 1e-6 * std::max(std::fabs(a), std::fabs(b));
  };
  if (row.has(Metric::kTokensPerS) && row.has(Metric::kTokensPerStep) &&
      row.has(Metric::kStepTime) && row[Metric::kStepTime] > 0.0 &&
      !near(row[Metric::kTokensPerS], row[Metric::kTokensPerStep] / row[Metric::kStepTime])) {
    return "tokens_per_s (" + FormatNumber(row[Metric::kTokensPerS]) +
           ") is not tokens_per_step / step_time_s (" +
           FormatNumber(row[Metric::kTokensPerStep] / row[Metric::kStepTime]) + ")";
  }
  if (row.has(Metric::kTokensPerSPerGpu) && row.has(Metric::kTokensPerS) &&
      row.has(Metric::kGpus) && row[Metric::kGpus] > 0.0 &&
      !near(row[Metric::kTokensPerSPerGpu], row[Metric::kTokensPerS] / row[Metric::kGpus])) {
    return "tokens_per_s_per_gpu (" + FormatNumber(row[Metric::kTokensPerSPerGpu]) +
           ") is not tokens_per_s / gpus (" +
           FormatNumber(row[Metric::kTokensPerS] / row[Metric::kGpus]) + ")";
  }
  return "";
}

}  // namespace

Result<MergeResult> MergeResultFiles(const std::vector<std::string>& inputs,
                                     const std::string& output, const MergeOptions& options) {
  if (inputs.empty()) return Status::Invalid("merge: no shard files given");
  struct stat st;
  if (!options.overwrite && ::stat(output.c_str(), &st) == 0) {
    return Status::Invalid("'" + output + "' exists; pass --overwrite to replace it");
  }
  std::optional<RowFormat> format;
  std::string header;
  bool jsonl = false;
  size_t first_file = 0;  // the first file with rows: it sets the format and the columns
  MergeResult result;
  std::vector<Line> lines;
  for (size_t f = 0; f < inputs.size(); ++f) {
    const std::string& path = inputs[f];
    // The output replaces its file only after every input is read, but an input that is the
    // output would be read and then overwritten with itself merged: a mistake, refused.
    if (SameFile(path, output)) {
      return Status::Invalid("merge: the output '" + output + "' is also an input ('" + path +
                             "'); write the merged rows to a new file");
    }
    struct stat in_st;
    if (::stat(path.c_str(), &in_st) == 0 && !S_ISREG(in_st.st_mode) && !S_ISFIFO(in_st.st_mode)) {
      return Status::Invalid("merge: '" + path + "' is not a regular file (a shard's result file)");
    }
    Result<std::string> read = ReadFileBounded(path, kMaxShardFileBytes);
    if (!read.ok()) return read.status();
    const std::string text = std::move(*read);
    if (text.empty()) continue;  // a shard with no points writes no rows (JSON Lines)
    if (text.back() != '\n') {
      const int64_t last = 1 + static_cast<int64_t>(std::count(text.begin(), text.end(), '\n'));
      return At(path, last,
                "the last line is torn (the shard was stopped while writing it); "
                "finish the shard with --resume before merging");
    }
    const size_t first_nl = text.find('\n');
    const std::string first = text.substr(0, first_nl);
    const bool is_jsonl = !first.empty() && first.front() == '{';
    if (!format) {
      first_file = f;
      jsonl = is_jsonl;
      std::optional<std::vector<std::string>> columns =
          InputColumnsOf(first, jsonl ? RowFormatKind::kJsonl : RowFormatKind::kCsv);
      if (!columns) {
        return At(path, 1, "not a shardsim sweep result file (no point ... status columns)");
      }
      if (options.space != nullptr && *columns != options.space->input_columns()) {
        return At(path, 1,
                  "its input columns differ from the sweep's; it holds the results of "
                  "another sweep");
      }
      result.input_columns = *columns;
      format.emplace(jsonl ? RowFormatKind::kJsonl : RowFormatKind::kCsv, *columns);
      header = format->Header();
    }
    if (is_jsonl != jsonl) {
      return At(path, 1,
                std::string("is ") + (is_jsonl ? "JSON Lines" : "CSV") + " but " + inputs[0] +
                    " is " + (jsonl ? "JSON Lines" : "CSV") + "; merge files of one format");
    }
    size_t pos = 0;
    int64_t line_no = 1;
    if (!jsonl) {
      if (text.compare(0, header.size(), header) != 0) {
        return At(path, 1,
                  "its header differs from " + inputs[0] +
                      "'s; the shards come from "
                      "different sweeps");
      }
      pos = header.size();
      ++line_no;
    }
    while (pos < text.size()) {
      const size_t nl = text.find('\n', pos);
      const std::string_view line(text.data() + pos, nl - pos);
      Result<Row> row = format->Parse(line);
      if (!row.ok()) return At(path, line_no, "malformed row: " + row.status().message());
      if (const std::string bad = CheckRowValues(*row); !bad.empty()) {
        return At(path, line_no,
                  "point " + std::to_string(row->point) + ": " + bad +
                      "; the row is not as shardsim wrote it (run the shard again)");
      }
      lines.push_back(Line{std::move(*row), f, line_no, std::string(text, pos, nl + 1 - pos)});
      pos = nl + 1;
      ++line_no;
    }
  }
  if (!format) return Status::Invalid("merge: every shard file is empty");
  // The output's name must not promise the other format (sweep --output tells them apart so).
  const std::optional<RowFormatKind> named = FormatOfName(output);
  if (named && *named != (jsonl ? RowFormatKind::kJsonl : RowFormatKind::kCsv)) {
    return Status::Invalid("output '" + output + "' is named as " + (jsonl ? "CSV" : "JSON Lines") +
                           " but the shards are " + (jsonl ? "JSON Lines" : "CSV") + " (" +
                           inputs[first_file] + "); name it ." + (jsonl ? "jsonl" : "csv"));
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.row.point < b.row.point; });
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line& l = lines[i];
    const int64_t point = l.row.point;
    if (i > 0 && lines[i - 1].row.point == point) {
      return At(inputs[l.file], l.line_no,
                "point " + std::to_string(point) + " is also in " + inputs[lines[i - 1].file] +
                    " (line " + std::to_string(lines[i - 1].line_no) + "); each shard once");
    }
    if (point != static_cast<int64_t>(i)) {
      return Status::Invalid("point " + std::to_string(i) +
                             " is in no shard file: a shard is missing or unfinished (run it "
                             "with --resume, then merge again)");
    }
    if (options.space != nullptr) {
      const std::string prefix = format->Prefix(point, options.space->Inputs(point));
      if (l.text.compare(0, prefix.size(), prefix) != 0) {
        return At(inputs[l.file], l.line_no,
                  "point " + std::to_string(point) + " has other inputs than this sweep's: " +
                      DescribeInputMismatch(format->input_columns(), l.row.inputs,
                                            options.space->Inputs(point), prefix));
      }
    }
  }
  const int64_t n = static_cast<int64_t>(lines.size());
  if (options.space != nullptr && n != options.space->size()) {
    return Status::Invalid("the shards hold points 0 to " + std::to_string(n - 1) + " of " +
                           std::to_string(options.space->size()) +
                           ": a shard is missing or unfinished (run it with --resume, then merge "
                           "again)");
  }
  // Written whole to a temporary file and renamed: a full disk or a kill leaves no truncated
  // merge behind (and an existing output as it was).
  std::string merged = header;
  size_t bytes = header.size();
  for (const Line& l : lines) bytes += l.text.size();
  merged.reserve(bytes);
  for (const Line& l : lines) {
    merged += l.text;
    result.summary.Add(l.row);
  }
  Status s = WriteFileAtomic(output, merged);
  if (!s.ok()) return Status::Invalid("merge: " + s.message());
  result.points = n;
  return result;
}

}  // namespace shardsim
