#include "sim/sweep/rows.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>

#include "sim/base/strings.h"
#include "sim/report/flops_note.h"

namespace shardsim {
namespace {

constexpr const char* kMetricNames[kMetricCount] = {"gpus",
                                                    "step_time_s",
                                                    "tokens_per_s",
                                                    "tokens_per_s_per_gpu",
                                                    "tflops_per_gpu",
                                                    "mfu",
                                                    "hfu",
                                                    "peak_flops_per_gpu",
                                                    "bubble_fraction",
                                                    "microbatches_per_step",
                                                    "peak_memory_bytes",
                                                    "memory_capacity_bytes",
                                                    "memory_headroom_bytes",
                                                    "weights_bytes",
                                                    "gradients_bytes",
                                                    "optimizer_bytes",
                                                    "activations_bytes",
                                                    "compute_s",
                                                    "recompute_s",
                                                    "tp_comm_s",
                                                    "cp_comm_s",
                                                    "ep_comm_s",
                                                    "pp_comm_s",
                                                    "pipeline_bubble_s",
                                                    "dp_comm_s",
                                                    "param_gather_s",
                                                    "optimizer_s",
                                                    "model_flops_per_step",
                                                    "hardware_flops_per_step",
                                                    "six_nd_per_step",
                                                    "tokens_per_step",
                                                    "time_to_train_s",
                                                    "gpu_hours",
                                                    "time_to_train_ideal_s",
                                                    "goodput",
                                                    "interruptions_per_day",
                                                    "job_mtbf_s",
                                                    "checkpoint_write_s",
                                                    "checkpoint_interval_s",
                                                    "lost_s_per_day",
                                                    "straggler_factor",
                                                    "simulated_tasks",
                                                    "bottleneck_share",
                                                    "executed_tflops_per_gpu",
                                                    "executed_fraction_of_peak",
                                                    "flops_convention_over_executed"};

constexpr PointStatus kStatuses[] = {
    PointStatus::kOk,    PointStatus::kNoFit,     PointStatus::kPruned,      PointStatus::kInvalid,
    PointStatus::kError, PointStatus::kOutranked, PointStatus::kCannotFinish};

// Line breaks would split a row over two lines; they never belong in a field.
std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

std::string CsvField(const std::string& raw) {
  std::string s = OneLine(raw);
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string JsonString(const std::string& s) {
  return nlohmann::json(OneLine(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A JSON number as written (so "8" stays 8 and reads back as the text "8").
bool IsJsonNumber(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  if (i >= s.size()) return false;
  if (s[i] == '0') {
    ++i;
  } else if (s[i] >= '1' && s[i] <= '9') {
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  } else {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    const size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == start) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == start) return false;
  }
  return i == s.size();
}

std::string JsonInput(const std::string& text) {
  if (IsJsonNumber(text) || text == "true" || text == "false") return text;
  return JsonString(text);
}

std::vector<std::string> SplitCsv(std::string_view line, bool* ok) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  *ok = true;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"' && cur.empty()) {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (quoted) *ok = false;
  out.push_back(std::move(cur));
  return out;
}

// A flat JSON object of this module's own making: keys and their values' texts (strings
// unescaped, other tokens as written).
bool SplitJson(std::string_view line, std::vector<std::pair<std::string, std::string>>* out,
               std::vector<bool>* is_string) {
  size_t i = 0;
  auto skip = [&] {
    while (i < line.size() && line[i] == ' ') ++i;
  };
  auto string_token = [&](std::string* s) {
    if (i >= line.size() || line[i] != '"') return false;
    const size_t start = i++;
    while (i < line.size() && line[i] != '"') i += line[i] == '\\' ? 2 : 1;
    if (i >= line.size()) return false;
    ++i;
    try {
      *s = nlohmann::json::parse(line.substr(start, i - start)).get<std::string>();
    } catch (const nlohmann::json::exception&) {
      return false;
    }
    return true;
  };
  skip();
  if (i >= line.size() || line[i++] != '{') return false;
  for (;;) {
    skip();
    std::string key, value;
    if (!string_token(&key)) return false;
    skip();
    if (i >= line.size() || line[i++] != ':') return false;
    skip();
    bool str = false;
    if (i < line.size() && line[i] == '"') {
      if (!string_token(&value)) return false;
      str = true;
    } else {
      const size_t start = i;
      while (i < line.size() && line[i] != ',' && line[i] != '}') ++i;
      value = std::string(line.substr(start, i - start));
      while (!value.empty() && value.back() == ' ') value.pop_back();
    }
    out->push_back({std::move(key), std::move(value)});
    is_string->push_back(str);
    skip();
    if (i >= line.size()) return false;
    if (line[i] == '}') {
      ++i;
      skip();
      return i == line.size();
    }
    if (line[i++] != ',') return false;
  }
}

Result<double> NumberField(const std::string& text) {
  double v = 0.0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v)) {
    return Status::Invalid("expected a number, got \"" + text + "\"");
  }
  return v;
}

}  // namespace

const double Row::kAbsent = std::numeric_limits<double>::quiet_NaN();

bool Row::has(Metric m) const { return !std::isnan((*this)[m]); }

const char* Name(PointStatus s) {
  switch (s) {
    case PointStatus::kOk:
      return "ok";
    case PointStatus::kNoFit:
      return "no_fit";
    case PointStatus::kPruned:
      return "pruned";
    case PointStatus::kInvalid:
      return "invalid";
    case PointStatus::kError:
      return "error";
    case PointStatus::kOutranked:
      return "outranked";
    case PointStatus::kCannotFinish:
      return "cannot_finish";
  }
  return "error";
}

bool Feasible(PointStatus s) { return s == PointStatus::kOk; }

bool Simulated(PointStatus s) {
  return s == PointStatus::kOk || s == PointStatus::kNoFit || s == PointStatus::kCannotFinish;
}

const char* ColumnName(Metric m) { return kMetricNames[static_cast<size_t>(m)]; }

std::string FormatNumber(double v) {
  char buf[64];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, ptr) : std::string("nan");
}

std::optional<RowFormatKind> FormatOfName(const std::string& path) {
  if (path.ends_with(".csv")) return RowFormatKind::kCsv;
  if (path.ends_with(".jsonl") || path.ends_with(".json") || path.ends_with(".ndjson")) {
    return RowFormatKind::kJsonl;
  }
  return std::nullopt;
}

RowFormat::RowFormat(RowFormatKind kind, std::vector<std::string> input_columns)
    : kind_(kind), inputs_(std::move(input_columns)) {
  names_.push_back("point");
  for (const std::string& c : inputs_) names_.push_back(c);
  names_.push_back("status");
  names_.push_back("fits");
  for (size_t m = 0; m < kMetricCount; ++m) {
    const auto it = std::find(inputs_.begin(), inputs_.end(), kMetricNames[m]);
    metric_input_[m] = it == inputs_.end() ? -1 : static_cast<int>(it - inputs_.begin());
  }
  for (size_t m = 0; m < kFirstTrailingMetric; ++m) {
    if (metric_input_[m] < 0) names_.push_back(kMetricNames[m]);
  }
  names_.push_back("bottleneck");
  names_.push_back("reason");
  for (size_t m = kFirstTrailingMetric; m < kMetricCount; ++m) {
    if (metric_input_[m] < 0) names_.push_back(kMetricNames[m]);
  }
}

std::string RowFormat::Header() const {
  if (kind_ == RowFormatKind::kJsonl) return "";
  std::string out;
  for (size_t i = 0; i < names_.size(); ++i) out += (i ? "," : "") + CsvField(names_[i]);
  return out + "\n";
}

std::string RowFormat::Prefix(int64_t point, const std::vector<std::string>& inputs) const {
  std::string out;
  if (kind_ == RowFormatKind::kCsv) {
    out = std::to_string(point) + ",";
    for (const std::string& v : inputs) out += CsvField(v) + ",";
    return out;
  }
  out = "{\"point\":" + std::to_string(point) + ",";
  for (size_t i = 0; i < inputs.size() && i < inputs_.size(); ++i) {
    out += JsonString(inputs_[i]) + ":" + JsonInput(inputs[i]) + ",";
  }
  return out;
}

std::string RowFormat::Format(const Row& row) const {
  // A point that cannot finish fits (one that does not fit is no_fit first).
  const std::string fits =
      Simulated(row.status) ? (row.status == PointStatus::kNoFit ? "false" : "true") : "";
  std::string out = Prefix(row.point, row.inputs);
  if (kind_ == RowFormatKind::kCsv) {
    const auto metrics = [&](size_t from, size_t to) {
      for (size_t m = from; m < to; ++m) {
        if (metric_input_[m] >= 0) continue;
        out += ",";
        if (!std::isnan(row.metrics[m])) out += FormatNumber(row.metrics[m]);
      }
    };
    out += std::string(Name(row.status)) + "," + fits;
    metrics(0, kFirstTrailingMetric);
    out += "," + CsvField(row.bottleneck) + "," + CsvField(row.reason);
    metrics(kFirstTrailingMetric, kMetricCount);
    return out + "\n";
  }
  const auto metrics = [&](size_t from, size_t to) {
    for (size_t m = from; m < to; ++m) {
      if (metric_input_[m] >= 0) continue;
      out += ",\"" + std::string(kMetricNames[m]) +
             "\":" + (std::isnan(row.metrics[m]) ? "null" : FormatNumber(row.metrics[m]));
    }
  };
  out +=
      "\"status\":" + JsonString(Name(row.status)) + ",\"fits\":" + (fits.empty() ? "null" : fits);
  metrics(0, kFirstTrailingMetric);
  out += ",\"bottleneck\":" + JsonString(row.bottleneck) + ",\"reason\":" + JsonString(row.reason);
  metrics(kFirstTrailingMetric, kMetricCount);
  return out + "}\n";
}

Result<Row> RowFormat::Parse(std::string_view line) const {
  std::vector<std::string> fields;
  if (kind_ == RowFormatKind::kCsv) {
    bool ok = true;
    fields = SplitCsv(line, &ok);
    if (!ok) return Status::Invalid("unterminated quoted field");
  } else {
    std::vector<std::pair<std::string, std::string>> kv;
    std::vector<bool> is_string;
    if (!SplitJson(line, &kv, &is_string)) return Status::Invalid("not a JSON object");
    for (size_t i = 0; i < kv.size(); ++i) {
      if (i < names_.size() && kv[i].first != names_[i]) {
        return Status::Invalid("key " + std::to_string(i + 1) + " is \"" + kv[i].first +
                               "\", expected \"" + names_[i] + "\"");
      }
      fields.push_back(!is_string[i] && kv[i].second == "null" ? "" : kv[i].second);
    }
    // Every key in order but the last few: the columns added at the end of a row since.
    if (kv.size() < names_.size() && !kv.empty()) {
      std::vector<std::string> missing(names_.begin() + static_cast<std::ptrdiff_t>(kv.size()),
                                       names_.end());
      return Status::Invalid(std::string(kOlderRowMessage) + " (" + Join(missing, ", ") +
                             "): it comes from an older shardsim; run the sweep again with "
                             "--overwrite (or into another file)");
    }
  }
  if (fields.size() != names_.size()) {
    return Status::Invalid("expected " + std::to_string(names_.size()) + " fields, got " +
                           std::to_string(fields.size()));
  }
  Row row;
  size_t f = 0;
  Result<double> point = NumberField(fields[f++]);
  if (!point.ok()) return point.status();
  row.point = static_cast<int64_t>(*point);
  for (size_t i = 0; i < inputs_.size(); ++i) row.inputs.push_back(fields[f++]);
  const std::string& status = fields[f++];
  bool known = false;
  for (PointStatus s : kStatuses) {
    if (status == Name(s)) {
      row.status = s;
      known = true;
    }
  }
  if (!known) return Status::Invalid("unknown status \"" + status + "\"");
  ++f;  // fits: follows from the status
  const auto metrics = [&](size_t from, size_t to) -> Status {
    for (size_t m = from; m < to; ++m) {
      if (metric_input_[m] >= 0) {
        // Held by an input column (a `gpus` axis): the same number, read back from there.
        Result<double> v = NumberField(row.inputs[static_cast<size_t>(metric_input_[m])]);
        if (v.ok() && *v > 0) row.metrics[m] = *v;
        continue;
      }
      const std::string& field = fields[f++];
      if (field.empty()) continue;
      Result<double> v = NumberField(field);
      if (!v.ok()) {
        return Status::Invalid(std::string(kMetricNames[m]) + ": " + v.status().message());
      }
      row.metrics[m] = *v;
    }
    return Status::Ok();
  };
  if (Status s = metrics(0, kFirstTrailingMetric); !s.ok()) return s;
  row.bottleneck = fields[f++];
  row.reason = fields[f++];
  if (Status s = metrics(kFirstTrailingMetric, kMetricCount); !s.ok()) return s;
  return row;
}

std::optional<std::vector<std::string>> InputColumnsOf(std::string_view first_line,
                                                       RowFormatKind kind) {
  std::vector<std::string> names;
  if (kind == RowFormatKind::kCsv) {
    bool ok = true;
    names = SplitCsv(first_line, &ok);
    if (!ok) return std::nullopt;
  } else {
    std::vector<std::pair<std::string, std::string>> kv;
    std::vector<bool> is_string;
    if (!SplitJson(first_line, &kv, &is_string)) return std::nullopt;
    for (auto& [key, value] : kv) names.push_back(std::move(key));
  }
  const auto status = std::find(names.begin(), names.end(), "status");
  if (names.empty() || names.front() != "point" || status == names.end()) return std::nullopt;
  return std::vector<std::string>(names.begin() + 1, status);
}

std::string FlopsNoteOf(const Row& row) {
  if (!row.has(Metric::kFlopsConventionOverExecuted) || !row.has(Metric::kExecutedFractionOfPeak)) {
    return "";
  }
  return FlopsConventionNote(row[Metric::kFlopsConventionOverExecuted],
                             row[Metric::kExecutedFractionOfPeak]);
}

std::string StatusReason(const Status& s) {
  std::string out = s.message();
  if (s.diagnostics().size() > 1) {
    out += " (and " + std::to_string(s.diagnostics().size() - 1) + " more)";
  }
  return out;
}

}  // namespace shardsim
