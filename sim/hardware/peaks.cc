#include "sim/hardware/peaks.h"

#include <algorithm>
#include <array>

namespace shardsim {
namespace {

// Preference order of the units a dtype can run on; unused slots repeat the last entry.
std::array<DType, 4> Order(DType dtype) {
  switch (dtype) {
    case DType::kFp8:
      return {DType::kFp8, DType::kBf16, DType::kFp16, DType::kFp32};
    case DType::kBf16:
      return {DType::kBf16, DType::kFp16, DType::kFp32, DType::kFp32};
    case DType::kFp16:
      return {DType::kFp16, DType::kBf16, DType::kFp32, DType::kFp32};
    case DType::kTf32:
      return {DType::kTf32, DType::kFp32, DType::kFp32, DType::kFp32};
    case DType::kFp32:
      return {DType::kFp32, DType::kTf32, DType::kTf32, DType::kTf32};
    case DType::kMxfp8:
    case DType::kNvfp4:
      // Block-scaled formats need their own units: no stand-in (the scenario validator rejects a
      // precision the hardware file gives no peak for).
      return {dtype, dtype, dtype, dtype};
  }
  return {dtype, dtype, dtype, dtype};
}

}  // namespace

PeakChoice PeakFor(const HardwareSpec& hw, DType dtype) {
  for (DType d : Order(dtype)) {
    auto it = hw.peak_flops.find(d);
    if (it != hw.peak_flops.end() && it->second > 0.0) return PeakChoice{d, it->second};
  }
  // Nothing close: the largest peak the file gives (the config loader requires at least one).
  PeakChoice best{dtype, 0.0};
  for (const auto& [d, v] : hw.peak_flops) {
    if (v > best.flops_per_s) best = PeakChoice{d, v};
  }
  return best;
}

double SustainedFraction(const HardwareSpec& hw, DType dtype) {
  const auto& by = hw.sustained_compute_fraction_by_dtype;
  auto it = by.find(dtype);
  if (it == by.end() && (dtype == DType::kMxfp8 || dtype == DType::kNvfp4)) {
    it = by.find(DType::kFp8);
  }
  const double v = it != by.end() ? it->second : hw.sustained_compute_fraction;
  return v > 0.0 ? v : 1.0;
}

double MaxSustainedFraction(const HardwareSpec& hw) {
  // The scalar holds for attention whatever the GEMM entries say.
  double v = hw.sustained_compute_fraction > 0.0 ? hw.sustained_compute_fraction : 1.0;
  for (const auto& [d, f] : hw.sustained_compute_fraction_by_dtype) v = std::max(v, f);
  return v;
}

void SetBurstClocks(HardwareSpec* hw) {
  hw->sustained_compute_fraction = 1.0;
  hw->sustained_compute_fraction_by_dtype.clear();
}

}  // namespace shardsim
