#include "sim/hardware/op_cost.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "sim/hardware/peaks.h"

namespace shardsim {
namespace {

constexpr std::array<DType, kNumDTypes> kAllDTypes = {DType::kFp32, DType::kTf32, DType::kBf16,
                                                      DType::kFp16, DType::kFp8,  DType::kMxfp8,
                                                      DType::kNvfp4};

// GEMM shape of one pass (op.h): forward (m, n, k), backward-input (m, k, n), backward-weight
// (k, n, m).
MatmulShape PassShape(const MatmulShape& s, Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return s;
    case Pass::kBackwardInput:
      return MatmulShape{s.m, s.k, s.n, s.batch};
    case Pass::kBackwardWeight:
      return MatmulShape{s.k, s.n, s.m, s.batch};
  }
  return s;
}

KernelPass ToKernelPass(Pass p) {
  switch (p) {
    case Pass::kForward:
      return KernelPass::kForward;
    case Pass::kBackwardInput:
      return KernelPass::kBackwardInput;
    case Pass::kBackwardWeight:
      return KernelPass::kBackwardWeight;
  }
  return KernelPass::kAny;
}

std::vector<ScatteredTable::Row> AttentionRows(const HardwareSpec& hw) {
  std::vector<ScatteredTable::Row> rows;
  for (const AttentionMeasurement& a : hw.attention_table) {
    rows.push_back(ScatteredTable::Row{a.pass == KernelPass::kForward ? 0 : 1,
                                       {a.batch_heads, a.seq, a.head_dim, a.v_head_dim},
                                       a.flops_per_s});
  }
  return rows;
}

void Finish(OpCost& c) {
  c.memory_bound = c.memory > c.compute;
  c.time = std::max(c.compute, c.memory) + c.overhead;
}

}  // namespace

const char* Name(CostSource v) {
  switch (v) {
    case CostSource::kNone:
      return "none";
    case CostSource::kMatmulCurve:
      return "matmul curve";
    case CostSource::kGemmTable:
      return "gemm table";
    case CostSource::kGroupedGemmTable:
      return "grouped gemm table";
    case CostSource::kAttentionTable:
      return "attention table";
    case CostSource::kAttentionFused:
      return "fused attention";
    case CostSource::kAttentionUnfused:
      return "unfused attention";
    case CostSource::kMemoryBound:
      return "memory-bound";
  }
  return "?";
}

OpCostModel::OpCostModel(const HardwareSpec& hw)
    : hw_(hw),
      table_(hw.gemm_table),
      grouped_(hw.grouped_gemm_table, /*grouped=*/true),
      attention_(AttentionRows(hw)) {
  for (DType d : kAllDTypes) curves_[static_cast<size_t>(d)] = MakeMatmulCurveParams(hw_, d);
}

double OpCostModel::MemEfficiency(MemClass cls) const {
  switch (cls) {
    case MemClass::kElementwise:
      return hw_.mem_eff_elementwise;
    case MemClass::kNorm:
      return hw_.mem_eff_norm;
    case MemClass::kSoftmax:
      return hw_.mem_eff_softmax;
    case MemClass::kGather:
      return hw_.mem_eff_gather;
  }
  return hw_.mem_eff_elementwise;
}

OpCost OpCostModel::Matmul(int64_t m, int64_t n, int64_t k, int64_t batch, DType dtype,
                           Bytes bytes) const {
  return Matmul(m, n, k, batch, dtype, bytes, KernelPass::kAny, false);
}

OpCost OpCostModel::Matmul(int64_t m, int64_t n, int64_t k, int64_t batch, DType dtype, Bytes bytes,
                           KernelPass pass, bool grouped) const {
  OpCost c;
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return c;
  const bool use_grouped = grouped && grouped_.Has(dtype);
  const GemmTable& table = use_grouped ? grouped_ : table_;
  if (const std::optional<GemmLookup> at = table.Find(dtype, m, n, k, batch, pass)) {
    return FromTable(*at, use_grouped, m, n, k, batch, dtype, bytes);
  }
  const MatmulCurveParams& p = curves_[static_cast<size_t>(dtype)];
  c.curve = EvaluateMatmulCurve(p, m, n, k, batch, bytes.value());
  c.source = CostSource::kMatmulCurve;
  c.flops = Flops(2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                  static_cast<double>(batch));
  c.bytes = c.curve.bytes;
  c.dtype = p.peak_dtype;
  c.peak = p.peak;
  c.sustained = p.sustained;
  c.bandwidth_efficiency = hw_.mem_eff_elementwise;
  c.compute = c.curve.compute;
  c.memory = c.curve.memory;
  c.efficiency = c.curve.efficiency;
  c.kernels = 1;
  c.overhead = Seconds(hw_.kernel_launch_overhead + p.latency);
  Finish(c);
  return c;
}

// Measured throughput: the table's rate already holds the shape's efficiency and the kernel's
// latency; the sustained fraction still applies (tables are short-burst measurements). Beyond a
// scattered table's box the rate at its edge is scaled by the curve's rate (latency included)
// at the shape over the curve's rate at the clamped shape.
OpCost OpCostModel::FromTable(const GemmLookup& at, bool grouped, int64_t m, int64_t n, int64_t k,
                              int64_t batch, DType dtype, Bytes bytes) const {
  OpCost c;
  const MatmulCurveParams& p = curves_[static_cast<size_t>(dtype)];
  double rate = at.flops_per_s;
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  const double dk = static_cast<double>(k), db = static_cast<double>(batch);
  if (!at.grid && at.at.outside) {
    auto curve_rate = [&](int64_t cm, int64_t cn, int64_t ck, int64_t cb) {
      const MatmulCurvePoint q = EvaluateMatmulCurve(p, cm, cn, ck, cb);
      const double t = std::max(q.compute, q.memory).value() + p.latency;
      return 2.0 * static_cast<double>(cm) * static_cast<double>(cn) * static_cast<double>(ck) *
             static_cast<double>(cb) / t;
    };
    const ScatteredTable::Shape& e = at.at.clamped;
    // Plain tables hold batch*m rows in e[0]; grouped ones m per group and the groups in e[3].
    const double edge =
        grouped ? curve_rate(e[0], e[1], e[2], e[3]) : curve_rate(e[0], e[1], e[2], 1);
    const double here = grouped ? curve_rate(m, n, k, batch) : curve_rate(m * batch, n, k, 1);
    c.curve_ratio = edge > 0.0 ? here / edge : 1.0;
    rate *= c.curve_ratio;
  }
  c.table = at;
  c.table_pass = at.pass;
  c.source = grouped ? CostSource::kGroupedGemmTable : CostSource::kGemmTable;
  c.flops = Flops(2.0 * dm * dn * dk * db);
  c.bytes = bytes.value() > 0.0
                ? bytes
                : Bytes(db * (p.in_bytes * (dm * dk + dk * dn) + p.out_bytes * dm * dn));
  c.dtype = dtype;
  c.peak = PeakFor(hw_, dtype).flops_per_s;
  c.sustained = p.sustained;
  c.bandwidth_efficiency = hw_.mem_eff_elementwise;
  c.compute = Seconds(c.flops.value() / (rate * p.sustained));
  c.memory = p.bandwidth > 0.0 ? Seconds(c.bytes.value() / p.bandwidth) : Seconds(0.0);
  c.efficiency = c.peak > 0.0 ? rate * p.sustained / c.peak : 0.0;
  c.kernels = 1;
  c.overhead = Seconds(hw_.kernel_launch_overhead);
  Finish(c);
  return c;
}

namespace {
const char* MemKey(MemClass cls) {
  switch (cls) {
    case MemClass::kElementwise:
      return "elementwise";
    case MemClass::kNorm:
      return "norm";
    case MemClass::kSoftmax:
      return "softmax";
    case MemClass::kGather:
      return "gather";
  }
  return "elementwise";
}
}  // namespace

OpCost OpCostModel::MemoryBound(Bytes bytes, MemClass cls, int kernels) const {
  OpCost c;
  c.source = CostSource::kMemoryBound;
  c.bytes = bytes;
  c.mem_key = MemKey(cls);
  c.bandwidth_efficiency = MemEfficiency(cls);
  const double bw = hw_.memory_bandwidth * c.bandwidth_efficiency;
  c.memory = bw > 0.0 ? Seconds(bytes.value() / bw) : Seconds(0.0);
  c.kernels = std::max(0, kernels);
  c.overhead = Seconds(hw_.kernel_launch_overhead * static_cast<double>(c.kernels));
  Finish(c);
  return c;
}

Seconds OpCostModel::OptimizerStep(int64_t params_local, double bytes_per_param) const {
  if (params_local <= 0) return Seconds(0.0);
  const double bw = hw_.memory_bandwidth * hw_.mem_eff_optimizer;
  const double bytes = static_cast<double>(params_local) * bytes_per_param;
  return Seconds((bw > 0.0 ? bytes / bw : 0.0) + hw_.kernel_launch_overhead);
}

OpCost OpCostModel::Cost(const Op& op, Pass pass) const {
  const PassCost& pc = op.cost(pass);
  if (pc.flops.value() <= 0.0 && pc.bytes.value() <= 0.0) return OpCost{};
  switch (op.kind) {
    case OpKind::kMatmul: {
      const MatmulShape s = PassShape(op.matmul, pass);
      // Routed experts run as one grouped GEMM per pass (Transformer Engine's GroupedLinear).
      const bool grouped = op.tp_split == TpSplit::kExperts && s.batch > 1;
      OpCost c = Matmul(s.m, s.n, s.k, s.batch, op.dtype, pc.bytes, ToKernelPass(pass), grouped);
      if (c.source == CostSource::kNone) break;  // no shape: price its bytes below
      // FP8 training runs the backward GEMMs with the split (full-precision) accumulator
      // (Transformer Engine; torchao's default), 1.1-1.2x slower than the fast accumulation
      // the forward uses and the calibration measured (pytorch/ao#2377): the middle, 1.15x.
      // Block-scaled mxfp8 / nvfp4 GEMMs (Blackwell, CDNA 4) accumulate in fp32 inside the
      // tensor core: no such slowdown.
      if (op.dtype == DType::kFp8 && pass != Pass::kForward) {
        c.compute = c.compute * kFp8SplitAccumulatorSlowdown;
        c.efficiency /= kFp8SplitAccumulatorSlowdown;
        c.time = std::max(c.compute, c.memory) + c.overhead;
      }
      return c;
    }
    case OpKind::kAttention:
      return CostAttention(op, pass);
    default:
      break;
  }
  OpCost c = MemoryBound(pc.bytes, op.mem_class, std::max(1, op.kernels));
  // Kernel classes measured apart where the hardware file gives them (memory_efficiency.permute,
  // .cross_entropy; hardware/calibration/b200/README.md).
  double own = 0.0;
  if (op.kind == OpKind::kPermute && hw_.mem_eff_permute > 0.0) {
    own = hw_.mem_eff_permute;
    c.mem_key = "permute";
  } else if (op.kind == OpKind::kLoss && hw_.mem_eff_cross_entropy > 0.0) {
    own = hw_.mem_eff_cross_entropy;
    c.mem_key = "cross_entropy";
  }
  if (own > 0.0) {
    c.bandwidth_efficiency = own;
    c.memory = Seconds(pc.bytes.value() / (hw_.memory_bandwidth * own));
    Finish(c);
  }
  // Elementwise arithmetic runs on the vector units (fp32 rate); it rarely binds.
  const PeakChoice vec = PeakFor(hw_, DType::kFp32);
  if (pc.flops.value() > 0.0 && vec.flops_per_s > 0.0) {
    c.flops = pc.flops;
    c.dtype = vec.dtype;
    c.peak = vec.flops_per_s;
    c.compute = Seconds(pc.flops.value() / vec.flops_per_s);
    c.efficiency = 1.0;
    Finish(c);
  }
  return c;
}

OpCost CostOf(const Op& op, Pass pass, const HardwareSpec& hw) {
  return OpCostModel(hw).Cost(op, pass);
}

OpCost MatmulCost(int64_t m, int64_t n, int64_t k, int64_t batch, DType dtype,
                  const HardwareSpec& hw) {
  return OpCostModel(hw).Matmul(m, n, k, batch, dtype);
}

OpCost AttentionCost(const AttentionShape& shape, Pass pass, DType dtype, const HardwareSpec& hw) {
  return OpCostModel(hw).Attention(shape, pass, dtype);
}

OpCost MemoryBoundCost(Bytes bytes, MemClass cls, const HardwareSpec& hw) {
  return OpCostModel(hw).MemoryBound(bytes, cls);
}

Seconds OptimizerStepTime(int64_t params_local, double bytes_per_param, const HardwareSpec& hw) {
  return OpCostModel(hw).OptimizerStep(params_local, bytes_per_param);
}

}  // namespace shardsim
