// FLOPs of a training step, summed operator by operator, next to the closed forms they must
// agree with (docs/reference.md §5 "FLOPs").
//
// Conventions: *model* FLOPs are what MFU counts — matmul-class work only, the attention core as
// the full s x s square, backward twice forward, no recompute (Narayanan 2021 §5.1; Korthikanti
// 2022 §6; PaLM Appendix B). *Hardware* FLOPs add the recompute forward (HFU). *Executed* FLOPs
// are what the kernels run: causal flash attention skips the masked half and its backward
// recomputes the scores (FlashAttention-2), plus the elementwise work.
#ifndef SHARDSIM_MODEL_FLOPS_H_
#define SHARDSIM_MODEL_FLOPS_H_

#include <cstdint>

#include "sim/base/status.h"
#include "sim/config/spec.h"

namespace shardsim {

struct FlopsSummary {
  int64_t tokens_per_step = 0;  // global_batch * seq_len
  // Forward model FLOPs per token, by part (averaged over the sequence).
  double fwd_layer_matmuls = 0;  // projections and MLPs of the decoder layers (+ MoE routers)
  double fwd_attention = 0;      // attention scores and context (the s x s term)
  double fwd_head = 0;           // output head (the vocabulary projection)
  double fwd_mtp = 0;            // multi-token-prediction modules
  double model_fwd_per_token = 0;
  double model_bwd_per_token = 0;  // 2x forward
  double recompute_per_token = 0;  // forward work recompute repeats (full: all layers; selective:
                                   // the attention core)
  double model_per_step = 0;       // (fwd + bwd) * tokens
  double hardware_per_step = 0;    // model + recompute
  double executed_per_step = 0;  // what the kernels run (causal skip, flash backward, elementwise)
  double params_6nd = 0;         // N used for 6·N·D: active parameters
  double six_nd = 0;             // 6 * N * tokens_per_step
};

Result<FlopsSummary> SummarizeFlops(const ModelSpec& model, const TrainingSpec& training);

// Megatron-LM closed forms, FLOPs per iteration (B sequences of s tokens, L layers, hidden h,
// vocabulary V): model FLOPs 72·B·s·L·h²·(1 + s/(6h) + V/(12·h·L)) (Korthikanti 2022, §6) and
// with full recompute 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)) (Narayanan 2021, eq. 3).
double MegatronModelFlops(double batch, double seq, double layers, double hidden, double vocab);
double MegatronFullRecomputeFlops(double batch, double seq, double layers, double hidden,
                                  double vocab);
// PaLM (Chowdhery 2022, Appendix B): model FLOPs per token 6·N + 12·L·H·Q·T.
double PalmFlopsPerToken(double params, double layers, double heads, double head_dim, double seq);

}  // namespace shardsim

#endif  // SHARDSIM_MODEL_FLOPS_H_
