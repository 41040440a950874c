// Which peak FLOP/s a computation in a given dtype runs at on a given GPU.
//
// A dtype the hardware file gives no peak for runs on the nearest units the GPU has, as
// frameworks do: fp8 without fp8 tensor cores (A100) is computed in bf16, fp16 and bf16 stand
// in for each other, tf32 falls back to fp32. mxfp8 and nvfp4 have no stand-in: they run at their
// own peak_flops entry or not at all. Tested in tests/hardware/matmul_curve_test.cc.
#ifndef SHARDSIM_HARDWARE_PEAKS_H_
#define SHARDSIM_HARDWARE_PEAKS_H_

#include "sim/config/spec.h"

namespace shardsim {

struct PeakChoice {
  DType dtype = DType::kBf16;  // the dtype whose peak is used
  double flops_per_s = 0.0;    // 0 when the hardware gives no peak at all
};

PeakChoice PeakFor(const HardwareSpec& hw, DType dtype);

// The sustained (power-limited) fraction of the burst math rate a GEMM computing in `dtype`
// holds: hardware.sustained_compute_fraction_by_dtype's entry for it (mxfp8 and nvfp4 without
// one take fp8's), else sustained_compute_fraction; 1 where neither is positive.
double SustainedFraction(const HardwareSpec& hw, DType dtype);

// The largest sustained fraction of any dtype: the bound on the executed share of the peak.
double MaxSustainedFraction(const HardwareSpec& hw);

// Burst clocks throughout: sustained_compute_fraction 1 and no per-dtype entries (what a short
// benchmark or a profiled run's own kernels saw).
void SetBurstClocks(HardwareSpec* hw);

}  // namespace shardsim

#endif  // SHARDSIM_HARDWARE_PEAKS_H_
