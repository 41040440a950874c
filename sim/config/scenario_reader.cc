// Reading a scenario document: its own keys, and the model / hardware / topology it names.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "sim/config/loader.h"
#include "sim/config/readers.h"
#include "sim/config/value_reader.h"

namespace shardsim {
namespace {

const std::vector<DType> kPrecisions = {DType::kFp32, DType::kFp16,  DType::kBf16,
                                        DType::kFp8,  DType::kMxfp8, DType::kNvfp4};
const std::vector<DType> kGradDTypes = {DType::kFp32, DType::kBf16, DType::kFp16};
const std::vector<Optimizer> kOptimizers = {Optimizer::kAdam, Optimizer::kSgd};
const std::vector<CrossEntropyImpl> kCrossEntropyImpls = {CrossEntropyImpl::kNative,
                                                          CrossEntropyImpl::kTe};
const std::vector<AttentionKernel> kAttentionKernels = {AttentionKernel::kFused,
                                                        AttentionKernel::kFlash2};
const std::vector<Recompute> kRecomputes = {Recompute::kNone, Recompute::kSelective,
                                            Recompute::kSelectiveOps, Recompute::kFull};
const std::vector<PipelineSchedule> kSchedules = {
    PipelineSchedule::kGpipe,    PipelineSchedule::k1F1B,     PipelineSchedule::kInterleaved1F1B,
    PipelineSchedule::kZbH1,     PipelineSchedule::kZbH2,     PipelineSchedule::kZbV,
    PipelineSchedule::kDualPipe, PipelineSchedule::kDualPipeV};

// Resolves and reads one of model / hardware / topology into *out with `read`.
template <class Spec, class ReadFn>
void ReadPart(MapReader& r, const ConfigNode& tree, Resolver* resolver, DocKind kind,
              const std::string& key, ReadFn read, Spec* out, DiagnosticSink* sink) {
  const ConfigNode* ref = r.Get(key, Need::kRequired);
  if (ref == nullptr) return;
  // A library name or a path (not an inline mapping): read once per cache (FileCache::FindPart),
  // keyed by everything the read depends on.
  std::string cache_key;
  if (ref->is_scalar() && resolver->cache() != nullptr) {
    const KeyOrigin* key_origin = tree.FindKeyOrigin(key);
    const auto at = [](const KeyOrigin& o) {
      return o.loc.file + ":" + std::to_string(o.loc.line) + ":" + std::to_string(o.loc.col) +
             "\n" + std::string(o.source_line.view()) + "\n";
    };
    cache_key = std::string(KindName(kind)) + "\n" + key + "\n" + ref->text() + "\n" +
                (ref->quoted() ? "q\n" : "p\n") + at(ref->origin()) +
                (key_origin != nullptr ? at(*key_origin) : std::string("-\n"));
    for (const std::string& d : resolver->dirs()) cache_key += d + "\n";
    if (resolver->cache()->FindPart(cache_key, out)) return;
  }
  Result<ResolvedDoc> doc = resolver->Resolve(kind, *ref, key);
  if (!doc.ok()) {
    sink->Merge(doc.status());
    return;
  }
  const KeyOrigin where = DocWhere(*doc, tree.FindKeyOrigin(key));
  const Status read_status = read(*doc, where, doc->is_inline ? key + "." : std::string(), out);
  if (read_status.ok() && !cache_key.empty()) resolver->cache()->StorePart(cache_key, *out);
  sink->Merge(read_status);
}

const std::vector<DType> kOptimizerStateDTypes = {DType::kFp32, DType::kBf16};

// training.recompute_modules: a list of module names, each once; only with recompute: selective
// (Megatron-Core's --recompute-modules applies to the selective granularity).
void ReadRecomputeModules(MapReader& tr, TrainingSpec* t) {
  const ConfigNode* list = tr.Get("recompute_modules");
  if (list == nullptr) return;
  const std::string valid = RecomputeModulesText((1u << kNumRecomputeModules) - 1);
  if (!list->is_sequence()) {
    tr.Error(*list, "recompute_modules",
             "expected a list of modules (" + valid + "), got " + list->Describe());
    return;
  }
  unsigned modules = 0;
  for (const ConfigNode& item : list->items()) {
    bool known = false;
    for (int i = 0; i < kNumRecomputeModules && item.is_scalar(); ++i) {
      const auto m = static_cast<RecomputeModule>(i);
      if (item.text() != Name(m)) continue;
      known = true;
      if ((modules & ModuleBit(m)) != 0) {
        tr.Error(item, "recompute_modules", "'" + item.text() + "' is listed twice");
        return;
      }
      modules |= ModuleBit(m);
    }
    if (!known) {
      tr.Error(item, "recompute_modules",
               "unknown module " + item.Describe() + "; valid: " + valid);
      return;
    }
  }
  if (t->recompute != Recompute::kSelective) {
    tr.Error(*list, "recompute_modules",
             std::string("recompute_modules applies to recompute: selective, but recompute is ") +
                 Name(t->recompute));
    return;
  }
  t->recompute_modules = modules;
}

// A boolean training key that only makes sense with precision: fp8 (`why` says what it needs).
void ReadFp8Flag(MapReader& tr, const TrainingSpec& t, const char* key, const char* why,
                 bool* out) {
  if (tr.Bool(key, out) && *out && t.precision != DType::kFp8) {
    tr.ErrorAtKey(key, std::string(key) + " needs precision: fp8 (" + why + "), but precision is " +
                           Name(t.precision));
  }
}

void ReadTraining(MapReader& r, TrainingSpec* t) {
  MapReader tr = r.Sub("training", Need::kRequired);
  tr.PositiveInt("seq_len", &t->seq_len, Need::kRequired);
  tr.PositiveInt("global_batch", &t->global_batch, Need::kRequired);
  tr.PositiveInt("micro_batch", &t->micro_batch);
  tr.Enum("precision", &t->precision, kPrecisions);
  tr.Enum("optimizer", &t->optimizer, kOptimizers);
  tr.Enum("grad_dtype", &t->grad_dtype, kGradDTypes);
  tr.Enum("recompute", &t->recompute, kRecomputes);
  tr.Bool("flash_attention", &t->flash_attention);
  tr.Bool("fused_kernels", &t->fused_kernels);
  tr.Enum("attention_kernel", &t->attention_kernel, kAttentionKernels);
  tr.Bool("fused_loss", &t->fused_loss);
  tr.Enum("cross_entropy_fusion_impl", &t->cross_entropy_impl, kCrossEntropyImpls);
  ReadRecomputeModules(tr, t);
  ReadFp8Flag(tr, *t, "fp8_saved_activations", "the fp8 copies are those the fp8 matmuls make",
              &t->fp8_saved_activations);
  ReadFp8Flag(tr, *t, "fp8_dispatch", "the tokens are quantized for the experts' fp8 up-projection",
              &t->fp8_dispatch);
  tr.Bool("moe_probs_in_expert", &t->moe_probs_in_expert);
  tr.Enum("optimizer_state_dtype", &t->optimizer_state_dtype, kOptimizerStateDTypes);
  double tokens = 0.0;
  if (tr.Quantity("tokens", Dimension::kCount, &tokens)) {
    // At least one token, at most 10^18 (about 30,000x the largest published pre-training
    // corpus): beyond it times to train print as dozens of digits.
    if (tokens < 1.0 || tokens > 1e18) {
      tr.ErrorAtKey("tokens", "must be between 1 and 1e18 tokens, got " + FormatSig(tokens, 4));
    } else {
      t->tokens = tokens;
    }
  }
  tr.Finish();
}

const std::vector<Framework> kFrameworks = {Framework::kMegatron,   Framework::kNemo,
                                            Framework::kTorchtitan, Framework::kFsdp,
                                            Framework::kDeepspeed,  Framework::kMegatronDeepspeed};
const std::vector<GradSync> kGradSyncs = {GradSync::kEveryMicrobatch, GradSync::kLastMicrobatch,
                                          GradSync::kLastUnderPp};
const std::vector<BackwardPrefetch> kBackwardPrefetches = {BackwardPrefetch::kPre,
                                                           BackwardPrefetch::kPost};
const std::vector<MemoryFigure> kMemoryFigures = {MemoryFigure::kAllocated, MemoryFigure::kReserved,
                                                  MemoryFigure::kDevice};
const std::vector<GatherUnit> kGatherUnits = {GatherUnit::kLayer, GatherUnit::kSubmodule};

// framework.<key>: a count of parameter elements (DeepSpeed writes them as 5e8) in [0, 1e15].
void ReadElements(MapReader& f, const char* key, int64_t* out, FrameworkSpec* s) {
  double v = 0.0;
  const ConfigNode* n = f.Get(key);
  if (n == nullptr || !f.Number(key, &v)) return;
  if (!(v >= 0.0 && v <= 1e15) || v != std::floor(v)) {
    f.ErrorAtKey(
        key, "expected a whole number of parameter elements between 0 and 1e15, got " + n->text());
    return;
  }
  *out = static_cast<int64_t>(v);
  s->overridden.push_back(key);
}

// framework.reshard_after_forward: true | false | when_no_pp | N (FSDP2's int: resharded to N
// ranks after forward; checked against the shard group in CheckFramework).
void ReadReshard(MapReader& f, FrameworkSpec* s) {
  const ConfigNode* n = f.Get("reshard_after_forward");
  if (n == nullptr) return;
  const std::string t = n->is_scalar() && !n->quoted() ? ToLower(n->text()) : std::string();
  Result<int64_t> group = ParseInteger(t);
  if (t == "true" || t == "false" || t == "when_no_pp") {
    s->reshard_after_forward = t == "true"    ? Reshard::kAlways
                               : t == "false" ? Reshard::kNever
                                              : Reshard::kWhenNoPp;
  } else if (!t.empty() && group.ok() && *group >= 2) {
    s->reshard_after_forward = Reshard::kToGroup;
    s->reshard_group = *group;
  } else {
    f.Error(*n, "reshard_after_forward",
            "expected true, false, when_no_pp or a group size of at least 2 ranks, got " +
                n->Describe());
    return;
  }
  s->overridden.push_back("reshard_after_forward");
}

// framework: NAME, or {name: NAME (default megatron), <mechanism>: value, ...}
// (sim/framework/framework.h). The
// profile's kernel choices become the defaults of the training keys the scenario leaves out.
void ReadFramework(MapReader& r, FrameworkSpec* out, TrainingSpec* t) {
  const ConfigNode* node = r.Get("framework");
  if (node == nullptr) return;
  Framework name = Framework::kMegatron;
  if (!node->is_map()) {
    if (!r.Enum("framework", &name, kFrameworks)) return;
    *out = ProfileOf(name);
  } else {
    MapReader f = r.Sub("framework");
    if (f.Has("name") && !f.Enum("name", &name, kFrameworks)) return;  // absent: megatron
    FrameworkSpec s = ProfileOf(name);
    ReadReshard(f, &s);
    if (f.Enum("grad_sync", &s.grad_sync, kGradSyncs)) s.overridden.push_back("grad_sync");
    if (f.PositiveInt("shard_group", &s.shard_group)) s.overridden.push_back("shard_group");
    if (f.Int("prefetch_layers", &s.prefetch_layers, Need::kOptional, 0, 64)) {
      s.overridden.push_back("prefetch_layers");
    }
    if (f.Enum("backward_prefetch", &s.backward_prefetch, kBackwardPrefetches)) {
      s.overridden.push_back("backward_prefetch");
    }
    if (f.Enum("memory_figure", &s.memory_figure, kMemoryFigures)) {
      s.overridden.push_back("memory_figure");
    }
    if (f.Enum("gather_unit", &s.gather_unit, kGatherUnits)) s.overridden.push_back("gather_unit");
    ReadElements(f, "stage3_prefetch_bucket_size", &s.prefetch_bucket_size, &s);
    ReadElements(f, "stage3_max_live_parameters", &s.max_live_parameters, &s);
    ReadElements(f, "stage3_max_reuse_distance", &s.max_reuse_distance, &s);
    ReadElements(f, "stage3_param_persistence_threshold", &s.param_persistence_threshold, &s);
    ReadElements(f, "reduce_bucket_size", &s.reduce_bucket_size, &s);
    if (f.Bool("blocking_p2p", &s.blocking_p2p)) s.overridden.push_back("blocking_p2p");
    if (f.Bool("te_linears", &s.te_linears)) s.overridden.push_back("te_linears");
    if (f.Bool("expandable_segments", &s.expandable_segments)) {
      s.overridden.push_back("expandable_segments");
    }
    f.Finish();
    *out = s;
  }
  t->fused_kernels = out->fused_kernels;
  t->fused_loss = out->fused_loss;
  t->te_linears = out->te_linears;
  t->attention_kernel = out->flash2_attention ? AttentionKernel::kFlash2 : AttentionKernel::kFused;
}

// The profile's defaults of parallel.overlap_grad_reduce / overlap_param_gather, for the keys the
// parallel block leaves out (sim/framework/framework.h OverlapsGradReduce).
void ApplyFrameworkParallelDefaults(const ConfigNode& tree, const FrameworkSpec& f,
                                    ParallelSpec* par) {
  const ConfigNode* p = tree.Find("parallel");
  const bool map = p != nullptr && p->is_map();
  if (!map || p->Find("overlap_grad_reduce") == nullptr) {
    par->overlap_grad_reduce = OverlapsGradReduce(f, par->zero_stage, par->pp);
  }
  if (!map || p->Find("overlap_param_gather") == nullptr) {
    par->overlap_param_gather = OverlapsParamGather(f, par->zero_stage);
  }
}

// The framework keys that depend on the layout: HSDP's shard group divides dp x cp; FSDP2's
// post-forward group is a proper divisor (above 1) of the shard group; the FSDP / ZeRO-3 keys a
// scenario writes need parallel.zero_stage 3.
void CheckFramework(MapReader& r, const ConfigNode& tree, const Scenario& s) {
  const ConfigNode* node = tree.Find("framework");
  if (node == nullptr || !node->is_map()) return;
  const FrameworkSpec& f = s.framework;
  const int64_t dp_cp = s.parallel.dp * s.parallel.cp;
  const int64_t shards = f.shard_group > 0 ? f.shard_group : dp_cp;
  if (const ConfigNode* n = node->Find("shard_group"); n != nullptr && f.shard_group > 0) {
    if (dp_cp % f.shard_group != 0) {
      r.Error(*n, "framework.shard_group",
              std::to_string(f.shard_group) + " does not divide dp x cp = " +
                  std::to_string(dp_cp) + "; ZeRO / FSDP shards inside groups of that many ranks");
    }
  }
  if (const ConfigNode* n = node->Find("reshard_after_forward");
      n != nullptr && f.reshard_after_forward == Reshard::kToGroup &&
      (f.reshard_group >= shards || shards % f.reshard_group != 0)) {
    r.Error(*n, "framework.reshard_after_forward",
            std::to_string(f.reshard_group) + " ranks is not a divisor of the shard group (" +
                std::to_string(shards) +
                " ranks) smaller than it; FSDP2 reshards to a proper divisor above 1");
  }
  if (s.parallel.zero_stage < 3) {
    for (const char* key : {"reshard_after_forward", "grad_sync", "prefetch_layers",
                            "backward_prefetch", "gather_unit", "stage3_prefetch_bucket_size",
                            "stage3_max_live_parameters", "stage3_max_reuse_distance",
                            "stage3_param_persistence_threshold", "reduce_bucket_size"}) {
      if (const ConfigNode* n = node->Find(key)) {
        r.Error(*n, std::string("framework.") + key,
                "applies to FSDP / ZeRO-3 (parallel.zero_stage: 3), but zero_stage is " +
                    std::to_string(s.parallel.zero_stage));
      }
    }
  }
}

void ReadOrder(MapReader& p, ParallelSpec* par) {
  const ConfigNode* order = p.Get("order");
  if (order == nullptr) return;
  std::vector<std::string> dims;
  bool ok = order->is_sequence();
  if (ok) {
    for (const ConfigNode& item : order->items()) {
      if (!item.is_scalar()) ok = false;
      dims.push_back(item.text());
    }
  }
  std::vector<std::string> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  if (!ok || sorted != std::vector<std::string>{"cp", "dp", "pp", "tp"}) {
    p.Error(*order, "order",
            "expected a list of tp, cp, dp, pp (each once, innermost first), got " +
                (order->is_sequence() ? "[" + Join(dims) + "]" : order->Describe()));
    return;
  }
  par->order = dims;
}

void ReadParallel(MapReader& r, int64_t gpus, bool have_gpus, ParallelSpec* par, Origins* origins) {
  MapReader p = r.Sub("parallel");
  const bool have_dp = p.PositiveInt("dp", &par->dp);
  p.PositiveInt("tp", &par->tp);
  p.PositiveInt("pp", &par->pp);
  p.PositiveInt("cp", &par->cp);
  p.PositiveInt("ep", &par->ep);
  int64_t zero = 0;
  if (p.Int("zero_stage", &zero, Need::kOptional, 0, 3)) par->zero_stage = static_cast<int>(zero);
  p.Bool("sequence_parallel", &par->sequence_parallel);
  p.Enum("schedule", &par->schedule, kSchedules);
  p.PositiveInt("virtual_stages", &par->virtual_stages);
  p.NonNegativeInt("microbatch_group_size_per_vp_stage", &par->microbatch_group_size_per_vp_stage);
  ReadOrder(p, par);
  p.NonNegativeInt("first_stage_layers", &par->first_stage_layers);
  p.NonNegativeInt("last_stage_layers", &par->last_stage_layers);
  p.Bool("account_for_embedding_in_pipeline_split", &par->account_for_embedding_in_pipeline_split);
  p.Bool("account_for_loss_in_pipeline_split", &par->account_for_loss_in_pipeline_split);
  // "" (what a sweep writes when it chooses the layouts) is no layout string; ValidateScenario
  // reads and checks the string.
  p.String("pipeline_layout", &par->pipeline_layout);
  p.Quantity("dp_bucket_size", Dimension::kBytes, &par->dp_bucket_bytes);
  p.Bool("overlap_grad_reduce", &par->overlap_grad_reduce);
  p.Bool("overlap_param_gather", &par->overlap_param_gather);
  p.Bool("tp_comm_overlap", &par->tp_comm_overlap);
  p.Bool("ep_comm_overlap", &par->ep_comm_overlap);
  p.Finish();
  // dp not written: derived as gpus / (tp*pp*cp), located at `gpus` (ValidateScenario reports a
  // remainder there).
  if (!have_dp && have_gpus) {
    int64_t rest = 0;
    if (__builtin_mul_overflow(par->tp, par->pp, &rest) ||
        __builtin_mul_overflow(rest, par->cp, &rest)) {
      rest = std::numeric_limits<int64_t>::max();  // dp 1; ValidateScenario reports the rest
    }
    par->dp = std::max<int64_t>(1, gpus / rest);
    origins->Set("parallel.dp", origins->Get("gpus"));
  }
}

// The scenario's `storage:` over its topology's, and its `reliability:` block.
void ReadCheckpointing(MapReader& r, Scenario* s) {
  ReadReliability(r, &s->reliability);
  s->storage = s->topology.storage;
  StorageSpec own;
  ReadStorage(r, &own);
  MergeStorage(own, &s->storage);
}

// hardware: {base: NAME, power_limit: 500 W}: a GPU capped below the board power its base's
// figures are for holds base.sustained_compute_fraction x (cap / rated)^(1/3) of its burst math
// rate (README "Power-limited clocks": dynamic power ~ f^3 under DVFS, f ~ P^(1/3)), unless the
// overlay writes sustained_compute_fraction itself; the base's per-dtype fractions scale by the
// same factor unless the overlay writes either key. A cap at or above the rated power changes
// nothing (boost clocks are the ceiling).
void ApplyPowerCap(MapReader& r, const ConfigNode& tree, Resolver* resolver, HardwareSpec* hw) {
  const ConfigNode* node = tree.Find("hardware");
  if (node == nullptr || !node->is_map()) return;
  const ConfigNode* cap = node->Find("power_limit");
  const ConfigNode* base = node->Find("base");
  const bool own_scalar = node->Find("sustained_compute_fraction") != nullptr;
  const bool own_by_dtype = node->Find("sustained_compute_fraction_by_dtype") != nullptr;
  if (cap == nullptr || base == nullptr || (own_scalar && own_by_dtype)) return;
  Result<ResolvedDoc> doc = resolver->Resolve(DocKind::kHardware, *base, "hardware.base");
  if (!doc.ok()) return;  // reported by the main read
  HardwareSpec rated;
  if (!ReadHardware(*doc, DocWhere(*doc, nullptr), "hardware.", &rated).ok()) return;
  if (rated.power_limit <= 0.0) {
    r.Error(*cap, "hardware.power_limit",
            "the base hardware (" + rated.name +
                ") gives no power_limit, so a cap has no rated power to scale its clock from; "
                "give the base's power_limit or write sustained_compute_fraction");
    return;
  }
  if (hw->power_limit >= rated.power_limit) return;
  const double clock = std::cbrt(hw->power_limit / rated.power_limit);
  if (!own_scalar) hw->sustained_compute_fraction = rated.sustained_compute_fraction * clock;
  // An overlay that writes the scalar alone has dropped the base's entries (Resolver::Resolve).
  if (!own_scalar && !own_by_dtype) {
    hw->sustained_compute_fraction_by_dtype = rated.sustained_compute_fraction_by_dtype;
    for (auto& [dtype, v] : hw->sustained_compute_fraction_by_dtype) v *= clock;
  }
}

}  // namespace

Status ReadScenario(const ResolvedDoc& doc, Resolver* resolver, Scenario* out) {
  DiagnosticSink sink;
  Scenario s;
  s.file = doc.file;
  s.origins.set_file(doc.file);
  MapReader r(&doc.tree, DocWhere(doc, nullptr), "", "", &sink, &s.origins);
  if (!r.String("name", &s.name)) s.name = std::filesystem::path(doc.file).stem().string();
  ReadPart(r, doc.tree, resolver, DocKind::kModel, "model", ReadModel, &s.model, &sink);
  if (sink.empty()) sink.Merge(ValidateModel(s.model));
  ReadPart(r, doc.tree, resolver, DocKind::kHardware, "hardware", ReadHardware, &s.hardware, &sink);
  if (sink.empty()) ApplyPowerCap(r, doc.tree, resolver, &s.hardware);
  ReadPart(r, doc.tree, resolver, DocKind::kTopology, "topology", ReadTopology, &s.topology, &sink);
  const bool have_gpus = r.PositiveInt("gpus", &s.gpus, Need::kRequired);
  ReadFramework(r, &s.framework, &s.training);
  ReadTraining(r, &s.training);
  ReadParallel(r, s.gpus, have_gpus, &s.parallel, &s.origins);
  ApplyFrameworkParallelDefaults(doc.tree, s.framework, &s.parallel);
  CheckFramework(r, doc.tree, s);
  ReadCheckpointing(r, &s);
  r.AcceptFreeText(nullptr);
  r.Finish();
  if (!sink.empty()) return sink.ToStatus();
  *out = std::move(s);
  return Status::Ok();
}

}  // namespace shardsim
