// Reading a scenario document: its own keys, and the model / hardware / topology it names.
#include <algorithm>
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
  Result<ResolvedDoc> doc = resolver->Resolve(kind, *ref, key);
  if (!doc.ok()) {
    sink->Merge(doc.status());
    return;
  }
  const KeyOrigin where = DocWhere(*doc, tree.FindKeyOrigin(key));
  sink->Merge(read(*doc, where, doc->is_inline ? key + "." : std::string(), out));
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
  ReadOrder(p, par);
  p.NonNegativeInt("first_stage_layers", &par->first_stage_layers);
  p.NonNegativeInt("last_stage_layers", &par->last_stage_layers);
  p.Bool("account_for_embedding_in_pipeline_split", &par->account_for_embedding_in_pipeline_split);
  p.Bool("account_for_loss_in_pipeline_split", &par->account_for_loss_in_pipeline_split);
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
  ReadPart(r, doc.tree, resolver, DocKind::kTopology, "topology", ReadTopology, &s.topology, &sink);
  const bool have_gpus = r.PositiveInt("gpus", &s.gpus, Need::kRequired);
  ReadTraining(r, &s.training);
  ReadParallel(r, s.gpus, have_gpus, &s.parallel, &s.origins);
  ReadCheckpointing(r, &s);
  r.AcceptFreeText(nullptr);
  r.Finish();
  if (!sink.empty()) return sink.ToStatus();
  *out = std::move(s);
  return Status::Ok();
}

}  // namespace shardsim
