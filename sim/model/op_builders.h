// Constructors of single ops, shared by the layer builders of sim/model. Internal to the module.
//
// Byte and FLOP conventions (one micro-batch, one device):
// - a matmul [m x k].[k x n] costs 2mnk FLOPs forward and 2mnk for each of backward-input and
//   backward-weight (docs/reference.md §5; Narayanan 2021 §5.1); it moves its two operands and its
//   result once through HBM;
// - elementwise ops read their inputs and write their output once;
// - "saved" is what autograd keeps for backward (Korthikanti 2022 §4.1 accounting).
#ifndef SHARDSIM_MODEL_OP_BUILDERS_H_
#define SHARDSIM_MODEL_OP_BUILDERS_H_

#include <string>
#include <vector>

#include "sim/config/spec.h"
#include "sim/model/op.h"
#include "sim/model/op_graph.h"

namespace shardsim::model_internal {

// Derived sizes every builder needs.
struct Ctx {
  const ModelSpec& model;
  const GraphOptions& options;
  double act_bytes;     // bytes per activation element (2 for bf16/fp16/fp8 training, 4 fp32)
  double weight_bytes;  // bytes per weight element as the matmul reads it
  DType matmul_dtype;   // fp8 under fp8 training
  int64_t tokens;       // T = b * s / cp, tokens of a micro-batch on this device
  int64_t norm_tokens;  // tokens that replicated/elementwise ops see: T / t with SP, else T
  int64_t tp;
  // The layer's local attention (model.local_attention on this layer, narrower than the
  // sequence): window or chunk in tokens, 0 = full causal attention.
  int64_t attention_window = 0;
  bool attention_chunked = false;
};

Ctx MakeCtx(const ModelSpec& model, const GraphOptions& options);

// Bytes per element a quantized GEMM operand occupies: fp8 1, mxfp8 1 + 1/32 (E8M0 scale per 32),
// nvfp4 0.5 + 1/16 (E4M3 scale per 16); tested in tests/model/op_graph_test.cc.
double QuantizedBytes(DType dtype);
// What an op keeps of a `saved` activation tensor (in the activation dtype) when its consumer
// runs in `consumer` dtype: with training.fp8_saved_activations and an fp8 consumer,
// `bytes_per_element` per element (DeepSeek-V3 §3.3.3: 1 for fp8, 1.5 for the E5M6 input of the
// attention output projection); else `saved` unchanged.
Bytes Fp8Saved(const Ctx& c, DType consumer, Bytes saved, double bytes_per_element);
// Whether a linear running in `consumer` keeps its input as Transformer Engine's quantized copy
// (GraphOptions::te_linears, FrameworkSpec::te_linears, with a quantized consumer and without
// DeepSeek-V3's own cache, training.fp8_saved_activations).
bool KeepsQuantizedInput(const Ctx& c, DType consumer);
// What a linear running in `consumer` keeps of its `saved` input (in the activation dtype):
// DeepSeek-V3's fp8 copy (Fp8Saved, 1 byte), Transformer Engine's quantized columnwise copy
// (KeepsQuantizedInput: QuantizedBytes per element), or the input itself.
Bytes LinearSaved(const Ctx& c, DType consumer, Bytes saved);

// Marks all of `op.saved` as dropped when selective recompute re-runs module `m`.
void DropWithModule(RecomputeModule m, Op& op);

// A linear layer on `m` tokens: [m x k] . [k x n], `batch` equal copies (e.g. local experts).
// `saved_input` is the input bytes this op keeps for backward (0 when another op already
// counted the same tensor). `bias` adds n parameters per copy.
Op MatmulOp(const Ctx& c, std::string name, TpSplit split, int64_t m, int64_t n, int64_t k,
            int64_t batch, bool bias, Bytes saved_input, std::string note);

// A norm over `tokens` rows of `width`; saves its input unless `saves_input` is false.
Op NormOp(const Ctx& c, std::string name, int64_t tokens, int64_t width, bool saves_input,
          bool with_bias);

// Residual add, with dropout when model.dropout > 0 (then a 1-byte mask per element is saved).
Op ResidualOp(const Ctx& c, std::string name, int64_t tokens, int64_t width);

// GELU/ReLU on [tokens x width], or the gated product of SwiGLU/GeGLU whose input is
// [tokens x 2*width] (gate and up); output [tokens x width].
Op ActivationOp(const Ctx& c, std::string name, int64_t tokens, int64_t width, TpSplit split);

// Rotary embedding applied to `heads` q and k heads of `rope_dim` dimensions each.
Op RopeOp(const Ctx& c, std::string name, int64_t heads, int64_t rope_dim);

// The attention core over local heads. `q_heads`/`kv_heads` are per device; `qk_dim`/`v_dim`
// per head.
Op AttentionOp(const Ctx& c, std::string name, int64_t q_heads, int64_t kv_heads, int64_t qk_dim,
               int64_t v_dim);

// Appends the attention block (q/k/v projections, core, output projection) of a decoder
// layer: multi-head / grouped-query / multi-query, or DeepSeek's multi-head latent attention.
void AppendAttention(const Ctx& c, std::vector<Op>& ops);

// Appends the MLP of a decoder layer: dense, or mixture-of-experts when `moe`.
// `input_saved` is false when the MLP input was already saved by the attention block
// (a parallel block with one shared norm).
void AppendMlp(const Ctx& c, bool moe, bool input_saved, std::vector<Op>& ops);

// Bytes of `elements` activations.
inline Bytes ActBytes(const Ctx& c, double elements) { return Bytes(elements * c.act_bytes); }

inline double D(int64_t v) { return static_cast<double>(v); }

}  // namespace shardsim::model_internal

#endif  // SHARDSIM_MODEL_OP_BUILDERS_H_
