// Where a scenario's ranks sit on its cluster, and what their collectives cost.
//
// A Layout joins the cluster (sim/topology/cluster.h) and the placement of the (dp, tp, pp, cp)
// ranks on its GPUs (sim/topology/placement.h, TP innermost by default), and names the groups
// the training step communicates in: the TP group, the CP ring neighbours, the gradient group
// (dp x cp: Megatron-LM reduces gradients over data and context parallel ranks), the PP
// neighbours, the expert-parallel group (ep consecutive data-parallel ranks, Megatron-Core MoE)
// and the expert-data-parallel group that reduces expert gradients. Every group of a kind runs
// its collective at the same time as the others of its kind (a step is symmetric across
// replicas), so costs are taken with that many groups sharing NICs and uplinks.
#ifndef SHARDSIM_PARALLEL_LAYOUT_H_
#define SHARDSIM_PARALLEL_LAYOUT_H_

#include <cstdint>
#include <optional>

#include "sim/base/status.h"
#include "sim/collective/collective.h"
#include "sim/config/spec.h"
#include "sim/topology/cluster.h"
#include "sim/topology/placement.h"

namespace shardsim {

enum class CommGroup {
  kTp,          // tensor-parallel group
  kCp,          // a rank and its next context-parallel neighbour (ring attention)
  kGrad,        // data x context parallel ranks: gradient reduction, ZeRO sharding
  kPp,          // a pipeline rank and the next one (activations forward, gradients back)
  kEp,          // expert-parallel group (all-to-all dispatch and combine)
  kExpertGrad,  // ranks holding the same experts: expert gradient reduction
  kEmbedding,   // first and last pipeline rank: tied-embedding gradient all-reduce
  // HSDP and FSDP2 (framework.shard_group, framework.reshard_after_forward: N), sub-groups of
  // kGrad in its rank order (a 2-D device mesh (replicate, shard) with the shard dimension
  // innermost, as torch.distributed's init_device_mesh lays it out):
  kShard,    // the shard_group consecutive ranks ZeRO / FSDP shards over (kGrad without HSDP)
  kReplica,  // the ranks holding the same shard, one per shard group (all-reduce of gradients)
  kReshard,  // the N consecutive ranks FSDP2 reshards to after forward (its backward gathers)
};
inline constexpr int kNumCommGroups = 10;
// "tp", "cp", "dp", "pp", "ep", "expert_dp", "embedding", "shard", "replica", "reshard"
const char* Name(CommGroup g);

class Layout {
 public:
  // Errors: the cluster cannot hold `gpus` (sim/topology), the placement does not match it.
  static Result<Layout> Make(const Scenario& scenario);

  const Cluster& cluster() const { return cluster_; }
  const Placement& placement() const { return placement_; }
  const ParallelSpec& parallel() const { return parallel_; }

  // Ranks in group `g` (1: the layout needs no such communication). kShard is dp x cp without
  // HSDP, kReplica 1; kReshard is the shard group unless reshard_after_forward is N.
  int64_t GroupSize(CommGroup g) const;
  // The GPUs of group `g` seen from the rank at `at`. Precondition: GroupSize(g) > 1.
  Result<Group> GroupAt(CommGroup g, const RankCoords& at) const;
  // The context-parallel rank of `at`'s ring whose hop to its successor crosses the most levels
  // of the hierarchy (pod, then leaf domain, then node; the first in ring order), as coordinates
  // sharing `at`'s dp, tp and pp; `at` itself when the ring stays inside a node or cp = 1. Ring
  // attention passes K/V every round and each rank waits for its predecessor's block, so the
  // slowest hop paces every round (step_costs.cc, LayerCp). O(cp).
  RankCoords SlowestCpHop(const RankCoords& at) const;
  // Groups of kind `g` that run at once across the cluster.
  int64_t Concurrent(CommGroup g) const;
  // Cost of `op` over `size` bytes (nccl-tests' convention) in the group `g` of the rank at `at`.
  Result<CollectiveCost> Cost(CommGroup g, CollectiveOp op, Bytes size, const RankCoords& at) const;

 private:
  Layout(Cluster cluster, Placement placement, ParallelSpec parallel, int64_t shard,
         int64_t reshard)
      : cluster_(std::move(cluster)),
        placement_(std::move(placement)),
        parallel_(std::move(parallel)),
        shard_(shard),
        reshard_(reshard) {}
  // In `at`'s kGrad group (its rank order): the block of `block` consecutive ranks holding `at`,
  // or (replica) the ranks at `at`'s offset in every such block.
  Result<Group> GradSlice(const RankCoords& at, int64_t block, bool replica) const;

  Cluster cluster_;
  Placement placement_;
  ParallelSpec parallel_;
  int64_t shard_ = 0;    // framework.shard_group (0: dp x cp)
  int64_t reshard_ = 0;  // framework.reshard_after_forward's N (0: not set)
};

}  // namespace shardsim

#endif  // SHARDSIM_PARALLEL_LAYOUT_H_
