// Which decoder layers each pipeline rank holds: contiguous stages (GPipe, 1F1B), or v model
// chunks per rank for the interleaved schedule (Narayanan 2021 §2.2.2: chunk c of rank r holds
// layers [(c·p + r)·L/(p·v), (c·p + r + 1)·L/(p·v))). The embedding sits on the first rank and
// the output head and loss on the last.
#ifndef SHARDSIM_PARALLEL_STAGES_H_
#define SHARDSIM_PARALLEL_STAGES_H_

#include <cstdint>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/spec.h"

namespace shardsim {

struct LayerRange {
  int64_t begin = 0;  // first layer index
  int64_t end = 0;    // one past the last
  int64_t size() const { return end - begin; }
};

struct PipelineRank {
  int64_t rank = 0;
  std::vector<LayerRange> chunks;  // one per virtual stage, in execution order
  bool has_embedding = false;
  bool has_head = false;
  int64_t layers() const;
};

// Splits `num_layers` over `pp` ranks × `virtual_stages` chunks, as Megatron-Core's
// get_num_layers_to_build / get_transformer_layer_offset do:
//  - even: every chunk L/(p·v) layers;
//  - `first_stage_layers` / `last_stage_layers`: the first / last rank takes that many, the
//    others share the rest evenly, each rank's layers split evenly over its v chunks; model
//    chunk c holds layers [c·L/v, (c+1)·L/v), rank 0's part first;
//  - `account_for_embedding_in_pipeline_split` / `..._loss_...`: the split counts the
//    embedding (loss) as a layer: every chunk (L + e + l)/(p·v), less one on the first chunk of
//    rank 0 (the last chunk of the last rank).
// Fails when the layers do not divide.
Result<std::vector<PipelineRank>> SplitLayers(int64_t num_layers, const ParallelSpec& parallel);

}  // namespace shardsim

#endif  // SHARDSIM_PARALLEL_STAGES_H_
