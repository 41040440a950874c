// The plan of a scenario: how its model is sharded over its layout, built once (MakePlan) and
// read by program, memory, report and sweep instead of each re-deriving it from the specs
// (docs/architecture.md, "Data flow").
//
// A Sharding is what the specs alone decide: the sharded op graph (sim/model/op_graph.h), the
// layer split over the pipeline ranks (stages.h), the derived rules (ShardRules) and, per layer
// kind, the collectives a layer issues on the compute stream (InLayerCollective: tensor-parallel
// per block, ring-attention hops, expert all-to-alls). A Plan adds the Layout: which GPUs each
// group runs on, and so what a collective costs. `budget` needs no cluster and builds a Sharding;
// `simulate` and the sweep build a Plan. Timing is not the plan's: sim/program prices the
// collectives on the layout (step_costs.cc).
#ifndef SHARDSIM_PARALLEL_PLAN_H_
#define SHARDSIM_PARALLEL_PLAN_H_

#include <cstdint>
#include <vector>

#include "sim/base/status.h"
#include "sim/base/units.h"
#include "sim/collective/collective.h"
#include "sim/config/spec.h"
#include "sim/model/op.h"
#include "sim/model/op_graph.h"
#include "sim/parallel/layout.h"
#include "sim/parallel/stages.h"

namespace shardsim {

// The rules each consumer used to derive on its own, one value each. The shape rules are the op
// graph's (sim/model/op_graph.h SequenceParallelOn, KvHeadsPerRank, VocabRowsPerRank): the plan
// publishes what the graph applied.
struct ShardRules {
  // parallel.sequence_parallel with tp > 1 (Korthikanti 2022 §4.2.2: SP splits over the TP group).
  bool sequence_parallel = false;
  // Shards of a sequence-parallel activation: tp with SP, else 1.
  int64_t sp_shards = 1;
  int64_t heads_per_rank = 0;     // num_heads / tp
  int64_t kv_heads_per_rank = 0;  // num_kv_heads / tp, 1 when tp > num_kv_heads; MLA: heads/rank
  // tp > num_kv_heads (not MLA): each kv head replicated on tp / num_kv_heads ranks.
  bool kv_replicated = false;
  int64_t vocab_rows_per_rank = 0;  // ceil(vocab_size / tp), vocab-parallel embedding and head
  // Micro-batches per step and pipeline: global_batch / (dp * micro_batch), at least 1.
  int64_t microbatches = 1;
  // ZeRO shards (Rajbhandari 2019 §5) over the gradient group, dp * cp (Megatron-LM reduces
  // gradients over data and context parallel ranks); routed-expert parameters over the ranks
  // holding the same experts, dp * cp / ep (at least 1).
  int64_t zero_shards = 1;
  int64_t expert_zero_shards = 1;
};

// The rules of `model` trained as `training` under `parallel` (degrees below 1, as in input not
// yet validated, count as 1).
ShardRules DeriveRules(const ModelSpec& model, const TrainingSpec& training,
                       const ParallelSpec& parallel);

// Which pass of a layer a collective runs in.
enum class CommPass { kForward, kBackward };
const char* Name(CommPass p);  // "forward", "backward"

// One collective a decoder layer issues on its compute stream, per micro-batch, as the
// representative rank sees it.
struct InLayerCollective {
  CommGroup group = CommGroup::kTp;
  CollectiveOp op = CollectiveOp::kAllReduce;
  Bytes size;                     // nccl-tests' size convention (sim/collective)
  Region region = Region::kNone;  // the block whose GEMMs (TP) or attention (CP) it can hide behind
  CommPass pass = CommPass::kForward;
  // Sequence parallelism's backward re-gather of the block's saved sharded input, for the
  // weight gradient; it runs beside the column-parallel input-gradient GEMM (Korthikanti 2022
  // §4.2.2).
  bool regather = false;
  int64_t times = 1;  // issues per pass (ring attention: cp - 1 rounds)
};

// The collectives of one layer kind (parallel to OpGraph::layer_kinds), in issue order:
//  - tensor parallel, per block (attention, then MLP; Shoeybi 2019 §3): forward one all-reduce
//    of the block's T x h output, backward one of its input gradient; with sequence parallelism
//    each becomes an all-gather + reduce-scatter (Korthikanti 2022 §4.2.2), and backward adds
//    the re-gather;
//  - context parallel (ring attention, Liu et al. 2023): per attention core, cp - 1 hops to the
//    next CP rank of the local K and V forward (kv heads/rank x (head_dim + v_head_dim) per
//    token), twice that backward (K, V and their gradients);
//  - expert parallel, MoE layers with ep > 1 (GShard §2.2): a dispatch and a combine
//    all-to-all of T x top_k x h x the load factor forward (the dispatch in fp8 with
//    fp8_dispatch), and again backward.
struct LayerCollectives {
  std::vector<InLayerCollective> collectives;
};

struct Sharding {
  ShardRules rules;
  OpGraph graph;                                    // one device's ops per micro-batch
  std::vector<PipelineRank> stages;                 // the layer split, one per pipeline rank
  std::vector<LayerCollectives> layer_collectives;  // parallel to graph.layer_kinds
  // The vocab-parallel embedding's TP collectives (Megatron-LM): forward the all-reduce of the
  // partial lookups (a reduce-scatter with SP), backward with SP the all-gather of the gradient.
  LayerCollectives embedding_collectives;
  // The output head's, once per head (the main one and each MTP module's): with SP the forward
  // all-gather of its input; three all-reduces of per-token fp32 statistics (4 bytes x T) for the
  // vocab-parallel cross-entropy (max, sum, target logit); backward the reduce-scatter of the
  // input gradient (its all-reduce without SP).
  LayerCollectives head_collectives;
  Bytes activation;  // one micro-batch's full T x h activation on this device, in bytes
};

// The graph, split, rules and collectives of `model` under `training` and `parallel`. Errors: the
// slicing does not divide the model (BuildOpGraph), the layers do not split (SplitLayers).
Result<Sharding> ShardModel(const ModelSpec& model, const TrainingSpec& training,
                            const ParallelSpec& parallel);

// A Sharding on its layout.
struct Plan : Sharding {
  Layout layout;
};

// Errors: those of ShardModel, then Layout::Make's (the cluster cannot hold the GPUs).
Result<Plan> MakePlan(const Scenario& scenario);
// `sharding` (ShardModel of the scenario's specs) on the scenario's layout.
Result<Plan> MakePlan(const Scenario& scenario, Sharding sharding);

}  // namespace shardsim

#endif  // SHARDSIM_PARALLEL_PLAN_H_
