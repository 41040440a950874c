// `shardsim calibrate`: kernel measurements read from what users already have — a PyTorch
// profiler (Kineto) Chrome trace taken with record_shapes, an Nsight Systems cuda_gpu_kern_sum
// CSV, or a GEMM CSV (the format hardware.gemm_table reads) — matched to the op classes the cost
// model prices (sim/hardware/op_cost.h): GEMMs by (m, n, k), fused attention by shape, norms,
// softmax, elementwise kernels, NCCL collectives.
//
// A Kineto trace holds cpu_op events (aten ops, with "Input Dims" and "Input type" when
// record_shapes was on) and, on GPUs, kernel events linked to the op that launched them by their
// "External id". With kernel events, each kernel's GPU duration is a sample and its shapes are
// its op's; without (a CPU trace), each aten op that does the work (aten::mm, addmm, bmm,
// native_layer_norm, _softmax, gelu, add, ...; not the wrappers above them such as aten::linear
// or aten::matmul) is one. Durations are in microseconds in the trace, seconds here.
// Tested in tests/calibrate/.
#ifndef SHARDSIM_CALIBRATE_SAMPLES_H_
#define SHARDSIM_CALIBRATE_SAMPLES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/spec.h"
#include "sim/model/op.h"

namespace shardsim {

enum class KernelClass { kGemm, kAttention, kNorm, kSoftmax, kElementwise, kNccl };
const char* Name(KernelClass v);  // "gemm", "attention", ...

struct KernelSample {
  KernelClass cls = KernelClass::kElementwise;
  std::string name;  // op or kernel name as the trace writes it
  double seconds = 0.0;
  DType dtype = DType::kBf16;
  bool has_shape = false;  // false: only counted (nsys summaries, ops recorded without shapes)
  int64_t m = 0, n = 0, k = 0, batch = 1;  // kGemm: C[m x n] = A[m x k] B[k x n], batch times
  AttentionShape attention;                // kAttention
  bool backward = false;                   // kAttention, kNorm, kSoftmax: a backward kernel
  double bytes = 0.0;                      // memory-bound classes: HBM bytes read + written
  double instances = 1.0;                  // how many kernels `seconds` is the total of
  std::string file;                        // the input it was read from (ReadKernelFile)
  // Where in `file` it was read (a Kineto trace; line 0 elsewhere): the line and column of its
  // event (the first kernel's on a GPU trace, the op's on a CPU trace), that line's text (empty
  // when too long to print), and the event named as the trace nests it ("traceEvents[41]
  // (kernel sm90_xmma_gemm_..., shapes from traceEvents[40] aten::mm)", "traceEvents[7]
  // (aten::mm)"; "[7]" in a bare event array).
  int line = 0, col = 0;
  std::string source_line;
  std::string where;
};

struct KernelSamples {
  std::vector<KernelSample> samples;
  std::map<std::string, int64_t> unmatched;  // events of no class, by name (those with work)
  int64_t events = 0;                        // events read
  std::vector<std::string> notes;
};

// Reads one input by its content: a Chrome trace (JSON object with traceEvents, or a bare event
// array), an nsys kernel summary (CSV with Name and Total Time (ns) columns), or a GEMM CSV (dtype,
// m, n, k, tflops). Errors are located (file:line:col) and say what was expected. `peaks`
// (FLOP/s by dtype, the base hardware's peak_flops): a GEMM CSV row above its dtype's peak is an
// error at its tflops field, as hardware.gemm_table's reader reports it.
Status ReadKernelFile(const std::string& path, KernelSamples* out,
                      const std::map<DType, double>& peaks = {});
Status ReadKinetoTrace(const std::string& text, const std::string& file, KernelSamples* out);
Status ReadNsysKernelSummary(const std::string& text, const std::string& file, KernelSamples* out);
Status ReadGemmCsvSamples(const std::string& path, const std::map<DType, double>& peaks,
                          KernelSamples* out);
// The class of a GPU kernel by its name (cuBLAS / CUTLASS / nvjet GEMMs, flash / cuDNN / fmha
// attention, PyTorch's norm, softmax and elementwise kernels, NCCL); `backward` when the name
// says so. False: none of them.
bool ClassOfKernelName(const std::string& kernel, KernelClass* cls, bool* backward);

}  // namespace shardsim

#endif  // SHARDSIM_CALIBRATE_SAMPLES_H_
