// Megatron-Core's pipeline layout string (`--pipeline-model-parallel-layout`,
// megatron/core/transformer/pipeline_parallel_layer_layout.py): the model's pieces stage by
// stage, stages separated by `|` in stage order (stage s = virtual chunk s / pp of pipeline rank
// s % pp), each piece one letter: `E` the embedding, `t` a decoder layer, `m` a
// multi-token-prediction module, `L` the loss (with the output head). `x*n` repeats one letter,
// `(...)*n` a group (not nested); commas are cosmetic. "Et*3|(t*4|)*14ttL" is DeepSeek-V3's 61
// layers in 16 stages: the embedding and 3 layers, 14 stages of 4, then 2 layers and the loss.
#ifndef SHARDSIM_CONFIG_PIPELINE_LAYOUT_H_
#define SHARDSIM_CONFIG_PIPELINE_LAYOUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/status.h"

namespace shardsim {

struct PipelineLayout {
  std::vector<int64_t> decoders;  // decoder layers per stage, in stage order
  std::vector<int64_t> mtp;       // MTP modules per stage
  int64_t embeddings = 0, losses = 0;
  bool embedding_first = false;     // `E` is the layout's first piece
  bool loss_last = false;           // `L` is its last piece
  bool mtp_before_decoder = false;  // some `m` comes before a `t` (Megatron-Core refuses it)
  int64_t stages() const { return static_cast<int64_t>(decoders.size()); }
  int64_t total_decoders() const;
  int64_t total_mtp() const;
};

// The expanded string is at most this long (a located error past it, not a blow-up).
inline constexpr int64_t kMaxPipelineLayoutPieces = int64_t{1} << 20;

// Expands and reads `text`; the error names the character and what would be valid.
Result<PipelineLayout> ParsePipelineLayout(std::string_view text);

}  // namespace shardsim

#endif  // SHARDSIM_CONFIG_PIPELINE_LAYOUT_H_
