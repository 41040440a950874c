#include "sim/parallel/stages.h"

#include <string>

namespace shardsim {

int64_t PipelineRank::layers() const {
  int64_t n = 0;
  for (const LayerRange& c : chunks) n += c.size();
  return n;
}

Result<std::vector<PipelineRank>> SplitLayers(int64_t num_layers, const ParallelSpec& parallel) {
  const int64_t p = parallel.pp;
  const int64_t v = parallel.schedule == PipelineSchedule::kInterleaved1F1B
                        ? parallel.virtual_stages : 1;
  if (p <= 0 || v <= 0) return Status::Invalid("pipeline degrees must be positive");
  std::vector<PipelineRank> ranks(static_cast<size_t>(p));
  for (int64_t r = 0; r < p; ++r) {
    ranks[static_cast<size_t>(r)].rank = r;
    ranks[static_cast<size_t>(r)].has_embedding = r == 0;
    ranks[static_cast<size_t>(r)].has_head = r == p - 1;
  }
  const int64_t first = parallel.first_stage_layers;
  const int64_t last = parallel.last_stage_layers;
  if (first > 0 || last > 0) {
    if (v != 1) return Status::Invalid("uneven first/last stages need a non-interleaved schedule");
    if (p == 1) return Status::Invalid("uneven first/last stages need pp > 1");
    const int64_t f = first > 0 ? first : -1;
    const int64_t l = last > 0 ? last : -1;
    const int64_t fixed = (f > 0 ? f : 0) + (l > 0 ? l : 0);
    const int64_t free_ranks = p - (f > 0 ? 1 : 0) - (l > 0 ? 1 : 0);
    const int64_t rest = num_layers - fixed;
    if (rest < 0 || (free_ranks == 0 ? rest != 0 : rest % free_ranks != 0)) {
      return Status::Invalid("num_layers (" + std::to_string(num_layers) +
                             ") minus the first/last stage layers does not split evenly over "
                             "the other " + std::to_string(free_ranks) + " stages");
    }
    const int64_t each = free_ranks > 0 ? rest / free_ranks : 0;
    int64_t at = 0;
    for (int64_t r = 0; r < p; ++r) {
      int64_t n = each;
      if (r == 0 && f > 0) n = f;
      if (r == p - 1 && l > 0) n = l;
      ranks[static_cast<size_t>(r)].chunks.push_back(LayerRange{at, at + n});
      at += n;
    }
    return ranks;
  }
  if (num_layers % (p * v) != 0) {
    return Status::Invalid("num_layers (" + std::to_string(num_layers) +
                           ") is not divisible by pp * virtual_stages (" +
                           std::to_string(p * v) + ")");
  }
  const int64_t per_chunk = num_layers / (p * v);
  for (int64_t c = 0; c < v; ++c) {
    for (int64_t r = 0; r < p; ++r) {
      const int64_t begin = (c * p + r) * per_chunk;
      ranks[static_cast<size_t>(r)].chunks.push_back(LayerRange{begin, begin + per_chunk});
    }
  }
  return ranks;
}

}  // namespace shardsim
