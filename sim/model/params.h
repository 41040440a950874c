// Parameter counts summed from the matrix shapes of the op graph (docs/reference.md §5
// "Parameters").
#ifndef SHARDSIM_MODEL_PARAMS_H_
#define SHARDSIM_MODEL_PARAMS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/spec.h"

namespace shardsim {

struct ParamRow {
  std::string layer_kind;  // "embedding", "dense", "moe", "head", "mtp"
  int64_t layers = 1;      // how many layers of this kind (1 for embedding/head)
  std::string op;          // "attn.qkv", ...
  int64_t params = 0;      // per layer
};

struct ParamCount {
  int64_t total = 0;   // every weight once (tied embeddings once); excludes MTP modules
  int64_t active = 0;  // used per token: total for dense models; MoE counts top_k experts
  // Active parameters that multiply: `active` without the lookup tables (token embedding and
  // learned positions), which a token reads one row of. DeepSeek's "activated" parameters
  // (DeepSeek-V3 README_WEIGHTS.md: 36.6B "including 0.9B for the output Head") follow it.
  int64_t active_compute = 0;
  int64_t embedding = 0;       // token embedding + learned position table + untied output head
  int64_t non_embedding = 0;   // total - embedding
  int64_t mtp = 0;             // DeepSeek multi-token-prediction modules (not in total)
  std::vector<ParamRow> rows;  // per layer kind, per op with parameters
};

// Counts from the unsharded op graph (tp = cp = ep = 1), so the count and the ops cannot
// disagree. Tested against published counts in tests/model/params_test.cc.
Result<ParamCount> CountParams(const ModelSpec& model);

}  // namespace shardsim

#endif  // SHARDSIM_MODEL_PARAMS_H_
