// ValidateModel and ValidateScenario: the arithmetic a training framework (Megatron-LM) checks
// before it starts, each problem located at the key to change.
#include <limits>
#include <string>
#include <vector>

#include "sim/base/strings.h"
#include "sim/base/units.h"
#include "sim/config/loader.h"
#include "sim/config/pipeline_layout.h"

namespace shardsim {
namespace {

std::string Str(int64_t v) { return std::to_string(v); }

constexpr int64_t kMaxMicroBatchesPerStep = 65536;
constexpr int64_t kMaxTokensPerStep = int64_t{1} << 53;
constexpr int64_t kMaxSeqLen = int64_t{1} << 24;

// a*b, saturating at INT64_MAX (inputs are positive; huge layouts must not overflow).
int64_t Mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

// "64, models/llama3-70b.yaml:5:12": a value with where it was written (file alone if defaulted).
std::string Ref(const Origins& origins, const std::string& path, int64_t value) {
  const std::string where = origins.Get(path).loc.ToString();
  return where.empty() ? Str(value) : Str(value) + ", " + where;
}

class Checker {
 public:
  Checker(const Origins& origins, DiagnosticSink* sink) : origins_(origins), sink_(sink) {}
  void Fail(const std::string& path, const std::string& message) {
    const KeyOrigin o = origins_.Get(path);
    sink_->Add(o.loc, path + ": " + message, o.source_line);
  }

 private:
  const Origins& origins_;
  DiagnosticSink* sink_;
};

// parallel.pipeline_layout against the schedule, the pipeline and the model, as Megatron-Core's
// PipelineParallelLayerLayout checks it (validate_layer_layout), plus where shardsim puts MTP.
void CheckPipelineLayout(const Scenario& s, Checker& c) {
  const ParallelSpec& p = s.parallel;
  const std::string key = "parallel.pipeline_layout";
  Result<PipelineLayout> parsed = ParsePipelineLayout(p.pipeline_layout);
  if (!parsed.ok()) {
    c.Fail(key, "'" + p.pipeline_layout + "': " + parsed.status().message() +
                    " (Megatron-Core's --pipeline-model-parallel-layout, e.g. "
                    "\"Et*3|(t*4|)*14ttL\")");
    return;
  }
  const PipelineLayout& lay = *parsed;
  const PipelineSchedule sched = p.schedule;
  if (sched == PipelineSchedule::kDualPipe || sched == PipelineSchedule::kDualPipeV ||
      sched == PipelineSchedule::kZbV) {
    c.Fail(key, std::string("a layout string places stages rank by rank; ") + Name(sched) +
                    " pairs two stages per rank in its own order (use gpipe, 1f1b, "
                    "interleaved_1f1b, zb_h1 or zb_h2)");
    return;
  }
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0 ||
      p.account_for_embedding_in_pipeline_split || p.account_for_loss_in_pipeline_split) {
    c.Fail(key, std::string("a layout string and parallel.") +
                    (p.first_stage_layers > 0  ? "first_stage_layers"
                     : p.last_stage_layers > 0 ? "last_stage_layers"
                     : p.account_for_embedding_in_pipeline_split
                         ? "account_for_embedding_in_pipeline_split"
                         : "account_for_loss_in_pipeline_split") +
                    " exclude each other (as in Megatron-Core): use one or the other");
    return;
  }
  const int64_t v = p.virtual_stages;
  if (lay.stages() != Mul(p.pp, v)) {
    c.Fail(key, "'" + p.pipeline_layout + "' has " + Str(lay.stages()) +
                    " stages; it needs pp*virtual_stages = " + Str(p.pp) + "*" + Str(v) + " = " +
                    Str(Mul(p.pp, v)) + " (one per model chunk, separated by '|')");
    return;
  }
  const int64_t layers = s.model.num_layers;
  if (lay.total_decoders() != layers) {
    c.Fail(key, "'" + p.pipeline_layout + "' places " + Str(lay.total_decoders()) +
                    " decoder layers ('t'); model.num_layers is " +
                    Ref(s.model.origins, "num_layers", layers));
    return;
  }
  if (lay.embeddings != 1 || !lay.embedding_first || lay.losses != 1 || !lay.loss_last) {
    c.Fail(key, "'" + p.pipeline_layout +
                    "' must start with the embedding 'E' and end with the loss 'L', each "
                    "written once");
    return;
  }
  const int64_t mtp = s.model.mtp_depth;
  if (lay.total_mtp() != mtp) {
    c.Fail(key, "'" + p.pipeline_layout + "' places " + Str(lay.total_mtp()) +
                    " MTP modules ('m'); model.mtp_depth is " +
                    Ref(s.model.origins, "mtp_depth", mtp));
    return;
  }
  if (lay.mtp_before_decoder) {
    c.Fail(key, "'" + p.pipeline_layout + "' places an MTP module 'm' before a decoder layer 't'");
    return;
  }
  if (mtp > 0 && lay.mtp.back() != mtp) {
    c.Fail(key, "'" + p.pipeline_layout +
                    "': shardsim runs the MTP modules with the loss, so every 'm' must be in "
                    "the last stage");
  }
}

void CheckLayers(const Scenario& s, Checker& c) {
  const Origins& mo = s.model.origins;
  const ParallelSpec& p = s.parallel;
  const int64_t layers = s.model.num_layers;
  // The V-shaped schedules split the model in 2·pp stages, two per rank.
  const bool v_shape =
      p.schedule == PipelineSchedule::kDualPipeV || p.schedule == PipelineSchedule::kZbV;
  const int64_t v = v_shape ? 2 : p.virtual_stages;
  const std::string num_layers = "model.num_layers (" + Ref(mo, "num_layers", layers) + ")";
  const int64_t first = p.first_stage_layers;
  const int64_t last = p.last_stage_layers;
  const int64_t e = p.account_for_embedding_in_pipeline_split ? 1 : 0;
  const int64_t l = p.account_for_loss_in_pipeline_split ? 1 : 0;
  if (!p.pipeline_layout.empty()) {
    CheckPipelineLayout(s, c);
    return;
  }
  if (first == 0 && last == 0) {
    // Megatron-Core counts the embedding / loss as a layer of the split when asked to.
    if ((layers + e + l) % Mul(p.pp, v) != 0) {
      const std::string counted = e + l == 0 ? num_layers
                                             : num_layers + " + " + Str(e + l) + " (" +
                                                   (e > 0 && l > 0 ? "embedding and loss"
                                                    : e > 0        ? "embedding"
                                                                   : "loss") +
                                                   " counted as layers)";
      c.Fail("parallel.pp", counted + " is not divisible by pp*virtual_stages = " + Str(p.pp) +
                                "*" + Str(v) + " = " + Str(Mul(p.pp, v)));
    }
    return;
  }
  const std::string key = first > 0 ? "parallel.first_stage_layers" : "parallel.last_stage_layers";
  if (e + l > 0) {
    c.Fail(key, std::string("an uneven first/last stage and parallel.") +
                    (e > 0 ? "account_for_embedding_in_pipeline_split"
                           : "account_for_loss_in_pipeline_split") +
                    " exclude each other (as in Megatron-Core): use one or the other");
    return;
  }
  if (p.pp < 2) {
    c.Fail(key, "an uneven first/last stage needs pp >= 2 (pp is " + Str(p.pp) + ")");
    return;
  }
  const int64_t middle = p.pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
  // What the first and last stages leave; past int64 (absurd inputs) it is simply negative.
  int64_t rest = 0;
  const bool overflow =
      __builtin_sub_overflow(layers, first, &rest) || __builtin_sub_overflow(rest, last, &rest);
  if (overflow) rest = -1;
  const std::string split = "first_stage_layers " + Str(first) + " and last_stage_layers " +
                            Str(last) + " leave " + (overflow ? "fewer than none" : Str(rest)) +
                            " of " + num_layers + " for " + Str(middle) + " other stage" +
                            (middle == 1 ? "" : "s");
  if (rest < 0 || (middle == 0 && rest != 0) || (middle > 0 && (rest <= 0 || rest % middle != 0))) {
    c.Fail(key, split + ", which is not a whole positive number per stage");
    return;
  }
  const int64_t per_stage = middle > 0 ? rest / middle : 0;
  if ((first > 0 && first % v != 0) || (last > 0 && last % v != 0) || per_stage % v != 0) {
    c.Fail(key,
           split + "; every stage's layers must be divisible by virtual_stages (" + Str(v) + ")");
  }
}

}  // namespace

Status ValidateModel(const ModelSpec& m) {
  DiagnosticSink sink;
  Checker c(m.origins, &sink);
  if (m.num_kv_heads > 0 && m.num_heads % m.num_kv_heads != 0) {
    c.Fail("num_kv_heads", Str(m.num_kv_heads) + " does not divide num_heads (" +
                               Ref(m.origins, "num_heads", m.num_heads) + ")");
  }
  if (m.moe) {
    if (m.moe->top_k > m.moe->num_experts) {
      c.Fail("moe.top_k", Str(m.moe->top_k) + " exceeds moe.num_experts (" +
                              Ref(m.origins, "moe.num_experts", m.moe->num_experts) + ")");
    }
    if (m.moe->first_dense_layers >= m.num_layers) {
      c.Fail("moe.first_dense_layers", Str(m.moe->first_dense_layers) +
                                           " leaves no MoE layer of num_layers (" +
                                           Ref(m.origins, "num_layers", m.num_layers) + ")");
    }
  }
  return sink.ToStatus();
}

int64_t SimulatedVirtualStages(const ParallelSpec& p) {
  if (p.schedule == PipelineSchedule::kInterleaved1F1B) return p.virtual_stages;
  const bool v_shape =
      p.schedule == PipelineSchedule::kZbV || p.schedule == PipelineSchedule::kDualPipeV;
  return v_shape ? 2 : p.virtual_stages;
}

Status ValidateScenario(const Scenario& s) {
  DiagnosticSink sink;
  Checker c(s.origins, &sink);
  const ParallelSpec& p = s.parallel;
  const ModelSpec& m = s.model;
  const Origins& mo = m.origins;

  const int64_t layout = Mul(Mul(p.dp, p.tp), Mul(p.pp, p.cp));
  if (layout != s.gpus) {
    c.Fail("gpus", Str(s.gpus) + " does not equal dp*tp*pp*cp = " + Str(p.dp) + "*" + Str(p.tp) +
                       "*" + Str(p.pp) + "*" + Str(p.cp) + " = " + Str(layout));
  }
  if (m.num_heads % p.tp != 0) {
    c.Fail("parallel.tp", Str(p.tp) + " does not divide model.num_heads (" +
                              Ref(mo, "num_heads", m.num_heads) + ")");
  } else if (!m.mla && p.tp % m.num_kv_heads != 0 && m.num_kv_heads % p.tp != 0) {
    c.Fail("parallel.tp", Str(p.tp) + " and model.num_kv_heads (" +
                              Ref(mo, "num_kv_heads", m.num_kv_heads) +
                              ") are incompatible: one must divide the other");
  }
  if (m.ffn_hidden_size % p.tp != 0) {
    c.Fail("parallel.tp", Str(p.tp) + " does not divide model.ffn_hidden_size (" +
                              Ref(mo, "ffn_hidden_size", m.ffn_hidden_size) + ")");
  }
  CheckLayers(s, c);
  if (s.training.cross_entropy_impl == CrossEntropyImpl::kTe && !s.training.fused_loss) {
    c.Fail("training.cross_entropy_fusion_impl",
           "te is Transformer Engine's fused cross-entropy, but training.fused_loss is false (" +
               std::string(s.framework.fused_loss ? "the scenario's" : "the framework's default") +
               "): set fused_loss: true, or leave this key out");
  }
  // A cluster built for another accelerator (mi300x on dgx-h100) would take that cluster's
  // NVLink and NIC figures for the GPU's own: refused when both files say their family.
  const TopologySpec& topo = s.topology;
  if (!s.hardware.family.empty() && !topo.accelerator_family.empty() &&
      s.hardware.family != topo.accelerator_family) {
    const auto where = [](const Origins& o, const std::string& key) {
      const std::string loc = o.Get(key).loc.ToString();
      return loc.empty() ? std::string() : ", " + loc;
    };
    std::string fix = "name a topology of " + s.hardware.family + " GPUs";
    if (!s.hardware.default_topology.empty()) {
      fix += " (" + s.hardware.name + "'s default_topology is " + s.hardware.default_topology + ")";
    }
    c.Fail("topology", topo.name + " carries " + topo.accelerator_family +
                           " GPUs (accelerator_family" + where(topo.origins, "accelerator_family") +
                           ") but hardware " + s.hardware.name + " is " + s.hardware.family +
                           " (family" + where(s.hardware.origins, "family") + "); " + fix +
                           ", or override topology.accelerator_family if the cluster is meant");
  }
  const std::string cluster = s.topology.GpusProblem(s.gpus);
  if (!cluster.empty()) c.Fail("gpus", cluster);
  if (s.hardware.peak_flops.count(s.training.precision) == 0) {
    std::vector<std::string> has;
    for (const auto& [dtype, flops] : s.hardware.peak_flops) has.push_back(Name(dtype));
    c.Fail("training.precision", std::string(Name(s.training.precision)) +
                                     " needs a matmul peak for it in the hardware (" +
                                     s.hardware.name + " has peak_flops for " + Join(has) + ", " +
                                     s.hardware.origins.Get("peak_flops").loc.ToString() + ")");
  }

  const int64_t per_step = Mul(p.dp, s.training.micro_batch);
  if (s.training.global_batch % per_step != 0) {
    c.Fail("training.global_batch", Str(s.training.global_batch) +
                                        " is not divisible by dp*micro_batch = " + Str(p.dp) + "*" +
                                        Str(s.training.micro_batch) + " = " + Str(per_step));
  }
  // Every micro-batch is simulated (its tasks held at once) and tokens are counted in int64/double.
  if (per_step > 0 && s.training.global_batch % per_step == 0 &&
      s.training.global_batch / per_step > kMaxMicroBatchesPerStep) {
    c.Fail("training.global_batch",
           Str(s.training.global_batch) + " makes " + Str(s.training.global_batch / per_step) +
               " micro-batches per step (global_batch / (dp*micro_batch)); shardsim simulates each "
               "and takes at most " +
               Str(kMaxMicroBatchesPerStep) + ": raise training.micro_batch or parallel.dp");
  }
  if (per_step > 0 && s.training.global_batch % per_step == 0) {
    const int64_t microbatches = s.training.global_batch / per_step;
    const double passes = p.PipelinePasses(microbatches, 1);
    if (passes > static_cast<double>(kMaxSimulatedPasses)) {
      c.Fail("training.global_batch",
             "pp*virtual_stages*micro-batches per step = " + Str(p.pp) + "*" +
                 Str(p.ChunksPerRank()) + "*" + Str(microbatches) + " = " + FormatSig(passes, 4) +
                 " pipeline passes; one simulation holds at most " + Str(kMaxSimulatedPasses) +
                 " (about 800 MB of task graph): raise training.micro_batch or parallel.dp, or "
                 "lower the global batch");
    }
  }
  if (Mul(s.training.global_batch, s.training.seq_len) > kMaxTokensPerStep) {
    c.Fail("training.global_batch", "global_batch * seq_len = " + Str(s.training.global_batch) +
                                        "*" + Str(s.training.seq_len) +
                                        " tokens per step is more than shardsim counts exactly (" +
                                        Str(kMaxTokensPerStep) + ", 2^53)");
  }
  // 16.8M tokens: 64x the longest sequence of the reference runs (torchtitan's 256K), and
  // past it the attention of one step outgrows the engine's clock (int64 picoseconds).
  if (s.training.seq_len > kMaxSeqLen) {
    c.Fail("training.seq_len", Str(s.training.seq_len) + " is longer than shardsim simulates (" +
                                   Str(kMaxSeqLen) + " tokens, 2^24)");
  }
  if (p.sequence_parallel && p.tp > 1 && p.cp > 0 &&
      Mul(s.training.micro_batch, s.training.seq_len) / p.cp % p.tp != 0) {
    c.Fail("training.seq_len",
           "sequence parallelism splits the tokens of a micro-batch (micro_batch*seq_len/cp = " +
               Str(Mul(s.training.micro_batch, s.training.seq_len) / p.cp) +
               ") over the tp ranks, but tp (" + Str(p.tp) + ") does not divide them");
  }
  if (p.cp > 1 && s.training.seq_len % Mul(2, p.cp) != 0) {
    c.Fail("training.seq_len",
           Str(s.training.seq_len) + " is not divisible by 2*cp = " + Str(Mul(2, p.cp)) +
               " (context parallelism cuts each sequence into 2*cp chunks to balance causal "
               "attention)");
  }
  const bool interleaved = p.schedule == PipelineSchedule::kInterleaved1F1B;
  // ZB-V and DualPipeV run exactly two model chunks per rank (the zero-bubble runtime asserts
  // virtual_pipeline_model_parallel_size == 2 with --zero-bubble-v-schedule; PyTorch's
  // ScheduleZBVZeroBubble and DualPipeV (deepseek-ai/DualPipe dualpipev.py) two stages per
  // rank): virtual_stages may say 2 or be left out (1, the default), and either runs two.
  const bool zb_v = p.schedule == PipelineSchedule::kZbV;
  const bool v_shape = zb_v || p.schedule == PipelineSchedule::kDualPipeV;
  if (v_shape && p.virtual_stages != 1 && p.virtual_stages != 2) {
    c.Fail("parallel.virtual_stages",
           Str(p.virtual_stages) + ": " + Name(p.schedule) +
               " runs exactly two model chunks per rank (a V: stages r and 2*pp-1-r); "
               "use virtual_stages 2 or leave it out");
  } else if (p.virtual_stages > 1 && !interleaved && !v_shape) {
    c.Fail("parallel.virtual_stages", Str(p.virtual_stages) +
                                          " needs schedule interleaved_1f1b (schedule is " +
                                          Name(p.schedule) + ")");
  }
  if (interleaved && p.virtual_stages < 2) {
    c.Fail("parallel.schedule", "interleaved_1f1b needs virtual_stages >= 2 (virtual_stages is " +
                                    Str(p.virtual_stages) + ")");
  }
  if (interleaved && p.pp < 2) {
    c.Fail("parallel.schedule", "interleaved_1f1b needs pp >= 2 (pp is " + Str(p.pp) + ")");
  }
  // Megatron-LM's interleaved schedule takes micro-batches in groups of N per model chunk, N =
  // microbatch_group_size_per_vp_stage (pp by default), and refuses N outside [pp, m] and a last
  // group shorter than pp (forward_backward_pipelining_with_interleaving: "dependency bubbles").
  const int64_t group = p.microbatch_group_size_per_vp_stage;
  if (group > 0 && !interleaved) {
    c.Fail("parallel.microbatch_group_size_per_vp_stage",
           Str(group) + " needs schedule interleaved_1f1b (schedule is " + Name(p.schedule) + ")");
  }
  const int64_t steps = per_step > 0 && s.training.global_batch % per_step == 0
                            ? s.training.global_batch / per_step
                            : 0;  // the micro-batches per step (0: refused above)
  if (interleaved && group > 0 && p.pp >= 2 && steps > 0) {
    const std::string range = "Megatron-LM's interleaved schedule takes pp (" + Str(p.pp) +
                              ") <= it <= the micro-batches per step (global_batch / "
                              "(dp*micro_batch) = " +
                              Str(steps) + ")";
    const GroupFit fit = FitMicrobatchGroup(p.pp, steps, group);
    if (fit == GroupFit::kBelowPp) {
      c.Fail("parallel.microbatch_group_size_per_vp_stage", Str(group) + " is below pp; " + range);
    } else if (fit == GroupFit::kAboveMicrobatches) {
      c.Fail("parallel.microbatch_group_size_per_vp_stage",
             Str(group) + " is above the micro-batches per step; " + range);
    } else if (fit == GroupFit::kShortLastGroup) {
      c.Fail("parallel.microbatch_group_size_per_vp_stage",
             Str(group) + " leaves " + Str(steps % group) + " of the " + Str(steps) +
                 " micro-batches per step for the last group, fewer than pp (" + Str(p.pp) +
                 "): Megatron-LM refuses it (dependency bubbles); use a group that divides " +
                 Str(steps) + " or leaves at least pp over");
    }
  }
  if (interleaved && group <= 0 && p.pp >= 2 && steps > 0 && steps % p.pp != 0) {
    c.Fail("parallel.schedule",
           "interleaved_1f1b needs the micro-batches per step (global_batch / (dp*micro_batch) = " +
               Str(steps) + ") to be a multiple of pp (" + Str(p.pp) + ")");
  }
  // The zero-bubble schedules split each backward into B and W passes per micro-batch; ZeRO-3
  // gathers and reduces per layer inside one backward, which the zero-bubble runtimes
  // (sail-sg/zero-bubble-pipeline-parallelism: Megatron's distributed optimizer, ZeRO-1) do not
  // combine with them.
  const bool dualpipe = p.schedule == PipelineSchedule::kDualPipe;
  const bool dualpipe_v = p.schedule == PipelineSchedule::kDualPipeV;
  const bool zero_bubble = p.schedule == PipelineSchedule::kZbH1 ||
                           p.schedule == PipelineSchedule::kZbH2 || zb_v || dualpipe || dualpipe_v;
  if (zero_bubble && p.zero_stage == 3) {
    c.Fail("parallel.schedule", std::string(Name(p.schedule)) +
                                    " splits the backward into B and W passes, which is not "
                                    "simulated with zero_stage 3; use zero_stage 0, 1 or 2");
  }
  // DeepSpeed's PipelineEngine (the deepspeed profiles with pp > 1) refuses ZeRO-2 and ZeRO-3:
  // PipelineEngine.__init__ asserts zero_optimization_stage() < 2, "ZeRO-2 and ZeRO-3 are
  // incompatible with pipeline parallelism" (deepspeed/runtime/pipe/engine.py).
  if (s.framework.deepspeed_engine && p.pp > 1 && p.zero_stage >= 2) {
    c.Fail("parallel.zero_stage",
           Str(p.zero_stage) + " with pp " + Str(p.pp) + " under framework " +
               Name(s.framework.name) +
               ": DeepSpeed's PipelineEngine runs ZeRO stage 0 or 1 only (\"ZeRO-2 and ZeRO-3 "
               "are incompatible with pipeline parallelism\"); use zero_stage 0 or 1, or pp 1");
  }
  // ZB-V's V turns on rank pp-1 and comes back: it needs two ranks at least. Its order runs any
  // number of micro-batches (as the implementations do, dropping the passes of those past m), but
  // it is zero-bubble only from 2*pp - 1 on (PyTorch's ScheduleZBVZeroBubble: "at least as large
  // ... as needed to fully utilize the pipeline"); fewer are refused rather than simulated as a
  // schedule the user did not mean.
  if (zb_v && p.pp < 2) {
    c.Fail("parallel.schedule", "zb_v needs pp >= 2 (pp is " + Str(p.pp) + ")");
  }
  if (zb_v && p.pp >= 2 && per_step > 0 && s.training.global_batch % per_step == 0 &&
      s.training.global_batch / per_step < Mul(2, p.pp) - 1) {
    c.Fail("parallel.schedule",
           "zb_v needs at least 2*pp-1 micro-batches per step (global_batch / (dp*micro_batch) = " +
               Str(s.training.global_batch / per_step) + ", 2*pp-1 = " + Str(Mul(2, p.pp) - 1) +
               "): fewer leave its V unfilled");
  }
  // DeepSeek's DualPipe (deepseek-ai/DualPipe dualpipe.py step()) asserts an even number of
  // ranks and of micro-batches, at least twice the ranks; DualPipeV the latter bound.
  if ((dualpipe || dualpipe_v) && p.pp < 2) {
    c.Fail("parallel.schedule",
           std::string(Name(p.schedule)) + " needs pp >= 2 (pp is " + Str(p.pp) + ")");
  }
  if (dualpipe && p.pp % 2 != 0) {
    c.Fail("parallel.pp", Str(p.pp) +
                              " is odd; dualpipe pairs rank r with rank pp-1-r and needs "
                              "an even pp");
  }
  if ((dualpipe || dualpipe_v) && p.pp >= 2 && per_step > 0 &&
      s.training.global_batch % per_step == 0) {
    const int64_t mbs = s.training.global_batch / per_step;
    if ((dualpipe && mbs % 2 != 0) || mbs < Mul(2, p.pp)) {
      c.Fail("parallel.schedule",
             std::string(Name(p.schedule)) + " needs " +
                 (dualpipe ? "an even number of micro-batches per step, at least 2*pp"
                           : "at least 2*pp micro-batches per step") +
                 " (global_batch / (dp*micro_batch) = " + Str(mbs) + ", 2*pp = " +
                 Str(Mul(2, p.pp)) + ")" + (dualpipe ? ": half enter at each end" : ""));
    }
  }
  if ((dualpipe || dualpipe_v || zb_v) && m.tied_embeddings) {
    c.Fail("parallel.schedule", std::string(Name(p.schedule)) +
                                    " with tied embeddings is not simulated (the embedding and "
                                    "head sit on the same ranks); untie them or use 1f1b");
  }
  if ((dualpipe_v || zb_v) && (p.first_stage_layers > 0 || p.last_stage_layers > 0)) {
    c.Fail(p.first_stage_layers > 0 ? "parallel.first_stage_layers" : "parallel.last_stage_layers",
           std::string(Name(p.schedule)) +
               " places the first and last stages on the same rank; an uneven first/last "
               "stage is not simulated with it");
  }
  if (p.ep > 1) {
    if (!m.moe) {
      c.Fail("parallel.ep", Str(p.ep) + " needs a mixture-of-experts model (model " + m.name +
                                " has no moe block)");
    } else {
      if (m.moe->num_experts % p.ep != 0) {
        c.Fail("parallel.ep", Str(p.ep) + " does not divide model.moe.num_experts (" +
                                  Ref(mo, "moe.num_experts", m.moe->num_experts) + ")");
      }
      if (Mul(p.dp, p.cp) % p.ep != 0) {
        c.Fail("parallel.ep", Str(p.ep) + " does not divide dp*cp = " + Str(p.dp) + "*" +
                                  Str(p.cp) + " = " + Str(Mul(p.dp, p.cp)));
      }
    }
  }
  if (m.position_embedding == PositionEmbedding::kLearned &&
      s.training.seq_len > m.position_table_rows) {
    const bool explicit_rows = mo.Get("position_table_rows").loc.known();
    const std::string rows =
        explicit_rows ? "model.position_table_rows (" +
                            Ref(mo, "position_table_rows", m.position_table_rows) + ")"
                      : "model.max_seq_len (" + Ref(mo, "max_seq_len", m.position_table_rows) + ")";
    c.Fail("training.seq_len", Str(s.training.seq_len) + " exceeds " + rows +
                                   ", the rows of the learned position table");
  }
  // A layout the framework would refuse is bad input (exit 2), as the issues pin it; "does not
  // fit in memory" is the only infeasible outcome (exit 1).
  return sink.ToStatus(StatusCode::kInvalidInput);
}

}  // namespace shardsim
