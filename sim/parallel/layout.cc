#include "sim/parallel/layout.h"

#include <optional>
#include <utility>
#include <vector>

namespace shardsim {

const char* Name(CommGroup g) {
  switch (g) {
    case CommGroup::kTp:
      return "tp";
    case CommGroup::kCp:
      return "cp";
    case CommGroup::kGrad:
      return "dp";
    case CommGroup::kPp:
      return "pp";
    case CommGroup::kEp:
      return "ep";
    case CommGroup::kExpertGrad:
      return "expert_dp";
    case CommGroup::kEmbedding:
      return "embedding";
    case CommGroup::kShard:
      return "shard";
    case CommGroup::kReplica:
      return "replica";
    case CommGroup::kReshard:
      return "reshard";
  }
  return "?";
}

namespace {

// The ranks {start + m * step : m < count} of an index space laid out as strided `dims`
// (innermost first, sizes > 1) from GPU `base`, as a strided group, when the index set lines up
// with the dimensions: step * count is the whole space or a block of it, step (and the block) a
// product of whole inner dimensions times a divisor of the next one. Contiguous blocks (step 1,
// start a multiple of count) and progressions (start < step, count * step the whole space) are
// the two shapes the layout's sub-groups take. nullopt otherwise (the caller lists the members).
std::optional<Group> StridedSlice(int64_t base, const std::vector<GroupDim>& dims, int64_t start,
                                  int64_t step, int64_t count) {
  int64_t total = 1;
  for (const GroupDim& d : dims) total *= d.size;
  // `unit` = the inner dimensions before k times c, c dividing dims[k].size.
  const auto split = [&](int64_t unit, size_t* k, int64_t* c) {
    int64_t inner = 1;
    size_t j = 0;
    while (j < dims.size() && unit % (inner * dims[j].size) == 0) inner *= dims[j++].size;
    *k = j;
    *c = unit / inner;
    return *c == 1 || (j < dims.size() && dims[j].size % *c == 0);
  };
  const auto at = [&](int64_t i) {
    int64_t gpu = base;
    for (const GroupDim& d : dims) {
      gpu += (i % d.size) * d.stride;
      i /= d.size;
    }
    return gpu;
  };
  std::vector<GroupDim> out;
  size_t k = 0;
  int64_t c = 1;
  if (step == 1) {  // the block [start, start + count)
    if (count < 1 || start % count != 0 || start + count > total || !split(count, &k, &c)) {
      return std::nullopt;
    }
    for (size_t j = 0; j < k; ++j) out.push_back(dims[j]);
    if (c > 1) out.push_back(GroupDim{c, dims[k].stride});
  } else {  // start, start + step, ...: the whole space in steps
    if (start < 0 || start >= step || step * count != total || !split(step, &k, &c)) {
      return std::nullopt;
    }
    if (k < dims.size() && dims[k].size / c > 1) {
      out.push_back(GroupDim{dims[k].size / c, c * dims[k].stride});
    }
    for (size_t j = k + 1; j < dims.size(); ++j) out.push_back(dims[j]);
  }
  Result<Group> g = Group::Strided(at(start), std::move(out));
  if (!g.ok()) return std::nullopt;
  return *g;
}

}  // namespace

Result<Layout> Layout::Make(const Scenario& sc) {
  Result<Cluster> cluster = Cluster::Build(sc.topology, sc.gpus);
  if (!cluster.ok()) return cluster.status();
  Result<Placement> placement = Placement::Make(sc.parallel, sc.gpus);
  if (!placement.ok()) return placement.status();
  return Layout(
      std::move(*cluster), std::move(*placement), sc.parallel, sc.framework.shard_group,
      sc.framework.reshard_after_forward == Reshard::kToGroup ? sc.framework.reshard_group : 0);
}

int64_t Layout::GroupSize(CommGroup g) const {
  const ParallelSpec& p = parallel_;
  switch (g) {
    case CommGroup::kTp:
      return p.tp;
    case CommGroup::kCp:
      return p.cp > 1 ? 2 : 1;
    case CommGroup::kGrad:
      return p.dp * p.cp;
    case CommGroup::kPp:
      return p.pp > 1 ? 2 : 1;
    case CommGroup::kEp:
      return p.ep;
    case CommGroup::kExpertGrad:
      return p.dp * p.cp / p.ep;
    case CommGroup::kEmbedding:
      return p.pp > 1 ? 2 : 1;
    case CommGroup::kShard:
      return shard_ > 0 ? shard_ : p.dp * p.cp;
    case CommGroup::kReplica:
      return shard_ > 0 ? p.dp * p.cp / shard_ : 1;
    case CommGroup::kReshard:
      return reshard_ > 0 ? reshard_ : GroupSize(CommGroup::kShard);
  }
  return 1;
}

int64_t Layout::Concurrent(CommGroup g) const {
  const int64_t world = placement_.world();
  const int64_t size = GroupSize(g);
  // Pairs (cp ring, pp neighbours, embedding): every rank sends at the same time.
  if (g == CommGroup::kCp || g == CommGroup::kPp) return std::max<int64_t>(1, world / 2);
  if (g == CommGroup::kEmbedding) return std::max<int64_t>(1, world / parallel_.pp);
  return std::max<int64_t>(1, world / std::max<int64_t>(1, size));
}

RankCoords Layout::SlowestCpHop(const RankCoords& at) const {
  const int64_t cp = placement_.Size(ParallelDim::kCp);
  RankCoords best = at;
  int best_level = 0;  // 0 same node, 1 another node, 2 another leaf domain, 3 another pod
  for (int64_t c = 0; c < cp && cp > 1; ++c) {
    RankCoords from = at;
    from.cp = c;
    RankCoords to = at;
    to.cp = (c + 1) % cp;
    const int64_t a = cluster_.NodeOf(placement_.GpuOf(from));
    const int64_t b = cluster_.NodeOf(placement_.GpuOf(to));
    const int level = cluster_.PodOf(a) != cluster_.PodOf(b)     ? 3
                      : cluster_.LeafOf(a) != cluster_.LeafOf(b) ? 2
                      : a != b                                   ? 1
                                                                 : 0;
    if (level > best_level) {
      best_level = level;
      best = from;
    }
  }
  return best;
}

Result<Group> Layout::GroupAt(CommGroup g, const RankCoords& at) const {
  const Placement& pl = placement_;
  auto pair = [&](ParallelDim d, int64_t other) -> Result<Group> {
    RankCoords b = at;
    b.at(d) = other;
    return Group::Explicit({pl.GpuOf(at), pl.GpuOf(b)});
  };
  switch (g) {
    case CommGroup::kTp:
      return pl.GroupOf(ParallelDim::kTp, at);
    case CommGroup::kCp:
      return pair(ParallelDim::kCp, (at.cp + 1) % pl.Size(ParallelDim::kCp));
    case CommGroup::kGrad:
      return pl.GroupOf(std::vector<ParallelDim>{ParallelDim::kDp, ParallelDim::kCp}, at);
    case CommGroup::kPp:
      return pair(ParallelDim::kPp, (at.pp + 1) % pl.Size(ParallelDim::kPp));
    case CommGroup::kEmbedding:
      return pair(ParallelDim::kPp, at.pp == 0 ? pl.Size(ParallelDim::kPp) - 1 : 0);
    case CommGroup::kEp:
    case CommGroup::kExpertGrad: {
      // Expert-parallel groups are ep consecutive data-parallel ranks (then context-parallel
      // ones when ep > dp); ranks with the same experts are ep apart.
      const int64_t dp = pl.Size(ParallelDim::kDp);
      const int64_t cp = pl.Size(ParallelDim::kCp);
      const int64_t ep = parallel_.ep;
      const int64_t sd = pl.Stride(ParallelDim::kDp);
      const int64_t sc = pl.Stride(ParallelDim::kCp);
      // Flatten (dp, cp) as dp-fastest index j = dp + cp*dp_size.
      const int64_t j = at.dp + at.cp * dp;
      RankCoords base = at;
      base.dp = 0;
      base.cp = 0;
      const int64_t origin = pl.GpuOf(base).v;
      // In closed form when the group lines up with the (dp, cp) grid (O(1) whatever its size);
      // the same GPUs as the lists below.
      std::vector<GroupDim> grid;
      if (dp > 1) grid.push_back(GroupDim{dp, sd});
      if (cp > 1) grid.push_back(GroupDim{cp, sc});
      const std::optional<Group> strided =
          g == CommGroup::kEp ? StridedSlice(origin, grid, (j / ep) * ep, 1, ep)
                              : StridedSlice(origin, grid, j % ep, ep, dp * cp / ep);
      if (strided) return *strided;
      std::vector<GpuId> members;
      if (g == CommGroup::kEp) {
        const int64_t first = (j / ep) * ep;
        for (int64_t i = 0; i < ep; ++i) {
          const int64_t k = first + i;
          members.push_back(GpuId(static_cast<int32_t>(origin + (k % dp) * sd + (k / dp) * sc)));
        }
      } else {
        for (int64_t k = j % ep; k < dp * cp; k += ep) {
          members.push_back(GpuId(static_cast<int32_t>(origin + (k % dp) * sd + (k / dp) * sc)));
        }
      }
      return Group::Explicit(std::move(members));
    }
    case CommGroup::kShard:
      return GradSlice(at, GroupSize(CommGroup::kShard), false);
    case CommGroup::kReplica:
      return GradSlice(at, GroupSize(CommGroup::kShard), true);
    case CommGroup::kReshard:
      return GradSlice(at, GroupSize(CommGroup::kReshard), false);
  }
  return Status::Internal("unknown communication group");
}

Result<Group> Layout::GradSlice(const RankCoords& at, int64_t block, bool replica) const {
  const Placement& pl = placement_;
  const Group grad = pl.GroupOf(std::vector<ParallelDim>{ParallelDim::kDp, ParallelDim::kCp}, at);
  // `at`'s rank in the kGrad group: its dimensions in placement order, innermost fastest.
  int64_t index = 0, radix = 1;
  for (ParallelDim d : pl.order()) {
    if (d != ParallelDim::kDp && d != ParallelDim::kCp) continue;
    index += at.at(d) * radix;
    radix *= pl.Size(d);
  }
  if (block >= grad.size() && !replica) return grad;
  // In closed form when the slice lines up with the group's dimensions (the same GPUs as below).
  const std::optional<Group> strided =
      replica ? StridedSlice(grad.base(), grad.dims(), index % block, block, grad.size() / block)
              : StridedSlice(grad.base(), grad.dims(), index / block * block, 1, block);
  if (strided) return *strided;
  std::vector<GpuId> members;
  if (replica) {
    for (int64_t i = index % block; i < grad.size(); i += block) members.push_back(grad.Member(i));
  } else {
    const int64_t first = index / block * block;
    for (int64_t i = first; i < first + block; ++i) members.push_back(grad.Member(i));
  }
  return Group::Explicit(std::move(members));
}

Result<CollectiveCost> Layout::Cost(CommGroup g, CollectiveOp op, Bytes size,
                                    const RankCoords& at) const {
  Result<Group> group = GroupAt(g, at);
  if (!group.ok()) return group.status();
  CollectiveOptions opts;
  opts.concurrent_groups = Concurrent(g);
  return CostCollective(cluster_, *group, op, size, opts);
}

}  // namespace shardsim
