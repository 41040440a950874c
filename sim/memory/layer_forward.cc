#include "sim/memory/layer_forward.h"

#include <algorithm>
#include <map>
#include <set>

namespace shardsim {
namespace {

class Events {
 public:
  // A new tensor of `bytes` (none when `bytes` is not positive: -1).
  int Alloc(double bytes) {
    if (bytes <= 0.0) return -1;
    const int t = next_++;
    bytes_[t] = bytes;
    out_.events.push_back({t, bytes});
    return t;
  }
  // Frees `t` once; the input (0, kept by the checkpoint) and "none" (-1) are never freed here.
  void Free(int t) {
    if (t > 0 && freed_.insert(t).second) out_.events.push_back({t, 0.0});
  }
  double BytesOf(int t) const {
    const auto it = bytes_.find(t);
    return it == bytes_.end() ? 0.0 : it->second;
  }
  LayerForward& out() { return out_; }

 private:
  LayerForward out_;
  std::map<int, double> bytes_;
  std::set<int> freed_;
  int next_ = 1;
};

}  // namespace

bool CheckpointedForward(const TrainingSpec& training) {
  return training.recompute == Recompute::kSelectiveOps || training.recompute == Recompute::kFull;
}

LayerForward LayerForwardEvents(const LayerOps& layer, const TrainingSpec& training,
                                NormKind norm) {
  const bool compiled = training.fused_kernels;
  const bool sac = training.recompute == Recompute::kSelectiveOps;
  const std::vector<Op>& ops = layer.ops;
  Events e;
  std::set<int> keep;     // what the checkpoint stores (besides the input)
  int stream = 0;         // the residual stream: the input, then each add's output
  std::vector<int> prev;  // the previous op's outputs, which this op reads
  int v = -1;             // wv's output: read by SDPA, after RoPE
  int silu = -1;          // eager SwiGLU: silu(w1(x)), freed after the product
  double q_bytes = 0.0, k_bytes = 0.0, v_bytes = 0.0;  // 16-bit q, k, v of this layer
  int64_t mm = 0;  // aten.mm calls so far (torchtitan's _custom_policy counts them)
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const bool next_is_add = i + 1 < ops.size() && (ops[i + 1].kind == OpKind::kResidual ||
                                                    ops[i + 1].kind == OpKind::kDropout);
    std::vector<int> reads = prev, outs;
    switch (op.kind) {
      case OpKind::kNorm: {
        reads.clear();  // the residual stream, freed by the add that replaces it
        const double x = op.output.value();
        if (!compiled && norm == NormKind::kRmsNorm) {
          // torchtitan RMSNorm.forward / ATen rms_norm (layer_forward.h).
          const int xf = e.Alloc(2.0 * x);  // x.float()
          const int sq = e.Alloc(2.0 * x);  // .pow(2), freed once .mean(-1) has read it
          e.Free(sq);
          const int y = e.Alloc(2.0 * x);  // x * rsqrt(...)
          e.Free(xf);                      // _norm returns
          const int yb = e.Alloc(x);       // .type_as(x)
          e.Free(y);
          outs.push_back(e.Alloc(x));  // * self.weight
          e.Free(yb);
        } else {
          outs.push_back(e.Alloc(x));
        }
        break;
      }
      case OpKind::kMatmul: {
        const std::vector<double> calls =
            op.framework_calls.empty() ? std::vector<double>{1.0} : op.framework_calls;
        const bool swiglu = !compiled && calls.size() == 2 && i + 1 < ops.size() &&
                            ops[i + 1].kind == OpKind::kActivation;
        for (size_t k = 0; k < calls.size(); ++k) {
          // _custom_policy: the 1st, 3rd, ... mm MUST_SAVE; compiled, the partitioner drops an
          // output only a residual add reads (OpSacKeptBytes).
          const bool saved_call = ++mm % 2 == 1;
          const int t = e.Alloc(op.output.value() * calls[k]);
          outs.push_back(t);
          if (sac && saved_call && (!compiled || !next_is_add)) keep.insert(t);
          // F.silu(self.w1(x)) runs before self.w3(x).
          if (swiglu && k == 0) silu = e.Alloc(op.output.value() * calls[k]);
        }
        if (calls.size() == 3) {
          q_bytes = e.BytesOf(outs[0]);
          k_bytes = e.BytesOf(outs[1]);
          v_bytes = e.BytesOf(outs[2]);
        }
        break;
      }
      case OpKind::kActivation: {
        if (op.output.value() <= 0.0) {
          // RoPE (RopeOp keeps no output of its own): q's and k's rotations, when the previous
          // op is torchtitan's wq, wk, wv; v is read by SDPA.
          if (prev.size() != 3) {
            outs = prev;
            reads.clear();
            break;
          }
          reads = {prev[0], prev[1]};
          v = prev[2];
          std::vector<int> fp32;
          if (!compiled) {
            // xq.float(), xk.float() (as complex), xq_ * freqs_cis, xk_ * freqs_cis.
            for (const double b : {q_bytes, k_bytes, q_bytes, k_bytes}) {
              fp32.push_back(e.Alloc(2.0 * b));
            }
          }
          outs.push_back(e.Alloc(q_bytes));  // .type_as(xq)
          outs.push_back(e.Alloc(k_bytes));  // .type_as(xk)
          for (const int t : fp32) e.Free(t);
          break;
        }
        outs.push_back(e.Alloc(op.output.value()));  // silu(w1) * w3, or gelu(fc1)
        e.Free(silu);
        silu = -1;
        break;
      }
      case OpKind::kAttention: {
        if (v >= 0) reads.push_back(v);
        v = -1;
        // repeat_kv: keys and values expanded to the query heads and copied by reshape.
        const double rep = k_bytes > 0.0 ? q_bytes / k_bytes : 1.0;
        std::vector<int> copies;
        if (rep > 1.0) {
          copies.push_back(e.Alloc(k_bytes * rep));
          copies.push_back(e.Alloc(v_bytes * rep));
        }
        // SDPA (flash): the output and the fp32 per-row logsumexp, both MUST_SAVE under SAC.
        const AttentionShape& s = op.attention;
        for (const double b : {op.output.value(), 4.0 * static_cast<double>(s.batch_heads) *
                                                      static_cast<double>(s.seq_q)}) {
          const int t = e.Alloc(b);
          outs.push_back(t);
          if (sac) keep.insert(t);
        }
        for (const int t : copies) e.Free(t);
        break;
      }
      case OpKind::kResidual:
      case OpKind::kDropout: {
        reads.push_back(stream);
        outs.push_back(e.Alloc(op.output.value()));
        stream = outs.back();
        break;
      }
      case OpKind::kCast:
        // fp8 training's cast of a GEMM input (torchao Float8Linear): its fp8 copy (half the
        // 16-bit input) lives only until the GEMM and is not replayed; the GEMM reads through.
        reads.clear();
        outs = prev;
        break;
      default:
        if (op.output.value() > 0.0) outs.push_back(e.Alloc(op.output.value()));
        break;
    }
    for (const int t : reads) {
      if (t > 0 && t != stream && keep.count(t) == 0) e.Free(t);
    }
    if (!outs.empty()) prev = outs;
  }
  LayerForward& f = e.out();
  f.output = stream;
  f.kept.push_back(0);
  for (const int t : keep) {
    if (t != stream) f.kept.push_back(t);
  }
  return f;
}

}  // namespace shardsim
