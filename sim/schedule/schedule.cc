#include "sim/schedule/schedule.h"

#include <algorithm>
#include <string>

namespace shardsim {
namespace {

int64_t Chunks(const ScheduleShape& s) {
  return s.schedule == PipelineSchedule::kInterleaved1F1B ? std::max<int64_t>(1, s.virtual_stages)
                                                          : 1;
}

// Interleaved: the k-th chunk-forward of a rank works on chunk (k mod p·v) / p of micro-batch
// (k / p·v)·p + k mod p; backwards walk the chunks in reverse (Megatron-LM
// get_model_chunk_id / get_microbatch_id_in_model_chunk).
ScheduleItem InterleavedItem(int64_t k, int64_t pp, int64_t v, bool forward) {
  const int64_t group = k % (pp * v);
  int64_t chunk = group / pp;
  if (!forward) chunk = v - 1 - chunk;
  const int64_t mb = (k / (pp * v)) * pp + k % pp;
  return ScheduleItem{forward ? Phase::kForward : Phase::kBackward, static_cast<int32_t>(chunk),
                      static_cast<int32_t>(mb)};
}

}  // namespace

int64_t WarmupCount(const ScheduleShape& s, int64_t rank) {
  const int64_t v = Chunks(s);
  const int64_t total = s.microbatches * v;
  switch (s.schedule) {
    case PipelineSchedule::kGpipe:
      return s.microbatches;
    case PipelineSchedule::k1F1B:
      return std::min(s.pp - rank - 1, s.microbatches);
    case PipelineSchedule::kInterleaved1F1B:
      if (s.microbatches == s.pp) return total;  // Megatron: all warm-up when m == p
      return std::min((s.pp - rank - 1) * 2 + (v - 1) * s.pp, total);
  }
  return 0;
}

Result<std::vector<ScheduleItem>> PipelineOrder(const ScheduleShape& s, int64_t rank) {
  if (s.pp <= 0 || s.microbatches <= 0 || rank < 0 || rank >= s.pp) {
    return Status::Invalid("pipeline order: bad shape (pp " + std::to_string(s.pp) +
                           ", micro-batches " + std::to_string(s.microbatches) + ", rank " +
                           std::to_string(rank) + ")");
  }
  const int64_t v = Chunks(s);
  std::vector<ScheduleItem> order;
  order.reserve(static_cast<size_t>(2 * s.microbatches * v));
  const auto item = [](Phase p, int64_t chunk, int64_t mb) {
    return ScheduleItem{p, static_cast<int32_t>(chunk), static_cast<int32_t>(mb)};
  };
  if (s.schedule == PipelineSchedule::kGpipe) {
    for (int64_t i = 0; i < s.microbatches; ++i) order.push_back(item(Phase::kForward, 0, i));
    for (int64_t i = 0; i < s.microbatches; ++i) order.push_back(item(Phase::kBackward, 0, i));
    return order;
  }
  if (s.schedule == PipelineSchedule::k1F1B) {
    const int64_t warmup = WarmupCount(s, rank);
    const int64_t remaining = s.microbatches - warmup;
    for (int64_t i = 0; i < warmup; ++i) order.push_back(item(Phase::kForward, 0, i));
    for (int64_t i = 0; i < remaining; ++i) {
      order.push_back(item(Phase::kForward, 0, warmup + i));
      order.push_back(item(Phase::kBackward, 0, i));
    }
    for (int64_t i = remaining; i < s.microbatches; ++i) {
      order.push_back(item(Phase::kBackward, 0, i));
    }
    return order;
  }
  if (s.microbatches % s.pp != 0) {
    return Status::Invalid("interleaved 1F1B needs micro-batches per step (" +
                           std::to_string(s.microbatches) + ") divisible by pp (" +
                           std::to_string(s.pp) + ")");
  }
  const int64_t total = s.microbatches * v;
  const int64_t warmup = WarmupCount(s, rank);
  const int64_t remaining = total - warmup;
  for (int64_t k = 0; k < warmup; ++k) order.push_back(InterleavedItem(k, s.pp, v, true));
  for (int64_t k = 0; k < remaining; ++k) {
    order.push_back(InterleavedItem(warmup + k, s.pp, v, true));
    order.push_back(InterleavedItem(k, s.pp, v, false));
  }
  for (int64_t k = remaining; k < total; ++k) order.push_back(InterleavedItem(k, s.pp, v, false));
  return order;
}

}  // namespace shardsim
