// The goodput figures (sim/goodput) as the reports print them: one line for the text table and
// the `goodput` object of `simulate --json` (DESIGN.md §6 keys, plus the inputs behind them).
#ifndef SHARDSIM_REPORT_GOODPUT_REPORT_H_
#define SHARDSIM_REPORT_GOODPUT_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/goodput/goodput.h"

namespace shardsim {

// The rows of the text report's head table: {"goodput", "85.0%, stragglers x1.083"},
// {"interruptions", "7.76 a day, MTBF 3.09 h"}, {"checkpoints", "2.84 s every 251 s"}.
std::vector<std::pair<std::string, std::string>> GoodputRows(const Goodput& g);
// {fraction, interruptions_per_day, job_mtbf_s, checkpoint_write_s, checkpoint_interval_s,
//  lost_s_per_day, straggler_factor, ...}; job_mtbf_s and checkpoint_interval_s are null when
// there are no unexpected interruptions (and no interval was set).
nlohmann::ordered_json GoodputJson(const Goodput& g);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_GOODPUT_REPORT_H_
