// The other inputs of `shardsim calibrate`: Nsight Systems kernel summaries and GEMM CSVs, and
// the dispatch by content.
#include <algorithm>
#include <string>
#include <vector>

#include "sim/calibrate/samples.h"
#include "sim/config/config_node.h"
#include "sim/config/readers.h"
#include "sim/config/value_reader.h"
#include "sim/config/yaml_source.h"

namespace shardsim {
namespace {

// One CSV line, with "quoted, fields" (nsys quotes kernel names, which hold commas).
struct CsvField {
  std::string text;
  int col = 1;
};
std::vector<CsvField> SplitCsv(const std::string& line) {
  std::vector<CsvField> out;
  CsvField f;
  bool quoted = false;
  for (size_t i = 0; i <= line.size(); ++i) {
    const char c = i < line.size() ? line[i] : ',';
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        f.text += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        f.text += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(f);
      f = CsvField{};
      f.col = static_cast<int>(i) + 2;
    } else {
      f.text += c;
    }
  }
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace

Status ReadNsysKernelSummary(const std::string& text, const std::string& file, KernelSamples* out) {
  const std::vector<std::string> lines = Lines(text);
  size_t header = lines.size();
  int total_col = -1, instances_col = -1, name_col = -1;
  for (size_t i = 0; i < lines.size() && header == lines.size(); ++i) {
    const std::vector<CsvField> f = SplitCsv(lines[i]);
    for (size_t c = 0; c < f.size(); ++c) {
      if (f[c].text == "Total Time (ns)") total_col = static_cast<int>(c);
      if (f[c].text == "Instances") instances_col = static_cast<int>(c);
      if (f[c].text == "Name") name_col = static_cast<int>(c);
    }
    if (total_col >= 0 && name_col >= 0) header = i;
  }
  if (header == lines.size()) {
    return Status::Invalid(
        "nsys kernel summary: no header with 'Total Time (ns)' and 'Name' columns; expected "
        "the CSV of `nsys stats --report cuda_gpu_kern_sum --format csv`",
        SourceLoc{file, 1, 1}, lines.empty() ? "" : lines[0]);
  }
  DiagnosticSink sink;
  int64_t unclassified = 0;
  for (size_t i = header + 1; i < lines.size(); ++i) {
    if (lines[i].find_first_not_of(" \t") == std::string::npos) continue;
    const std::vector<CsvField> f = SplitCsv(lines[i]);
    const int line_no = static_cast<int>(i) + 1;
    const size_t need = static_cast<size_t>(std::max({total_col, instances_col, name_col}));
    if (f.size() <= need) {
      sink.Add(SourceLoc{file, line_no, 1},
               "nsys kernel summary row has " + std::to_string(f.size()) + " fields, the header " +
                   std::to_string(need + 1) + " or more",
               lines[i]);
      continue;
    }
    Result<double> total = ParseNumber(f[static_cast<size_t>(total_col)].text);
    if (!total.ok() || *total < 0) {
      sink.Add(SourceLoc{file, line_no, f[static_cast<size_t>(total_col)].col},
               "Total Time (ns): expected a non-negative number, got \"" +
                   f[static_cast<size_t>(total_col)].text + "\"",
               lines[i]);
      continue;
    }
    double instances = 1.0;
    if (instances_col >= 0) {
      Result<double> n = ParseNumber(f[static_cast<size_t>(instances_col)].text);
      if (n.ok() && *n > 0) instances = *n;
    }
    ++out->events;
    const std::string& name = f[static_cast<size_t>(name_col)].text;
    KernelSample s;
    bool backward = false;
    if (!ClassOfKernelName(name, &s.cls, &backward)) {
      out->unmatched[name] += static_cast<int64_t>(instances);
      ++unclassified;
      continue;
    }
    s.name = name;
    s.backward = backward;
    s.seconds = *total * 1e-9;
    s.instances = instances;
    s.has_shape = false;
    out->samples.push_back(std::move(s));
  }
  if (!sink.empty()) return sink.ToStatus();
  out->notes.push_back(file +
                       ": an nsys kernel summary has no shapes: its kernels are counted "
                       "by class (time share), not fitted");
  return Status::Ok();
}

Status ReadGemmCsvSamples(const std::string& path, const std::map<DType, double>& peaks,
                          KernelSamples* out) {
  const ConfigNode ref = ConfigNode::Scalar(path, KeyOrigin{SourceLoc{path, 0, 0}, ""});
  std::vector<GemmMeasurement> rows;
  Status s = ReadGemmCsv(path, ref, "gemm csv", peaks, &rows);
  if (!s.ok()) return s;
  for (const GemmMeasurement& g : rows) {
    KernelSample k;
    k.cls = KernelClass::kGemm;
    k.name = "gemm csv";
    k.dtype = g.dtype;
    k.m = g.m, k.n = g.n, k.k = g.k, k.batch = 1;
    k.has_shape = true;
    k.seconds = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) *
                static_cast<double>(g.k) / g.flops_per_s;
    out->samples.push_back(k);
    ++out->events;
  }
  return Status::Ok();
}

namespace {

// ReadKernelFile by the file's content.
Status ReadKernelFileAs(const std::string& path, const std::map<DType, double>& peaks,
                        KernelSamples* out) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return Status::Invalid(text.status().message(), SourceLoc{path, 0, 0});
  const size_t first = text->find_first_not_of(" \t\r\n");
  if (first != std::string::npos && ((*text)[first] == '{' || (*text)[first] == '[')) {
    return ReadKinetoTrace(*text, path, out);
  }
  const std::string head = text->substr(0, std::min<size_t>(text->size(), 4096));
  if (head.find("Total Time (ns)") != std::string::npos) {
    return ReadNsysKernelSummary(*text, path, out);
  }
  if (head.find("tflops") != std::string::npos && head.find("dtype") != std::string::npos) {
    return ReadGemmCsvSamples(path, peaks, out);
  }
  const std::string line = text->substr(0, std::min(text->find('\n'), size_t{200}));
  return Status::Invalid(
      "calibrate input: not a PyTorch profiler trace (JSON), an nsys cuda_gpu_kern_sum CSV "
      "(a 'Total Time (ns)' column) or a GEMM CSV (dtype, m, n, k, tflops columns)",
      SourceLoc{path, 1, 1}, line);
}

}  // namespace

Status ReadKernelFile(const std::string& path, KernelSamples* out,
                      const std::map<DType, double>& peaks) {
  const size_t before = out->samples.size();
  Status s = ReadKernelFileAs(path, peaks, out);
  for (size_t i = before; i < out->samples.size(); ++i) out->samples[i].file = path;
  return s;
}

}  // namespace shardsim
