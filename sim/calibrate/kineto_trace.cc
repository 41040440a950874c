// Reading a PyTorch profiler (Kineto) Chrome trace into kernel samples (samples.h).
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/calibrate/samples.h"
#include "sim/report/json_location.h"

namespace shardsim {
namespace {

using Json = nlohmann::json;

bool Has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "Input type" strings as Kineto writes them ("float", "c10::BFloat16", "c10::Half", ...).
bool DTypeOf(const std::string& t, DType* out) {
  if (t == "float") return *out = DType::kFp32, true;
  if (Has(t, "BFloat16")) return *out = DType::kBf16, true;
  if (Has(t, "Half")) return *out = DType::kFp16, true;
  if (Has(t, "Float8")) return *out = DType::kFp8, true;
  return false;
}

struct OpArgs {
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::string> types;
  std::vector<std::string> concrete;
};

OpArgs ArgsOf(const Json& ev) {
  OpArgs a;
  const Json* args = ev.contains("args") && ev["args"].is_object() ? &ev["args"] : nullptr;
  if (args == nullptr) return a;
  if (args->contains("Input Dims") && (*args)["Input Dims"].is_array()) {
    for (const Json& d : (*args)["Input Dims"]) {
      std::vector<int64_t> shape;
      if (d.is_array()) {
        for (const Json& x : d) {
          if (x.is_number_integer()) shape.push_back(x.get<int64_t>());
        }
      }
      a.dims.push_back(shape);
    }
  }
  for (const char* key : {"Input type", "Concrete Inputs"}) {
    if (!args->contains(key) || !(*args)[key].is_array()) continue;
    std::vector<std::string>& v = std::string(key) == "Input type" ? a.types : a.concrete;
    for (const Json& t : (*args)[key]) v.push_back(t.is_string() ? t.get<std::string>() : "");
  }
  return a;
}

double Numel(const std::vector<int64_t>& shape) {
  double n = 1.0;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return shape.empty() ? 0.0 : n;
}

// The first tensor input's dtype.
bool FirstDType(const OpArgs& a, DType* out) {
  for (size_t i = 0; i < a.types.size(); ++i) {
    if (i < a.dims.size() && !a.dims[i].empty() && DTypeOf(a.types[i], out)) return true;
  }
  return false;
}

const char* const kElementwise[] = {"aten::add",
                                    "aten::add_",
                                    "aten::mul",
                                    "aten::mul_",
                                    "aten::sub",
                                    "aten::sub_",
                                    "aten::div",
                                    "aten::div_",
                                    "aten::gelu",
                                    "aten::gelu_backward",
                                    "aten::silu",
                                    "aten::silu_backward",
                                    "aten::relu",
                                    "aten::threshold_backward",
                                    "aten::copy_",
                                    "aten::neg",
                                    "aten::exp",
                                    "aten::sigmoid",
                                    "aten::tanh",
                                    "aten::pow",
                                    "aten::where",
                                    "aten::masked_fill_",
                                    "aten::native_dropout",
                                    "aten::native_dropout_backward"};

// An aten op that does the work of a class, with its shapes. False: not one (a wrapper, a view,
// or no shapes recorded).
bool SampleOfOp(const std::string& name, const OpArgs& a, KernelSample* s) {
  s->name = name;
  DType dt = DType::kFp32;
  const bool typed = FirstDType(a, &dt);
  s->dtype = dt;
  auto dim = [&](size_t i) -> const std::vector<int64_t>& {
    static const std::vector<int64_t> kNone;
    return i < a.dims.size() ? a.dims[i] : kNone;
  };
  if (name == "aten::mm" || name == "aten::addmm" || name == "aten::_scaled_mm") {
    s->cls = KernelClass::kGemm;
    const size_t i = name == "aten::addmm" ? 1 : 0;
    const auto& x = dim(i);
    const auto& w = dim(i + 1);
    if (x.size() != 2 || w.size() != 2) return s->has_shape = false, true;
    s->m = x[0], s->k = x[1], s->n = w[1], s->batch = 1;
    if (name == "aten::_scaled_mm") s->dtype = DType::kFp8;
    return s->has_shape = typed || name == "aten::_scaled_mm", true;
  }
  if (name == "aten::bmm" || name == "aten::baddbmm") {
    s->cls = KernelClass::kGemm;
    const size_t i = name == "aten::baddbmm" ? 1 : 0;
    const auto& x = dim(i);
    const auto& w = dim(i + 1);
    if (x.size() != 3 || w.size() != 3) return s->has_shape = false, true;
    s->batch = x[0], s->m = x[1], s->k = x[2], s->n = w[2];
    return s->has_shape = typed, true;
  }
  if (Has(name, "scaled_dot_product") || Has(name, "flash_attention") ||
      Has(name, "efficient_attention")) {
    s->cls = KernelClass::kAttention;
    s->backward = Has(name, "backward");
    // Forward: (query, key, value, ...); backward: (grad_out, query, key, value, ...).
    const size_t q = s->backward ? 1 : 0;
    const auto& qs = dim(q);
    const auto& ks = dim(q + 1);
    const auto& vs = dim(q + 2);
    if (qs.size() != 4 || ks.size() != 4) return s->has_shape = false, true;
    s->attention.batch_heads = qs[0] * qs[1];
    s->attention.seq_q = qs[2];
    s->attention.seq_kv = ks[2];
    s->attention.head_dim = qs[3];
    s->attention.v_head_dim = vs.size() == 4 ? vs[3] : qs[3];
    s->attention.flash = true;
    // cuDNN's kernel is the fused one; every other SDPA backend is FlashAttention-style.
    s->attention.flash2 = !Has(name, "cudnn");
    // is_causal from the recorded scalars when the trace has them, else causal (training).
    s->attention.causal = true;
    for (const std::string& c : a.concrete) {
      if (c == "False") s->attention.causal = false;
    }
    return s->has_shape = typed, true;
  }
  const bool norm_fwd = name == "aten::native_layer_norm" || name == "aten::_fused_rms_norm" ||
                        name == "aten::native_group_norm";
  const bool norm_bwd = name == "aten::native_layer_norm_backward" ||
                        name == "aten::_fused_rms_norm_backward" ||
                        name == "aten::native_group_norm_backward";
  const bool sm_fwd = name == "aten::_softmax" || name == "aten::_log_softmax";
  const bool sm_bwd =
      name == "aten::_softmax_backward_data" || name == "aten::_log_softmax_backward_data";
  if (norm_fwd || norm_bwd || sm_fwd || sm_bwd) {
    s->cls = norm_fwd || norm_bwd ? KernelClass::kNorm : KernelClass::kSoftmax;
    s->backward = norm_bwd || sm_bwd;
    const double n = Numel(dim(0));
    // Forward reads x and writes y; backward reads dy and x (or y) and writes dx (the
    // kernels' traffic as sim/model/op_builders.cc prices norms and softmax).
    s->bytes = (s->backward ? 3.0 : 2.0) * n * BytesOf(dt);
    return s->has_shape = typed && n > 0, true;
  }
  for (const char* e : kElementwise) {
    if (name != e) continue;
    s->cls = KernelClass::kElementwise;
    double in = 0.0, out = 0.0;
    for (size_t i = 0; i < a.dims.size(); ++i) {
      DType t = dt;
      if (a.dims[i].empty()) continue;
      if (i < a.types.size()) DTypeOf(a.types[i], &t);
      in += Numel(a.dims[i]) * BytesOf(t);
      out = std::max(out, Numel(a.dims[i]) * BytesOf(t));
    }
    // copy_(dst, src) reads src and writes dst: its inputs are the traffic.
    s->bytes = name == "aten::copy_" ? in : in + out;
    return s->has_shape = typed && s->bytes > 0, true;
  }
  return false;
}

// Where each element of the trace's event array starts in `text`, which nlohmann::json has
// already parsed: the top-level array, or the array value of the top-level object's
// "traceEvents" key. nlohmann keeps no positions of values, so they are found by one scan of the
// text that follows its strings and nesting (linear in the file: a trace may hold millions of
// events). JSON strings hold no raw line breaks, so every '\n' outside them ends a line.
struct EventPlace {
  int line = 1, col = 1;  // 1-based
  size_t line_start = 0;  // byte offset of its line
};
std::vector<EventPlace> EventPlaces(const std::string& text, bool top_level_array) {
  std::vector<EventPlace> out;
  int depth = 0, events_depth = 0;  // events_depth: the events array's, once entered
  bool expect = false;              // the next token at events_depth starts an element
  std::string last_key;             // the last string read at depth 1 (the key of a '[' at 2)
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') continue;
    if (events_depth > 0 && depth == events_depth && expect && c != ']') {
      out.push_back(EventPlace{line, static_cast<int>(i - line_start) + 1, line_start});
      expect = false;
    }
    if (c == '"') {
      const size_t start = i + 1;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (depth == 1) last_key = text.substr(start, i - start);
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
      if (c == '[' && events_depth == 0 &&
          (top_level_array ? depth == 1 : depth == 2 && last_key == "traceEvents")) {
        events_depth = depth;
        expect = true;
      }
    } else if (c == '}' || c == ']') {
      if (events_depth > 0 && depth == events_depth) return out;
      --depth;
    } else if (c == ',' && events_depth > 0 && depth == events_depth) {
      expect = true;
    }
  }
  return out;
}

}  // namespace

bool ClassOfKernelName(const std::string& kernel, KernelClass* cls, bool* backward) {
  const std::string k = Lower(kernel);
  *backward = Has(k, "bwd") || Has(k, "backward") || Has(k, "grad");
  if (Has(k, "nccl")) return *cls = KernelClass::kNccl, true;
  if (Has(k, "flash") || Has(k, "fmha") || Has(k, "attention") || Has(k, "sdpa")) {
    return *cls = KernelClass::kAttention, true;
  }
  if (Has(k, "gemm") || Has(k, "cutlass") || Has(k, "xmma") || Has(k, "cublas") ||
      Has(k, "nvjet")) {
    return *cls = KernelClass::kGemm, true;
  }
  if (Has(k, "layer_norm") || Has(k, "layernorm") || Has(k, "rms_norm") || Has(k, "rmsnorm")) {
    return *cls = KernelClass::kNorm, true;
  }
  if (Has(k, "softmax")) return *cls = KernelClass::kSoftmax, true;
  if (Has(k, "elementwise") || Has(k, "vectorized")) return *cls = KernelClass::kElementwise, true;
  return false;
}

const char* Name(KernelClass v) {
  switch (v) {
    case KernelClass::kGemm:
      return "gemm";
    case KernelClass::kAttention:
      return "attention";
    case KernelClass::kNorm:
      return "norm";
    case KernelClass::kSoftmax:
      return "softmax";
    case KernelClass::kElementwise:
      return "elementwise";
    case KernelClass::kNccl:
      return "nccl";
  }
  return "?";
}

Status ReadKinetoTrace(const std::string& text, const std::string& file, KernelSamples* out) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    return JsonError(text, file, e.byte,
                     std::string("trace: not a Chrome trace (JSON): ") + e.what() +
                         "; expected the JSON torch.profiler's export_chrome_trace writes");
  }
  const Json* events = nullptr;
  if (j.is_object() && j.contains("traceEvents") && j["traceEvents"].is_array()) {
    events = &j["traceEvents"];
  } else if (j.is_array()) {
    events = &j;
  } else {
    return Status::Invalid(
        "trace: expected a Chrome trace, {\"traceEvents\": [...]} or an array of events",
        SourceLoc{file, 1, 1});
  }
  // Each event's place in the file, for the errors of what is fitted from it (FitHardware).
  const bool bare = events == &j;
  const std::vector<EventPlace> places = EventPlaces(text, bare);
  const auto event_name = [&](size_t index) {
    return (bare ? "[" : "traceEvents[") + std::to_string(index) + "]";
  };
  const auto locate = [&](size_t index, const std::string& where, KernelSample* s) {
    s->where = where;
    if (index >= places.size()) return;
    const EventPlace& p = places[index];
    s->line = p.line;
    s->col = p.col;
    // The line under the message (as LocateByte keeps it: not when too long to print).
    const size_t end = std::min(text.find('\n', p.line_start), text.size());
    if (end - p.line_start <= 200) s->source_line = text.substr(p.line_start, end - p.line_start);
  };
  struct CpuOp {
    int64_t tid = 0;
    double ts = 0.0, dur = 0.0;
    std::string name;
    const Json* ev = nullptr;
    size_t index = 0;  // in the event array
  };
  std::vector<CpuOp> ops;
  std::unordered_map<int64_t, size_t> by_external_id;  // cpu_op index
  struct Kernel {
    std::string name;
    double dur = 0.0;
    int64_t external_id = -1;
    size_t index = 0;  // in the event array
  };
  std::vector<Kernel> kernels;
  size_t index = 0;
  for (auto it = events->begin(); it != events->end(); ++it, ++index) {
    const Json& ev = *it;
    if (!ev.is_object() || !ev.contains("ph") || ev["ph"] != "X") continue;
    if (!ev.contains("name") || !ev["name"].is_string() || !ev.contains("dur") ||
        !ev["dur"].is_number()) {
      continue;
    }
    ++out->events;
    const std::string cat =
        ev.contains("cat") && ev["cat"].is_string() ? ev["cat"].get<std::string>() : "";
    int64_t ext = -1;
    if (ev.contains("args") && ev["args"].is_object() && ev["args"].contains("External id") &&
        ev["args"]["External id"].is_number_integer()) {
      ext = ev["args"]["External id"].get<int64_t>();
    }
    if (cat == "kernel") {
      kernels.push_back(Kernel{ev["name"], ev["dur"].get<double>(), ext, index});
      continue;
    }
    if (!cat.empty() && cat != "cpu_op" && cat != "operator") continue;
    CpuOp op;
    op.tid = ev.contains("tid") && ev["tid"].is_number_integer() ? ev["tid"].get<int64_t>() : 0;
    op.ts = ev.contains("ts") && ev["ts"].is_number() ? ev["ts"].get<double>() : 0.0;
    op.dur = ev["dur"].get<double>();
    op.name = ev["name"];
    op.ev = &ev;
    op.index = index;
    if (ext >= 0) by_external_id[ext] = ops.size();
    ops.push_back(std::move(op));
  }
  int64_t shapeless = 0;
  if (!kernels.empty()) {
    // GPU trace: each op's kernels of one class are one sample (a split-K GEMM's reduction, a
    // flash backward's preprocessing kernel), shaped by the op that launched them.
    std::map<std::pair<int64_t, int>, KernelSample> per_op;
    int64_t orphan = 0;
    for (const Kernel& kn : kernels) {
      KernelClass cls;
      bool backward = false;
      if (!ClassOfKernelName(kn.name, &cls, &backward)) {
        ++out->unmatched[kn.name];
        continue;
      }
      KernelSample s;
      bool shaped = false;
      const CpuOp* launched_by = nullptr;
      const auto it = by_external_id.find(kn.external_id);
      if (it != by_external_id.end()) {
        launched_by = &ops[it->second];
        shaped = SampleOfOp(launched_by->name, ArgsOf(*launched_by->ev), &s) && s.cls == cls &&
                 s.has_shape;
      }
      if (!shaped) {
        s = KernelSample{};
        s.cls = cls;
        s.backward = backward;
        s.has_shape = false;
      }
      s.name = kn.name;
      locate(
          kn.index,
          event_name(kn.index) + " (kernel " + kn.name +
              (shaped ? ", shapes from " + event_name(launched_by->index) + " " + launched_by->name
                      : std::string()) +
              ")",
          &s);
      const int64_t key_id = kn.external_id >= 0 && shaped ? kn.external_id : -(++orphan) - 1;
      KernelSample& slot = per_op.try_emplace({key_id, static_cast<int>(cls)}, s).first->second;
      slot.seconds += kn.dur * 1e-6;
    }
    for (auto& [key, s] : per_op) {
      shapeless += s.has_shape ? 0 : 1;
      out->samples.push_back(std::move(s));
    }
  } else {
    // CPU trace: the aten ops that do the work, each once (an op inside another classified op
    // is part of it).
    std::vector<size_t> order(ops.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (ops[a].tid != ops[b].tid) return ops[a].tid < ops[b].tid;
      if (ops[a].ts != ops[b].ts) return ops[a].ts < ops[b].ts;
      return ops[a].dur > ops[b].dur;
    });
    int64_t tid = -1;
    double open_until = -1.0;
    for (size_t i : order) {
      const CpuOp& op = ops[i];
      if (op.tid != tid) tid = op.tid, open_until = -1.0;
      KernelSample s;
      if (!SampleOfOp(op.name, ArgsOf(*op.ev), &s)) continue;
      if (op.ts < open_until) continue;  // inside a classified op
      open_until = op.ts + op.dur;
      s.seconds = op.dur * 1e-6;
      locate(op.index, event_name(op.index) + " (" + op.name + ")", &s);
      shapeless += s.has_shape ? 0 : 1;
      out->samples.push_back(std::move(s));
    }
  }
  if (out->events == 0) {
    return Status::Invalid("trace: no complete events (\"ph\": \"X\" with name and dur)",
                           SourceLoc{file, 1, 1});
  }
  if (shapeless > 0) {
    out->notes.push_back(
        file + ": " + std::to_string(shapeless) +
        " kernels or ops without shapes (record_shapes off, 0-d tensors, or not linked to an op): "
        "counted, not fitted");
  }
  return Status::Ok();
}

}  // namespace shardsim
