// The attention core (OpCostModel::Attention and the kAttention case of OpCostModel::Cost).
//
// Fused (flash / cuDNN) kernels never write the s x s scores to HBM; their time is FLOP-bound:
//   efficiency = max(pass) * s_kv/(s_kv + seq_half[causal]) * head-dim factor * sustained
//   head-dim factor = [d/(d + d_half)] / [128/(128 + d_half)], held at 1 above d = 128 (no
//   measurements there)
// FLOPs: 4*s_q*s_kv*d per head forward, half when causal (the kernel skips masked blocks; Dao
// 2023, FlashAttention-2 §3.1), the band or chunk triangles on a local-attention layer
// (AttendedFraction, sim/model/op.h; the curve's row length is then the window, and the
// measured table, of full causal sequences, is not read), backward 2.5x the forward (5 GEMMs
// against 2: the scores are recomputed; FlashAttention-2 §3.2). A short sequence pays per-block
// fixed work (seq_half); a causal one also pays for the diagonal blocks and the tail imbalance
// (seq_half_causal). Fitted to bench/h200/results/attention_b2b.csv by
// hardware/calibration/fit_h200.py.
//
// A causal TE/cuDNN kernel on hardware with an attention_table takes its rate from the table
// (sim/hardware/scattered_table.h over (batch*heads, seq, head_dim, v_head_dim)), carried beyond
// the table's shapes by this curve's ratio; the sustained fraction applies as to the curve.
//
// Unfused attention runs its GEMMs (scores Q.K^T and context P.V forward; dV, dP, dQ, dK
// backward) through the matmul model, batched over heads, plus a memory-bound softmax over the
// scores (memory_efficiency.softmax): the op's bytes beyond what its GEMMs move. Its kernels run
// one after another, so their times add. Tested in tests/hardware/attention_cost_test.cc.
#include <algorithm>
#include <optional>
#include <vector>

#include "sim/hardware/op_cost.h"
#include "sim/hardware/peaks.h"

namespace shardsim {
namespace {

constexpr double kRefHeadDim = 128.0;

struct Gemm {
  int64_t m, n, k;
};

// The GEMMs of unfused attention for one pass, each batched over the heads.
std::vector<Gemm> UnfusedGemms(const AttentionShape& s, Pass pass) {
  const int64_t dv = s.v_head_dim > 0 ? s.v_head_dim : s.head_dim;
  if (pass == Pass::kForward) {
    return {{s.seq_q, s.seq_kv, s.head_dim}, {s.seq_q, dv, s.seq_kv}};
  }
  if (pass == Pass::kBackwardInput) {
    return {{s.seq_kv, dv, s.seq_q},           // dV = P^T . dO
            {s.seq_q, s.seq_kv, dv},           // dP = dO . V^T
            {s.seq_q, s.head_dim, s.seq_kv},   // dQ = dS . K
            {s.seq_kv, s.head_dim, s.seq_q}};  // dK = dS^T . Q
  }
  return {};
}

double FullFlops(const AttentionShape& s) {
  const int64_t dv = s.v_head_dim > 0 ? s.v_head_dim : s.head_dim;
  return 2.0 * static_cast<double>(s.batch_heads) * static_cast<double>(s.seq_q) *
         static_cast<double>(s.seq_kv) * static_cast<double>(s.head_dim + dv);
}

}  // namespace

double OpCostModel::FusedCurve(const AttentionShape& s, Pass pass, double* seq_factor,
                               double* head_dim_factor) const {
  const double d = static_cast<double>(s.head_dim);
  const double dh = hw_.attention_head_dim_half;
  const double max =
      pass == Pass::kForward ? hw_.attention_fwd_efficiency : hw_.attention_bwd_efficiency;
  *head_dim_factor = std::min(1.0, (d / (d + dh)) / (kRefHeadDim / (kRefHeadDim + dh)));
  // A local layer's rows are its window (or chunk) long: the per-block fixed work of a short
  // causal sequence of that length.
  const int64_t row = s.window > 0 && s.window < s.seq_kv ? s.window : s.seq_kv;
  const double skv = static_cast<double>(row);
  *seq_factor = skv / (skv + (s.causal ? hw_.attention_seq_half_causal : hw_.attention_seq_half));
  return max * *head_dim_factor * *seq_factor;
}

OpCost OpCostModel::Attention(const AttentionShape& s, Pass pass, DType dtype, Bytes bytes,
                              MemClass softmax) const {
  OpCost c;
  if (pass == Pass::kBackwardWeight || s.batch_heads <= 0 || s.seq_q <= 0 || s.seq_kv <= 0 ||
      s.head_dim <= 0) {
    return c;
  }
  const int64_t dv = s.v_head_dim > 0 ? s.v_head_dim : s.head_dim;
  const double elem = BytesOf(dtype);
  const double bh = static_cast<double>(s.batch_heads);
  const double io = elem * bh *
                    (static_cast<double>(s.seq_q) * static_cast<double>(s.head_dim + dv) +
                     static_cast<double>(s.seq_kv) * static_cast<double>(s.head_dim + dv));
  const double scores = bh * static_cast<double>(s.seq_q) * static_cast<double>(s.seq_kv);
  const double fwd_flops = FullFlops(s) * (s.flash ? AttendedFraction(s) : 1.0);
  const double flops = pass == Pass::kForward ? fwd_flops : fwd_flops * (s.flash ? 2.5 : 2.0);
  const double traffic = bytes.value() > 0.0 ? bytes.value()
                                             : (pass == Pass::kForward ? 1.0 : 2.0) * io +
                                                   (s.flash ? 0.0 : 4.0 * elem * scores);
  const PeakChoice peak = PeakFor(hw_, dtype);
  c.flops = Flops(flops);
  c.bytes = Bytes(traffic);
  c.dtype = peak.dtype;
  c.peak = peak.flops_per_s;
  c.sustained = hw_.sustained_compute_fraction > 0.0 ? hw_.sustained_compute_fraction : 1.0;

  if (s.flash) {
    c.bandwidth_efficiency = hw_.mem_eff_elementwise;
    const double bw = hw_.memory_bandwidth * c.bandwidth_efficiency;
    c.memory = bw > 0.0 ? Seconds(traffic / bw) : Seconds(0.0);
    c.kernels = 1;
    c.overhead = Seconds(hw_.kernel_launch_overhead);
    c.attention_max =
        pass == Pass::kForward ? hw_.attention_fwd_efficiency : hw_.attention_bwd_efficiency;
    const double flash2 = pass == Pass::kForward ? hw_.attention_flash2_fwd_efficiency
                                                 : hw_.attention_flash2_bwd_efficiency;
    if (s.flash2 && flash2 > 0.0) c.attention_max = flash2;
    FusedCurve(s, pass, &c.attention_seq_factor, &c.attention_head_dim_factor);
    const double curve = c.attention_max * c.attention_head_dim_factor * c.attention_seq_factor;
    // The measured table: the causal TE/cuDNN kernel (not FlashAttention-2, not a full mask).
    const int key = pass == Pass::kForward ? 0 : 1;
    const int64_t dv_table = s.v_head_dim > 0 ? s.v_head_dim : s.head_dim;
    std::optional<ScatteredTable::Lookup> at;
    const bool local = s.window > 0 && s.window < s.seq_kv;
    if (s.causal && !s.flash2 && !local) {
      at = attention_.Find(key, {s.batch_heads, s.seq_kv, s.head_dim, dv_table});
    }
    if (at) {
      c.source = CostSource::kAttentionTable;
      c.table.at = *at;
      c.table.flops_per_s = at->rate;
      c.table_pass = pass == Pass::kForward ? KernelPass::kForward : KernelPass::kBackwardInput;
      double rate = at->rate;
      if (at->outside) {
        AttentionShape e = s;
        e.batch_heads = at->clamped[0];
        e.seq_q = e.seq_kv = at->clamped[1];
        e.head_dim = at->clamped[2];
        e.v_head_dim = at->clamped[3];
        double sf = 0.0, hf = 0.0;
        const double edge = FusedCurve(e, pass, &sf, &hf);
        c.curve_ratio = edge > 0.0 ? curve / edge : 1.0;
        rate *= c.curve_ratio;
      }
      c.efficiency = c.peak > 0.0 ? rate * c.sustained / c.peak : 0.0;
    } else {
      c.source = CostSource::kAttentionFused;
      c.efficiency = curve * c.sustained;
    }
    c.compute = c.peak > 0.0 && c.efficiency > 0.0 ? Seconds(flops / (c.peak * c.efficiency))
                                                   : Seconds(0.0);
    c.memory_bound = c.memory > c.compute;
    c.time = std::max(c.compute, c.memory) + c.overhead;
    return c;
  }

  // Unfused: GEMMs then the softmax, one after another.
  c.source = CostSource::kAttentionUnfused;
  double gemm_time = 0.0, gemm_bytes = 0.0;
  int gemms = 0;
  for (const Gemm& g : UnfusedGemms(s, pass)) {
    const OpCost mm = Matmul(g.m, g.n, g.k, s.batch_heads, dtype);
    if (gemms == 0) c.curve = mm.curve;
    gemm_time += std::max(mm.compute, mm.memory).value();
    gemm_bytes += mm.bytes.value();
    ++gemms;
  }
  const double softmax_bytes = std::max(0.0, traffic - gemm_bytes);
  c.bandwidth_efficiency = MemEfficiency(softmax);
  const double bw = hw_.memory_bandwidth * c.bandwidth_efficiency;
  c.compute = Seconds(gemm_time);
  c.memory = bw > 0.0 ? Seconds(softmax_bytes / bw) : Seconds(0.0);
  c.memory_bytes = Bytes(softmax_bytes);
  c.efficiency = c.peak > 0.0 && gemm_time > 0.0 ? flops / (c.peak * gemm_time) : 0.0;
  c.kernels = gemms + 1;  // the GEMMs and one softmax (+ mask/scale fused into it)
  c.overhead = Seconds(hw_.kernel_launch_overhead * static_cast<double>(c.kernels) +
                       curves_[static_cast<size_t>(dtype)].latency * static_cast<double>(gemms));
  c.memory_bound = c.memory > c.compute;
  c.time = c.compute + c.memory + c.overhead;
  return c;
}

OpCost OpCostModel::CostAttention(const Op& op, Pass pass) const {
  const PassCost& pc = op.cost(pass);
  OpCost c = Attention(op.attention, pass, op.dtype, pc.bytes, op.mem_class);
  if (c.source == CostSource::kNone || pc.flops.value() <= 0.0) return c;
  // The op's FLOPs are authoritative (e.g. MLA's separate qk/v widths, CP's local queries): keep
  // the model's efficiency and rescale the compute term to them.
  if (c.flops.value() > 0.0 &&
      (c.source == CostSource::kAttentionFused || c.source == CostSource::kAttentionTable)) {
    c.compute = c.compute * (pc.flops.value() / c.flops.value());
    c.flops = pc.flops;
    c.memory_bound = c.memory > c.compute;
    c.time = std::max(c.compute, c.memory) + c.overhead;
  }
  return c;
}

}  // namespace shardsim
