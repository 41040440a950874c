// One operator of a transformer as it runs on one device: its shapes after sharding, its FLOPs
// and bytes for each pass, its parameters, and the activation bytes it saves for backward.
//
// The model module builds these (sim/model/op_graph.h); the hardware module prices them
// (sim/hardware/op_cost.h); the parallel module reads the TpSplit annotation to insert the
// tensor-parallel collectives. An Op knows nothing of time.
#ifndef SHARDSIM_MODEL_OP_H_
#define SHARDSIM_MODEL_OP_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/units.h"
#include "sim/config/spec.h"

namespace shardsim {

enum class OpKind {
  kEmbedding,   // token (+ learned position) lookup: a gather, memory-bound
  kNorm,        // layernorm / rmsnorm
  kMatmul,      // a linear layer (or a batch of equal ones, e.g. experts): [m x k] . [k x n]
  kAttention,   // the attention core: scores, softmax, context (flash or unfused)
  kActivation,  // gelu / relu, or the gated product of swiglu / geglu
  kDropout,     // dropout fused with the residual add
  kResidual,    // residual add (no dropout)
  kRouter,      // MoE gate: softmax / top-k over the experts
  kPermute,     // MoE token permutation before / after the experts (local gather/scatter)
  kLoss,        // softmax cross-entropy over the vocabulary
  kCast,        // fp8 training: quantizing a GEMM operand (cast + transpose), memory-bound
};

// The class of memory-bound kernel an op is; selects the achieved-bandwidth efficiency.
enum class MemClass { kElementwise, kNorm, kSoftmax, kGather };

// How tensor parallelism (Megatron-LM, Shoeybi et al. 2019) splits an op across the TP group.
enum class TpSplit {
  kReplicated,  // every TP rank does the whole op (norms, dropout without SP)
  kColumn,      // weight split by output columns: input replicated (all-gathered with SP)
  kRow,         // weight split by input rows: output partial sums, all-reduced (or
                // reduce-scattered with SP) after the op
  kHeads,       // the attention core: heads split across the group
  kSequence,    // elementwise op split along the sequence by sequence parallelism
  kVocab,       // output head / loss split along the vocabulary (vocab-parallel)
  kExperts,     // expert MLPs split across the expert-parallel group
};

// The block of a decoder layer an op belongs to: the attention block (its input norm, the q/k/v
// projections, the core, the output projection and its residual) or the MLP block (dense or
// mixture-of-experts, with its norm and residual). A layer's tensor-parallel collectives are
// issued per block (Shoeybi et al. 2019 §3: one all-reduce pair per block), and hide behind that
// block's GEMMs (sim/program/step_costs.cc). The embedding, the head and the MTP projection
// belong to no block. Set where the ops are built (sim/model/op_graph.cc BuildLayer).
enum class Region { kNone, kAttention, kMlp };

// Which pass of an op: forward, backward w.r.t. its input, backward w.r.t. its weights.
enum class Pass { kForward, kBackwardInput, kBackwardWeight };

// Forward GEMM shape (per device, after sharding): C[m x n] = A[m x k] . B[k x n], repeated
// `batch` times (independent equal GEMMs: heads of an unfused attention, or local experts).
// Backward-input is (m, k, n) and backward-weight (k, n, m), each `batch` times.
struct MatmulShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
};

// Attention-core shape per device: `batch_heads` independent heads of `seq_q` queries over
// `seq_kv` keys with `head_dim` (qk) and `v_head_dim` (value) widths.
struct AttentionShape {
  int64_t batch_heads = 0;
  int64_t seq_q = 0;
  int64_t seq_kv = 0;
  int64_t head_dim = 0;
  int64_t v_head_dim = 0;
  bool causal = true;
  bool flash = true;
  bool flash2 = false;  // FlashAttention-2 rather than the cuDNN / TE fused kernel
  // Local attention (model.local_attention) narrower than the sequence: 0 = none; else the
  // window (sliding) or chunk (chunked) in tokens, each query seeing at most that many keys.
  int64_t window = 0;
  bool chunked = false;
};

// The share of the s_kv x s_kv score square a causal fused kernel computes: 1/2 for full causal
// attention (the masked half of the blocks skipped; Dao 2023, FlashAttention-2 §3.1); a band
// of width W under a sliding window, (W·s − W²/2)/s² (W < s); triangles of side C within each
// chunk under chunked attention, (n·C² + r²)/(2s²) for s = n·C + r; 1 when not causal.
// Continuous in the width: both reach 1/2 at W = s. Tested in tests/model/local_attention_test.cc.
double AttendedFraction(const AttentionShape& s);

// FLOPs and HBM bytes (read + written) of one pass of an op, for one micro-batch on one device.
struct PassCost {
  Flops flops;
  Bytes bytes;
};

struct Op {
  std::string name;  // "attn.qkv", "mlp.fc1", "loss", ...
  OpKind kind = OpKind::kMatmul;
  MemClass mem_class = MemClass::kElementwise;
  TpSplit tp_split = TpSplit::kReplicated;
  Region region = Region::kNone;
  DType dtype = DType::kBf16;  // the math dtype (fp8 for matmuls under fp8 training)
  MatmulShape matmul;          // kMatmul only
  AttentionShape attention;    // kAttention only
  PassCost fwd;                // executed work (causal attention kernels skip masked blocks)
  Flops model_fwd_flops;       // forward FLOPs as MFU counts them: matmul-class work only, the
                               // attention core as the full s x s square (Megatron / PaLM
                               // convention); backward counts twice this
  PassCost bwd_input;
  PassCost bwd_weight;  // zero for ops without weights
  int64_t params = 0;   // parameters this op holds on this device
  // Activation bytes this op keeps for its backward, per micro-batch, with no recompute. A
  // tensor saved by several ops is counted once, at the first op that saves it.
  Bytes saved;
  // Bytes of `saved` that selective recompute drops when it re-runs each module
  // (RecomputeModule): the attention core's score/softmax/dropout tensors (core_attn, Korthikanti
  // 2022 §4.2); a norm's output kept by the matmul after it (layernorm); the q/k/v that MLA's
  // up-projections make and the core keeps (mla_up_proj); the expert SwiGLU output (moe_act).
  std::array<Bytes, kNumRecomputeModules> dropped_by{};
  // ModuleBit flags of the modules whose selective recompute re-runs this op in backward.
  unsigned rerun_by = 0;
  // Bytes this op's output occupies (per micro-batch), for transient-memory estimates.
  Bytes output;
  // The separate matmul calls (aten.mm) PyTorch modules make for this one op, in forward order,
  // each as its fraction of `output`: torchtitan's Attention runs wq, wk, wv for the fused q/k/v
  // (q the attention core's q_heads x head_dim columns, k and v splitting the rest), its
  // FeedForward w1 then w3 for a gated fc1 (half each). Empty: one call. Set where the op is
  // built (sim/model/layer_ops.cc); op-level checkpointing counts these calls (OpSacKeptBytes).
  std::vector<double> framework_calls;
  int kernels = 1;   // kernel launches in forward (backward is priced with the same count)
  std::string note;  // where the formula comes from, for --explain

  const PassCost& cost(Pass p) const {
    return p == Pass::kForward ? fwd : (p == Pass::kBackwardInput ? bwd_input : bwd_weight);
  }
};

const char* Name(OpKind v);
const char* Name(TpSplit v);
const char* Name(Region v);  // "none", "attention", "mlp"
const char* Name(Pass v);

}  // namespace shardsim

#endif  // SHARDSIM_MODEL_OP_H_
