#include "sim/calibrate/fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "sim/base/strings.h"
#include "sim/base/units.h"
#include "sim/config/readers.h"
#include "sim/hardware/matmul_curve.h"
#include "sim/hardware/op_cost.h"
#include "sim/hardware/peaks.h"

namespace shardsim {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void Residuals(const std::vector<double>& r, ClassFit* f) {
  std::vector<double> a;
  for (double x : r) a.push_back(std::fabs(x));
  f->median_abs_residual = Median(a);
  f->max_abs_residual = a.empty() ? 0.0 : *std::max_element(a.begin(), a.end());
  f->median_residual = Median(r);
}

double GeoMean(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += std::log(x);
  return std::exp(s / static_cast<double>(v.size()));
}

double& MatmulMax(HardwareSpec& hw, DType d) {
  if (d == DType::kBf16) return hw.matmul_max_efficiency;
  auto it = hw.matmul_max_efficiency_by_dtype.find(d);
  if (it == hw.matmul_max_efficiency_by_dtype.end()) {
    it = hw.matmul_max_efficiency_by_dtype.emplace(d, hw.matmul_max_efficiency).first;
  }
  return it->second;
}

// The sustained fraction of the units a GEMM in `d` computes on (fp8 without fp8 units: bf16's).
double GemmSustained(const HardwareSpec& hw, DType d) {
  return SustainedFraction(hw, PeakFor(hw, d).dtype);
}

double Cap(double v, ClassFit* f) {
  if (v > 1.0) {
    f->capped = true;
    return 1.0;
  }
  return v;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

}  // namespace

Result<Calibration> FitHardware(const KernelSamples& in, const HardwareSpec& base, Clocks clocks) {
  Calibration c;
  c.clocks = clocks;
  c.base_sustained_compute_fraction = base.sustained_compute_fraction;
  c.base_sustained_by_dtype = base.sustained_compute_fraction_by_dtype;
  c.hardware = base;
  c.notes = in.notes;
  // The curves the samples are held against: the base's, at burst clocks, without its table.
  HardwareSpec curve = base;
  curve.gemm_table.clear();
  SetBurstClocks(&curve);
  const OpCostModel model(curve);
  std::map<std::string, double> class_seconds;
  for (const KernelSample& s : in.samples) class_seconds[Name(s.cls)] += s.seconds;
  for (const auto& [k, v] : class_seconds) c.class_seconds.push_back({k, v});

  // GEMMs, per dtype.
  std::map<DType, std::vector<const KernelSample*>> gemms;
  std::map<std::tuple<int, int64_t, int64_t, int64_t>, std::vector<double>> rates;
  int gemm_counted = 0;
  for (const KernelSample& s : in.samples) {
    if (s.cls != KernelClass::kGemm) continue;
    if (!s.has_shape || s.seconds <= 0.0) {
      ++gemm_counted;
      continue;
    }
    gemms[s.dtype].push_back(&s);
    const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) *
                         static_cast<double>(s.k) * static_cast<double>(s.batch);
    rates[{static_cast<int>(s.dtype), s.m * s.batch, s.n, s.k}].push_back(flops / s.seconds);
  }
  DiagnosticSink above_peak;
  for (const auto& [key, r] : rates) {
    c.gemm_rows.push_back(GemmMeasurement{static_cast<DType>(std::get<0>(key)), std::get<1>(key),
                                          std::get<2>(key), std::get<3>(key), Median(r)});
    // The overlay's gemm_table must read back: hardware.gemm_table refuses a rate above the
    // peak (sim/config/gemm_csv.cc). A GEMM CSV input was refused at its row already; a trace's
    // kernel this fast was timed or shaped wrongly.
    const GemmMeasurement& g = c.gemm_rows.back();
    const std::string bad = GemmRateProblem(g.dtype, g.flops_per_s, base.peak_flops);
    if (bad.empty()) continue;
    // Located at the first kernel of the shape that is itself above the peak (the median is, so
    // at least one is): its file, line and column, and the event as the trace nests it.
    std::vector<std::string> files;
    const KernelSample* at = nullptr;
    double at_rate = 0.0;
    bool at_above = false;
    for (const KernelSample* k : gemms[g.dtype]) {
      if (k->m * k->batch != g.m || k->n != g.n || k->k != g.k) continue;
      if (std::find(files.begin(), files.end(), k->file) == files.end()) files.push_back(k->file);
      const double rate = 2.0 * static_cast<double>(k->m) * static_cast<double>(k->n) *
                          static_cast<double>(k->k) * static_cast<double>(k->batch) / k->seconds;
      const bool above = !GemmRateProblem(g.dtype, rate, base.peak_flops).empty();
      if (at == nullptr || (above && !at_above)) {
        at = k;
        at_rate = rate;
        at_above = above;
      }
    }
    std::string event;
    if (at != nullptr && !at->where.empty()) {
      event = at->where + " ran at " + FormatSig(at_rate / 1e12, 4) + " TFLOP/s: ";
    }
    std::string others;
    if (files.size() > 1) others = "; the shape's kernels are in " + Join(files);
    above_peak.Add(at != nullptr ? SourceLoc{at->file, at->line, at->col} : SourceLoc{},
                   event + "gemm " + std::string(Name(g.dtype)) + " " + std::to_string(g.m) + "x" +
                       std::to_string(g.n) + "x" + std::to_string(g.k) + " (median of " +
                       std::to_string(r.size()) + " kernels): " + bad + "; base " + base.name +
                       "'s peak_flops bound every measured GEMM" + others,
                   at != nullptr ? at->source_line : "");
  }
  if (!above_peak.empty()) return above_peak.ToStatus();
  for (const auto& [dtype, list] : gemms) {
    ClassFit f;
    f.cls = std::string("gemm ") + Name(dtype);
    f.key = dtype == DType::kBf16 ? "matmul.max_efficiency"
                                  : std::string("matmul.max_efficiency_by_dtype.") + Name(dtype);
    f.counted = gemm_counted;
    std::vector<double> ratio;
    for (const KernelSample* s : list) {
      f.seconds += s->seconds;
      const OpCost p = model.Matmul(s->m, s->n, s->k, s->batch, dtype);
      const double measured = s->seconds - curve.matmul_latency;
      if (p.compute <= p.memory || measured <= 0.0) {
        ++f.counted;
        continue;
      }
      ratio.push_back(p.compute.value() / measured);
    }
    f.samples = static_cast<int>(ratio.size());
    if (ratio.empty()) continue;
    f.base = MatmulMax(c.hardware, dtype) *
             (clocks == Clocks::kProfiled ? GemmSustained(base, dtype) : 1.0);
    f.fitted = Cap(MatmulMax(curve, dtype) * GeoMean(ratio), &f);
    MatmulMax(c.hardware, dtype) = f.fitted;
    HardwareSpec fitted = curve;
    MatmulMax(fitted, dtype) = f.fitted;
    const OpCostModel fm(fitted);
    std::vector<double> res;
    for (const KernelSample* s : list) {
      const OpCost p = fm.Matmul(s->m, s->n, s->k, s->batch, dtype);
      const double measured = s->seconds - curve.matmul_latency;
      if (p.compute <= p.memory || measured <= 0.0) continue;
      res.push_back((std::max(p.compute, p.memory).value() + curve.matmul_latency) / s->seconds -
                    1.0);
    }
    Residuals(res, &f);
    c.fits.push_back(f);
  }

  // Attention, forward and backward, by kernel family.
  for (const bool backward : {false, true}) {
    for (const bool flash2 : {true, false}) {
      ClassFit f;
      f.cls = std::string("attention ") + (backward ? "bwd" : "fwd") +
              (flash2 ? " (flash)" : " (cudnn fused)");
      f.key = std::string("attention.") + (flash2 ? "flash2." : "") +
              (backward ? "bwd_efficiency" : "fwd_efficiency");
      double& fused =
          backward ? c.hardware.attention_bwd_efficiency : c.hardware.attention_fwd_efficiency;
      double& f2 = backward ? c.hardware.attention_flash2_bwd_efficiency
                            : c.hardware.attention_flash2_fwd_efficiency;
      const double base_max = flash2 && f2 > 0.0 ? f2 : fused;
      std::vector<const KernelSample*> list;
      std::vector<double> ratio;
      for (const KernelSample& s : in.samples) {
        if (s.cls != KernelClass::kAttention || s.backward != backward) continue;
        if (s.has_shape && s.attention.flash2 != flash2) continue;
        f.seconds += s.seconds;
        if (!s.has_shape || s.seconds <= 0.0) {
          ++f.counted;
          continue;
        }
        const OpCost p =
            model.Attention(s.attention, backward ? Pass::kBackwardInput : Pass::kForward, s.dtype);
        if (p.compute <= p.memory) {
          ++f.counted;
          continue;
        }
        list.push_back(&s);
        ratio.push_back(p.compute.value() / s.seconds);
      }
      f.samples = static_cast<int>(ratio.size());
      if (ratio.empty()) continue;
      f.base = base_max * (clocks == Clocks::kProfiled ? base.sustained_compute_fraction : 1.0);
      f.fitted = Cap(base_max * GeoMean(ratio), &f);
      (flash2 ? f2 : fused) = f.fitted;
      HardwareSpec fitted = curve;
      (backward
           ? (flash2 ? fitted.attention_flash2_bwd_efficiency : fitted.attention_bwd_efficiency)
           : (flash2 ? fitted.attention_flash2_fwd_efficiency : fitted.attention_fwd_efficiency)) =
          f.fitted;
      const OpCostModel fm(fitted);
      std::vector<double> res;
      for (const KernelSample* s : list) {
        const OpCost p =
            fm.Attention(s->attention, backward ? Pass::kBackwardInput : Pass::kForward, s->dtype);
        res.push_back(std::max(p.compute, p.memory).value() / s->seconds - 1.0);
      }
      Residuals(res, &f);
      c.fits.push_back(f);
    }
  }

  // Memory-bound classes.
  struct Mem {
    KernelClass cls;
    const char* key;
    double* value;
  };
  const Mem mems[] = {
      {KernelClass::kNorm, "memory_efficiency.norm", &c.hardware.mem_eff_norm},
      {KernelClass::kSoftmax, "memory_efficiency.softmax", &c.hardware.mem_eff_softmax},
      {KernelClass::kElementwise, "memory_efficiency.elementwise",
       &c.hardware.mem_eff_elementwise}};
  for (const Mem& m : mems) {
    ClassFit f;
    f.cls = Name(m.cls);
    f.key = m.key;
    f.base = *m.value;
    double bytes = 0.0, seconds = 0.0;
    std::vector<const KernelSample*> list;
    for (const KernelSample& s : in.samples) {
      if (s.cls != m.cls) continue;
      f.seconds += s.seconds;
      if (!s.has_shape || s.bytes < kMinMemoryBoundBytes || s.seconds <= 0.0) {
        ++f.counted;
        continue;
      }
      bytes += s.bytes;
      seconds += s.seconds;
      list.push_back(&s);
    }
    f.samples = static_cast<int>(list.size());
    if (list.empty() || base.memory_bandwidth <= 0.0) continue;
    f.fitted = Cap(bytes / (base.memory_bandwidth * seconds), &f);
    *m.value = f.fitted;
    std::vector<double> res;
    for (const KernelSample* s : list) {
      res.push_back(s->bytes / (base.memory_bandwidth * f.fitted) / s->seconds - 1.0);
    }
    Residuals(res, &f);
    c.fits.push_back(f);
  }

  std::map<std::string, double> nccl;
  for (const KernelSample& s : in.samples) {
    if (s.cls == KernelClass::kNccl) nccl[s.name] += s.seconds;
  }
  for (const auto& [k, v] : nccl) c.nccl.push_back({k, v});
  if (!c.nccl.empty()) {
    c.notes.push_back(
        "NCCL kernels are reported, not fitted: collective bandwidths are topology "
        "keys (intra_node / inter_node efficiency), not hardware ones");
  }
  // The base's measured GEMM table for the dtypes the inputs did not measure (the overlay's
  // gemm_table replaces the base's whole).
  std::set<DType> measured;
  for (const GemmMeasurement& g : c.gemm_rows) measured.insert(g.dtype);
  const double s = base.sustained_compute_fraction;
  bool below_burst = s < 1.0;
  for (const auto& [d, v] : base.sustained_compute_fraction_by_dtype) below_burst |= v < 1.0;
  const bool fold = clocks == Clocks::kProfiled && below_burst;
  if (!c.gemm_rows.empty()) {
    for (GemmMeasurement g : base.gemm_table) {
      if (measured.count(g.dtype) != 0) continue;
      // Its burst rate at the clocks the overlay now assumes.
      if (fold) g.flops_per_s *= GemmSustained(base, g.dtype);
      c.gemm_rows.push_back(g);
    }
  }
  // Profiled clocks set sustained_compute_fraction to 1: the compute factors the inputs did not
  // measure carry the base's clocks in themselves (base x sustained), so they price as before.
  if (fold) {
    std::set<std::string> fitted;
    for (const ClassFit& f : c.fits) fitted.insert(f.key);
    auto carry = [&](const std::string& key, const std::string& cls, double& value,
                     double sustained) {
      if (fitted.count(key) != 0 || value <= 0.0) return;
      ClassFit f;
      f.cls = cls + " (not measured: base x sustained " + Num(sustained) + ")";
      f.key = key;
      f.base = value * sustained;  // as every row's base: on the footing of the value written
      value *= sustained;
      f.fitted = value;
      c.fits.push_back(f);
    };
    // A dtype the base clocks apart from bf16 (sustained_compute_fraction_by_dtype) whose GEMMs
    // take the shared max_efficiency needs an entry of its own to carry its clock; bf16's clock
    // rides on max_efficiency itself, and dtypes clocked as bf16 keep following it.
    const double bf16_clock = GemmSustained(base, DType::kBf16);
    for (const auto& [d, peak] : base.peak_flops) {
      if (d == DType::kBf16 || GemmSustained(base, d) == bf16_clock) continue;
      c.hardware.matmul_max_efficiency_by_dtype.emplace(
          d, MakeMatmulCurveParams(base, d).max_efficiency);
    }
    carry("matmul.max_efficiency", "gemm bf16", c.hardware.matmul_max_efficiency, bf16_clock);
    for (auto& [d, v] : c.hardware.matmul_max_efficiency_by_dtype) {
      if (base.matmul_max_efficiency_by_dtype.count(d) == 0 &&
          GemmSustained(base, d) == bf16_clock) {
        continue;
      }
      carry(std::string("matmul.max_efficiency_by_dtype.") + Name(d),
            std::string("gemm ") + Name(d), v, GemmSustained(base, d));
    }
    carry("attention.fwd_efficiency", "attention fwd (cudnn fused)",
          c.hardware.attention_fwd_efficiency, s);
    carry("attention.bwd_efficiency", "attention bwd (cudnn fused)",
          c.hardware.attention_bwd_efficiency, s);
    carry("attention.flash2.fwd_efficiency", "attention fwd (flash)",
          c.hardware.attention_flash2_fwd_efficiency, s);
    carry("attention.flash2.bwd_efficiency", "attention bwd (flash)",
          c.hardware.attention_flash2_bwd_efficiency, s);
  }
  if (clocks == Clocks::kProfiled) SetBurstClocks(&c.hardware);
  if (c.fits.empty() ||
      std::all_of(c.fits.begin(), c.fits.end(), [](const ClassFit& f) { return f.samples == 0; })) {
    return Status::Invalid(
        "calibrate: nothing to fit: no GEMM, attention, norm, softmax or "
        "elementwise kernel with shapes among " +
        std::to_string(in.samples.size()) + " samples of " + std::to_string(in.events) +
        " events (record the trace with record_shapes=True)");
  }
  return c;
}

std::string OverlayYaml(const Calibration& c, const std::string& base_name,
                        const std::string& gemm_csv_name, const std::vector<std::string>& inputs) {
  std::string out = "# Hardware overlay written by `shardsim calibrate` from:\n";
  for (const std::string& i : inputs) out += "#   " + i + "\n";
  out +=
      "# Every value below is fitted to those kernels (sim/calibrate/fit.h); every other key is\n"
      "# " +
      base_name + "'s. Residual = predicted / measured kernel time - 1.\n";
  out += "base: " + base_name + "\n";
  std::map<std::string, std::vector<const ClassFit*>> by_block;
  for (const ClassFit& f : c.fits) by_block[f.key.substr(0, f.key.find('.'))].push_back(&f);
  auto comment = [](const ClassFit& f) {
    if (f.samples == 0) return "  # " + f.cls;
    return "  # " + f.cls + ": " + std::to_string(f.samples) + " kernels, base " + Num(f.base) +
           ", residual median " + Num(100.0 * f.median_abs_residual) + "%, max " +
           Num(100.0 * f.max_abs_residual) + "%" + (f.capped ? ", capped at 1" : "");
  };
  for (const auto& [block, fits] : by_block) {
    out += block + ":\n";
    std::map<std::string, std::vector<const ClassFit*>> sub;
    for (const ClassFit* f : fits) {
      const std::string rest = f->key.substr(block.size() + 1);
      const size_t dot = rest.find('.');
      if (dot == std::string::npos) {
        out += "  " + rest + ": " + Num(f->fitted) + comment(*f) + "\n";
      } else {
        sub[rest.substr(0, dot)].push_back(f);
      }
    }
    for (const auto& [name, list] : sub) {
      out += "  " + name + ":\n";
      for (const ClassFit* f : list) {
        out += "    " + f->key.substr(f->key.rfind('.') + 1) + ": " + Num(f->fitted) + comment(*f) +
               "\n";
      }
    }
  }
  if (c.clocks == Clocks::kProfiled) {
    out +=
        "sustained_compute_fraction: 1  # the profiled kernels ran at the clocks of the run; "
        "the efficiencies hold them\n";
  }
  if (!c.gemm_rows.empty()) {
    out += "gemm_table: " + gemm_csv_name + "  # " + std::to_string(c.gemm_rows.size()) +
           " GEMM shapes: the measured ones (median rate of each), and the base's table for "
           "the dtypes not measured\n";
  }
  for (const std::string& n : c.notes) out += "# note: " + n + "\n";
  return out;
}

std::string GemmCsv(const Calibration& c) {
  std::string out = "dtype,m,n,k,tflops\n";
  for (const GemmMeasurement& g : c.gemm_rows) {
    char rate[32];
    std::snprintf(rate, sizeof(rate), "%.6g", g.flops_per_s / kTera);
    out += std::string(Name(g.dtype)) + "," + std::to_string(g.m) + "," + std::to_string(g.n) +
           "," + std::to_string(g.k) + "," + rate + "\n";
  }
  return out;
}

std::string CalibrationReport(const Calibration& c) {
  std::string out = "Fitted (residual = predicted / measured kernel time - 1)\n";
  std::string by_dtype;
  for (const auto& [d, v] : c.base_sustained_by_dtype) {
    by_dtype += std::string(", ") + Name(d) + " GEMMs " + Num(v);
  }
  out +=
      c.clocks == Clocks::kProfiled
          ? "  base: the base's value of the key at the clocks the overlay assumes (compute keys "
            "x its sustained_compute_fraction " +
                Num(c.base_sustained_compute_fraction) + by_dtype +
                ", which the overlay sets to 1), as fitted is: the two compare like for like\n"
          : "  base: the base's value of the key (its sustained_compute_fraction is kept), as "
            "fitted is: the two compare like for like\n";
  char line[512];
  std::snprintf(line, sizeof(line), "  %-26s %-44s %7s %7s %9s %9s %9s %9s\n", "class", "key",
                "kernels", "counted", "base", "fitted", "median|r|", "max|r|");
  out += line;
  for (const ClassFit& f : c.fits) {
    std::snprintf(line, sizeof(line), "  %-26s %-44s %7d %7d %9s %9s %8.2f%% %8.2f%%%s\n",
                  f.cls.c_str(), f.key.c_str(), f.samples, f.counted, Num(f.base).c_str(),
                  Num(f.fitted).c_str(), 100.0 * f.median_abs_residual, 100.0 * f.max_abs_residual,
                  f.capped ? "  (capped at 1)" : "");
    out += line;
  }
  out += "Measured time by class\n";
  for (const auto& [cls, s] : c.class_seconds) {
    out += "  " + cls + ": " + FormatSeconds(Seconds(s)) + "\n";
  }
  if (!c.nccl.empty()) {
    out += "NCCL kernels (not fitted)\n";
    for (const auto& [name, s] : c.nccl)
      out += "  " + name + ": " + FormatSeconds(Seconds(s)) + "\n";
  }
  if (!c.gemm_rows.empty()) {
    out += std::to_string(c.gemm_rows.size()) + " measured GEMM shapes\n";
  }
  for (const std::string& n : c.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace shardsim
