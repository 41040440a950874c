// hardware.gemm_table as a CSV file: a header naming at least dtype, m, n, k, tflops (any order,
// extra columns ignored), then one measured GEMM per line, e.g. bench/h200/results/gemm.csv.
#include <charconv>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/readers.h"
#include "sim/config/value_reader.h"
#include "sim/config/yaml_source.h"

namespace shardsim {
namespace {

struct Field {
  std::string text;
  int col = 0;  // 1-based
};

std::vector<Field> SplitCsvLine(std::string_view line) {
  std::vector<Field> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    const size_t end = comma == std::string_view::npos ? line.size() : comma;
    fields.push_back(Field{std::string(TrimView(line.substr(start, end - start))),
                           static_cast<int>(start) + 1});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

}  // namespace

namespace {
// Shortest text that reads back as `v` ("2500", "989.4").
std::string Shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}
}  // namespace

std::string GemmRateProblem(DType dtype, double flops_per_s, const std::map<DType, double>& peaks) {
  const auto it = peaks.find(dtype);
  if (it == peaks.end() || !(flops_per_s > it->second * (1.0 + 1e-9))) return "";
  return "tflops: " + Shortest(flops_per_s / kTera) + " is above the " + Name(dtype) +
         " peak (peak_flops." + Name(dtype) + ": " + Shortest(it->second / kTera) +
         " TFLOP/s); a measured rate cannot beat the peak (a wrong dtype, or a rate in another "
         "unit?)";
}

Status ReadGemmCsv(const std::string& path, const ConfigNode& ref, const std::string& key,
                   const std::map<DType, double>& peaks, std::vector<GemmMeasurement>* out) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) {
    return Status::Invalid(key + ": " + text.status().message(), ref.loc(),
                           ref.origin().source_line);
  }
  DiagnosticSink sink;
  std::vector<std::string> lines;
  {
    size_t start = 0;
    const std::string& t = *text;
    while (start < t.size()) {
      size_t end = t.find('\n', start);
      if (end == std::string::npos) end = t.size();
      std::string line = t.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(std::move(line));
      start = end + 1;
    }
  }
  if (lines.empty()) return Status::Invalid(key + ": '" + path + "' is empty", ref.loc());
  const std::vector<std::string> required = {"dtype", "m", "n", "k", "tflops"};
  std::vector<int> column(required.size(), -1);
  const std::vector<Field> header = SplitCsvLine(lines[0]);
  for (size_t c = 0; c < header.size(); ++c) {
    for (size_t j = 0; j < required.size(); ++j) {
      if (header[c].text == required[j]) column[j] = static_cast<int>(c);
    }
  }
  for (size_t j = 0; j < required.size(); ++j) {
    if (column[j] < 0) {
      sink.Add(SourceLoc{path, 1, 1}, "gemm table header has no '" + required[j] +
                                          "' column (needs dtype, m, n, k, tflops)",
               lines[0]);
    }
  }
  if (!sink.empty()) return sink.ToStatus();
  std::vector<GemmMeasurement> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (TrimView(lines[i]).empty()) continue;
    const int line_no = static_cast<int>(i) + 1;
    const std::vector<Field> f = SplitCsvLine(lines[i]);
    auto field = [&](size_t j) -> const Field* {
      const size_t c = static_cast<size_t>(column[j]);
      if (c < f.size()) return &f[c];
      sink.Add(SourceLoc{path, line_no, 1}, "gemm table row has " + std::to_string(f.size()) +
                                                " fields; column '" + required[j] + "' missing",
               lines[i]);
      return nullptr;
    };
    GemmMeasurement g;
    bool ok = true;
    if (const Field* d = field(0)) {
      bool found = false;
      for (DType t : {DType::kFp32, DType::kTf32, DType::kBf16, DType::kFp16, DType::kFp8}) {
        if (d->text == Name(t)) g.dtype = t, found = true;
      }
      if (!found) {
        sink.Add(SourceLoc{path, line_no, d->col},
                 "dtype: \"" + d->text + "\" is not one of fp32, tf32, bf16, fp16, fp8", lines[i]);
        ok = false;
      }
    } else {
      continue;
    }
    int64_t* dims[3] = {&g.m, &g.n, &g.k};
    for (size_t j = 1; j <= 3; ++j) {
      const Field* d = field(j);
      if (d == nullptr) {
        ok = false;
        break;
      }
      Result<int64_t> v = ParseInteger(d->text);
      if (!v.ok() || *v <= 0) {
        sink.Add(SourceLoc{path, line_no, d->col},
                 required[j] + ": " +
                     (v.ok() ? "must be positive, got " + d->text : v.status().message()),
                 lines[i]);
        ok = false;
      } else {
        *dims[j - 1] = *v;
      }
    }
    if (const Field* d = ok ? field(4) : nullptr) {
      Result<double> v = ParseNumber(d->text);
      if (!v.ok() || *v <= 0.0) {
        sink.Add(SourceLoc{path, line_no, d->col},
                 "tflops: " + (v.ok() ? "must be positive, got " + d->text : v.status().message()),
                 lines[i]);
        ok = false;
      } else if (const std::string bad = GemmRateProblem(g.dtype, *v * kTera, peaks);
                 !bad.empty()) {
        sink.Add(SourceLoc{path, line_no, d->col}, bad, lines[i]);
        ok = false;
      } else {
        g.flops_per_s = *v * kTera;
      }
    }
    if (ok) rows.push_back(g);
  }
  if (!sink.empty()) return sink.ToStatus();
  out->insert(out->end(), rows.begin(), rows.end());
  return Status::Ok();
}

}  // namespace shardsim
