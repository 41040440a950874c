#include "sim/topology/group.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
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

// How an ordered set of GPUs (every member of one part before every member of the next) falls
// into the blocks of one level: the blocks touched, the first and last of them with their counts,
// and the largest and smallest count of the blocks strictly between.
struct LevelRuns {
  int64_t blocks = 0;  // 0: the empty set
  int64_t first = 0;
  int64_t last = 0;
  int64_t first_count = 0;
  int64_t last_count = 0;
  int64_t inner_max = 0;
  int64_t inner_min = std::numeric_limits<int64_t>::max();

  void Inner(int64_t n) {
    inner_max = std::max(inner_max, n);
    inner_min = std::min(inner_min, n);
  }
  int64_t Max() const { return std::max({first_count, last_count, inner_max}); }
  int64_t Min() const { return std::min({first_count, last_count, inner_min}); }
};

// X then Y (all of X before all of Y). `dup` is 1 when X's last item and Y's first are the same
// (a node counted by both parts of an upper level), so the block they share counts it once.
LevelRuns Concat(const LevelRuns& x, const LevelRuns& y, int64_t dup) {
  if (x.blocks == 0) return y;
  if (y.blocks == 0) return x;
  LevelRuns r;
  r.first = x.first;
  r.last = y.last;
  r.inner_max = std::max(x.inner_max, y.inner_max);
  r.inner_min = std::min(x.inner_min, y.inner_min);
  if (x.last != y.first) {
    r.blocks = x.blocks + y.blocks;
    r.first_count = x.first_count;
    r.last_count = y.last_count;
    if (x.blocks > 1) r.Inner(x.last_count);
    if (y.blocks > 1) r.Inner(y.first_count);
    return r;
  }
  const int64_t shared = x.last_count + y.first_count - dup;
  r.blocks = x.blocks + y.blocks - 1;
  r.first_count = x.blocks == 1 ? shared : x.first_count;
  r.last_count = y.blocks == 1 ? shared : y.last_count;
  if (x.blocks > 1 && y.blocks > 1) r.Inner(shared);
  return r;
}

// An ordered set of GPUs on two levels: GPUs per node, and distinct nodes per upper block (a leaf
// domain or a pod of `upper` nodes).
struct Runs {
  LevelRuns node;
  LevelRuns upper;
};

Runs Concat(const Runs& x, const Runs& y) {
  const int64_t dup = x.node.blocks > 0 && y.node.blocks > 0 && x.node.last == y.node.first;
  return Runs{Concat(x.node, y.node, 0), Concat(x.upper, y.upper, dup)};
}

// The set moved by k periods of `period_gpus` GPUs (a multiple of both block sizes).
Runs Shift(Runs r, int64_t k, int64_t period_nodes, int64_t period_uppers) {
  r.node.first += k * period_nodes;
  r.node.last += k * period_nodes;
  r.upper.first += k * period_uppers;
  r.upper.last += k * period_uppers;
  return r;
}

// The block structure of a strided group on (node, upper) blocks without visiting its members.
//
// Sorted by stride, each dimension's stride exceeds the span of the smaller ones (Group::Strided),
// so the group is the ordered concatenation of the top dimension's copies of the lower ones, copy
// c starting at phase + c*t. Blocks repeat with period M = gpus_per_node * upper GPUs: copy c and
// copy c + P, P = M / gcd(t, M), have the same offset inside their period, P*t/M periods apart.
// So one period of copies is built (recursively, from the lower dimensions) and the q = s / P
// periods of the dimension are concatenated by doubling (O(log q) concatenations), then the
// s mod P copies left. Cost: O(prod over dimensions of min(size, P)) concatenations, bounded by
// the topology's block sizes whatever the group's size; checked against enumeration on random
// groups and clusters by tests/topology/group_test.cc.
class BlockCounter {
 public:
  BlockCounter(const std::vector<GroupDim>& sorted, int64_t gpus_per_node, int64_t upper)
      : dims_(sorted), g_(gpus_per_node), upper_(upper), m_(gpus_per_node * upper) {}

  // The members of the lowest `j` dimensions placed at GPU `at`.
  Runs Of(size_t j, int64_t at) const {
    if (j == 0) {
      Runs r;
      const int64_t node = at / g_;
      r.node = LevelRuns{1, node, node, 1, 1};
      r.upper = LevelRuns{1, node / upper_, node / upper_, 1, 1};
      return r;
    }
    const GroupDim& d = dims_[j - 1];
    const int64_t period = m_ / std::gcd(d.stride, m_);  // copies per period
    const int64_t shift = period * d.stride / m_;        // periods of M per period of copies
    const int64_t whole = d.size / period;
    const int64_t left = d.size % period;
    Runs one;   // the first min(period, size) copies
    Runs part;  // the first `left` copies
    for (int64_t c = 0; c < std::min(period, d.size); ++c) {
      if (c == left) part = one;
      one = Concat(one, Of(j - 1, at + c * d.stride));
    }
    if (whole == 0) return one;
    // Concatenate `whole` copies of `one`, each `shift` periods after the previous one.
    Runs out;
    Runs unit = one;
    int64_t done = 0;
    for (int64_t n = whole, units = 1; n > 0; n >>= 1, units *= 2) {
      if (n & 1) {
        out = Concat(out, Shift(unit, done * shift, m_ / g_, m_ / (g_ * upper_)));
        done += units;
      }
      if (n > 1) unit = Concat(unit, Shift(unit, units * shift, m_ / g_, m_ / (g_ * upper_)));
    }
    return Concat(out, Shift(part, done * shift, m_ / g_, m_ / (g_ * upper_)));
  }

 private:
  const std::vector<GroupDim>& dims_;
  int64_t g_;
  int64_t upper_;
  int64_t m_;
};

// Contiguous dimensions (stride == the previous one's stride * size) as one.
std::vector<GroupDim> Merged(const std::vector<GroupDim>& sorted) {
  std::vector<GroupDim> out;
  for (const GroupDim& d : sorted) {
    if (!out.empty() && out.back().stride * out.back().size == d.stride) {
      out.back().size *= d.size;
    } else {
      out.push_back(d);
    }
  }
  return out;
}

void Fill(const LevelRuns& runs, int64_t* most, int64_t* count, bool* uniform) {
  *most = runs.Max();
  *count = runs.blocks;
  if (runs.Min() != runs.Max()) *uniform = false;
}

GroupShape ShapeInClosedForm(const Cluster& cluster, const Group& group) {
  const ClusterLevels& lv = cluster.levels();
  const std::vector<GroupDim> dims = Merged(SortedByStride(group.dims()));
  GroupShape s;
  s.ranks = group.size();
  // A group inside one leaf domain (every group of a single-switch cluster) needs the node
  // level only, whose period is one node's GPUs.
  const int64_t leaf_gpus = lv.gpus_per_node * lv.nodes_per_leaf;
  const bool one_leaf = group.base() / leaf_gpus == group.LargestMember() / leaf_gpus;
  const Runs leaf = BlockCounter(dims, lv.gpus_per_node, one_leaf ? 1 : lv.nodes_per_leaf)
                        .Of(dims.size(), group.base());
  Fill(leaf.node, &s.ranks_per_node, &s.nodes, &s.uniform);
  if (one_leaf) {
    s.nodes_per_leaf = s.nodes;
    s.leaves = 1;
  } else {
    Fill(leaf.upper, &s.nodes_per_leaf, &s.leaves, &s.uniform);
  }
  const int64_t pod_gpus = lv.gpus_per_node * lv.nodes_per_pod;
  if (group.base() / pod_gpus == group.LargestMember() / pod_gpus) {
    s.nodes_per_pod = s.nodes;  // one pod holds every node of the group
    s.pods = 1;
  } else {
    const Runs pod =
        BlockCounter(dims, lv.gpus_per_node, lv.nodes_per_pod).Of(dims.size(), group.base());
    Fill(pod.upper, &s.nodes_per_pod, &s.pods, &s.uniform);
  }
  return s;
}

// An explicit group: its members sorted, concatenated one by one.
GroupShape ShapeOfList(const Cluster& cluster, const Group& group) {
  const ClusterLevels& lv = cluster.levels();
  std::vector<GpuId> members = group.Members();
  std::sort(members.begin(), members.end(), [](GpuId a, GpuId b) { return a.v < b.v; });
  const std::vector<GroupDim> none;
  const BlockCounter leaf(none, lv.gpus_per_node, lv.nodes_per_leaf);
  const BlockCounter pod(none, lv.gpus_per_node, lv.nodes_per_pod);
  Runs by_leaf, by_pod;
  for (const GpuId g : members) {
    by_leaf = Concat(by_leaf, leaf.Of(0, g.v));
    by_pod = Concat(by_pod, pod.Of(0, g.v));
  }
  GroupShape s;
  s.ranks = group.size();
  Fill(by_leaf.node, &s.ranks_per_node, &s.nodes, &s.uniform);
  Fill(by_leaf.upper, &s.nodes_per_leaf, &s.leaves, &s.uniform);
  Fill(by_pod.upper, &s.nodes_per_pod, &s.pods, &s.uniform);
  return s;
}

}  // namespace

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
    return ShapeInClosedForm(cluster, group);
  }
  return ShapeOfList(cluster, group);
}

}  // namespace shardsim
