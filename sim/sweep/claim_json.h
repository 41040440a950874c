// `shardsim check-claim --json`: the check of a throughput claim (sim/sweep/claim.h) for
// programs; the Python module's check_claim returns the same keys.
#ifndef SHARDSIM_SWEEP_CLAIM_JSON_H_
#define SHARDSIM_SWEEP_CLAIM_JSON_H_

#include <string>

#include "sim/sweep/claim.h"

namespace shardsim {

const char* Name(ClaimKind k);  // "tokens_per_s", "tokens_per_s_per_gpu", "flops_per_gpu", ...

// One JSON object (with its final line break):
//   claim {text, kind, value (the unit of kind: tokens/s, FLOP/s, fraction or seconds),
//          train_tokens (time-to-train claims; else null)},
//   model, hardware, topology, gpus, seq_len, global_batch, precision,
//   peak_flops, fp8_peak_flops (FLOP/s per GPU; 0 without FP8),
//   conventions [{name, source, flops_per_token, tokens_per_s_per_gpu, tflops_per_gpu, mfu}],
//   claimed_tokens_per_s_per_gpu [low, high] (over the conventions),
//   ceiling_tokens_per_s_per_gpu, min_flops_per_token, searched, feasible,
//   best (the best layout's sweep row, keys as `sweep --jsonl`; null when none is feasible),
//   best_columns, given (the scenario's own layout's row; null without one),
//   verdict, uncertainty (fraction), reasons, assumptions,
//   best_flops_convention_note, given_flops_convention_note (simulate's flops_convention_note
//   for those rows; null when their MFU counts no more than was executed, or without the row),
//   cannot_finish (searched points that fit but whose run of training.tokens cannot finish).
std::string ClaimJson(const ClaimCheck& check);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_CLAIM_JSON_H_
