#include "sim/topology/group.h"

#include <algorithm>
#include <map>
#include <set>

#include "sim/topology/cluster.h"

namespace shardsim {
namespace {

std::vector<GroupDim> SortedByStride(std::vector<GroupDim> dims) {
  std::stable_sort(dims.begin(), dims.end(),
                   [](const GroupDim& a, const GroupDim& b) { return a.stride < b.stride; });
  return dims;
}

// Members of a strided group per block of `block` consecutive GPUs, in closed form. Succeeds when
// the group is aligned with the blocks: dimensions fit inside a block, split it evenly, or step
// over whole blocks (see group.h); then every touched block holds the same number of members.
bool MembersPerBlock(int64_t base, const std::vector<GroupDim>& sorted, int64_t block,
                     int64_t* members) {
  const int64_t offset = base % block;
  int64_t span = 0;
  int64_t m = 1;
  bool inside = true;
  for (const GroupDim& d : sorted) {
    const int64_t s = d.size;
    const int64_t t = d.stride;
    if (inside) {
      if (offset + span + t * (s - 1) < block) {
        m *= s;
        span += t * (s - 1);
      } else if (t < block && block % t == 0 && (t * s) % block == 0 && offset + span < t) {
        m *= block / t;
        inside = false;
      } else if (t % block == 0 && offset + span < block) {
        inside = false;
      } else {
        return false;
      }
    } else if (t % block != 0) {
      return false;
    }
  }
  *members = m;
  return true;
}

// The largest count of distinct `inner` values per `outer` value, and the number of outer values.
void CountNested(const std::vector<std::pair<int64_t, int64_t>>& outer_inner, int64_t* most,
                 int64_t* outers, bool* uniform) {
  std::map<int64_t, std::set<int64_t>> per_outer;
  for (const auto& [o, i] : outer_inner) per_outer[o].insert(i);
  int64_t lo = -1;
  int64_t hi = 0;
  for (const auto& [o, inner] : per_outer) {
    const auto n = static_cast<int64_t>(inner.size());
    hi = std::max(hi, n);
    lo = lo < 0 ? n : std::min(lo, n);
  }
  *most = hi;
  *outers = static_cast<int64_t>(per_outer.size());
  if (lo != hi) *uniform = false;
}

GroupShape ShapeByEnumeration(const Cluster& cluster, const Group& group) {
  GroupShape s;
  s.ranks = group.size();
  std::vector<std::pair<int64_t, int64_t>> node_gpu, leaf_node, pod_node;
  for (const GpuId g : group.Members()) {
    const int64_t node = cluster.NodeOf(g);
    node_gpu.emplace_back(node, g.v);
    leaf_node.emplace_back(cluster.LeafOf(node), node);
    pod_node.emplace_back(cluster.PodOf(node), node);
  }
  CountNested(node_gpu, &s.ranks_per_node, &s.nodes, &s.uniform);
  CountNested(leaf_node, &s.nodes_per_leaf, &s.leaves, &s.uniform);
  CountNested(pod_node, &s.nodes_per_pod, &s.pods, &s.uniform);
  return s;
}

}  // namespace

Result<Group> Group::Strided(int64_t base, std::vector<GroupDim> dims) {
  if (base < 0) return Status::Invalid("group base gpu must not be negative");
  Group g;
  g.base_ = base;
  g.size_ = 1;
  for (const GroupDim& d : dims) {
    if (d.size < 1 || d.stride < 1) {
      return Status::Invalid("group dimension " + std::to_string(d.size) + " x " +
                             std::to_string(d.stride) + ": size and stride must be at least 1");
    }
    if (d.size > 1) g.dims_.push_back(d);
    g.size_ *= d.size;
  }
  int64_t span = 0;
  for (const GroupDim& d : SortedByStride(g.dims_)) {
    if (d.stride <= span) {
      return Status::Invalid("group dimensions overlap: stride " + std::to_string(d.stride) +
                             " is within the span " + std::to_string(span) +
                             " of the smaller ones");
    }
    span += d.stride * (d.size - 1);
  }
  return g;
}

Result<Group> Group::Explicit(std::vector<GpuId> gpus) {
  if (gpus.empty()) return Status::Invalid("a group needs at least one gpu");
  std::set<int32_t> seen;
  for (const GpuId g : gpus) {
    if (g.v < 0) return Status::Invalid("gpu " + std::to_string(g.v) + " is negative");
    if (!seen.insert(g.v).second) {
      return Status::Invalid("gpu " + std::to_string(g.v) + " appears twice in the group");
    }
  }
  Group g;
  g.size_ = static_cast<int64_t>(gpus.size());
  g.explicit_ = std::move(gpus);
  return g;
}

GpuId Group::Member(int64_t i) const {
  if (!strided()) return explicit_[static_cast<size_t>(i)];
  int64_t gpu = base_;
  for (const GroupDim& d : dims_) {
    gpu += (i % d.size) * d.stride;
    i /= d.size;
  }
  return GpuId(static_cast<int32_t>(gpu));
}

std::vector<GpuId> Group::Members() const {
  std::vector<GpuId> out;
  out.reserve(static_cast<size_t>(size_));
  for (int64_t i = 0; i < size_; ++i) out.push_back(Member(i));
  return out;
}

int64_t Group::LargestMember() const {
  if (!strided()) {
    int64_t hi = 0;
    for (const GpuId g : explicit_) hi = std::max<int64_t>(hi, g.v);
    return hi;
  }
  int64_t hi = base_;
  for (const GroupDim& d : dims_) hi += d.stride * (d.size - 1);
  return hi;
}

std::string Group::ToString() const {
  if (!strided()) {
    std::string s = "gpus {";
    for (size_t i = 0; i < explicit_.size() && i < 16; ++i) {
      s += (i ? ", " : "") + std::to_string(explicit_[i].v);
    }
    return s + (explicit_.size() > 16 ? ", ...}" : "}");
  }
  if (dims_.empty()) return "gpu " + std::to_string(base_);
  if (dims_.size() == 1 && dims_[0].stride == 1) {
    return "gpus " + std::to_string(base_) + ".." + std::to_string(base_ + dims_[0].size - 1);
  }
  std::string s = "gpus " + std::to_string(base_);
  std::string bounds;
  for (size_t j = 0; j < dims_.size(); ++j) {
    const std::string i = dims_.size() == 1 ? "i" : "i" + std::to_string(j);
    s += " + " + std::to_string(dims_[j].stride) + "*" + i;
    bounds += (j ? ", " : "") + i + " < " + std::to_string(dims_[j].size);
  }
  return s + " (" + bounds + ")";
}

std::string GroupShape::ToString() const {
  auto plural = [](int64_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  return plural(ranks, "rank") + ": " + std::to_string(ranks_per_node) + " per node on " +
         plural(nodes, "node") + ", " + plural(leaves, "leaf domain") + ", " + plural(pods, "pod") +
         (uniform ? "" : " (not uniform)");
}

Result<GroupShape> AnalyzeGroup(const Cluster& cluster, const Group& group) {
  if (group.LargestMember() >= cluster.num_gpus()) {
    return Status::Invalid("group " + group.ToString() + " reaches gpu " +
                           std::to_string(group.LargestMember()) + ", beyond the cluster's " +
                           std::to_string(cluster.num_gpus()) + " GPUs");
  }
  const ClusterLevels& lv = cluster.levels();
  if (group.strided()) {
    const std::vector<GroupDim> sorted = SortedByStride(group.dims());
    int64_t per_node = 0, per_leaf = 0, per_pod = 0;
    if (MembersPerBlock(group.base(), sorted, lv.gpus_per_node, &per_node) &&
        MembersPerBlock(group.base(), sorted, lv.gpus_per_node * lv.nodes_per_leaf, &per_leaf) &&
        MembersPerBlock(group.base(), sorted, lv.gpus_per_node * lv.nodes_per_pod, &per_pod)) {
      GroupShape s;
      s.ranks = group.size();
      s.ranks_per_node = per_node;
      s.nodes = s.ranks / per_node;
      s.nodes_per_leaf = per_leaf / per_node;
      s.leaves = s.ranks / per_leaf;
      s.nodes_per_pod = per_pod / per_node;
      s.pods = s.ranks / per_pod;
      return s;
    }
  }
  return ShapeByEnumeration(cluster, group);
}

}  // namespace shardsim
