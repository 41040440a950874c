// The H200 profiler rows of bench/h200/results/ (calibrate_h200.py): the model and training
// settings each row ran, as the memory tests rebuild them (budget_test, allocator_test).
#ifndef SHARDSIM_TESTS_MEMORY_H200_ROWS_H_
#define SHARDSIM_TESTS_MEMORY_H200_ROWS_H_

#include <nlohmann/json.hpp>
#include <utility>

#include "sim/config/spec.h"
#include "tests/model/test_models.h"

namespace shardsim::testing {

// A GPT (layernorm, untied, the row's dropout) or a Llama, trained one micro-batch per step in
// PyTorch eager (no fused kernels or loss), bf16 gradients, with the row's recompute and flash.
inline std::pair<ModelSpec, TrainingSpec> H200RowSpecs(const nlohmann::json& r) {
  const auto& cfg = r["cfg"];
  ModelSpec m;
  if (cfg["norm"] == "layernorm") {
    m = Gpt(cfg["layers"], cfg["h"], cfg["heads"], cfg["vocab"], cfg["max_seq"]);
    m.tied_embeddings = false;
    m.dropout = cfg["dropout"];
  } else {
    m = Llama(cfg["layers"], cfg["h"], cfg["heads"], cfg["kv_heads"], cfg["ffn"], cfg["vocab"]);
  }
  TrainingSpec t;
  t.seq_len = r["seq"];
  t.micro_batch = r["micro_batch"];
  t.global_batch = t.micro_batch;
  t.grad_dtype = DType::kBf16;
  t.recompute = r["recompute"] == "full" ? Recompute::kFull : Recompute::kNone;
  t.flash_attention = cfg["flash"];
  t.fused_kernels = false;
  t.fused_loss = false;
  return {m, t};
}

}  // namespace shardsim::testing

#endif  // SHARDSIM_TESTS_MEMORY_H200_ROWS_H_
