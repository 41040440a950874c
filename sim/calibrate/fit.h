// Fitting a hardware file's efficiencies to kernel samples (samples.h), and the overlay that
// `shardsim calibrate` writes.
//
// Each class fits the one factor the cost model (sim/hardware/op_cost.h) scales its time by,
// from the samples whose shapes are known, with the other constants of the base hardware kept:
//   GEMM (per dtype): matmul.max_efficiency (bf16) or max_efficiency_by_dtype.<dtype>: the
//     curve's compute time of a compute-bound sample is proportional to 1/max_efficiency, so
//     the factor is the base's times the geometric mean of predicted/measured compute time
//     (measured: the kernel's duration less matmul.latency). The measured rates also go into a
//     GEMM table (hardware.gemm_table), one row per distinct shape (median rate), which
//     simulations then read instead of the curve for that dtype.
//   attention forward / backward: attention.{fwd,bwd}_efficiency (cuDNN fused) or
//     attention.flash2.{fwd,bwd}_efficiency (FlashAttention), the same way through the
//     attention curve.
//   norm, softmax, elementwise: memory_efficiency.<class> = sum of bytes / (bandwidth x sum of
//     durations) over the samples moving at least kMinMemoryBoundBytes (smaller kernels are
//     latency-bound: the model prices them by kernel_launch_overhead).
//   NCCL: counted and timed per kernel name; collective bandwidths are topology keys
//     (intra_node.efficiency, ...), which a hardware overlay cannot hold.
// Clocks: a trace of a training run saw its kernels at the clocks the run held (power-limited):
// with Clocks::kProfiled the factors absorb them and the overlay sets sustained_compute_fraction
// to 1; with Clocks::kBurst (short benchmarks) the base's sustained fraction is kept and the
// factors are the burst ones. Residuals: each fitted sample's predicted duration over its
// measured one, less 1. Tested in tests/calibrate/ (round trip to a known hardware file).
#ifndef SHARDSIM_CALIBRATE_FIT_H_
#define SHARDSIM_CALIBRATE_FIT_H_

#include <map>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/calibrate/samples.h"
#include "sim/config/spec.h"

namespace shardsim {

inline constexpr double kMinMemoryBoundBytes = 1048576.0;  // 1 MiB

enum class Clocks { kProfiled, kBurst };

// One fitted factor and how well the fit reproduces its samples.
struct ClassFit {
  std::string cls;       // "gemm bf16", "attention fwd (flash2)", "norm", ...
  std::string key;       // the hardware key written ("matmul.max_efficiency")
  int samples = 0;       // samples fitted
  int counted = 0;       // samples of the class not fitted (no shape, too small, memory-bound)
  double seconds = 0.0;  // measured time of every sample of the class
  // base: the base hardware's value of `key` on the footing of `fitted` (with Clocks::kProfiled
  // a compute key's value x the base's sustained fraction for the key's dtype, which the overlay
  // sets to 1; otherwise the key's value), measured or not; fitted: the value the overlay writes.
  double base = 0.0, fitted = 0.0;
  bool capped = false;  // the fit exceeded 1 and was capped at it
  double median_abs_residual = 0.0, max_abs_residual = 0.0, median_residual = 0.0;
};

struct Calibration {
  HardwareSpec hardware;  // the base with the fitted values
  std::vector<ClassFit> fits;
  std::vector<GemmMeasurement> gemm_rows;  // the measured GEMMs, one per shape (median rate)
  std::vector<std::pair<std::string, double>> nccl;           // kernel name -> seconds
  std::vector<std::pair<std::string, double>> class_seconds;  // every class's measured time
  std::vector<std::string> notes;
  Clocks clocks = Clocks::kProfiled;
  double base_sustained_compute_fraction = 1.0;     // the base's, before the overlay sets it
  std::map<DType, double> base_sustained_by_dtype;  // its sustained_compute_fraction_by_dtype
};

// Errors: nothing of any class could be fitted; a measured GEMM rate above the base's peak for
// its dtype (the overlay's gemm_table would not read back).
Result<Calibration> FitHardware(const KernelSamples& samples, const HardwareSpec& base,
                                Clocks clocks);

// The overlay YAML: `base: BASE`, the fitted keys with their fits in comments, `gemm_table:
// <gemm_csv_name>` when there are GEMM rows. Only keys the hardware reader accepts.
std::string OverlayYaml(const Calibration& c, const std::string& base_name,
                        const std::string& gemm_csv_name, const std::vector<std::string>& inputs);
// The GEMM rows as a CSV hardware.gemm_table reads (dtype,m,n,k,tflops).
std::string GemmCsv(const Calibration& c);
// The report `calibrate` prints: per class, the samples, the base and fitted values and the
// residuals.
std::string CalibrationReport(const Calibration& c);

}  // namespace shardsim

#endif  // SHARDSIM_CALIBRATE_FIT_H_
