#include "sim/hardware/matmul_curve.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>

#include "sim/hardware/peaks.h"

namespace shardsim {
namespace {

double Ceil(double a, double b) { return std::ceil(a / b); }

}  // namespace

MatmulCurveParams MakeMatmulCurveParams(const HardwareSpec& hw, DType dtype) {
  MatmulCurveParams p;
  p.dtype = dtype;
  const PeakChoice peak = PeakFor(hw, dtype);
  p.peak_dtype = peak.dtype;
  p.peak = peak.flops_per_s;
  p.max_efficiency = hw.matmul_max_efficiency;
  // Block-scaled GEMMs without an entry of their own take fp8's (same tensor-core rate family).
  if (dtype == DType::kMxfp8 || dtype == DType::kNvfp4) {
    auto it = hw.matmul_max_efficiency_by_dtype.find(DType::kFp8);
    if (it != hw.matmul_max_efficiency_by_dtype.end()) p.max_efficiency = it->second;
  }
  for (DType d : {peak.dtype, dtype}) {
    auto it = hw.matmul_max_efficiency_by_dtype.find(d);
    if (it != hw.matmul_max_efficiency_by_dtype.end()) p.max_efficiency = it->second;
  }
  p.sustained = SustainedFraction(hw, peak.dtype);  // the clock of the units that compute
  // The operands the math units read: fp8 on hardware without fp8 units is computed in bf16.
  p.in_bytes = BytesOf(peak.dtype);
  p.out_bytes = (peak.dtype == DType::kFp32 || peak.dtype == DType::kTf32) ? 4.0 : 2.0;
  // (mxfp8 / nvfp4 operands: 1 and 0.5 bytes; their block scales, 3-6% more, are not counted here)
  const double scale = 2.0 / p.in_bytes;  // k_half, k_split_min: bytes of a 2-byte operand
  p.k_half = hw.matmul_k_half * scale;
  p.k_split_min = std::max(1.0, hw.matmul_k_split_min * scale);
  p.tile_intensity_half = hw.matmul_tile_intensity_half;
  p.tile_m = std::max<int64_t>(1, hw.matmul_tile_m);
  p.tile_n = std::max<int64_t>(1, hw.matmul_tile_n);
  p.sms = std::max<int64_t>(1, hw.sm_count);
  p.wave_quantization = hw.matmul_wave_quantization;
  p.bandwidth = hw.memory_bandwidth * hw.mem_eff_elementwise;
  p.latency = hw.matmul_latency;
  return p;
}

MatmulCurvePoint EvaluateMatmulCurve(const MatmulCurveParams& p, int64_t m, int64_t n, int64_t k,
                                     int64_t batch, double bytes_override) {
  const int64_t tm = p.tile_m, tn = p.tile_n;
  const int64_t half = std::max<int64_t>(1, tm / 2);
  const std::array<std::array<int64_t, 2>, 6> candidates = {
      {{tm, tn}, {tn, tm}, {tm, tm}, {half, tn}, {half, tm}, {half, half}}};
  const double ref_i = static_cast<double>(tm * tn) / static_cast<double>(tm + tn);
  const double ih = p.tile_intensity_half;
  const double ref_e = ref_i / (ref_i + ih);
  const double sms = static_cast<double>(p.sms);
  const double peak_sm = p.peak * p.max_efficiency * p.sustained / sms;
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  const double dk = static_cast<double>(k), db = static_cast<double>(batch);
  const double flops = 2.0 * dm * dn * dk * db;
  const double base_bytes = bytes_override > 0.0
                                ? bytes_override
                                : db * (p.in_bytes * (dm * dk + dk * dn) + p.out_bytes * dm * dn);

  MatmulCurvePoint best;
  double best_time = -1.0;
  for (const auto& [a, b] : candidates) {
    const double da = static_cast<double>(a), dbt = static_cast<double>(b);
    const double i_t = da * dbt / (da + dbt);
    const double e_tile = (i_t / (i_t + ih)) / ref_e;
    const double tiles = Ceil(dm, da) * Ceil(dn, dbt) * db;
    double split = 1.0;
    if (tiles < sms) {
      split = std::max(1.0, std::min(std::floor(sms / tiles), std::floor(dk / p.k_split_min)));
    }
    const double units = tiles * split;
    const double waves =
        p.wave_quantization ? std::max(1.0, Ceil(units, sms)) : std::max(1.0, units / sms);
    const double k_slice = dk / split;
    const double compute = waves * 2.0 * da * dbt * (k_slice + p.k_half) / (peak_sm * e_tile);
    const double bytes = base_bytes + (split > 1.0 ? 8.0 * dm * dn * db : 0.0);
    const double memory = p.bandwidth > 0.0 ? bytes / p.bandwidth : 0.0;
    const double t = std::max(compute, memory);
    if (best_time >= 0.0 && t >= best_time) continue;
    best_time = t;
    best.tile_a = a;
    best.tile_b = b;
    best.tiles = static_cast<int64_t>(tiles);
    best.split = static_cast<int64_t>(split);
    best.waves = waves;
    best.tile_efficiency = e_tile;
    best.k_efficiency = k_slice / (k_slice + p.k_half);
    // Useful FLOPs over the FLOPs the tile grid spends in its waves (k_half excluded).
    best.quantization = flops / (waves * sms * 2.0 * da * dbt * k_slice);
    best.compute = Seconds(compute);
    best.memory = Seconds(memory);
    best.bytes = Bytes(bytes);
  }
  best.efficiency =
      (p.peak > 0.0 && best.compute.value() > 0.0) ? flops / (p.peak * best.compute.value()) : 0.0;
  return best;
}

}  // namespace shardsim
