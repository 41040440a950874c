#include "sim/topology/placement.h"

#include <algorithm>
#include <string>

#include "sim/base/strings.h"

namespace shardsim {
namespace {

constexpr std::array<ParallelDim, kNumParallelDims> kAllDims = {ParallelDim::kTp, ParallelDim::kCp,
                                                                ParallelDim::kDp, ParallelDim::kPp};

}  // namespace

const char* Name(ParallelDim d) {
  switch (d) {
    case ParallelDim::kTp:
      return "tp";
    case ParallelDim::kCp:
      return "cp";
    case ParallelDim::kDp:
      return "dp";
    case ParallelDim::kPp:
      return "pp";
  }
  return "?";
}

int64_t& RankCoords::at(ParallelDim d) {
  switch (d) {
    case ParallelDim::kTp:
      return tp;
    case ParallelDim::kCp:
      return cp;
    case ParallelDim::kDp:
      return dp;
    case ParallelDim::kPp:
      return pp;
  }
  return tp;
}

int64_t RankCoords::at(ParallelDim d) const { return const_cast<RankCoords*>(this)->at(d); }

Result<Placement> Placement::Make(const ParallelSpec& spec, int64_t gpus) {
  Placement p;
  p.size_[static_cast<size_t>(ParallelDim::kTp)] = spec.tp;
  p.size_[static_cast<size_t>(ParallelDim::kCp)] = spec.cp;
  p.size_[static_cast<size_t>(ParallelDim::kDp)] = spec.dp;
  p.size_[static_cast<size_t>(ParallelDim::kPp)] = spec.pp;
  for (ParallelDim d : kAllDims) {
    if (p.Size(d) < 1) {
      return Status::Invalid(std::string("parallel.") + Name(d) + " must be at least 1, got " +
                             std::to_string(p.Size(d)));
    }
  }
  std::vector<std::string> names;
  for (ParallelDim d : kAllDims) names.push_back(Name(d));
  for (const std::string& entry : spec.order) {
    auto it = std::find(names.begin(), names.end(), entry);
    if (it == names.end()) {
      return Status::Invalid("parallel.order: '" + entry +
                             "' is not a parallel dimension (tp, cp, dp, pp)" +
                             DidYouMean(entry, names));
    }
    const auto d = kAllDims[static_cast<size_t>(it - names.begin())];
    if (std::find(p.order_.begin(), p.order_.end(), d) != p.order_.end()) {
      return Status::Invalid("parallel.order: '" + entry + "' appears twice");
    }
    p.order_.push_back(d);
  }
  if (p.order_.size() != kAllDims.size()) {
    return Status::Invalid("parallel.order must name each of tp, cp, dp, pp once, got [" +
                           Join(spec.order) + "]");
  }
  int64_t stride = 1;
  for (ParallelDim d : p.order_) {
    p.stride_[static_cast<size_t>(d)] = stride;
    stride *= p.Size(d);
  }
  p.world_ = stride;
  if (p.world_ != gpus) {
    return Status::Invalid("dp*tp*pp*cp = " + std::to_string(spec.dp) + "*" +
                           std::to_string(spec.tp) + "*" + std::to_string(spec.pp) + "*" +
                           std::to_string(spec.cp) + " = " + std::to_string(p.world_) +
                           " does not equal gpus (" + std::to_string(gpus) + ")");
  }
  return p;
}

GpuId Placement::GpuOf(const RankCoords& c) const {
  int64_t gpu = 0;
  for (ParallelDim d : order_) gpu += c.at(d) * Stride(d);
  return GpuId(static_cast<int32_t>(gpu));
}

RankCoords Placement::CoordsOf(GpuId gpu) const {
  RankCoords c;
  for (ParallelDim d : order_) c.at(d) = (gpu.v / Stride(d)) % Size(d);
  return c;
}

Group Placement::GroupOf(ParallelDim d, const RankCoords& member) const {
  return GroupOf(std::vector<ParallelDim>{d}, member);
}

Group Placement::GroupOf(const std::vector<ParallelDim>& dims, const RankCoords& member) const {
  RankCoords base = member;
  std::vector<GroupDim> group_dims;
  for (ParallelDim d : order_) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) continue;
    base.at(d) = 0;
    group_dims.push_back(GroupDim{Size(d), Stride(d)});
  }
  // Distinct placement dimensions never overlap, so this cannot fail.
  return *Group::Strided(GpuOf(base).v, std::move(group_dims));
}

std::vector<Group> Placement::AllGroups(ParallelDim d) const {
  std::vector<Group> out;
  out.reserve(static_cast<size_t>(NumGroups(d)));
  for (int64_t gpu = 0; gpu < world_; ++gpu) {
    const RankCoords c = CoordsOf(GpuId(static_cast<int32_t>(gpu)));
    if (c.at(d) == 0) out.push_back(GroupOf(d, c));
  }
  return out;
}

}  // namespace shardsim
