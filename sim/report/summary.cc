#include "sim/report/summary.h"

#include "sim/base/units.h"
#include "sim/parallel/plan.h"

namespace shardsim {

std::string LayoutSummary(const Scenario& sc) {
  const ParallelSpec& p = sc.parallel;
  std::string s = "TP" + std::to_string(p.tp) + " PP" + std::to_string(p.pp) + " DP" +
                  std::to_string(p.dp) + " CP" + std::to_string(p.cp);
  if (p.ep > 1) s += " EP" + std::to_string(p.ep);
  s += ", ZeRO-" + std::to_string(p.zero_stage);
  // The plan's rule (SP splits over the TP group: none at tp 1).
  if (DeriveRules(sc.model, sc.training, p).sequence_parallel) s += ", SP";
  s += ", " + std::string(Name(p.schedule));
  if (p.schedule == PipelineSchedule::kInterleaved1F1B) {
    s += " v" + std::to_string(p.virtual_stages);
    if (p.microbatch_group_size_per_vp_stage > 0) {
      s += " (" + std::to_string(p.microbatch_group_size_per_vp_stage) +
           " micro-batches per chunk group)";
    }
  }
  return s;
}

std::string Percent(double fraction) { return FormatSig(fraction * 100.0, 3) + "%"; }

}  // namespace shardsim
