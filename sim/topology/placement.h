// Placement of parallel ranks on GPUs: rank (dp, tp, pp, cp) coordinates <-> GPU, and the groups
// of each parallel dimension.
//
// The rank index is mixed-radix over ParallelSpec::order, innermost dimension first (default
// tp, cp, dp, pp as in Megatron-LM: TP innermost so a TP group sits inside a node, PP outermost),
// and rank r runs on GPU r (GPUs are numbered node-major, see cluster.h). A group of dimension d
// holds the ranks that differ only in d: a strided Group {size(d) x stride(d)}.
#ifndef SHARDSIM_TOPOLOGY_PLACEMENT_H_
#define SHARDSIM_TOPOLOGY_PLACEMENT_H_

#include <array>
#include <cstdint>
#include <vector>

#include "sim/base/ids.h"
#include "sim/base/status.h"
#include "sim/config/spec.h"
#include "sim/topology/group.h"

namespace shardsim {

enum class ParallelDim { kTp, kCp, kDp, kPp };
inline constexpr int kNumParallelDims = 4;
const char* Name(ParallelDim d);  // "tp", "cp", "dp", "pp"

struct RankCoords {
  int64_t dp = 0;
  int64_t tp = 0;
  int64_t pp = 0;
  int64_t cp = 0;

  int64_t& at(ParallelDim d);
  int64_t at(ParallelDim d) const;
  bool operator==(const RankCoords&) const = default;
};

class Placement {
 public:
  // Errors: a size < 1, an order that is not a permutation of tp, cp, dp, pp (with a "did you
  // mean"), or dp*tp*pp*cp != gpus.
  static Result<Placement> Make(const ParallelSpec& spec, int64_t gpus);

  int64_t world() const { return world_; }
  int64_t Size(ParallelDim d) const { return size_[Index(d)]; }
  // Distance in GPU ids between ranks whose d-coordinates differ by one.
  int64_t Stride(ParallelDim d) const { return stride_[Index(d)]; }
  // Innermost first.
  const std::vector<ParallelDim>& order() const { return order_; }

  // Precondition: every coordinate within its size.
  GpuId GpuOf(const RankCoords& c) const;
  RankCoords CoordsOf(GpuId gpu) const;

  // The group of `member` along `d` (its members differ from `member` only in d).
  Group GroupOf(ParallelDim d, const RankCoords& member) const;
  // The group along several dimensions at once (e.g. {dp, cp} for gradient reduction with context
  // parallelism); ranks ordered with the dimensions' placement order, innermost fastest.
  Group GroupOf(const std::vector<ParallelDim>& dims, const RankCoords& member) const;
  // Groups of `d`: world / Size(d). All of them run at once when every rank joins the collective,
  // which is the value of CollectiveOptions::concurrent_groups for that case.
  int64_t NumGroups(ParallelDim d) const { return world_ / Size(d); }
  // Every group of `d`, ordered by smallest GPU. O(world).
  std::vector<Group> AllGroups(ParallelDim d) const;

 private:
  static size_t Index(ParallelDim d) { return static_cast<size_t>(d); }
  int64_t world_ = 0;
  std::array<int64_t, kNumParallelDims> size_{};
  std::array<int64_t, kNumParallelDims> stride_{};
  std::vector<ParallelDim> order_;
};

}  // namespace shardsim

#endif  // SHARDSIM_TOPOLOGY_PLACEMENT_H_
