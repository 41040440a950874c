#include "sim/sweep/claim_base.h"

#include <string>

#include "sim/sweep/claim.h"

namespace shardsim {

Result<ScenarioDocument> ClaimBaseScenario(const ClaimSetup& setup, const LoadOptions& load,
                                           std::string* warning) {
  std::string topology = setup.topology;
  if (topology.empty()) {
    // An unknown accelerator is reported as such (with close names), not as lacking a cluster.
    Result<HardwareSpec> hw = LoadHardware(setup.hardware, load);
    if (!hw.ok()) return hw.status();
    topology = hw->default_topology;
    if (topology.empty()) {
      return Status::Invalid("check-claim: hardware '" + setup.hardware +
                             "' names no default_topology; give --topology (or add "
                             "default_topology: NAME to its file)");
    }
  }
  int64_t seq = setup.claim_seq_len > 0 ? setup.claim_seq_len : setup.seq_len;
  if (seq <= 0) {
    Result<ModelSpec> m = LoadModel(setup.model, load);
    if (!m.ok()) return m.status();
    // Learned position tables bound the sequence (GPT-3's 2048).
    const bool bounded = m->position_embedding == PositionEmbedding::kLearned &&
                         m->max_seq_len > 0 && m->max_seq_len < kClaimDefaultSeqLen;
    seq = bounded ? m->max_seq_len : kClaimDefaultSeqLen;
    if (warning != nullptr) {
      *warning =
          "check-claim: warning: neither the claim nor --seq-len gives the sequence length; "
          "assumed " +
          std::to_string(seq) + (bounded ? " (the model's learned position table)" : "") +
          ". Write it in the claim (\"... at seq 4096\") or pass --seq-len";
    }
  }
  const int64_t gb =
      setup.global_batch > 0 ? setup.global_batch : ClaimDefaultGlobalBatch(seq, setup.gpus);
  const std::string text =
      "name: check-claim\nmodel: " + setup.model + "\nhardware: " + setup.hardware +
      "\ntopology: " + topology + "\ngpus: " + std::to_string(setup.gpus) +
      "\ntraining: {seq_len: " + std::to_string(seq) + ", global_batch: " + std::to_string(gb) +
      ", precision: " + setup.precision + "}\n";
  return ScenarioDocument::ParseText(text, "<check-claim>");
}

}  // namespace shardsim
