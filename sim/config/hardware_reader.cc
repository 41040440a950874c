// Reading a hardware document (hardware/<name>.yaml or inline) and its GEMM table.
#include <filesystem>
#include <vector>

#include "sim/base/strings.h"
#include "sim/config/readers.h"
#include "sim/config/value_reader.h"
#include "sim/config/yaml_source.h"

namespace shardsim {
namespace {

const std::vector<DType> kDTypes = {DType::kFp32, DType::kTf32,  DType::kBf16, DType::kFp16,
                                    DType::kFp8,  DType::kMxfp8, DType::kNvfp4};

void ReadPeakFlops(MapReader& r, HardwareSpec* hw) {
  MapReader peak = r.Sub("peak_flops", Need::kRequired);
  if (!peak.present()) return;
  for (DType t : kDTypes) {
    double v = 0.0;
    if (peak.Quantity(Name(t), Dimension::kFlopRate, &v)) hw->peak_flops[t] = v;
  }
  peak.Finish();
  if (peak.node()->size() == 0) {
    r.ErrorAtKey("peak_flops", "give at least one of fp32, tf32, bf16, fp16, fp8, mxfp8, nvfp4");
  }
}

void ReadGemmList(MapReader& r, const ConfigNode& list, HardwareSpec* hw) {
  for (size_t i = 0; i < list.items().size(); ++i) {
    const ConfigNode& item = list.items()[i];
    const std::string prefix = r.MsgPath("gemm_table") + "[" + std::to_string(i) + "].";
    MapReader row(&item, item.origin(), prefix, prefix, r.sink(), nullptr);
    if (!item.is_map()) {
      r.sink()->Add(item.loc(),
                    r.MsgPath("gemm_table") + "[" + std::to_string(i) +
                        "]: expected a mapping {dtype, m, n, k, tflops}, got " + item.Describe(),
                    item.origin().source_line);
      continue;
    }
    GemmMeasurement g;
    double tflops = 0.0;
    const bool ok = row.Enum("dtype", &g.dtype, kDTypes, Need::kRequired) &
                    row.PositiveInt("m", &g.m, Need::kRequired) &
                    row.PositiveInt("n", &g.n, Need::kRequired) &
                    row.PositiveInt("k", &g.k, Need::kRequired) &
                    row.PositiveNumber("tflops", &tflops, Need::kRequired);
    row.Finish();
    g.flops_per_s = tflops * kTera;
    if (ok) {
      if (const std::string bad = GemmRateProblem(g.dtype, g.flops_per_s, hw->peak_flops);
          !bad.empty()) {
        row.Error(*item.Find("tflops"), "tflops", bad.substr(std::string("tflops: ").size()));
        continue;
      }
      hw->gemm_table.push_back(g);
    }
  }
}

// price_per_gpu_hour: "2.5 USD" (or a bare number of US dollars), per GPU-hour, > 0.
void ReadPrice(MapReader& r, HardwareSpec* hw) {
  const ConfigNode* n = r.Get("price_per_gpu_hour");
  if (n == nullptr) return;
  std::string text = n->is_scalar() ? n->text() : std::string();
  const std::string unit = " USD";
  if (text.size() > unit.size() &&
      text.compare(text.size() - unit.size(), unit.size(), unit) == 0) {
    text.resize(text.size() - unit.size());
  }
  Result<double> v = ParseNumber(text);
  if (!n->is_scalar() || !v.ok() || !(*v > 0.0)) {
    r.Error(*n, "price_per_gpu_hour",
            "expected a positive price in US dollars per GPU-hour, e.g. \"2.5 USD\", got " +
                n->Describe());
    return;
  }
  hw->price_per_gpu_hour = *v;
}

// power_limit: "1000 W" or "1.2 kW" (the board power the GPU is configured for).
void ReadPowerLimit(MapReader& r, HardwareSpec* hw) {
  std::string text;
  if (!r.String("power_limit", &text)) return;
  const std::string_view t = TrimView(text);
  double scale = 0.0;
  std::string_view number;
  if (t.size() > 2 && t.substr(t.size() - 2) == "kW") {
    scale = 1000.0, number = t.substr(0, t.size() - 2);
  } else if (t.size() > 1 && t.back() == 'W') {
    scale = 1.0, number = t.substr(0, t.size() - 1);
  }
  Result<double> v = ParseNumber(std::string(TrimView(number)));
  if (scale == 0.0 || !v.ok() || !(*v > 0.0)) {
    r.Error(*r.node()->Find("power_limit"), "power_limit",
            "\"" + text + "\" is not a positive power; expected e.g. \"1000 W\"");
    return;
  }
  hw->power_limit = *v * scale;
}

}  // namespace

Status ReadHardware(const ResolvedDoc& doc, const KeyOrigin& where, const std::string& msg_prefix,
                    HardwareSpec* out) {
  DiagnosticSink sink;
  HardwareSpec hw;
  hw.origins.set_file(doc.file);
  MapReader r(&doc.tree, where, msg_prefix, "", &sink, &hw.origins);
  if (!r.String("name", &hw.name)) {
    hw.name = doc.is_inline ? "inline" : std::filesystem::path(doc.file).stem().string();
  }
  ReadPeakFlops(r, &hw);
  MapReader mem = r.Sub("memory", Need::kRequired);
  mem.Quantity("capacity", Dimension::kBytes, &hw.memory_capacity, Need::kRequired);
  mem.Quantity("bandwidth", Dimension::kBandwidth, &hw.memory_bandwidth, Need::kRequired);
  mem.Finish();
  r.PositiveInt("sm_count", &hw.sm_count);

  MapReader mm = r.Sub("matmul");
  mm.Fraction("max_efficiency", &hw.matmul_max_efficiency);
  if (const ConfigNode* tile = mm.Get("tile")) {
    int64_t tm = 0, tn = 0;
    bool ok = tile->is_sequence() && tile->items().size() == 2;
    if (ok) {
      Result<int64_t> a = ParseInteger(tile->items()[0].text());
      Result<int64_t> b = ParseInteger(tile->items()[1].text());
      ok = tile->items()[0].is_scalar() && tile->items()[1].is_scalar() && a.ok() && b.ok() &&
           *a > 0 && *b > 0;
      if (ok) tm = *a, tn = *b;
    }
    if (ok) {
      hw.matmul_tile_m = tm;
      hw.matmul_tile_n = tn;
    } else {
      mm.Error(
          *tile, "tile",
          "expected [m, n] with two positive integers, got " +
              (tile->is_sequence() ? "[...] of " + std::to_string(tile->items().size()) + " items"
                                   : tile->Describe()));
    }
  }
  mm.PositiveNumber("k_half", &hw.matmul_k_half);
  // Keys of the physical GEMM curve (sim/hardware/matmul_curve.h).
  MapReader by_dtype = mm.Sub("max_efficiency_by_dtype");
  for (DType t : kDTypes) {
    double v = 0.0;
    if (by_dtype.Fraction(Name(t), &v)) hw.matmul_max_efficiency_by_dtype[t] = v;
  }
  by_dtype.Finish();
  mm.PositiveNumber("tile_intensity_half", &hw.matmul_tile_intensity_half);
  mm.PositiveNumber("k_split_min", &hw.matmul_k_split_min);
  mm.Quantity("latency", Dimension::kTime, &hw.matmul_latency, Need::kOptional,
              /*allow_zero=*/true);
  mm.Bool("wave_quantization", &hw.matmul_wave_quantization);
  mm.Finish();
  r.Fraction("sustained_compute_fraction", &hw.sustained_compute_fraction);
  MapReader sustained_by = r.Sub("sustained_compute_fraction_by_dtype");
  for (DType t : kDTypes) {
    double v = 0.0;
    if (sustained_by.Fraction(Name(t), &v)) hw.sustained_compute_fraction_by_dtype[t] = v;
  }
  sustained_by.Finish();

  MapReader att = r.Sub("attention");
  att.Fraction("fwd_efficiency", &hw.attention_fwd_efficiency);
  att.Fraction("bwd_efficiency", &hw.attention_bwd_efficiency);
  att.PositiveNumber("seq_half", &hw.attention_seq_half);
  att.PositiveNumber("seq_half_causal", &hw.attention_seq_half_causal);
  att.PositiveNumber("head_dim_half", &hw.attention_head_dim_half);
  {
    MapReader f2 = att.Sub("flash2");
    f2.Fraction("fwd_efficiency", &hw.attention_flash2_fwd_efficiency);
    f2.Fraction("bwd_efficiency", &hw.attention_flash2_bwd_efficiency);
    f2.Finish();
  }
  att.Finish();

  MapReader me = r.Sub("memory_efficiency");
  me.Fraction("elementwise", &hw.mem_eff_elementwise);
  me.Fraction("norm", &hw.mem_eff_norm);
  me.Fraction("softmax", &hw.mem_eff_softmax);
  me.Fraction("gather", &hw.mem_eff_gather);
  me.Fraction("optimizer", &hw.mem_eff_optimizer);
  me.Fraction("permute", &hw.mem_eff_permute);
  me.Fraction("cross_entropy", &hw.mem_eff_cross_entropy);
  me.Finish();

  r.Quantity("kernel_launch_overhead", Dimension::kTime, &hw.kernel_launch_overhead,
             Need::kOptional, /*allow_zero=*/true);

  MapReader rr = r.Sub("runtime_reserve");
  rr.Quantity("cuda_context", Dimension::kBytes, &hw.reserve_cuda_context, Need::kOptional, true);
  rr.Quantity("comm_buffers", Dimension::kBytes, &hw.reserve_comm_buffers, Need::kOptional, true);
  double frag = 0.0;
  if (rr.Number("fragmentation", &frag)) {
    if (frag >= 0.0 && frag < 1.0) {
      hw.reserve_fragmentation = frag;
    } else {
      rr.Error(*rr.node()->Find("fragmentation"), "fragmentation",
               "must be in [0, 1), got " + rr.node()->Find("fragmentation")->text());
    }
  }
  rr.Finish();

  if (const ConfigNode* table = r.Get("gemm_table")) {
    if (table->is_sequence()) {
      ReadGemmList(r, *table, &hw);
    } else if (table->is_scalar()) {
      Status s = ReadGemmCsv(PathRelativeTo(*table, table->text()), *table, r.MsgPath("gemm_table"),
                             hw.peak_flops, &hw.gemm_table);
      sink.Merge(s);
    } else {
      r.Error(*table, "gemm_table",
              "expected a list of {dtype, m, n, k, tflops} or a path to a CSV file, got " +
                  table->Describe());
    }
  }
  r.String("family", &hw.family);
  r.String("default_topology", &hw.default_topology);
  ReadPrice(r, &hw);
  if (const ConfigNode* table = r.Get("grouped_gemm_table")) {
    if (table->is_scalar()) {
      std::vector<GemmMeasurement> rows;
      Status s = ReadGemmCsv(PathRelativeTo(*table, table->text()), *table,
                             r.MsgPath("grouped_gemm_table"), hw.peak_flops, &rows);
      for (const GemmMeasurement& g : rows) {
        if (g.groups <= 0) {
          s = Status::Invalid(r.MsgPath("grouped_gemm_table") +
                                  ": every row needs a 'groups' column with the GEMMs per kernel",
                              table->loc(), table->origin().source_line);
          break;
        }
      }
      sink.Merge(s);
      if (s.ok()) hw.grouped_gemm_table = std::move(rows);
    } else {
      r.Error(*table, "grouped_gemm_table",
              "expected a path to a CSV file (dtype, m, n, k, groups, pass, tflops), got " +
                  table->Describe());
    }
  }
  if (const ConfigNode* table = r.Get("attention_table")) {
    if (table->is_scalar()) {
      sink.Merge(ReadAttentionCsv(PathRelativeTo(*table, table->text()), *table,
                                  r.MsgPath("attention_table"), &hw.attention_table));
    } else {
      r.Error(*table, "attention_table",
              "expected a path to a CSV file (pass, batch_heads, seq, head_dim, v_head_dim, "
              "tflops), got " +
                  table->Describe());
    }
  }
  ReadPowerLimit(r, &hw);
  r.AcceptFreeText(&hw.source);
  r.Finish();
  if (!sink.empty()) return sink.ToStatus();
  *out = std::move(hw);
  return Status::Ok();
}

}  // namespace shardsim
