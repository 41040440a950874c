#include "sim/memory/budget.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sim/memory/allocator.h"
#include "sim/memory/caching_allocator.h"
#include "sim/memory/layer_forward.h"
#include "sim/model/op_graph.h"
#include "sim/model/recompute.h"
#include "sim/parallel/stages.h"
#include "sim/schedule/schedule.h"

namespace shardsim {
namespace {

double RoundUp(double bytes, double unit) { return std::ceil(bytes / unit) * unit; }

}  // namespace

double InFlightMicrobatches(PipelineSchedule schedule, int64_t pp, int64_t virtual_stages,
                            int64_t microbatches, int64_t stage, int64_t microbatch_group) {
  // The schedule's warm-up forwards (Megatron-LM's counts, sim/schedule: GPipe all of them,
  // 1F1B pp - stage - 1, interleaved (pp - stage - 1)·2 + (v - 1)·N chunks, N the micro-batch
  // group (pp by default), or all when m = pp) plus the one forward the steady state runs before
  // its first backward, in micro-batches.
  const int64_t v =
      schedule == PipelineSchedule::kInterleaved1F1B ? std::max<int64_t>(1, virtual_stages) : 1;
  const ScheduleShape shape{schedule, pp, v, microbatches, microbatch_group};
  const int64_t chunks = std::min(WarmupCount(shape, stage) + 1, microbatches * v);
  return static_cast<double>(chunks) / static_cast<double>(v);
}

namespace {

// The most activation bytes `rank` holds at once when its chunk c saves chunk_bytes[c] per
// micro-batch: the run order alone decides how many micro-batches each chunk holds (forwards
// done, backwards not), whatever the timing. For an interleaved rank whose chunks save
// different bytes (the embedding on the first, the head on the last, a split that leaves a
// chunk a layer short), where the uniform in-flight factor does not hold. Nothing when the order
// cannot be built.
//
// Under a schedule that splits the backward, B frees all but `held[c]` (what W needs,
// WeightGradHeldBytes) and W frees that: the same events, in the same order, as the simulated
// timeline (sim/program/step_program.cc).
Bytes PeakOverTheOrder(const std::vector<ScheduleItem>& order,
                       const std::vector<double>& chunk_bytes, const std::vector<double>& held) {
  double live = 0.0, peak = 0.0;
  for (const ScheduleItem& item : order) {
    const size_t c = static_cast<size_t>(item.chunk);
    const double b = chunk_bytes[c];
    switch (item.phase) {
      case Phase::kForward:
        live += b;
        break;
      case Phase::kBackward:
        live -= b;
        break;
      case Phase::kInput:
        live -= b - held[c];
        break;
      case Phase::kWeight:
        live -= held[c];
        break;
    }
    peak = std::max(peak, live);
  }
  return Bytes(peak);
}

std::optional<Bytes> PeakOverTheOrder(const ScheduleShape& shape, int64_t rank,
                                      const std::vector<double>& chunk_bytes, OrderCache* cache) {
  if (cache != nullptr) {
    Result<std::shared_ptr<const std::vector<ScheduleItem>>> order = cache->GetRank(shape, rank);
    if (!order.ok()) return std::nullopt;
    return PeakOverTheOrder(**order, chunk_bytes, {});
  }
  Result<std::vector<ScheduleItem>> order = PipelineOrder(shape, rank);
  if (!order.ok()) return std::nullopt;
  return PeakOverTheOrder(*order, chunk_bytes, {});
}

}  // namespace

ModelStateBytes ZeroModelStates(double params, double weight_bytes, double grad_bytes,
                                double optimizer_bytes, int zero_stage, double shards) {
  // ZeRO (arXiv 1910.02054 §5.1, Figure 1): P_os shards the optimizer state, P_os+g also the
  // gradients, P_os+g+p also the parameters. Checked against the 7.5B / 64-GPU example
  // (120 / 31.4 / 16.6 / 1.9 GB) in tests/memory/budget_test.cc.
  ModelStateBytes s;
  s.weights = Bytes(params * weight_bytes / (zero_stage >= 3 ? shards : 1.0));
  s.gradients = Bytes(params * grad_bytes / (zero_stage >= 2 ? shards : 1.0));
  s.optimizer = Bytes(params * optimizer_bytes / (zero_stage >= 1 ? shards : 1.0));
  return s;
}

namespace {

struct ParamSplit {
  int64_t dense = 0;
  int64_t expert = 0;
};

ParamSplit Params(const std::vector<Op>& ops) {
  ParamSplit p;
  for (const Op& op : ops) {
    (op.tp_split == TpSplit::kExperts ? p.expert : p.dense) += op.params;
  }
  return p;
}

double WeightBytes(DType precision) {
  switch (precision) {
    case DType::kFp32:
    case DType::kTf32:
      return 4.0;
    default:
      return 2.0;  // fp8 training keeps bf16 weights; fp8 copies are made per GEMM
  }
}

double OptimizerBytes(const TrainingSpec& t) {
  const bool master = WeightBytes(t.precision) < 4.0;  // fp32 master copy of 16-bit weights
  // Adam m and v / SGD momentum, in training.optimizer_state_dtype (fp32, or bf16 as DeepSeek-V3
  // §3.3.3 keeps them).
  const double element = BytesOf(t.optimizer_state_dtype);
  const double moments = (t.optimizer == Optimizer::kAdam ? 2.0 : 1.0) * element;
  return moments + (master ? 4.0 : 0.0);
}

// The blocks one micro-batch's saved activations of `ops` take when `kept` bytes are kept: one
// per op's saved tensors, or one block when recompute keeps other bytes than the ops save (as
// StageMemory::activation_blocks lists them).
std::vector<double> SavedBlocks(const std::vector<Op>& ops, Bytes kept) {
  std::vector<double> out;
  if (kept.value() <= 0.0) return out;
  if (Sum(ops).saved == kept) {
    for (const Op& op : ops) {
      if (op.saved.value() > 0.0) out.push_back(op.saved.value());
    }
  } else {
    out.push_back(kept.value());
  }
  return out;
}

// FSDP2's streams (torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py): the default
// (compute) stream, the all-gather copy-in stream (foreach_all_gather allocates the flat
// all-gather output there) and the reduce-scatter stream (foreach_reduce allocates the sharded
// reduce output there; the reduce-scatter input on the current stream).
constexpr int kComputeStream = 0;
constexpr int kAllGatherStream = 1;
constexpr int kReduceScatterStream = 2;

// The replay ReplayFsdp2Step describes (budget.h).
StepReplay ReplaySteps(const OpGraph& g, const PipelineRank& rank, const TrainingSpec& training,
                       NormKind norm, const MemoryBudget& b, double state_elem, int moments,
                       int64_t microbatches) {
  CachingAllocator a(true);
  const double w = b.weight_bytes_per_param;  // the gathered (param) dtype
  const double rg = b.grad_bytes_per_param;   // the reduce dtype
  const double shards = static_cast<double>(b.zero_shards);
  const bool full = training.recompute == Recompute::kFull;
  const bool sac = training.recompute == Recompute::kSelectiveOps;
  const bool checkpointed = CheckpointedForward(training);
  std::vector<const LayerOps*> layers;
  for (const LayerRange& c : rank.chunks) {
    for (int64_t i = c.begin; i < c.end; ++i) layers.push_back(&g.layer(i));
  }
  // Each layer kind's forward events, built once.
  std::map<const LayerOps*, LayerForward> forwards;
  auto forward_of = [&](size_t i) -> const LayerForward& {
    auto it = forwards.find(layers[i]);
    if (it == forwards.end()) {
      it = forwards.emplace(layers[i], LayerForwardEvents(*layers[i], training, norm)).first;
    }
    return it->second;
  };
  auto params_of = [](const std::vector<const Op*>& ops) {
    double p = 0.0;
    for (const Op* op : ops) p += static_cast<double>(op->params);
    return p;
  };
  auto with_params = [](const std::vector<Op>& ops) {
    std::vector<const Op*> out;
    for (const Op& op : ops) {
      if (op.params > 0) out.push_back(&op);
    }
    return out;
  };
  std::vector<const Op*> root = with_params(g.embedding);  // the root group: what no block holds
  for (const Op* op : with_params(g.head)) root.push_back(op);
  std::vector<std::vector<const Op*>> groups;  // the layers' groups
  for (const LayerOps* l : layers) groups.push_back(with_params(l->ops));
  std::vector<const Op*> all = root;
  for (const auto& gr : groups) all.insert(all.end(), gr.begin(), gr.end());
  for (const Op* op : all) a.Malloc(static_cast<double>(op->params) * 4.0 / shards);
  a.Malloc(kCublasWorkspaceBytes);

  int64_t flat = -1;  // the last group's all-gather output, freed after the next copy-out
  auto unshard = [&](const std::vector<const Op*>& ops) {
    std::vector<int64_t> ids;
    const double p = params_of(ops);
    if (p <= 0.0) return ids;
    // all_gather_inputs: the fp32 shards cast to the param dtype, then the flat output they are
    // copied into (foreach_all_gather on the copy-in stream), the cast freed after the copy-in.
    const int64_t cast = w < 4.0 ? a.Malloc(p * w / shards, kAllGatherStream) : -1;
    const int64_t next = a.Malloc(p * w, kAllGatherStream);
    a.Free(cast);
    for (const Op* op : ops) ids.push_back(a.Malloc(static_cast<double>(op->params) * w));
    a.Free(flat);
    flat = next;
    return ids;
  };
  auto free_all = [&](std::vector<int64_t>& ids) {
    for (const int64_t id : ids) a.Free(id);
    ids.clear();
  };
  auto alloc_all = [&](const std::vector<double>& sizes) {
    std::vector<int64_t> ids;
    for (const double bytes : sizes) ids.push_back(a.Malloc(bytes));
    return ids;
  };
  std::vector<int64_t> sharded_grads;  // one per group: the reduce-scatter outputs
  int64_t rs_input = -1;
  auto reduce = [&](double p, std::vector<int64_t>& unsharded_grad_ids, bool first) {
    if (p <= 0.0) return;
    a.Free(rs_input);
    rs_input = a.Malloc(p * rg);
    free_all(unsharded_grad_ids);
    const int64_t out = a.Malloc(p * rg / shards, kReduceScatterStream);
    if (first) {
      sharded_grads.push_back(out);
    } else {
      a.Free(out);  // accumulated into the gradient
    }
  };
  const double hidden = layers.empty() ? 0.0 : layers.front()->input_bytes.value();

  for (int step = 0; step < 2; ++step) {
    free_all(sharded_grads);
    for (int64_t mb = 0; mb < microbatches; ++mb) {
      const bool first = mb == 0;
      // Forward.
      std::vector<int64_t> root_params = unshard(root);
      std::vector<int64_t> emb_saved = alloc_all(SavedBlocks(g.embedding, Sum(g.embedding).saved));
      std::vector<std::vector<int64_t>> saved(layers.size());
      std::vector<int64_t> last_params;  // torchtitan keeps the last block unsharded
      int64_t temp = -1;                 // the previous op's output, freed after the next op
      if (checkpointed) {
        // The embedding's output: the first block's input (tok_embeddings(tokens)).
        for (const Op& op : g.embedding) {
          if (op.output.value() > 0.0) temp = a.Malloc(op.output.value());
        }
      }
      for (size_t i = 0; i < layers.size(); ++i) {
        std::vector<int64_t> params = unshard(groups[i]);
        if (checkpointed) {
          // The block's forward tensor by tensor (sim/memory/layer_forward.h): its input is the
          // previous block's output, what the checkpoint keeps stays to the backward.
          const LayerForward& f = forward_of(i);
          std::map<int, int64_t> id{{0, temp}};
          for (const TensorEvent& ev : f.events) {
            if (ev.bytes > 0.0) {
              id[ev.tensor] = a.Malloc(ev.bytes);
            } else {
              a.Free(id[ev.tensor]);
            }
          }
          for (const int t : f.kept) saved[i].push_back(id[t]);
          temp = id[f.output];
          if (i + 1 == layers.size()) {
            last_params = std::move(params);
          } else {
            free_all(params);
          }
          continue;
        }
        const Bytes kept = LayerActivationBytes(*layers[i], training);
        const bool per_op = Sum(layers[i]->ops).saved == kept;
        if (!per_op) saved[i] = alloc_all(SavedBlocks(layers[i]->ops, kept));
        for (const Op& op : layers[i]->ops) {
          if (per_op && op.saved.value() > 0.0) saved[i].push_back(a.Malloc(op.saved.value()));
          if (op.output.value() > 0.0) {
            const int64_t out = a.Malloc(op.output.value());
            a.Free(temp);
            temp = out;
          }
        }
        if (i + 1 == layers.size()) {
          last_params = std::move(params);
        } else {
          free_all(params);
        }
      }
      if (!checkpointed) a.Free(temp);
      a.Free(flat);
      flat = -1;
      std::vector<int64_t> head_saved;
      int64_t logits = -1, lsm = -1;
      double logits_bytes = 0.0, loss_out = 0.0;
      for (const Op& op : g.head) {
        if (checkpointed && op.kind == OpKind::kNorm) {
          // The final norm outside any checkpoint, eager in torchtitan either way (torch.compile
          // wraps the blocks only, apply_compile): autograd keeps x.float() (pow's and the
          // product's input) and the 16-bit normalized copy (the weight product's input); the
          // block output it read is freed; the output is the head's saved input.
          const double x = op.output.value();
          if (norm == NormKind::kRmsNorm) {
            head_saved.push_back(a.Malloc(2.0 * x));  // x.float()
            const int64_t sq = a.Malloc(2.0 * x);     // .pow(2)
            a.Free(sq);
            const int64_t y = a.Malloc(2.0 * x);  // x * rsqrt(...)
            head_saved.push_back(a.Malloc(x));    // .type_as(x)
            a.Free(y);
          }
          head_saved.push_back(a.Malloc(x));  // * self.weight: the head's input
          a.Free(temp);
          temp = -1;
          continue;
        }
        if (checkpointed && op.kind == OpKind::kMatmul) {
          logits_bytes = op.output.value();
          logits = a.Malloc(logits_bytes);
          continue;
        }
        if (op.kind == OpKind::kLoss && g.options.te_cross_entropy) {
          // Transformer Engine's cross-entropy writes the gradient into the logits and keeps
          // them: no allocation of its own.
          lsm = logits;
          logits = -1;
          continue;
        }
        if (op.kind == OpKind::kLoss) {
          loss_out = op.output.value();
          const int64_t f32 = training.fused_loss ? -1 : a.Malloc(op.saved.value());
          lsm = a.Malloc(op.saved.value());
          a.Free(f32);
          a.Free(logits);
          continue;
        }
        if (op.saved.value() > 0.0) head_saved.push_back(a.Malloc(op.saved.value()));
        if (op.kind == OpKind::kMatmul) {
          logits_bytes = op.output.value();
          logits = a.Malloc(logits_bytes);
        }
      }
      // Backward: the loss, then the head and final norm (reverse order).
      int64_t logits_grad = -1;
      if (g.options.te_cross_entropy) {
        logits_grad = lsm;  // scaled in place by the loss's gradient
      } else if (training.fused_loss) {
        logits_grad = a.Malloc(loss_out);
        a.Free(lsm);
      } else {
        const int64_t g1 = a.Malloc(loss_out / 2.0);
        const int64_t g2 = a.Malloc(loss_out / 2.0);
        a.Free(g1);
        logits_grad = a.Malloc(logits_bytes);
        a.Free(g2);
        a.Free(lsm);
      }
      std::vector<int64_t> root_grads;
      int64_t d = -1;
      auto hidden_grad = [&]() {
        const int64_t next = a.Malloc(hidden);
        a.Free(d);
        d = next;
      };
      for (auto it = g.head.rbegin(); it != g.head.rend(); ++it) {
        if (it->kind == OpKind::kLoss) continue;
        if (it->params > 0) root_grads.push_back(a.Malloc(static_cast<double>(it->params) * w));
        hidden_grad();
        if (it->kind == OpKind::kMatmul) a.Free(logits_grad);
      }
      free_all(head_saved);
      for (size_t k = layers.size(); k-- > 0;) {
        std::vector<int64_t> params =
            k + 1 == layers.size() ? std::move(last_params) : unshard(groups[k]);
        // What the backward reads that the forward did not keep, rebuilt by the recompute: the
        // whole layer's saved tensors (full), or all but what op-level SAC stored (selective_ops).
        const double all_saved = Sum(layers[k]->ops).saved.value();
        const double rebuild =
            full ? all_saved
                 : (sac ? std::max(0.0, all_saved - (LayerActivationBytes(*layers[k], training) -
                                                     layers[k]->input_bytes)
                                                        .value())
                        : 0.0);
        const int64_t rebuilt = rebuild > 0.0 ? a.Malloc(rebuild) : -1;
        std::vector<int64_t> grads;
        for (const Op* op : groups[k])
          grads.push_back(a.Malloc(static_cast<double>(op->params) * w));
        hidden_grad();
        a.Free(rebuilt);
        free_all(saved[k]);
        free_all(params);
        reduce(params_of(groups[k]), grads, first);
      }
      a.Free(flat);
      flat = -1;
      for (const Op& op : g.embedding) {
        if (op.params > 0) root_grads.push_back(a.Malloc(static_cast<double>(op.params) * w));
      }
      free_all(emb_saved);
      a.Free(d);
      reduce(params_of(root), root_grads, first);
      free_all(root_params);
      a.Free(rs_input);
      rs_input = -1;
    }
    if (step == 0) {
      for (const Op* op : all) {
        for (int k = 0; k < moments; ++k) {
          a.Malloc(static_cast<double>(op->params) * state_elem / shards);
        }
      }
    }
  }
  StepReplay r;
  r.reserved = Bytes(static_cast<double>(a.peak_reserved()));
  r.allocated = Bytes(static_cast<double>(a.peak_allocated()));
  r.collective_streams = Bytes(
      static_cast<double>(a.reserved_on(kAllGatherStream) + a.reserved_on(kReduceScatterStream)));
  return r;
}

}  // namespace

Result<MemoryBudget> EstimateMemory(const ModelSpec& model, const TrainingSpec& training,
                                    const ParallelSpec& parallel, const HardwareSpec& hardware,
                                    const FrameworkSpec& framework) {
  Result<Sharding> plan = ShardModel(model, training, parallel);
  if (!plan.ok()) return plan.status();
  return EstimateMemory(*plan, model, training, parallel, hardware, framework);
}

Result<MemoryBudget> EstimateMemory(const Sharding& plan, const ModelSpec& model,
                                    const TrainingSpec& training, const ParallelSpec& parallel,
                                    const HardwareSpec& hardware, const FrameworkSpec& framework) {
  return EstimateMemory(plan, model, training, parallel, hardware, framework, nullptr);
}

Result<MemoryBudget> EstimateMemory(const Sharding& plan, const ModelSpec& model,
                                    const TrainingSpec& training, const ParallelSpec& parallel,
                                    const HardwareSpec& hardware, const FrameworkSpec& framework,
                                    OrderCache* order_cache) {
  const OpGraph& g = plan.graph;
  const int64_t microbatches = plan.rules.microbatches;

  MemoryBudget b;
  b.weight_bytes_per_param = WeightBytes(training.precision);
  b.grad_bytes_per_param = BytesOf(training.grad_dtype);
  b.optimizer_bytes_per_param = OptimizerBytes(training);
  b.zero_shards = plan.rules.zero_shards;
  b.expert_zero_shards = plan.rules.expert_zero_shards;
  // HSDP (framework.shard_group): model states shard inside groups of that many ranks.
  if (framework.shard_group > 0) {
    b.zero_shards = framework.shard_group;
    b.expert_zero_shards = std::max<int64_t>(1, b.zero_shards / std::max<int64_t>(1, parallel.ep));
  }
  const bool fsdp = parallel.zero_stage >= 3;
  // FSDP2 with a 16-bit param_dtype (MixedPrecisionPolicy): the sharded parameter stays in its
  // original fp32 and is what the optimizer steps ("The optimizer step uses the sharded parameter
  // in the original dtype", torch/distributed/fsdp/_fully_shard/_fsdp_api.py); the 16-bit
  // weights exist only unsharded, cast per all-gather (FSDPParam.all_gather_inputs). So no
  // sharded 16-bit copy: the fp32 master counted in the optimizer state is the parameter.
  b.fp32_sharded_params = fsdp && framework.fully_shard && b.weight_bytes_per_param < 4.0;
  const double shard_weight_bytes = b.fp32_sharded_params ? 0.0 : b.weight_bytes_per_param;
  const bool unsharded_params = fsdp && KeepsParamsUnsharded(framework, parallel.pp);
  const bool unsharded_grads = fsdp && HoldsUnshardedGrads(framework, parallel.pp, microbatches);
  const int64_t gathered_layers = GatheredLayers(framework);
  const int64_t world = parallel.dp * parallel.tp * parallel.pp * parallel.cp;
  // A schedule that splits the backward: every rank's order, walked for its peak below.
  const bool split = SplitsBackward(parallel.schedule);
  const int64_t sp_shards = plan.rules.sp_shards;
  std::shared_ptr<const OrderCache::Orders> split_orders;
  if (split) {
    const ScheduleShape shape = ShapeOf(parallel, microbatches);
    if (order_cache != nullptr) {
      Result<std::shared_ptr<const OrderCache::Orders>> orders = order_cache->Get(shape);
      if (!orders.ok()) return orders.status();
      split_orders = std::move(*orders);
    } else {
      Result<std::vector<std::vector<ScheduleItem>>> orders = PipelineOrders(shape);
      if (!orders.ok()) return orders.status();
      split_orders = std::make_shared<const OrderCache::Orders>(std::move(*orders));
    }
  }

  // One block per model-state tensor of `ops` (sim/memory/allocator.h), ZeRO-sharded over
  // `shards` as ZeroModelStates shards the totals.
  const double state_elem = BytesOf(training.optimizer_state_dtype);
  const int moments = training.optimizer == Optimizer::kAdam ? 2 : 1;
  const bool master = b.weight_bytes_per_param < 4.0;
  // Appended to `out` unmerged (MergeBlocks): each count a whole number.
  auto add_state_blocks = [&](const std::vector<Op>& ops, BlockSizes& out) {
    for (const Op& op : ops) {
      if (op.params <= 0) continue;
      const double n = static_cast<double>(op.params);
      const double shards = static_cast<double>(
          op.tp_split == TpSplit::kExperts ? b.expert_zero_shards : b.zero_shards);
      const int z = parallel.zero_stage;
      if (shard_weight_bytes > 0.0) {
        out.emplace_back(n * shard_weight_bytes / (z >= 3 ? shards : 1.0), 1.0);
      }
      out.emplace_back(n * b.grad_bytes_per_param / (z >= 2 ? shards : 1.0), 1.0);
      if (unsharded_grads) out.emplace_back(n * b.grad_bytes_per_param, 1.0);
      out.emplace_back(n * state_elem / (z >= 1 ? shards : 1.0), moments);
      if (master) out.emplace_back(n * 4.0 / (z >= 1 ? shards : 1.0), 1.0);
    }
  };
  auto add_activation_blocks = [](const std::vector<Op>& ops, Bytes kept, BlockSizes& out) {
    for (const double block : SavedBlocks(ops, kept)) out.emplace_back(block, 1.0);
  };

  // What each layer kind brings to a stage, the same for every layer of the kind: worked out once
  // per kind, added per layer in the layers' order (the same sums, bit for bit).
  struct KindMemory {
    ParamSplit params;
    Bytes acts;   // LayerActivationBytes
    Bytes held;   // split backward: WeightGradHeldBytes
    Bytes saved;  // all the layer's ops save (what full recompute rebuilds)
    bool moe = false;
    BlockSizes state_blocks, activation_blocks;
  };
  std::vector<KindMemory> kinds(g.layer_kinds.size());
  for (size_t k = 0; k < kinds.size(); ++k) {
    const LayerOps& layer = g.layer_kinds[k];
    KindMemory& km = kinds[k];
    km.params = Params(layer.ops);
    km.acts = LayerActivationBytes(layer, training);
    if (split) km.held = WeightGradHeldBytes(layer.ops, training, sp_shards);
    km.saved = Sum(layer.ops).saved;
    km.moe = layer.kind == "moe";
    add_state_blocks(layer.ops, km.state_blocks);
    add_activation_blocks(layer.ops, km.acts, km.activation_blocks);
    MergeBlocks(km.state_blocks);
    MergeBlocks(km.activation_blocks);
  }

  b.stages.reserve(plan.stages.size());
  std::vector<int64_t> kind_layers(kinds.size());  // the stage's layers of each kind
  for (const PipelineRank& rank : plan.stages) {
    StageMemory s;
    s.stage = rank.rank;
    s.layers = rank.layers();
    ParamSplit p;
    Bytes layer_acts;
    Bytes rebuilt;  // largest single layer's full activations (full recompute)
    int64_t largest_layer_params = 0;
    int64_t layer_params = 0;  // summed over the stage's layers (FSDP2's root group: the rest)
    bool has_moe = false;
    std::vector<double> chunk_bytes;  // saved per micro-batch by each chunk's layers
    std::vector<double> chunk_held;   // split backward: held by each chunk from B to W
    chunk_bytes.reserve(rank.chunks.size());
    chunk_held.reserve(rank.chunks.size());
    std::fill(kind_layers.begin(), kind_layers.end(), 0);
    for (const LayerRange& chunk : rank.chunks) {
      Bytes in_chunk, held;
      for (int64_t i = chunk.begin; i < chunk.end; ++i) {
        const size_t kind = static_cast<size_t>(g.layer_kind_of[static_cast<size_t>(i)]);
        const KindMemory& km = kinds[kind];
        ++kind_layers[kind];
        p.dense += km.params.dense;
        p.expert += km.params.expert;
        largest_layer_params = std::max(largest_layer_params, km.params.dense + km.params.expert);
        layer_params += km.params.dense + km.params.expert;
        layer_acts += km.acts;
        in_chunk += km.acts;
        if (split) held += km.held;
        rebuilt = std::max(rebuilt, km.saved);
        has_moe = has_moe || km.moe;
      }
      chunk_bytes.push_back(in_chunk.value());
      chunk_held.push_back(held.value());
    }
    // A kind's blocks once per layer of it (whole counts: n x count is their exact sum).
    for (size_t k = 0; k < kinds.size(); ++k) {
      const double n = static_cast<double>(kind_layers[k]);
      if (n == 0.0) continue;
      for (const auto& [bytes, count] : kinds[k].state_blocks) {
        s.state_blocks.emplace_back(bytes, count * n);
      }
      for (const auto& [bytes, count] : kinds[k].activation_blocks) {
        s.activation_blocks.emplace_back(bytes, count * n);
      }
    }
    // Embedding (first stage) and head / MTP (last stage): saved per micro-batch like a layer's
    // (the embedding's dropout mask until that micro-batch's backward; the head's logits for the
    // loss, which GPipe's last stage holds for every micro-batch and 1F1B's for one).
    Bytes edge_acts;
    Bytes embedding_acts;
    if (rank.has_embedding) {
      const ParamSplit ep = Params(g.embedding);
      p.dense += ep.dense;
      embedding_acts = Sum(g.embedding).saved;
      edge_acts += embedding_acts;
      add_state_blocks(g.embedding, s.state_blocks);
      add_activation_blocks(g.embedding, embedding_acts, s.activation_blocks);
    }
    if (rank.has_head) {
      for (const std::vector<Op>* ops : {&g.head, &g.mtp}) {
        const ParamSplit hp = Params(*ops);
        p.dense += hp.dense;
        p.expert += hp.expert;
        const Bytes saved = Sum(*ops).saved;
        edge_acts += saved;
        add_state_blocks(*ops, s.state_blocks);
        add_activation_blocks(*ops, saved, s.activation_blocks);
        for (const Op& op : *ops) {
          if (op.kind == OpKind::kLoss) s.loss_buffers = std::max(s.loss_buffers, op.output);
        }
      }
      p.dense += TiedHeadCopyParams(model, parallel);
    }
    MergeBlocks(s.state_blocks);
    MergeBlocks(s.activation_blocks);
    s.params = p.dense + p.expert;
    s.expert_params = p.expert;
    const ModelStateBytes dense = ZeroModelStates(
        static_cast<double>(p.dense), shard_weight_bytes, b.grad_bytes_per_param,
        b.optimizer_bytes_per_param, parallel.zero_stage, static_cast<double>(b.zero_shards));
    const ModelStateBytes expert =
        ZeroModelStates(static_cast<double>(p.expert), shard_weight_bytes, b.grad_bytes_per_param,
                        b.optimizer_bytes_per_param, parallel.zero_stage,
                        static_cast<double>(b.expert_zero_shards));
    s.weights = dense.weights + expert.weights;
    s.gradients = dense.gradients + expert.gradients;
    s.optimizer = dense.optimizer + expert.optimizer;
    if (fsdp) {
      // FSDP/ZeRO-3 gathers the next prefetch_layers layers' weights while one computes (two
      // layers under Megatron-Core's and FSDP2's one-module prefetch).
      const double w = b.weight_bytes_per_param;
      const double stage_params = static_cast<double>(s.params);
      s.zero3_buffers = Bytes(static_cast<double>(gathered_layers) *
                              static_cast<double>(largest_layer_params) * w);
      if (unsharded_params) {
        // Every layer's gather of the first forward serves the whole step: the stage's weights
        // stay unsharded (torchtitan apply_fsdp under PP; FSDP2 reshard_after_forward=False).
        s.zero3_buffers = Bytes(stage_params * w);
      } else if (framework.reshard_after_forward == Reshard::kToGroup) {
        // FSDP2 reshard_after_forward=N: each layer keeps a 1/N shard from forward to backward.
        s.zero3_buffers += Bytes(stage_params * w / static_cast<double>(framework.reshard_group));
      }
      if (unsharded_grads) {
        s.unsharded_grads = Bytes(stage_params * b.grad_bytes_per_param);
        s.gradients += s.unsharded_grads;
      }
      if (framework.fully_shard) {
        // FSDP2 (budget.h): the root group unsharded through the step's forward and backward,
        // and the all-gather / reduce-scatter streams' cached segments.
        const double root = static_cast<double>(s.params - layer_params);
        const double layer = static_cast<double>(largest_layer_params);
        if (!unsharded_params) s.root_gathered = Bytes(root * w);
        s.zero3_buffers += s.root_gathered;
        const double gather =
            std::max(root * w + layer * w, (s.layers >= 2 ? 2.0 : 1.0) * layer * w);
        const double rg = b.grad_bytes_per_param;  // the reduce dtype (training.grad_dtype)
        double reduce = layer * rg + (root > layer ? root * rg : 0.0);
        if (framework.expandable_segments) {
          // Each stream's pool is one segment that grows by 20 MiB pages, and a request that no
          // free block fits extends the segment from the free block before its unmapped tail
          // (find_expandable_block, c10/cuda/CUDACachingAllocator.cpp): the root's
          // reduce-scatter input reuses the freed layer input's pages instead of a segment of
          // its own.
          reduce = RoundUp(std::max(layer, root) * rg, kLargeBuffer);
          s.stream_pools = Bytes(RoundUp(gather, kLargeBuffer) + reduce);
        } else {
          s.stream_pools = Bytes(gather + reduce);
        }
      }
    }
    s.in_flight =
        InFlightMicrobatches(parallel.schedule, parallel.pp, parallel.virtual_stages, microbatches,
                             rank.rank, parallel.microbatch_group_size_per_vp_stage);
    s.activations_per_microbatch = layer_acts + edge_acts;
    s.activations = s.activations_per_microbatch * s.in_flight;
    if (split) {
      // The embedding and the head (and MTP) ride on their chunks (the first and the last but on
      // DualPipe's last rank, PipelineRank::embedding_chunk / head_chunk).
      const size_t ec = static_cast<size_t>(rank.embedding_chunk);
      const size_t hc = static_cast<size_t>(rank.head_chunk);
      chunk_bytes[ec] += embedding_acts.value();
      chunk_bytes[hc] += (edge_acts - embedding_acts).value();
      if (rank.has_embedding) {
        chunk_held[ec] += WeightGradHeldBytes(g.embedding, training, sp_shards).value();
      }
      if (rank.has_head) {
        chunk_held[hc] += (WeightGradHeldBytes(g.head, training, sp_shards) +
                           WeightGradHeldBytes(g.mtp, training, sp_shards))
                              .value();
      }
      // A DualPipe micro-batch passes one of the rank's two chunks (one stage of its stream):
      // its activations there are one chunk's, the mean of the two.
      if (parallel.schedule == PipelineSchedule::kDualPipe) {
        s.activations_per_microbatch = s.activations_per_microbatch * 0.5;
      }
      s.activations = PeakOverTheOrder((*split_orders)[static_cast<size_t>(rank.rank)], chunk_bytes,
                                       chunk_held);
      if (s.activations_per_microbatch.value() > 0.0) {
        s.in_flight = s.activations.value() / s.activations_per_microbatch.value();  // effective
        s.in_flight_walked = true;
      }
    } else if (parallel.schedule == PipelineSchedule::kInterleaved1F1B) {
      // The embedding rides on the rank's first chunk, the head (and MTP) on its last, and the
      // splits that count them as layers leave those chunks a layer short: chunks that save
      // different bytes are walked over the run order.
      chunk_bytes.front() += embedding_acts.value();
      chunk_bytes.back() += (edge_acts - embedding_acts).value();
      const ScheduleShape shape = ShapeOf(parallel, microbatches);
      const bool uniform = std::all_of(chunk_bytes.begin(), chunk_bytes.end(),
                                       [&](double c) { return c == chunk_bytes.front(); });
      std::optional<Bytes> peak;  // uniform chunks: the closed form above holds
      if (!uniform) peak = PeakOverTheOrder(shape, rank.rank, chunk_bytes, order_cache);
      if (peak && s.activations_per_microbatch.value() > 0.0) {
        s.activations = *peak;
        s.in_flight = peak->value() / s.activations_per_microbatch.value();  // effective
        s.in_flight_walked = true;
      }
    }
    if (training.recompute == Recompute::kFull) s.recompute_buffer = rebuilt;
    if (has_moe) {
      // One MoE layer's dispatch and combine buffers at a time: the largest kind's (an MoE model
      // with local attention has two MoE kinds of the same buffers).
      for (const LayerOps& k : g.layer_kinds) {
        Bytes kind;
        for (const Op& op : k.ops) {
          if (op.kind == OpKind::kPermute) kind += op.output;  // dispatch + combine
        }
        s.moe_buffers = std::max(s.moe_buffers, kind);
      }
    }
    s.expandable_segments = framework.expandable_segments;
    s.cuda_context = Bytes(hardware.reserve_cuda_context);
    s.comm_buffers = Bytes(world > 1 ? hardware.reserve_comm_buffers : 0.0);
    s.fragmentation = s.Allocated(s.activations) * hardware.reserve_fragmentation;
    b.stages.push_back(std::move(s));
  }
  for (size_t i = 1; i < b.stages.size(); ++i) {
    if (b.stages[i].total() > b.stages[b.worst].total()) b.worst = i;
  }
  if (fsdp) {
    b.gathered_how = unsharded_params
                         ? "all of the stage's weights, unsharded for the whole step"
                         : std::to_string(gathered_layers) + " layers in flight" +
                               (framework.reshard_after_forward == Reshard::kToGroup
                                    ? " + 1/" + std::to_string(framework.reshard_group) +
                                          " of the stage's weights after forward"
                                    : std::string()) +
                               (framework.fully_shard ? " + the FSDP2 root group (embedding, "
                                                        "final norm, head) unsharded"
                                                      : std::string());
  }

  const std::string wdt = b.weight_bytes_per_param == 4.0 ? "fp32" : "bf16/fp16";
  b.assumptions.push_back(
      "weights " + wdt + " (" + FormatSig(b.weight_bytes_per_param, 1) + " B/param" +
      (b.fp32_sharded_params ? ", only as gathered: FSDP2 keeps the shards in fp32, the master"
                             : "") +
      "), gradients " + Name(training.grad_dtype) + " (" + FormatSig(b.grad_bytes_per_param, 1) +
      " B/param)");
  b.assumptions.push_back(std::string(training.optimizer == Optimizer::kAdam ? "Adam m and v in "
                                                                             : "SGD momentum in ") +
                          Name(training.optimizer_state_dtype) +
                          (b.weight_bytes_per_param < 4.0 ? " + fp32 master weights" : "") + " = " +
                          FormatSig(b.optimizer_bytes_per_param, 2) + " B/param, ZeRO stage " +
                          std::to_string(parallel.zero_stage) +
                          " over dp x cp = " + std::to_string(b.zero_shards) + " ranks");
  b.assumptions.push_back(
      "activations in " +
      std::string(Name(training.precision == DType::kFp32 ? DType::kFp32 : DType::kBf16)) +
      (training.fp8_saved_activations ? " (fp8 copies of the fp8 matmuls' inputs kept for backward)"
                                      : "") +
      ", recompute " + RecomputeText(training) + ", flash attention " +
      (training.flash_attention ? "on" : "off") + ", " +
      (training.fused_kernels ? "fused" : "eager") + " kernels");
  b.assumptions.push_back(
      "runtime reserve: CUDA context + library handles " +
      FormatBytes(Bytes(hardware.reserve_cuda_context)) + ", communication buffers " +
      FormatBytes(Bytes(hardware.reserve_comm_buffers)) + ", allocator fragmentation " +
      FormatSig(hardware.reserve_fragmentation * 100.0, 2) + "% of allocated (" + hardware.name +
      ")");
  if (framework.name != Framework::kMegatron || !framework.overridden.empty()) {
    for (const std::string& line : MechanismLines(framework)) b.assumptions.push_back(line);
  }
  return b;
}

Result<StepReplay> ReplayFsdp2Step(const Sharding& plan, const ModelSpec& model,
                                   const TrainingSpec& training, const ParallelSpec& parallel,
                                   const FrameworkSpec& framework, const MemoryBudget& budget) {
  const bool applies = parallel.zero_stage >= 3 && framework.fully_shard &&
                       framework.expandable_segments && budget.fp32_sharded_params &&
                       parallel.pp == 1 && plan.stages.size() == 1 &&
                       plan.stages.front().has_embedding && plan.stages.front().has_head &&
                       plan.graph.mtp.empty() && !KeepsParamsUnsharded(framework, parallel.pp);
  bool moe = false;
  for (const LayerOps& k : plan.graph.layer_kinds) moe = moe || k.kind == "moe";
  if (!applies || moe) {
    return Status::Invalid(
        "the step replay covers FSDP2 (framework fully_shard, expandable segments, a 16-bit "
        "param dtype over fp32 shards, resharded after forward) on one dense pipeline stage");
  }
  return ReplaySteps(plan.graph, plan.stages.front(), training, model.norm, budget,
                     BytesOf(training.optimizer_state_dtype),
                     training.optimizer == Optimizer::kAdam ? 2 : 1, plan.rules.microbatches);
}

void MergeBlocks(BlockSizes& blocks) {
  std::sort(blocks.begin(), blocks.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t out = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (out > 0 && blocks[out - 1].first == blocks[i].first) {
      blocks[out - 1].second += blocks[i].second;
    } else {
      blocks[out++] = blocks[i];
    }
  }
  blocks.resize(out);
}

void AddBlocks(BlockSizes& blocks, double bytes, double count) {
  auto it = std::lower_bound(blocks.begin(), blocks.end(), bytes,
                             [](const auto& block, double b) { return block.first < b; });
  if (it != blocks.end() && it->first == bytes) {
    it->second += count;
  } else {
    blocks.emplace(it, bytes, count);
  }
}

}  // namespace shardsim
