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
  // The chunks that hold them (when the rank has them): the first and the last, but on
  // DualPipe's last rank, whose second chunk starts the reverse stream and first ends the forward.
  int64_t embedding_chunk = 0;
  int64_t head_chunk = 0;
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
//    rank 0 (the last chunk of the last rank);
//  - `pipeline_layout` (Megatron-Core's layout string, sim/config/pipeline_layout.h): stage s
//    of the string is chunk s / p of rank s % p, with its `t` count of layers.
// Two chunks per rank under the V-shaped schedules (zb_v, dualpipe_v; Qi et al. 2024 §6, DeepSeek
// DualPipeV): the model in 2p stages, rank r holding stage r and stage 2p - 1 - r, so the
// embedding and the head both sit on rank 0. DualPipe (DeepSeek-V3 §3.2.1) holds two copies: the
// model in p stages, rank r holding stage r of the forward stream and stage p - 1 - r of the
// reverse one, so ranks 0 and p - 1 each hold the embedding and the head.
// Fails when the layers do not divide.
Result<std::vector<PipelineRank>> SplitLayers(int64_t num_layers, const ParallelSpec& parallel);

}  // namespace shardsim

#endif  // SHARDSIM_PARALLEL_STAGES_H_
