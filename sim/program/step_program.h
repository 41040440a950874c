// One training step as a task graph for the discrete-event engine (sim/engine).
//
// Each simulated device has a compute stream (forward and backward chunks in the schedule's
// order, sim/schedule; TP/CP/EP communication priced inside them, sim/program/step_costs.h),
// two pipeline streams (activations to the next rank, gradients to the previous one), a data-
// parallel stream (gradient reduction in buckets overlapped with the last backward, parameter
// all-gathers, ZeRO-3 gathers). Its collectives and transfers are flows, one per phase of the
// algorithm NCCL runs, on the physical links they cross (its NVLink port, its rail's NIC, its
// leaf domain's and pod's uplinks: sim/program/step_links.h), in bytes on links of bytes/s,
// shared max-min fairly with every other flow on the same link.
//
// Representative mode simulates one device per pipeline rank: every data/context-parallel
// replica does the same work at the same time, so one pipeline stands for all (docs/reference.md
// §2) and the replicas appear as a multiplicity (a weight) on the links they share with it.
// Every-rank mode simulates each (dp, cp, pp) rank with its own groups and its own flows on the
// shared links, and joins each collective across its members; tests check the two agree.
#ifndef SHARDSIM_PROGRAM_STEP_PROGRAM_H_
#define SHARDSIM_PROGRAM_STEP_PROGRAM_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/engine/engine.h"
#include "sim/program/step_costs.h"
#include "sim/program/step_links.h"
#include "sim/topology/placement.h"

namespace shardsim {

class OrderCache;

// The most pieces a chunk's last backward is split into, one per gradient bucket whose reduction
// can start while the rest computes (parallel.overlap_grad_reduce; parallel.dp_bucket_size sets
// how many below this). The cap bounds the task count (README Speed, issue 17): a smaller
// dp_bucket_size than grads/kMaxGradBuckets is simulated as kMaxGradBuckets buckets, said by
// --explain and, when the scenario set dp_bucket_size, by a warning (GradBuckets). The sweep's
// step bound counts on it (sim/sweep/step_bound.cc).
inline constexpr int64_t kMaxGradBuckets = 16;

// How a chunk's gradients are bucketed: the buckets parallel.dp_bucket_size asks for
// (ceil(grads / dp_bucket_size)) and the ones simulated (at most kMaxGradBuckets).
struct GradBuckets {
  Bytes grads;            // the chunk's data-parallel gradients
  int64_t requested = 0;  // ceil(grads / dp_bucket_size), at least 1
  int64_t simulated = 0;  // min(requested, kMaxGradBuckets)
  bool capped() const { return simulated < requested; }
  Bytes simulated_size() const {
    return simulated > 0 ? grads / static_cast<double>(simulated) : Bytes(0);
  }
};
GradBuckets BucketGradients(Bytes grads, double dp_bucket_bytes);

class OpCostModel;
struct MemoryBudget;

enum class TaskCategory : uint8_t {
  kForward,        // forward of a chunk (or a layer under ZeRO-3) on the compute stream
  kBackward,       // backward, with its recompute
  kOptimizer,      // optimizer step over the local shard
  kPpSend,         // activation or gradient transfer to a neighbouring pipeline rank
  kGradReduce,     // data-parallel gradient all-reduce / reduce-scatter
  kParamGather,    // ZeRO-1/2 parameter all-gather after the step (or overlapped with forward)
  kZero3Gather,    // ZeRO-3 / FSDP parameter all-gather before a layer's forward or backward
  kEmbeddingSync,  // tied-embedding gradient all-reduce between first and last rank
  kJoin,           // every-rank mode: a collective completes when all its members have
};
inline constexpr int kNumTaskCategories = 9;
const char* Name(TaskCategory c);

// Which part of a backward a kBackward task is: all of it, or (under a schedule that splits it,
// sim/schedule SplitsBackward) its input gradient B or its weight gradient W.
enum class BackwardPart : uint8_t { kWhole, kInput, kWeight };

// What the report needs to know of each task (indexed by TaskId). The fields are ordered widest
// first so that padding costs nothing: 96 bytes a task (the program holds one per task).
struct TaskInfo {
  PassTime parts;          // compute tasks: what their duration is made of
  Seconds recompute;       // backward tasks: the recompute forward inside `parts`
  Bytes bytes;             // communication tasks: the collective's size
  Bytes activation_delta;  // compute tasks: activations allocated (+) or freed (-) at their end
  int32_t device = 0;
  int32_t chunk = 0;
  int32_t microbatch = 0;
  int32_t layer = -1;                // ZeRO-3 per-layer tasks
  CommGroup group = CommGroup::kTp;  // communication tasks
  CollectiveOp op = CollectiveOp::kAllReduce;
  // Communication tasks: the link class that bounded the task, as the collective model predicts
  // it when the program is built, then (ApplyBounds) the class of the link that bounded the flow
  // in the simulation for most of its bytes.
  LinkClass link = LinkClass::kNvlink;
  int16_t bucket = 0;  // a backward split by gradient bucket: piece `bucket` of `buckets`
  int16_t buckets = 1;
  int16_t phase = 0;  // communication tasks: phase `phase` of `phases` of the collective
  int16_t phases = 1;
  TaskCategory category = TaskCategory::kForward;
  BackwardPart part = BackwardPart::kWhole;  // backward tasks
};

struct Device {
  int32_t index = 0;
  RankCoords coords;
  // compute; pipeline sends to the next / previous rank; parameter gathers; gradient reductions.
  ResourceId compute, pp_next, pp_prev, gather, grad;
  // HSDP only (framework.shard_group below dp x cp): the all-reduce of gradient shards across
  // replicas, on a stream of its own (FSDP's _all_reduce_stream); traces draw it in the grad
  // reduce lane. Invalid otherwise.
  ResourceId replica;

  // Which of the streams above `s` is, in their order (0 compute ... 4 grad), as traces and
  // reports lay them out; 0 for anything else.
  int StreamIndex(ResourceId s) const {
    if (s == pp_next) return 1;
    if (s == pp_prev) return 2;
    if (s == gather) return 3;
    if (s == grad || (replica.valid() && s == replica)) return 4;
    return 0;
  }
};
// The streams' names, by Device::StreamIndex.
inline constexpr std::array<const char*, 5> kStreamNames = {
    "compute", "pp send to next", "pp send to previous", "parameter gather", "gradient reduce"};

// One kind of communication of the step (a category, group and op), as the network runs it: the
// largest instance's algorithm and phase flows (for `simulate --explain`, network_explain.h).
struct CommKind {
  TaskCategory category = TaskCategory::kGradReduce;
  CommGroup group = CommGroup::kGrad;
  CollectiveOp op = CollectiveOp::kAllReduce;
  Algorithm algo = Algorithm::kRing;
  Bytes size;  // nccl-tests size of the largest instance
  int32_t device = 0;
  std::vector<PhaseFlow> phases;
};

struct StepProgram {
  Engine engine;
  // Indexed by TaskId (the engine's task label); shared so the engine's task namer stays valid
  // when the program is moved.
  std::shared_ptr<std::vector<TaskInfo>> tasks = std::make_shared<std::vector<TaskInfo>>();
  std::vector<Device> devices;
  std::vector<StepLink> links;       // the engine links of the step's network, in creation order
  std::vector<CommKind> comm_kinds;  // in the order first seen
  int64_t microbatches = 0;
  // The bucketing of the chunk with the most gradients whose last backward releases them bucket
  // by bucket (requested 0: none does, e.g. overlap_grad_reduce false or dp 1).
  GradBuckets grad_buckets;
};

// After a run: sets each communication task's TaskInfo::link to the class of the link that
// bounded its flow for most of its bytes (RunResult::BoundBy); tasks no link bounded keep the
// model's prediction.
void ApplyBounds(const StepProgram& program, const RunResult& run);

struct ProgramOptions {
  bool every_rank = false;
  // Build a pass that is the same for every micro-batch of its chunk, phase and pairing once and
  // replay it for the others (ids, durations, bytes, dependencies and infos as if built one by
  // one). False builds every pass task by task: the oracle tests/program/replay_test.cc holds
  // the replayed program equal to.
  bool replay_passes = true;
  // Name the step's repetition to the engine (Engine::SetCounterparts: each micro-batch's tasks
  // are the counterparts of the same tasks one schedule period earlier), so that it advances
  // exactly over the periods whose state repeats. False simulates every period: the oracle
  // tests/program/periods_test.cc holds the result equal to, bit for bit.
  bool periods = true;
  // Where the schedule's run orders are taken from (sim/schedule/schedule.h; nullptr: built
  // here): RunStep shares them with EstimateMemory, which walks the same orders.
  OrderCache* orders = nullptr;
};

// The task graph of the plan's step (sim/parallel/plan.h: its op graph, layer split, rules and
// layout) at `costs`.
Result<StepProgram> BuildStepProgram(const Scenario& scenario, const Plan& plan,
                                     const StepCosts& costs, const OpCostModel& hw,
                                     const MemoryBudget& memory, const ProgramOptions& options);

}  // namespace shardsim

#endif  // SHARDSIM_PROGRAM_STEP_PROGRAM_H_
