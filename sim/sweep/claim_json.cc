#include "sim/sweep/claim_json.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/sweep/rows.h"

namespace shardsim {
namespace {

using Json = nlohmann::ordered_json;

// A row as `sweep --jsonl` writes it (the same keys and number forms), or null.
Json RowJson(const std::optional<Row>& row, const std::vector<std::string>& columns) {
  if (!row) return nullptr;
  const RowFormat format(RowFormatKind::kJsonl, columns);
  return Json::parse(format.Format(*row));
}

Json RowNote(const std::optional<Row>& row) {
  const std::string note = row ? FlopsNoteOf(*row) : "";
  return note.empty() ? Json(nullptr) : Json(note);
}

}  // namespace

const char* Name(ClaimKind k) {
  switch (k) {
    case ClaimKind::kTokensPerS:
      return "tokens_per_s";
    case ClaimKind::kTokensPerSPerGpu:
      return "tokens_per_s_per_gpu";
    case ClaimKind::kFlopsPerGpu:
      return "flops_per_gpu";
    case ClaimKind::kFlopsTotal:
      return "flops_total";
    case ClaimKind::kMfu:
      return "mfu";
    case ClaimKind::kTimeToTrain:
      return "time_to_train_s";
  }
  return "unknown";
}

std::string ClaimJson(const ClaimCheck& c) {
  Json claim = {{"text", c.claim.text},
                {"kind", Name(c.claim.kind)},
                {"value", c.claim.value},
                {"train_tokens", nullptr}};
  if (c.claim.kind == ClaimKind::kTimeToTrain) claim["train_tokens"] = c.claim.train_tokens;
  Json conventions = Json::array();
  for (const FlopsConvention& k : c.conventions) {
    conventions.push_back({{"name", k.name},
                           {"source", k.source},
                           {"flops_per_token", k.flops_per_token},
                           {"tokens_per_s_per_gpu", k.tokens_per_s_per_gpu},
                           {"tflops_per_gpu", k.tflops_per_gpu},
                           {"mfu", k.mfu}});
  }
  const std::vector<std::string> no_columns;
  // The prediction interval the verdict used (null: the fixed ±uncertainty).
  Json interval = nullptr;
  if (c.interval.available) {
    interval = {{"error_low", c.interval.error_low},
                {"error_high", c.interval.error_high},
                {"median_error", c.interval.median_error},
                {"coverage", c.interval.coverage},
                {"runs", c.interval.runs},
                {"group", c.interval.group},
                {"kind", c.interval.kind},
                {"note", c.interval.note},
                {"source", c.interval.source}};
  }
  Json j = {{"claim", claim},
            {"model", c.model},
            {"hardware", c.hardware},
            {"topology", c.topology},
            {"gpus", c.gpus},
            {"seq_len", c.seq_len},
            {"global_batch", c.global_batch},
            {"precision", c.precision},
            {"peak_flops", c.peak_flops},
            {"fp8_peak_flops", c.fp8_peak_flops},
            {"conventions", conventions},
            {"claimed_tokens_per_s_per_gpu", {c.claimed_low, c.claimed_high}},
            {"ceiling_tokens_per_s_per_gpu", c.ceiling},
            {"min_flops_per_token", c.min_flops_per_token},
            {"searched", c.searched},
            {"feasible", c.feasible},
            {"best", RowJson(c.best, c.best_columns)},
            {"best_columns", c.best_columns},
            {"given", RowJson(c.given, no_columns)},
            {"verdict", Name(c.verdict)},
            {"judged_against", c.judged_against_given ? "given" : "best"},
            // With --layout: false when the stated layout does not fit (verdict impossible).
            {"runs_as_stated", c.runs_as_stated ? Json(*c.runs_as_stated) : Json(nullptr)},
            {"uncertainty", kStatedUncertainty},
            {"interval", interval},
            {"reasons", c.reasons},
            {"assumptions", c.assumptions},
            // Added after the keys above: simulate's flops_convention_note for the best and the
            // given row, null unless their MFU counts work the kernels did not execute.
            {"best_flops_convention_note", RowNote(c.best)},
            {"given_flops_convention_note", RowNote(c.given)},
            // Searched points that fit but whose run of training.tokens cannot finish.
            {"cannot_finish", c.cannot_finish}};
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace shardsim
