#include "sim/parallel/stages.h"

#include <algorithm>
#include <string>

#include "sim/config/pipeline_layout.h"

namespace shardsim {

int64_t PipelineRank::layers() const {
  int64_t n = 0;
  for (const LayerRange& c : chunks) n += c.size();
  return n;
}

Result<std::vector<PipelineRank>> SplitLayers(int64_t num_layers, const ParallelSpec& parallel) {
  const PipelineSchedule sched = parallel.schedule;
  if (sched == PipelineSchedule::kDualPipe || sched == PipelineSchedule::kZbV ||
      sched == PipelineSchedule::kDualPipeV) {
    // Split as 1F1B (p stages) or as two-chunk interleaving (2p stages, chunk c of rank r =
    // stage c·p + r), then pair the stages.
    ParallelSpec plain = parallel;
    const bool dual = sched == PipelineSchedule::kDualPipe;
    plain.schedule = dual ? PipelineSchedule::k1F1B : PipelineSchedule::kInterleaved1F1B;
    plain.virtual_stages = dual ? 1 : 2;
    Result<std::vector<PipelineRank>> base = SplitLayers(num_layers, plain);
    if (!base.ok()) return base.status();
    const int64_t p = parallel.pp;
    std::vector<PipelineRank> ranks(static_cast<size_t>(p));
    for (int64_t r = 0; r < p; ++r) {
      const PipelineRank& own = (*base)[static_cast<size_t>(r)];
      const PipelineRank& mirror = (*base)[static_cast<size_t>(p - 1 - r)];
      PipelineRank& out = ranks[static_cast<size_t>(r)];
      out.rank = r;
      out.chunks = {own.chunks.front(), mirror.chunks.back()};
      if (dual) {
        out.has_embedding = out.has_head = r == 0 || r == p - 1;
        out.embedding_chunk = r == 0 ? 0 : 1;  // the forward stream's first stage, or the reverse's
        out.head_chunk = r == p - 1 ? 0 : 1;
      } else {
        out.has_embedding = out.has_head = r == 0;
        out.embedding_chunk = 0;
        out.head_chunk = 1;
      }
    }
    return ranks;
  }
  const int64_t p = parallel.pp;
  const int64_t v = parallel.ChunksPerRank();
  if (p <= 0 || v <= 0) return Status::Invalid("pipeline degrees must be positive");
  std::vector<PipelineRank> ranks(static_cast<size_t>(p));
  for (int64_t r = 0; r < p; ++r) {
    ranks[static_cast<size_t>(r)].rank = r;
    ranks[static_cast<size_t>(r)].has_embedding = r == 0;
    ranks[static_cast<size_t>(r)].has_head = r == p - 1;
    ranks[static_cast<size_t>(r)].head_chunk = v - 1;
  }
  const int64_t first = parallel.first_stage_layers;
  const int64_t last = parallel.last_stage_layers;
  const int64_t e = parallel.account_for_embedding_in_pipeline_split ? 1 : 0;
  const int64_t l = parallel.account_for_loss_in_pipeline_split ? 1 : 0;
  // Layers of chunk c of rank r; chunks are laid out in model order (c·p + r).
  std::vector<std::vector<int64_t>> count(static_cast<size_t>(v),
                                          std::vector<int64_t>(static_cast<size_t>(p), 0));
  if (!parallel.pipeline_layout.empty()) {
    // Megatron-Core's layout string: stage s is chunk s / p of rank s % p (ValidateScenario has
    // checked it against the pipeline and the model).
    Result<PipelineLayout> layout = ParsePipelineLayout(parallel.pipeline_layout);
    if (!layout.ok()) return layout.status();
    if (layout->stages() != p * v || layout->total_decoders() != num_layers) {
      return Status::Invalid(
          "the pipeline layout does not match pp * virtual_stages and the layers");
    }
    for (int64_t c = 0; c < v; ++c) {
      for (int64_t r = 0; r < p; ++r) {
        count[static_cast<size_t>(c)][static_cast<size_t>(r)] =
            layout->decoders[static_cast<size_t>(c * p + r)];
      }
    }
  } else if (first > 0 || last > 0) {
    if (e + l > 0) {
      return Status::Invalid(
          "uneven first/last stages and accounting for the embedding or loss in the split "
          "exclude each other");
    }
    if (p == 1) return Status::Invalid("uneven first/last stages need pp > 1");
    const int64_t fixed = first + last;
    const int64_t free_ranks = p - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
    const int64_t rest = num_layers - fixed;
    if (rest < 0 || (free_ranks == 0 ? rest != 0 : rest % free_ranks != 0)) {
      return Status::Invalid("num_layers (" + std::to_string(num_layers) +
                             ") minus the first/last stage layers does not split evenly over "
                             "the other " +
                             std::to_string(free_ranks) + " stages");
    }
    const int64_t each = free_ranks > 0 ? rest / free_ranks : 0;
    for (int64_t r = 0; r < p; ++r) {
      int64_t n = each;
      if (r == 0 && first > 0) n = first;
      if (r == p - 1 && last > 0) n = last;
      if (n % v != 0) {
        return Status::Invalid("stage " + std::to_string(r) + "'s " + std::to_string(n) +
                               " layers do not split over " + std::to_string(v) +
                               " virtual stages");
      }
      for (int64_t c = 0; c < v; ++c) count[static_cast<size_t>(c)][static_cast<size_t>(r)] = n / v;
    }
  } else {
    const int64_t split = num_layers + e + l;
    if (split % (p * v) != 0) {
      return Status::Invalid(
          "num_layers (" + std::to_string(num_layers) +
          (e + l > 0 ? " + " + std::to_string(e + l) + " for the embedding/loss" : std::string()) +
          ") is not divisible by pp * virtual_stages (" + std::to_string(p * v) + ")");
    }
    const int64_t per_chunk = split / (p * v);  // >= 1, so no chunk goes below 0 layers
    for (auto& chunk : count) std::fill(chunk.begin(), chunk.end(), per_chunk);
    count.front().front() -= e;
    count.back().back() -= l;
  }
  int64_t at = 0;
  for (int64_t c = 0; c < v; ++c) {
    for (int64_t r = 0; r < p; ++r) {
      const int64_t n = count[static_cast<size_t>(c)][static_cast<size_t>(r)];
      ranks[static_cast<size_t>(r)].chunks.push_back(LayerRange{at, at + n});
      at += n;
    }
  }
  return ranks;
}

}  // namespace shardsim
