// The shape-dependent GEMM time of one GPU: a physical tile model with a handful of parameters
// per hardware (HardwareSpec matmul.*), fitted to measurements by
// hardware/calibration/fit_h200.py.
//
// A GEMM C[m x n] = A[m x k].B[k x n] (times `batch`) runs as output tiles of a x b on the SMs.
// The library picks, among candidate tiles derived from matmul.tile = [T_m, T_n]
//   (T_m, T_n), (T_n, T_m), (T_m, T_m), (T_m/2, T_n), (T_m/2, T_m), (T_m/2, T_m/2),
// the fastest one for the shape (cuBLAS heuristics do the same), where for each tile:
//   tiles   = ceil(m/a) * ceil(n/b) * batch      tile quantization: partial tiles do full work
//   split   = min(SMs / tiles, k / k_split_min) when tiles < SMs, else 1      (split-K)
//   waves   = tiles*split / SMs, at least 1; rounded up when matmul.wave_quantization
//             (Ampere cuBLAS runs whole waves; Hopper cuBLAS balances work, stream-K)
//   e_tile  = [I/(I + I_half)] / [I_ref/(I_ref + I_half)],  I = a*b/(a+b) (operand reuse;
//             NVIDIA, "Matrix Multiplication Background User's Guide", §2.3: larger tiles reuse
//             operands more and run faster), I_ref for (T_m, T_n)
//   compute = waves * 2*a*b*(k/split + k_half) / (peak/SMs * max_eff * e_tile * sustained)
//             the k-loop of each tile plus its epilogue/prologue, k_half k-steps long; the
//             efficiency of a whole GEMM is max_eff * e_tile * k/(k + k_half) * tile and wave
//             quantization (NVIDIA guide §3.1-3.2)
//   memory  = (operand and output bytes + 8 bytes per output element per split when split > 1,
//             the fp32 partial sums) / (HBM bandwidth * memory_efficiency.elementwise)
//   time    = max(compute, memory)
// and the kernel adds matmul.latency (pipeline fill and drain) on top of the launch overhead.
// k_half and k_split_min are in k-steps of a 2-byte operand and scale by 2/bytes(dtype).
// Tested in tests/hardware/matmul_curve_test.cc (closed forms) and h200_fit_test.cc (the H200
// grid).
#ifndef SHARDSIM_HARDWARE_MATMUL_CURVE_H_
#define SHARDSIM_HARDWARE_MATMUL_CURVE_H_

#include <cstdint>

#include "sim/base/units.h"
#include "sim/config/spec.h"

namespace shardsim {

// The per-dtype constants of the curve, computed once per hardware.
struct MatmulCurveParams {
  DType dtype = DType::kBf16;
  DType peak_dtype = DType::kBf16;  // whose peak is used (fp8 without fp8 units runs at bf16)
  double peak = 0.0;                // FLOP/s
  double max_efficiency = 0.0;
  double sustained = 1.0;
  double k_half = 0.0;       // k-steps of this dtype
  double k_split_min = 1.0;  // k-steps of this dtype
  double tile_intensity_half = 0.0;
  int64_t tile_m = 128, tile_n = 256;
  int64_t sms = 1;
  bool wave_quantization = false;
  double in_bytes = 2.0;   // per operand element
  double out_bytes = 2.0;  // per output element (fp8 GEMMs write bf16)
  double bandwidth = 0.0;  // achieved HBM bytes/s (bandwidth * elementwise efficiency)
  double latency = 0.0;    // seconds per kernel
};

MatmulCurveParams MakeMatmulCurveParams(const HardwareSpec& hw, DType dtype);

// The evaluated curve at one shape: what --explain prints.
struct MatmulCurvePoint {
  int64_t tile_a = 0, tile_b = 0;  // chosen tile
  int64_t tiles = 0;               // output tiles (all batch copies)
  int64_t split = 1;               // split-K factor
  double waves = 0.0;              // tile-waves over the SMs (fractional when balanced)
  double tile_efficiency = 0.0;    // e_tile
  double k_efficiency = 0.0;       // (k/split) / (k/split + k_half)
  double quantization = 0.0;       // useful work / work done by the tiles and waves
  Seconds compute;                 // tile time (no latency)
  Seconds memory;                  // operand/output streaming
  Bytes bytes;                     // bytes the memory term moves
  double efficiency = 0.0;         // 2mnk*batch / (peak * compute)
};

// Evaluates the curve. `bytes_override` > 0 replaces the operand/output bytes (an op that knows
// its own traffic, e.g. fp32 gradient accumulation); split-K partial traffic is added either
// way. Preconditions: m, n, k, batch >= 1.
MatmulCurvePoint EvaluateMatmulCurve(const MatmulCurveParams& p, int64_t m, int64_t n, int64_t k,
                                     int64_t batch, double bytes_override = 0.0);

}  // namespace shardsim

#endif  // SHARDSIM_HARDWARE_MATMUL_CURVE_H_
