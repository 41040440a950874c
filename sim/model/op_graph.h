// The transformer as a graph of ops, per layer, as it runs on one device of a layout.
//
// BuildOpGraph turns a ModelSpec and the per-device slicing (micro-batch, sequence, tensor /
// context / expert parallel degrees, sequence parallelism) into Ops with local shapes, FLOPs
// and bytes per pass, parameters, and saved activation bytes (sim/model/op.h). The ops follow
// Megatron-LM's decoder layer (Shoeybi et al. 2019, arXiv 1909.08053; Korthikanti et al. 2022,
// arXiv 2205.05198 §4 for what each op saves). With tp = cp = ep = 1 the graph is the whole
// model, which is how parameter counts and model FLOPs are derived (sim/model/params.h).
#ifndef SHARDSIM_MODEL_OP_GRAPH_H_
#define SHARDSIM_MODEL_OP_GRAPH_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/spec.h"
#include "sim/model/op.h"

namespace shardsim {

// How one device sees a micro-batch.
struct GraphOptions {
  int64_t seq_len = 0;      // full sequence length s
  int64_t micro_batch = 1;  // sequences per micro-batch b
  DType precision = DType::kBf16;
  bool flash_attention = true;
  bool fused_kernels = true;
  AttentionKernel attention_kernel = AttentionKernel::kFused;
  bool fused_loss = true;
  // Transformer Engine's parallel cross-entropy (training.cross_entropy_fusion_impl: te, with
  // fused_loss): the 16-bit logits keep their gradient; no fp32 softmax.
  bool te_cross_entropy = false;
  int64_t tp = 1;  // tensor-parallel degree t
  int64_t cp = 1;  // context-parallel degree: each device holds s / cp tokens
  int64_t ep = 1;  // expert-parallel degree
  bool sequence_parallel = false;
  bool fp8_saved_activations = false;  // training.fp8_saved_activations
  bool te_linears = true;              // FrameworkSpec::te_linears (TrainingSpec::te_linears)
  bool fp8_dispatch = false;           // training.fp8_dispatch
  bool moe_probs_in_expert = false;    // training.moe_probs_in_expert
};

GraphOptions GraphOptionsFor(const TrainingSpec& training, const ParallelSpec& parallel);

// The sharding rules the op graph applies, one definition each (the plan, sim/parallel/plan.h,
// publishes them to the other modules):
// - sequence parallelism is on only with a TP group to split over (Korthikanti 2022 §4.2.2);
bool SequenceParallelOn(const GraphOptions& options);
// - kv heads per TP rank: num_kv_heads / tp, or 1 when tp > num_kv_heads (each rank keeps one
//   replicated kv head, tp / num_kv_heads ranks per head, as Megatron-LM's GQA does); MLA has one
//   latent kv per query head, so num_heads / tp;
int64_t KvHeadsPerRank(const ModelSpec& model, int64_t tp);
// - vocabulary rows of the vocab-parallel embedding and output head per TP rank: ceil(V / tp)
//   (Megatron-LM pads the table up to a multiple of tp).
int64_t VocabRowsPerRank(const ModelSpec& model, int64_t tp);

// Bytes per activation element under a training precision: 4 for fp32/tf32, else 2 (fp8 training
// keeps bf16 activations; its fp8 copies are the matmuls' own).
double ActivationBytes(DType precision);

// The ops of one kind of decoder layer (dense, MoE, MTP), in forward order.
struct LayerOps {
  std::string kind;  // "dense", "moe"
  std::vector<Op> ops;
  // The layer's input activation (per micro-batch, this device): all that full recompute keeps
  // (Korthikanti 2022 §4.3: 2sbh per layer, divided by t with sequence parallelism).
  Bytes input_bytes;
};

struct OpGraph {
  std::vector<Op> embedding;          // first pipeline stage: token (+ position) embedding
  std::vector<LayerOps> layer_kinds;  // distinct layer kinds
  std::vector<int> layer_kind_of;     // per decoder layer (size num_layers): index into layer_kinds
  std::vector<Op> head;               // last stage: final norm, output head, loss
  std::vector<Op> mtp;                // last stage: DeepSeek multi-token-prediction modules
  GraphOptions options;
  int64_t tokens_per_microbatch = 0;  // b * s / cp on this device

  const LayerOps& layer(int64_t i) const {
    return layer_kinds[static_cast<size_t>(layer_kind_of[static_cast<size_t>(i)])];
  }
  int64_t num_layers() const { return static_cast<int64_t>(layer_kind_of.size()); }
};

// Builds the per-device op graph. Fails (kInvalidInput) when the slicing does not divide the
// model (tp not dividing heads, cp not dividing the sequence, ...); config validation normally
// catches those first with file locations.
Result<OpGraph> BuildOpGraph(const ModelSpec& model, const GraphOptions& options);

// Parameters of the last stage's own copy of a tied token table (V/t rows, padded up, by h): with
// tied embeddings on a split pipeline the output head keeps one, trained and reduced over DP like
// any parameter and summed with the first stage's (Megatron-LM). 0 otherwise.
int64_t TiedHeadCopyParams(const ModelSpec& model, const ParallelSpec& parallel);

// How much more than the mean the busiest expert-parallel rank receives: the capacity factor
// when tokens are padded to capacity, else moe.imbalance (1 = balanced). It stretches both the
// busiest rank's expert GEMMs (sim/model/layer_ops.cc) and its all-to-all bytes
// (sim/program/step_costs.cc), which carry the same routed tokens.
double MoeLoadFactor(const MoeSpec& moe);

// Totals over a list of ops.
struct OpTotals {
  Flops fwd_flops, bwd_flops, model_fwd_flops;
  Bytes saved;
  std::array<Bytes, kNumRecomputeModules> dropped_by{};
  int64_t params = 0;
};
OpTotals Sum(const std::vector<Op>& ops);

}  // namespace shardsim

#endif  // SHARDSIM_MODEL_OP_GRAPH_H_
