// `shardsim check-claim`: is a published or vendor throughput claim possible, plausible, or
// neither, for a model on a number of GPUs?
//
// A claim comes in the forms vendors use (tokens/s, tokens/s per GPU, TFLOP/s per GPU, MFU, or
// D tokens trained in a time). It is converted to tokens/s per GPU and to model FLOPs under each
// common convention (6·N, PaLM's 6·N + attention, operator-level model FLOPs, and with selective
// or full recompute), then compared with
//   * the physical ceiling: every GPU at its dense peak doing only the matmuls and the causal
//     half of attention, nothing else, and
//   * the best layout a sweep finds (every valid layout, micro-batch, recompute mode and ZeRO-1/3
//     with TP inside a node) and its predicted throughput.
// With a stated layout (--layout), the verdict is judged against it; one that does not fit, or
// whose run of training.tokens cannot finish (Goodput::feasible), is impossible (the claim cannot
// be run as stated), an invalid one an error (exit 2).
// Verdict: impossible (above the ceiling), implausible (above our best by more than the stated
// uncertainty), plausible, or conservative (below our best by more than the uncertainty).
#ifndef SHARDSIM_SWEEP_CLAIM_H_
#define SHARDSIM_SWEEP_CLAIM_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/loader.h"
#include "sim/report/interval.h"
#include "sim/sweep/rows.h"
#include "sim/sweep/runner.h"
#include "sim/sweep/uncertainty.h"

namespace shardsim {

enum class ClaimKind {
  kTokensPerS,
  kTokensPerSPerGpu,
  kFlopsPerGpu,
  kFlopsTotal,
  kMfu,
  kTimeToTrain
};

struct Claim {
  ClaimKind kind = ClaimKind::kTokensPerSPerGpu;
  // tokens/s; tokens/s per GPU; FLOP/s per GPU; FLOP/s in total; MFU (0..1); seconds
  double value = 0.0;
  double train_tokens = 0.0;  // kTimeToTrain: the tokens D trained in `value` seconds
  int64_t seq_len = 0;        // the sequence length the claim states ("at seq 4096"); 0: none
  std::string text;           // as written
};

// "1200 tokens/s/GPU", "3.2M tokens/s", "400 TFLOP/s per GPU", "45% MFU", "MFU 0.45",
// "15T tokens in 54 days", each optionally followed by its sequence length: "at seq 4096",
// ", seq 8K", "at 4096 sequence length", "@ 8k context". Errors (kInvalidInput) list the
// accepted forms.
Result<Claim> ParseClaim(const std::string& text);

enum class Verdict { kImpossible, kImplausible, kPlausible, kConservative };
const char* Name(Verdict v);  // "impossible", ...

struct FlopsConvention {
  std::string name;                 // "6·N·D"
  std::string source;               // where the convention comes from
  double flops_per_token = 0;       // model FLOPs per trained token under it
  double tokens_per_s_per_gpu = 0;  // the claim under this convention
  double tflops_per_gpu = 0;        // implied, TFLOP/s
  double mfu = 0;                   // implied, of the training precision's dense peak
};

struct ClaimCheck {
  Claim claim;
  std::string model, hardware, topology, precision;
  int64_t gpus = 0;
  int64_t num_layers = 0;  // the model's decoder layers (a pp not dividing them counts edges)
  // The scenario's own account_for_*_in_pipeline_split keys, when it gives either.
  bool split_keys_given = false, embedding_in_split = false, loss_in_split = false;
  int64_t seq_len = 0, global_batch = 0;
  double peak_flops = 0;      // dense peak of the training precision, FLOP/s
  double fp8_peak_flops = 0;  // 0 when the hardware has none
  std::vector<FlopsConvention> conventions;
  double claimed_low = 0, claimed_high = 0;  // tokens/s per GPU over the conventions
  double ceiling = 0;                        // tokens/s per GPU at the physical ceiling
  double min_flops_per_token = 0;
  int64_t searched = 0;  // sweep points
  int64_t feasible = 0;
  // Searched points that fit but whose run cannot finish (status cannot_finish: with
  // training.tokens, Goodput::feasible false), and one of their reasons.
  int64_t cannot_finish = 0;
  std::string cannot_finish_reason;
  std::optional<Row> best;  // the best layout found
  std::vector<std::string> best_columns;
  std::optional<Row> given;  // the scenario's own layout, or the one --layout states
  // What `given` is ("The scenario's own layout", "The stated layout (tp=4, pp=4)").
  std::string given_label;
  std::string layout_text;  // --layout as written ("" without one)
  // The verdict is judged against `given` (a stated layout) rather than `best`.
  bool judged_against_given = false;
  // With --layout: whether the stated layout runs (fits in memory, and with training.tokens its
  // run can finish). False: the verdict is impossible, the claim cannot be run as stated (the
  // CLI exits 1, as simulate of it would).
  // A stated layout the run cannot use at all (invalid) is an error of CheckClaim instead.
  std::optional<bool> runs_as_stated;
  // Sequence parallelism in the searched layouts (on where tp > 1): the scenario's
  // parallel.sequence_parallel, or on when it does not say (as NeMo and torchtitan default).
  bool sequence_parallel = false;
  // The step-time prediction interval the verdict used (available false: ±kStatedUncertainty).
  PredictionInterval interval;
  Verdict verdict = Verdict::kPlausible;
  std::vector<std::string> reasons;
  std::vector<std::string> assumptions;  // what would have to hold for the claim to be true
};

struct ClaimOptions {
  int jobs = 1;
  bool simulate_given_layout = false;  // also simulate the scenario's own layout
  // A stated layout to check (--layout "tp=4,pp=4,..."; ParseLayoutOption): set over the
  // scenario, simulated, and the verdict judged against it when it fits.
  std::vector<std::pair<std::string, std::string>> layout;  // dotted scenario key, YAML value
  std::string layout_text;                                  // as written
  std::function<void(const SweepProgress&)> progress;
  // The validation residuals (hardware/calibration/residuals.json): the verdict then uses the
  // interval of the scenario's group instead of ±kStatedUncertainty.
  std::optional<ResidualSet> residuals;
};

// The sequence check-claim assumes when neither the claim nor --seq-len gives one: Llama 3's
// pre-training length (Dubey et al. 2024, arXiv 2407.21783, §3.4.1), the common one of the
// reference runs; a model's max_seq_len is its longest context, not how it is trained.
inline constexpr int64_t kClaimDefaultSeqLen = 8192;

// check-claim's default global batch, about 4M tokens per step (Llama 3 pre-training's first
// stage; Dubey et al. 2024, §3.4.1): the multiple of `gpus` nearest 4M / seq sequences when
// there are at least as many sequences as GPUs (every dp then divides it), else the largest
// divisor of `gpus` at or below 4M / seq. seq 8192, 512 GPUs: 512; seq 131072, 512 GPUs: 32
// (it was 512: 67M tokens per step).
int64_t ClaimDefaultGlobalBatch(int64_t seq_len, int64_t gpus);

// --layout's text: comma-separated KEY=VALUE with KEY one of dp, tp, pp, cp, ep, vp (or
// virtual_stages), schedule, zero (zero_stage), sp (sequence_parallel), mb (micro_batch),
// recompute. A vp above 1 without a schedule means interleaved_1f1b. Errors (kInvalidInput)
// name the item and the keys accepted. Values are checked when the scenario is built.
Result<std::vector<std::pair<std::string, std::string>>> ParseLayoutOption(const std::string& text);

// `base`: the scenario (model, hardware, topology, gpus, training); its layout is replaced by the
// search. Errors: the claim cannot be converted (no peak for the precision), the base does not
// read, the stated layout (options.layout) is not one the run can use (each reason, prefixed
// "--layout: TEXT: ", then what would be valid).
Result<ClaimCheck> CheckClaim(const ScenarioDocument& base, const Claim& claim,
                              const ClaimOptions& options, const LoadOptions& load);

// The text `check-claim` prints.
std::string ClaimReport(const ClaimCheck& check);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_CLAIM_H_
