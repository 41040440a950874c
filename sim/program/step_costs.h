// The price of one device's work for one micro-batch: each op's time on the GPU
// (sim/hardware/op_cost.h) and the communication that sits inside a layer on the compute stream
// — tensor-parallel collectives (Megatron-LM: two all-reduces per layer forward and two
// backward; all-gather + reduce-scatter with sequence parallelism, Korthikanti 2022 §4.2.2),
// context-parallel ring-attention transfers and expert all-to-alls — with how much of it is
// exposed. What crosses pipeline or data-parallel boundaries is priced here too but scheduled
// by sim/program/step_program.h.
#ifndef SHARDSIM_PROGRAM_STEP_COSTS_H_
#define SHARDSIM_PROGRAM_STEP_COSTS_H_

#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/base/units.h"
#include "sim/collective/collective.h"
#include "sim/config/spec.h"
#include "sim/model/op_graph.h"
#include "sim/parallel/layout.h"
#include "sim/parallel/plan.h"

namespace shardsim {

class OpCostModel;

// Time of one pass over some layers on the compute stream.
struct PassTime {
  Seconds compute;  // GPU kernels
  Seconds tp;       // exposed tensor-parallel collectives
  Seconds cp;       // exposed context-parallel transfers
  Seconds ep;       // exposed expert all-to-alls
  Seconds total() const { return compute + tp + cp + ep; }
  PassTime& operator+=(const PassTime& o);
  PassTime operator*(double f) const;
};

// One ring-attention hop of a layer (context parallelism): what passes between two neighbouring
// CP ranks each round, on the ring's slowest hop (Layout::SlowestCpHop), against the attention
// block it can hide behind. rounds = 0 when the layer has no CP communication.
struct CpHop {
  int64_t from_cp = 0;  // the hop from CP rank from_cp to to_cp
  int64_t to_cp = 0;
  Bytes fwd_bytes;                      // K and V of the local block
  Bytes bwd_bytes;                      // K, V and their gradients
  Seconds fwd;                          // one round's transfer forward
  Seconds bwd;                          // and backward
  Seconds block_fwd;                    // one round's attention block forward
  Seconds block_bwd;                    // and backward (input gradients)
  LinkClass link = LinkClass::kNvlink;  // the class that bounds the transfer
  int64_t rounds = 0;                   // cp - 1 per pass
};

// A layer (or the embedding / the head) for one micro-batch. `bwd` includes the recompute
// forward, which is also given on its own in `recompute`.
struct BlockCost {
  PassTime fwd;
  PassTime bwd;
  PassTime recompute;
  // Of bwd.compute, the weight-gradient kernels (each op's backward-weight pass): what a
  // schedule that splits the backward (sim/schedule SplitsBackward) runs as its W pass.
  Seconds wgrad;
  Seconds tp_comm_total;  // all TP communication of fwd + bwd, exposed or not (for reports)
  // A MoE layer's all-to-alls of one pass when that pass runs alone (fwd.ep / bwd.ep assume
  // ep_comm_overlap's pairing): what DualPipe's unpaired chunks expose.
  Seconds ep_alone;
  CpHop cp_hop;  // the layer's ring-attention hop (rounds = 0 without CP)
  // The in-layer communication of each pass as the step's network runs it (step_in_layer.cc
  // AddPass): per class (tp, cp, ep; `compute` unused) all of its time, exposed or hidden
  // (`*_traffic`), and the compute it can hide behind (`*_window`: the region's GEMMs for TP
  // with tp_comm_overlap, the column GEMM's input gradient for SP's re-gather, each ring round's
  // attention block for CP, half the paired passes' compute for EP with ep_comm_overlap; zero for
  // what runs on the compute stream). Recompute's are in bwd_*.
  PassTime fwd_traffic;
  PassTime bwd_traffic;
  PassTime fwd_window;
  PassTime bwd_window;
};

// A collective's time, split as the engine needs it.
struct CommTime {
  Seconds latency;
  Seconds bandwidth;
  LinkClass bottleneck = LinkClass::kNvlink;
  Algorithm algo = Algorithm::kRing;
  Seconds total() const { return latency + bandwidth; }
};
CommTime ToCommTime(const CollectiveCost& c);

// One expert all-to-all (the dispatch of a MoE layer; its combine moves the same bytes back, in
// bf16 even when the dispatch is fp8), for one micro-batch, as the busiest rank of an EP group
// sees it.
struct EpAllToAll {
  Bytes size;                 // nccl-tests size: T * top_k * h * activation bytes * load factor
  Bytes sent_per_rank;        // of it, what leaves the GPU: size * (ep - 1) / ep
  Bytes cross_node_per_rank;  // what crosses its node's NICs (node-limited routing caps it)
  Seconds time;               // alpha-beta on the slowest link class the group crosses
  LinkClass bottleneck = LinkClass::kNvlink;
};

// The all-to-all of `scenario`'s MoE layers in `layout` (all zero when ep = 1 or no MoE); `act` is
// one micro-batch's T x h activation in bytes. Formulas and sources in step_costs.cc.
Result<EpAllToAll> PriceEpAllToAll(const Scenario& scenario, const Layout& layout, Bytes act);

struct StepCosts {
  EpAllToAll ep;                       // per MoE layer and micro-batch: the combine (bf16)
  EpAllToAll ep_dispatch;              // the dispatch: = ep, or half its bytes with fp8_dispatch
  std::vector<BlockCost> layer_kinds;  // parallel to OpGraph::layer_kinds
  BlockCost embedding;                 // first pipeline rank, first chunk
  BlockCost head;                      // last pipeline rank, last chunk (with MTP modules)
  Bytes pp_message;                    // one activation (or gradient) transfer between stages
  std::vector<CommTime> pp_send;       // per boundary r -> r+1 (size pp; the last wraps around)
};

// Prices the plan's ops and in-layer collectives (sim/parallel/plan.h) on its layout.
Result<StepCosts> PriceStep(const Scenario& scenario, const Plan& plan, const OpCostModel& hw);

// Seconds of all passes of `ops` (forward, or backward-input + backward-weight).
Seconds OpsTime(const std::vector<Op>& ops, bool backward, const OpCostModel& hw);
// Seconds of the backward-weight passes of `ops` alone.
Seconds WeightGradTime(const std::vector<Op>& ops, const OpCostModel& hw);

}  // namespace shardsim

#endif  // SHARDSIM_PROGRAM_STEP_COSTS_H_
