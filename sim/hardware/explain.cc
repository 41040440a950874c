// ExplainCost: the one-line account of an OpCost that `--explain` prints.
#include <string>

#include "sim/base/units.h"
#include "sim/hardware/op_cost.h"

namespace shardsim {
namespace {

std::string Pct(double f) { return FormatSig(f * 100.0, 2) + "%"; }
std::string F2(double v) { return FormatSig(v, 2); }

std::string MemoryPart(const OpCost& c) {
  const Bytes moved = c.memory_bytes.value() > 0.0 ? c.memory_bytes : c.bytes;
  const double bw = c.memory.value() > 0.0 ? moved.value() / c.memory.value() : 0.0;
  const double full = c.bandwidth_efficiency > 0.0 ? bw / c.bandwidth_efficiency : 0.0;
  return "memory " + FormatSeconds(c.memory) + " [" + FormatBytes(moved) + " at " +
         Pct(c.bandwidth_efficiency) + " of " + FormatRate(full, "B/s") + "]";
}

std::string Overhead(const OpCost& c) {
  return " + overhead " + FormatSeconds(c.overhead) + " (" + std::to_string(c.kernels) +
         (c.kernels == 1 ? " kernel)" : " kernels)");
}

const char* PassName(KernelPass p) {
  switch (p) {
    case KernelPass::kAny:
      return "";
    case KernelPass::kForward:
      return "forward ";
    case KernelPass::kBackwardInput:
      return "backward_input ";
    case KernelPass::kBackwardWeight:
      return "backward_weight ";
  }
  return "";
}

std::string ShapeText(const ScatteredTable::Shape& s, int dims) {
  std::string out;
  for (int i = 0; i < dims; ++i) {
    out += (i ? "x" : "") + std::to_string(s[static_cast<size_t>(i)]);
  }
  return out;
}

// Which rows of a measured table priced the op: "measured forward row 4096x8192x28672", "8
// nearest forward rows (nearest 4096x8192x28672)", a grid cell, and the curve's ratio beyond.
std::string TableRows(const OpCost& c, int dims, const std::string& axes) {
  if (c.table.grid) return "measured grid, trilinear";
  const ScatteredTable::Lookup& at = c.table.at;
  const std::string pass = PassName(c.table_pass);
  std::string out = at.exact
                        ? "measured " + pass + "row " + axes + " " + ShapeText(at.nearest, dims)
                        : std::to_string(at.rows) + " nearest " + pass + "rows, nearest " + axes +
                              " " + ShapeText(at.nearest, dims);
  if (at.outside) {
    out += "; beyond the table: at its edge " + ShapeText(at.clamped, dims) + " x curve " +
           F2(c.curve_ratio);
  }
  return out;
}

}  // namespace

std::string ExplainCost(const OpCost& c) {
  // Memory-bound kernels name no dtype: their arithmetic is on the vector units.
  std::string head =
      std::string(Name(c.source)) +
      (c.source == CostSource::kMemoryBound ? "" : std::string(" ") + Name(c.dtype)) + ": " +
      FormatSeconds(c.time) + " = ";
  const std::string peak = " of " + FormatRate(c.peak, "FLOP/s");
  switch (c.source) {
    case CostSource::kNone:
      return "no work";
    case CostSource::kMatmulCurve: {
      const MatmulCurvePoint& p = c.curve;
      const double max_eff =
          c.efficiency / (p.tile_efficiency * p.k_efficiency * p.quantization * c.sustained);
      return head + "max(compute " + FormatSeconds(c.compute) + " [tile " +
             std::to_string(p.tile_a) + "x" + std::to_string(p.tile_b) + ", split " +
             std::to_string(p.split) + ", " + FormatSig(p.waves, 3) + " waves; eff " +
             F2(c.efficiency) + " = max " + F2(max_eff) + " x tile " + F2(p.tile_efficiency) +
             " x k " + F2(p.k_efficiency) + " x quant " + F2(p.quantization) + " x sustained " +
             F2(c.sustained) + peak + "], " + MemoryPart(c) + ")" + Overhead(c) +
             " incl. GEMM latency";
    }
    case CostSource::kGemmTable:
    case CostSource::kGroupedGemmTable: {
      const bool grouped = c.source == CostSource::kGroupedGemmTable;
      return head + "max(compute " + FormatSeconds(c.compute) + " [" +
             (grouped ? TableRows(c, 4, "m x n x k x groups") : TableRows(c, 3, "m x n x k")) +
             "; eff " + F2(c.efficiency) + " incl. sustained " + F2(c.sustained) + peak + "], " +
             MemoryPart(c) + ")" + Overhead(c);
    }
    case CostSource::kAttentionTable:
      return head + "max(compute " + FormatSeconds(c.compute) + " [" +
             FormatRate(c.flops.value(), "FLOP") + "; " +
             TableRows(c, 4, "batch*heads x seq x head_dim x v_head_dim") + "; eff " +
             F2(c.efficiency) + " incl. sustained " + F2(c.sustained) + peak + "], " +
             MemoryPart(c) + ")" + Overhead(c);
    case CostSource::kAttentionFused:
      return head + "max(compute " + FormatSeconds(c.compute) + " [" +
             FormatRate(c.flops.value(), "FLOP") + ", eff " + F2(c.efficiency) + " = max " +
             F2(c.attention_max) + " x seq " + F2(c.attention_seq_factor) + " x head_dim " +
             F2(c.attention_head_dim_factor) + " x sustained " + F2(c.sustained) + peak + "], " +
             MemoryPart(c) + ")" + Overhead(c);
    case CostSource::kAttentionUnfused:
      return head + "GEMMs " + FormatSeconds(c.compute) + " [eff " + F2(c.efficiency) + peak +
             "] + softmax " + MemoryPart(c) + Overhead(c) + " incl. GEMM latency";
    case CostSource::kMemoryBound:
      return head + "max(compute " + FormatSeconds(c.compute) + ", " + MemoryPart(c) +
             " (memory_efficiency." + c.mem_key + "))" + Overhead(c);
  }
  return head;
}

}  // namespace shardsim
