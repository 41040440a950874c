// One decoder layer's forward as torchtitan runs it under activation checkpointing, tensor by
// tensor: what the caching allocator is asked for and when each tensor is freed, for the FSDP2
// step replay (ReplayFsdp2Step, sim/memory/budget.h).
//
// The layer's ops (sim/model/op_graph.h) in forward order, each as PyTorch executes torchtitan's
// Llama code (torchtitan/models/llama/model.py: Attention, FeedForward, TransformerBlock;
// torchtitan/models/norms.py RMSNorm):
//   - a matmul is one output per aten.mm call (Op::framework_calls: wq, wk, wv; w1, w3);
//   - RMSNorm in eager mode (`self._norm(x.float()).type_as(x) * self.weight`, and the same
//     chain in ATen's composite rms_norm behind nn.RMSNorm): x.float() (fp32), its pow(2) (fp32,
//     freed after mean), x * rsqrt (fp32), x.float() freed when _norm returns, type_as (16-bit),
//     the fp32 product freed, * weight (the output), the 16-bit normalized copy freed; the
//     per-row mean and rsqrt are under 1 MiB (the small pool) and not replayed. LayerNorm is one
//     kernel (native_layer_norm): its output only;
//   - RoPE in eager mode (apply_rotary_emb): xq.float() and xk.float() viewed as complex, their
//     complex products with freqs_cis (fp32 pairs: 2x the 16-bit bytes each), then the 16-bit
//     type_as outputs, the four fp32 tensors freed on return; q's and k's mm outputs freed after
//     it unless checkpointing keeps them;
//   - repeat_kv (n_rep = q heads / kv heads > 1): keys and values expanded and reshaped, a copy
//     each of the query's size, freed after SDPA (compiled too: SDPA takes materialized inputs);
//   - SwiGLU in eager mode (`self.w2(F.silu(self.w1(x)) * self.w3(x))`): w1's output, silu of it,
//     w3's output, the product; silu's output and w3's freed after the product;
//   - residual adds: `h = x + attention(...)` lives until `out = h + feed_forward(...)`.
// Compiled (training.fused_kernels: torch.compile per block, Inductor fusing the pointwise ops
// and freeing each buffer after its last use) has no norm, RoPE or SwiGLU intermediates.
//
// What the checkpoint keeps until the layer's backward: its input; under op-level SAC
// (recompute selective_ops) the outputs of the 1st, 3rd, ... aten.mm and SDPA's output, and,
// compiled, only those the backward reads (sim/model/recompute.h OpSacKeptBytes, whose bytes the
// kept tensors sum to). Under full recompute, the input only. Closed forms in
// tests/memory/layer_forward_test.cc.
#ifndef SHARDSIM_MEMORY_LAYER_FORWARD_H_
#define SHARDSIM_MEMORY_LAYER_FORWARD_H_

#include <vector>

#include "sim/config/spec.h"
#include "sim/model/op_graph.h"

namespace shardsim {

struct TensorEvent {
  int tensor = 0;      // 0 is the layer's input, which exists before the layer runs
  double bytes = 0.0;  // > 0: the tensor is allocated with this many bytes; 0: it is freed
};

struct LayerForward {
  std::vector<TensorEvent> events;  // in order
  std::vector<int> kept;            // alive after the events (0 among them): held to backward
  int output = 0;                   // the last op's output: the next layer's input
};

// Whether LayerForwardEvents covers `training`'s recompute mode (selective_ops or full: the
// block runs under torch.utils.checkpoint).
bool CheckpointedForward(const TrainingSpec& training);

// The events of `layer`'s forward under `training` (CheckpointedForward) with `norm` the model's
// norm. `output` is the last op's output, not in `kept` (the next layer's checkpoint keeps it).
LayerForward LayerForwardEvents(const LayerOps& layer, const TrainingSpec& training, NormKind norm);

}  // namespace shardsim

#endif  // SHARDSIM_MEMORY_LAYER_FORWARD_H_
