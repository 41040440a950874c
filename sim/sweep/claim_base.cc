#include "sim/sweep/claim_base.h"

#include <algorithm>
#include <string>

namespace shardsim {

std::string DefaultTopology(const std::string& hardware) {
  if (hardware.rfind("a100", 0) == 0) return "dgx-a100";
  if (hardware == "h100-sxm") return "dgx-h100";
  if (hardware == "h200-sxm") return "dgx-h200";
  if (hardware == "h800-sxm") return "h800-deepseek";
  return "";
}

Result<ScenarioDocument> ClaimBaseScenario(const ClaimSetup& setup, const LoadOptions& load) {
  std::string topology = setup.topology;
  if (topology.empty()) {
    // An unknown accelerator is reported as such (with close names), not as lacking a cluster.
    Result<HardwareSpec> hw = LoadHardware(setup.hardware, load);
    if (!hw.ok()) return hw.status();
    topology = DefaultTopology(setup.hardware);
  }
  if (topology.empty()) {
    return Status::Invalid("check-claim: no default cluster for hardware '" + setup.hardware +
                           "'; give --topology");
  }
  int64_t seq = setup.seq_len;
  if (seq <= 0) {
    Result<ModelSpec> m = LoadModel(setup.model, load);
    if (!m.ok()) return m.status();
    seq = m->max_seq_len;
  }
  // About 4M tokens per step (Llama 3 pre-training's first stage; Dubey et al. 2024,
  // arXiv 2407.21783, §3.4.1), a multiple of the GPU count so that every dp divides it.
  const int64_t target = 4 * 1024 * 1024;
  const int64_t per_gpu = std::max<int64_t>(1, (target / seq + setup.gpus - 1) / setup.gpus);
  const int64_t gb = setup.global_batch > 0 ? setup.global_batch : per_gpu * setup.gpus;
  const std::string text =
      "name: check-claim\nmodel: " + setup.model + "\nhardware: " + setup.hardware +
      "\ntopology: " + topology + "\ngpus: " + std::to_string(setup.gpus) +
      "\ntraining: {seq_len: " + std::to_string(seq) + ", global_batch: " + std::to_string(gb) +
      ", precision: " + setup.precision + "}\n";
  return ScenarioDocument::ParseText(text, "<check-claim>");
}

}  // namespace shardsim
