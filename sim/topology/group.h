// Groups of GPUs that run a collective together, and their shape on the cluster.
//
// A Group is either strided, {base + i0*stride0 + i1*stride1 + ... : 0 <= ij < sizej} with the
// first dimension varying fastest (what a parallel layout produces: a TP group is {8 x 1}, a DP
// group with TP=8 is {dp x 8}, a DP x CP group has two dimensions), or an explicit list of GPUs.
// Strided groups are described in O(dims) memory whatever their size, and their shape is computed
// in closed form, so costing a 16,384-rank all-reduce does not enumerate 16,384 ranks.
#ifndef SHARDSIM_TOPOLOGY_GROUP_H_
#define SHARDSIM_TOPOLOGY_GROUP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/ids.h"
#include "sim/base/status.h"

namespace shardsim {

class Cluster;

struct GroupDim {
  int64_t size = 1;
  int64_t stride = 1;
};

class Group {
 public:
  // Errors: a size < 1, a stride < 1, or dimensions whose members overlap (each stride, in
  // increasing order, must exceed the span of the smaller ones). Ranks are ordered with the first
  // dimension varying fastest.
  static Result<Group> Strided(int64_t base, std::vector<GroupDim> dims);
  // Errors: an empty list, a negative id or a repeated GPU. Ranks follow the list's order.
  static Result<Group> Explicit(std::vector<GpuId> gpus);

  int64_t size() const { return size_; }
  bool strided() const { return explicit_.empty(); }
  int64_t base() const { return base_; }
  const std::vector<GroupDim>& dims() const { return dims_; }
  // The GPU of rank i (0 <= i < size()).
  GpuId Member(int64_t i) const;
  // All members in rank order: O(size()); for tests and small groups.
  std::vector<GpuId> Members() const;
  int64_t LargestMember() const;
  // "gpus 0..7", "gpus 3 + 8*i (i < 4)", "gpus {0, 9, 18}".
  std::string ToString() const;

 private:
  Group() = default;
  int64_t base_ = 0;
  std::vector<GroupDim> dims_;
  std::vector<GpuId> explicit_;
  int64_t size_ = 0;
};

// Where a group sits in the cluster's hierarchy. For groups that are not uniform (some nodes hold
// more of the group's ranks than others) the counts are the largest, so costs are conservative.
struct GroupShape {
  int64_t ranks = 0;
  int64_t ranks_per_node = 0;  // g: ranks of the group on one node
  int64_t nodes = 0;           // N: nodes the group touches
  int64_t nodes_per_leaf = 0;  // the group's nodes inside one leaf domain
  int64_t leaves = 0;          // leaf domains touched
  int64_t nodes_per_pod = 0;   // the group's nodes inside one pod
  int64_t pods = 0;            // pods touched
  bool uniform = true;

  std::string ToString() const;  // "16 ranks: 8 per node on 2 nodes, 1 leaf domain, 1 pod"
};

// Strided groups never visit their members: O(dims) when aligned with the hierarchy (every group
// a layout produces on a whole number of nodes, leaf domains and pods), otherwise by periods of
// the hierarchy's blocks (group.cc's BlockCounter: bounded by the topology's block sizes, not by
// the group's size). Explicit groups: O(size log size). Errors: a member outside the cluster.
Result<GroupShape> AnalyzeGroup(const Cluster& cluster, const Group& group);

// The same shape by visiting every member (O(size), maps of sets): the reference the tests hold
// AnalyzeGroup to. Precondition: every member inside the cluster.
GroupShape ShapeByEnumeration(const Cluster& cluster, const Group& group);

}  // namespace shardsim

#endif  // SHARDSIM_TOPOLOGY_GROUP_H_
