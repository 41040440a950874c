// How long one operator takes on one GPU (docs/reference.md §5 "Time").
//
//   time = max(compute, memory) + overhead
//   compute = FLOPs / (peak(dtype) * efficiency(shape))      matmul curve, attention curve
//   memory  = bytes / (HBM bandwidth * efficiency(kernel class))
//   overhead = kernels * kernel_launch_overhead (+ matmul.latency per GEMM kernel)
//
// Matmuls use the measured gemm_table when the hardware has rows for the dtype (by pass,
// interpolated, sim/hardware/gemm_table.h), expert GEMMs the grouped_gemm_table, else the
// physical tile curve (sim/hardware/matmul_curve.h). The causal fused attention core uses the
// measured attention_table when there is one, else its own curve (flash/fused) or, unfused, its
// GEMMs plus a memory-bound softmax. Beyond a scattered table's shapes, the table's rate at its
// edge is carried by the curve: rate(shape) = table(clamped) x curve(shape) / curve(clamped).
// Everything else is memory-bound by its MemClass (MoE permutes and the loss by their own
// measured classes when the hardware gives them). Compute-bound rates are scaled by the dtype's
// sustained fraction (SustainedFraction: clocks at the power limit; a table is taken as a burst
// measurement).
//
// OpCostModel precomputes what a hardware needs (peaks, curve constants, the table index) once;
// it is immutable and safe to share across threads. The free functions build one per call: use
// them for a single op, and an OpCostModel for many (tables make the difference, see
// bench/op_cost_bench.cc).
#ifndef SHARDSIM_HARDWARE_OP_COST_H_
#define SHARDSIM_HARDWARE_OP_COST_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "sim/base/units.h"
#include "sim/config/spec.h"
#include "sim/hardware/gemm_table.h"
#include "sim/hardware/matmul_curve.h"
#include "sim/hardware/scattered_table.h"
#include "sim/model/op.h"

namespace shardsim {

// Which model priced an op.
enum class CostSource {
  kNone,              // no work (a pass an op does not have)
  kMatmulCurve,       // sim/hardware/matmul_curve.h
  kGemmTable,         // hardware.gemm_table, interpolated
  kGroupedGemmTable,  // hardware.grouped_gemm_table (MoE experts), interpolated
  kAttentionFused,    // flash / cuDNN fused attention curve
  kAttentionUnfused,  // scores and context GEMMs + memory-bound softmax
  kAttentionTable,    // hardware.attention_table (causal fused kernel), interpolated
  kMemoryBound,       // bytes at the kernel class's achieved bandwidth
};
const char* Name(CostSource v);

struct OpCost {
  Seconds time;      // max(compute, memory) + overhead; unfused attention: sum of its kernels
  Seconds compute;   // FLOPs at the shape-dependent rate
  Seconds memory;    // bytes at the achieved bandwidth
  Seconds overhead;  // kernel launches (+ GEMM pipeline latency)
  double efficiency = 0.0;  // achieved FLOP/s over peak during `compute` (0: no FLOPs priced)
  bool memory_bound = false;
  CostSource source = CostSource::kNone;
  Flops flops;
  Bytes bytes;
  Bytes memory_bytes;  // what `memory` moves when it is not all of `bytes` (unfused: the softmax's)
  DType dtype = DType::kBf16;         // the dtype whose peak was used
  double peak = 0.0;                  // that peak, FLOP/s
  double bandwidth_efficiency = 0.0;  // memory efficiency used
  int kernels = 0;
  MatmulCurvePoint curve;  // kMatmulCurve (and the unfused attention's scores GEMM)
  // kAttentionFused: the factors of the efficiency.
  double attention_max = 0.0, attention_seq_factor = 0.0, attention_head_dim_factor = 0.0;
  double sustained = 1.0;  // sustained_compute_fraction applied to `compute`
  // kGemmTable, kGroupedGemmTable, kAttentionTable: the rows used, and the curve's ratio
  // curve(shape) / curve(clamped shape) beyond the table (1 inside it).
  GemmLookup table;
  KernelPass table_pass = KernelPass::kAny;
  double curve_ratio = 1.0;
  const char* mem_key = "";  // kMemoryBound: the memory_efficiency key used ("norm", "permute")
};

class OpCostModel {
 public:
  explicit OpCostModel(const HardwareSpec& hw);

  // One pass of an op, one micro-batch, one device.
  OpCost Cost(const Op& op, Pass pass) const;
  // One GEMM of m x n x k, `batch` times (backward passes: see op.h for their shapes). Bytes:
  // operands and output once; `bytes` > 0 overrides them.
  OpCost Matmul(int64_t m, int64_t n, int64_t k, int64_t batch, DType dtype,
                Bytes bytes = Bytes(0.0)) const;
  // The same GEMM as `pass` runs it (its measured rows), from the grouped table when `grouped`
  // (MoE experts: `batch` GEMMs in one kernel) and the hardware has one.
  OpCost Matmul(int64_t m, int64_t n, int64_t k, int64_t batch, DType dtype, Bytes bytes,
                KernelPass pass, bool grouped) const;
  // The attention core, fused (shape.flash) or not. FLOPs: 4*s_q*s_kv*d per head forward
  // (half when causal and fused: the kernel skips masked blocks), backward 2.5x for the fused
  // kernel (it recomputes the scores; Dao 2023, FlashAttention-2 §3.2) and 2x unfused.
  // `bytes` > 0 overrides the HBM traffic (Q, K, V, O; unfused: plus the s x s scores).
  // `softmax` is the kernel class of the unfused path's softmax: kNorm for a fused single-pass
  // kernel (Megatron-LM's scaled-masked-softmax), kSoftmax for a framework's generic one.
  OpCost Attention(const AttentionShape& shape, Pass pass, DType dtype, Bytes bytes = Bytes(0.0),
                   MemClass softmax = MemClass::kSoftmax) const;
  // A memory-bound kernel class moving `bytes` in `kernels` launches.
  OpCost MemoryBound(Bytes bytes, MemClass cls, int kernels = 1) const;
  // One optimizer step over `params_local` parameters, each moving `bytes_per_param` bytes
  // (kAdamBytesPerParam for fused AdamW on fp32 state), in one fused multi-tensor kernel.
  Seconds OptimizerStep(int64_t params_local, double bytes_per_param) const;

  const HardwareSpec& hardware() const { return hw_; }
  const GemmTable& gemm_table() const { return table_; }

 private:
  OpCost CostAttention(const Op& op, Pass pass) const;
  OpCost FromTable(const GemmLookup& at, bool grouped, int64_t m, int64_t n, int64_t k,
                   int64_t batch, DType dtype, Bytes bytes) const;
  double MemEfficiency(MemClass cls) const;
  // The fused-attention curve's efficiency (no sustained factor) of one pass.
  double FusedCurve(const AttentionShape& s, Pass pass, double* seq_factor,
                    double* head_dim_factor) const;

  HardwareSpec hw_;
  std::array<MatmulCurveParams, kNumDTypes> curves_;  // by DType
  GemmTable table_;
  GemmTable grouped_;
  ScatteredTable attention_;  // key: 0 forward, 1 backward
};

// A fused optimizer step on fp32 master weights: reads the weight and the fp32 gradient, writes
// the weight, and reads and writes each state tensor (Adam's m and v, SGD's momentum) of
// `state_bytes` per element: 12 + 2·states·state_bytes. Fused AdamW on fp32 state is 7 x 4 = 28
// bytes (PyTorch's fused AdamW, bench/h200/results/membound.csv `adamw_fused`). A Megatron
// distributed optimizer also writes the bf16 copy of the weight (+2 bytes).
constexpr double FusedOptimizerBytesPerParam(int states, double state_bytes) {
  return 12.0 + 2.0 * static_cast<double>(states) * state_bytes;
}
inline constexpr double kAdamBytesPerParam = FusedOptimizerBytesPerParam(2, 4.0);

// Backward fp8 GEMMs accumulate at full precision (split accumulator): 1.1-1.2x slower than the
// fast accumulation of the forward (pytorch/ao#2377 benchmark); OpCostModel::Cost applies 1.15.
inline constexpr double kFp8SplitAccumulatorSlowdown = 1.15;

OpCost CostOf(const Op& op, Pass pass, const HardwareSpec& hw);
OpCost MatmulCost(int64_t m, int64_t n, int64_t k, int64_t batch, DType dtype,
                  const HardwareSpec& hw);
OpCost AttentionCost(const AttentionShape& shape, Pass pass, DType dtype, const HardwareSpec& hw);
OpCost MemoryBoundCost(Bytes bytes, MemClass cls, const HardwareSpec& hw);
Seconds OptimizerStepTime(int64_t params_local, double bytes_per_param, const HardwareSpec& hw);

// One line for `--explain`: the formula with its factors, e.g.
// "matmul curve bf16: 1.52 ms = max(compute 1.52 ms [tile 128x256, split 1, 15.5 waves;
//  eff 0.70 = max 0.84 x tile 1.00 x k 0.98 x quant 1.00 x sustained 0.85 of 989 TFLOP/s],
//  memory 118 us [402 MB at 86% of 4.80 TB/s]) + overhead 4.0 us (1 kernel)".
std::string ExplainCost(const OpCost& cost);

}  // namespace shardsim

#endif  // SHARDSIM_HARDWARE_OP_COST_H_
