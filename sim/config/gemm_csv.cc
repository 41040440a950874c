// Measured kernel tables as CSV files: hardware.gemm_table and hardware.grouped_gemm_table (a
// header naming at least dtype, m, n, k, tflops; optional `pass` and `groups`), and
// hardware.attention_table (pass, batch_heads, seq, head_dim, v_head_dim, tflops). Columns in any
// order, extra columns ignored, one measured kernel per line, e.g. bench/h200/results/gemm.csv
// or hardware/calibration/b200/gemm.csv.
#include <charconv>
#include <functional>
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
    fields.push_back(
        Field{std::string(TrimView(line.substr(start, end - start))), static_cast<int>(start) + 1});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

// One data line being read: its fields by column name, and where to report problems.
struct CsvRow {
  const std::vector<Field>* fields;
  const std::vector<int>* column;  // by the caller's column index; -1 = absent (optional)
  const std::vector<std::string>* names;
  const std::string* path;
  const std::string* line;
  const std::string* what;
  int line_no;
  DiagnosticSink* sink;

  // The field of column j, or nullptr (an error when the column is required and the row short).
  const Field* Get(size_t j) const {
    if ((*column)[j] < 0) return nullptr;
    const size_t c = static_cast<size_t>((*column)[j]);
    if (c < fields->size()) return &(*fields)[c];
    sink->Add(SourceLoc{*path, line_no, 1},
              *what + " row has " + std::to_string(fields->size()) + " fields; column '" +
                  (*names)[j] + "' missing",
              *line);
    return nullptr;
  }
  void Error(const Field& f, const std::string& msg) const {
    sink->Add(SourceLoc{*path, line_no, f.col}, msg, *line);
  }
  bool PositiveInt(size_t j, int64_t* out) const {
    const Field* f = Get(j);
    if (f == nullptr) return false;
    Result<int64_t> v = ParseInteger(f->text);
    if (!v.ok() || *v <= 0) {
      Error(*f, (*names)[j] + ": " +
                    (v.ok() ? "must be positive, got " + f->text : v.status().message()));
      return false;
    }
    *out = *v;
    return true;
  }
  bool Tflops(size_t j, double* flops_per_s) const {
    const Field* f = Get(j);
    if (f == nullptr) return false;
    Result<double> v = ParseNumber(f->text);
    if (!v.ok() || *v <= 0.0) {
      Error(*f, "tflops: " + (v.ok() ? "must be positive, got " + f->text : v.status().message()));
      return false;
    }
    *flops_per_s = *v * kTera;
    return true;
  }
};

// Reads `path`: checks the header has every required column (`names` up to `required`) and calls
// `row` for each data line. `what` names the table in header errors ("gemm table").
Status ReadCsv(const std::string& path, const ConfigNode& ref, const std::string& key,
               const std::string& what, const std::vector<std::string>& names, size_t required,
               const std::function<void(const CsvRow&)>& row) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) {
    return Status::Invalid(key + ": " + text.status().message(), ref.loc(),
                           ref.origin().source_line);
  }
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
  DiagnosticSink sink;
  std::vector<int> column(names.size(), -1);
  const std::vector<Field> header = SplitCsvLine(lines[0]);
  for (size_t c = 0; c < header.size(); ++c) {
    for (size_t j = 0; j < names.size(); ++j) {
      if (header[c].text == names[j]) column[j] = static_cast<int>(c);
    }
  }
  std::string needs;
  for (size_t j = 0; j < required; ++j) needs += (j ? ", " : "") + names[j];
  for (size_t j = 0; j < required; ++j) {
    if (column[j] < 0) {
      sink.Add(SourceLoc{path, 1, 1},
               what + " header has no '" + names[j] + "' column (needs " + needs + ")", lines[0]);
    }
  }
  if (!sink.empty()) return sink.ToStatus();
  for (size_t i = 1; i < lines.size(); ++i) {
    if (TrimView(lines[i]).empty()) continue;
    const std::vector<Field> f = SplitCsvLine(lines[i]);
    row(CsvRow{&f, &column, &names, &path, &lines[i], &what, static_cast<int>(i) + 1, &sink});
  }
  return sink.ToStatus();
}

const std::vector<DType> kTableDTypes = {DType::kFp32, DType::kTf32,  DType::kBf16, DType::kFp16,
                                         DType::kFp8,  DType::kMxfp8, DType::kNvfp4};

// "forward" | "backward_input" | "backward_weight" (| "any" where `any_ok`).
bool ParsePass(const CsvRow& r, const Field& f, bool any_ok, KernelPass* out) {
  if (f.text == "forward") return *out = KernelPass::kForward, true;
  if (f.text == "backward_input") return *out = KernelPass::kBackwardInput, true;
  if (f.text == "backward_weight" && any_ok) return *out = KernelPass::kBackwardWeight, true;
  if (f.text == "backward" && !any_ok) return *out = KernelPass::kBackwardInput, true;
  if (f.text == "any" && any_ok) return *out = KernelPass::kAny, true;
  r.Error(f, "pass: \"" + f.text + "\" is not one of " +
                 (any_ok ? "forward, backward_input, backward_weight, any" : "forward, backward"));
  return false;
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
  std::vector<GemmMeasurement> rows;
  const std::vector<std::string> names = {"dtype", "m", "n", "k", "tflops", "pass", "groups"};
  Status s = ReadCsv(path, ref, key, "gemm table", names, 5, [&](const CsvRow& r) {
    GemmMeasurement g;
    const Field* d = r.Get(0);
    if (d == nullptr) return;
    bool ok = false;
    for (DType t : kTableDTypes) {
      if (d->text == Name(t)) g.dtype = t, ok = true;
    }
    if (!ok) {
      r.Error(*d,
              "dtype: \"" + d->text + "\" is not one of fp32, tf32, bf16, fp16, fp8, mxfp8, nvfp4");
    }
    ok = ok && r.PositiveInt(1, &g.m) && r.PositiveInt(2, &g.n) && r.PositiveInt(3, &g.k) &&
         r.Tflops(4, &g.flops_per_s);
    if (ok) {
      if (const std::string bad = GemmRateProblem(g.dtype, g.flops_per_s, peaks); !bad.empty()) {
        r.Error(*r.Get(4), bad);
        ok = false;
      }
    }
    // Optional columns; an empty field is the column's default (no pass: every pass; no groups).
    const Field* p = ok ? r.Get(5) : nullptr;
    if (p != nullptr && !p->text.empty()) ok = ParsePass(r, *p, true, &g.pass);
    const Field* groups = ok ? r.Get(6) : nullptr;
    if (groups != nullptr && !groups->text.empty()) ok = r.PositiveInt(6, &g.groups);
    if (ok) rows.push_back(g);
  });
  if (!s.ok()) return s;
  out->insert(out->end(), rows.begin(), rows.end());
  return Status::Ok();
}

Status ReadAttentionCsv(const std::string& path, const ConfigNode& ref, const std::string& key,
                        std::vector<AttentionMeasurement>* out) {
  std::vector<AttentionMeasurement> rows;
  const std::vector<std::string> names = {"pass",     "batch_heads", "seq",
                                          "head_dim", "v_head_dim",  "tflops"};
  Status s = ReadCsv(path, ref, key, "attention table", names, 6, [&](const CsvRow& r) {
    AttentionMeasurement a;
    const Field* p = r.Get(0);
    if (p == nullptr || !ParsePass(r, *p, false, &a.pass)) return;
    if (r.PositiveInt(1, &a.batch_heads) && r.PositiveInt(2, &a.seq) &&
        r.PositiveInt(3, &a.head_dim) && r.PositiveInt(4, &a.v_head_dim) &&
        r.Tflops(5, &a.flops_per_s)) {
      rows.push_back(a);
    }
  });
  if (!s.ok()) return s;
  out->insert(out->end(), rows.begin(), rows.end());
  return Status::Ok();
}

}  // namespace shardsim
