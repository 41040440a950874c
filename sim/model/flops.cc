#include "sim/model/flops.h"

#include "sim/model/op_graph.h"
#include "sim/model/params.h"
#include "sim/model/recompute.h"

namespace shardsim {

Result<FlopsSummary> SummarizeFlops(const ModelSpec& model, const TrainingSpec& training) {
  // One whole sequence on one device: the unsharded graph.
  GraphOptions o;
  o.seq_len = training.seq_len;
  o.micro_batch = 1;
  o.precision = training.precision;
  o.flash_attention = training.flash_attention;
  o.fused_kernels = training.fused_kernels;
  Result<OpGraph> g = BuildOpGraph(model, o);
  if (!g.ok()) return g.status();
  Result<ParamCount> params = CountParams(model);
  if (!params.ok()) return params.status();

  const double s = static_cast<double>(training.seq_len);
  FlopsSummary f;
  f.tokens_per_step = training.global_batch * training.seq_len;
  double executed = 0.0;   // per sequence
  double recompute = 0.0;  // per sequence, model-FLOPs convention
  double recompute_executed = 0.0;
  const auto executed_of = [](const Op& op) {
    return (op.fwd.flops + op.bwd_input.flops + op.bwd_weight.flops).value();
  };
  for (const Op& op : g->embedding) executed += executed_of(op);
  for (int64_t i = 0; i < g->num_layers(); ++i) {
    int64_t mm_calls = 0;
    for (const Op& op : g->layer(i).ops) {
      const double m = op.model_fwd_flops.value();
      (op.kind == OpKind::kAttention ? f.fwd_attention : f.fwd_layer_matmuls) += m;
      executed += executed_of(op);
      const double redo = RecomputedShare(training, op, &mm_calls);
      if (redo > 0.0) {
        recompute += redo * m;
        recompute_executed += redo * op.fwd.flops.value();
      }
    }
  }
  for (const Op& op : g->head) {
    f.fwd_head += op.model_fwd_flops.value();
    executed += executed_of(op);
  }
  for (const Op& op : g->mtp) {
    f.fwd_mtp += op.model_fwd_flops.value();
    executed += executed_of(op);
  }
  // Per-sequence sums to per-token averages.
  f.fwd_layer_matmuls /= s;
  f.fwd_attention /= s;
  f.fwd_head /= s;
  f.fwd_mtp /= s;
  f.model_fwd_per_token = f.fwd_layer_matmuls + f.fwd_attention + f.fwd_head + f.fwd_mtp;
  f.model_bwd_per_token = 2.0 * f.model_fwd_per_token;
  f.recompute_per_token = recompute / s;
  const double tokens = static_cast<double>(f.tokens_per_step);
  f.model_per_step = (f.model_fwd_per_token + f.model_bwd_per_token) * tokens;
  f.hardware_per_step = f.model_per_step + f.recompute_per_token * tokens;
  f.executed_per_step = (executed + recompute_executed) / s * tokens;
  f.params_6nd = static_cast<double>(params->active);
  f.six_nd = 6.0 * f.params_6nd * tokens;
  return f;
}

double MegatronModelFlops(double batch, double seq, double layers, double hidden, double vocab) {
  return 72.0 * batch * seq * layers * hidden * hidden *
         (1.0 + seq / (6.0 * hidden) + vocab / (12.0 * hidden * layers));
}

double MegatronFullRecomputeFlops(double batch, double seq, double layers, double hidden,
                                  double vocab) {
  return 96.0 * batch * seq * layers * hidden * hidden *
         (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden));
}

double PalmFlopsPerToken(double params, double layers, double heads, double head_dim, double seq) {
  return 6.0 * params + 12.0 * layers * heads * head_dim * seq;
}

}  // namespace shardsim
