#include "sim/report/goodput_report.h"

#include "sim/base/units.h"
#include "sim/report/summary.h"

namespace shardsim {

std::vector<std::pair<std::string, std::string>> GoodputRows(const Goodput& g) {
  const auto sec = [](double s) { return FormatSeconds(Seconds(s)); };
  if (!g.feasible) {  // the restart or the least checkpoint period outlasts the MTBF
    return {{"goodput", "0, INFEASIBLE (see below)"},
            {"interruptions", FormatSig(g.interruptions_per_day, 3) + " a day, MTBF " +
                                  sec(g.job_mtbf_s.value_or(0.0))},
            {"restart", sec(g.restart_s)}};
  }
  return {{"goodput", Percent(g.fraction) + ", stragglers x" + FormatSig(g.straggler_factor, 4)},
          {"interruptions", FormatSig(g.interruptions_per_day, 3) + " a day" +
                                (g.job_mtbf_s ? ", MTBF " + sec(*g.job_mtbf_s) : std::string())},
          {"checkpoints", g.checkpoint_interval_s ? sec(g.checkpoint_blocking_s) + " every " +
                                                        sec(*g.checkpoint_interval_s)
                                                  : std::string("none needed")}};
}

nlohmann::ordered_json GoodputJson(const Goodput& g) {
  using Json = nlohmann::ordered_json;
  const auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  return Json{{"fraction", g.fraction},
              {"effective_training_time", g.effective_training_time},
              {"interruptions_per_day", g.interruptions_per_day},
              {"planned_interruptions_per_day", g.planned_interruptions_per_day},
              {"job_mtbf_s", opt(g.job_mtbf_s)},
              {"checkpoint_bytes", g.checkpoint.total},
              {"checkpoint_bytes_per_gpu", g.checkpoint.per_gpu},
              {"checkpoint_write_s", g.checkpoint_write_s},
              {"checkpoint_blocking_s", g.checkpoint_blocking_s},
              {"checkpoint_interval_s", opt(g.checkpoint_interval_s)},
              {"checkpoint_interval_steps", g.checkpoint_interval_steps},
              {"restart_s", g.restart_s},
              {"lost_per_interruption_s", g.lost_per_interruption_s},
              {"lost_s_per_day", g.lost_s_per_day},
              {"straggler_factor", g.straggler_factor},
              {"straggler_cv", g.straggler_cv},
              {"straggler_ranks", g.straggler_ranks},
              {"feasible", g.feasible},
              {"infeasible_reason", g.feasible ? Json(nullptr) : Json(g.infeasible_reason)}};
}

}  // namespace shardsim
