// The goodput figures (sim/goodput) as the reports print them: one line for the text table and
// the `goodput` object of `simulate --json` (DESIGN.md §6 keys, plus the inputs behind them).
#ifndef SHARDSIM_REPORT_GOODPUT_REPORT_H_
#define SHARDSIM_REPORT_GOODPUT_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>

#include "sim/goodput/goodput.h"

namespace shardsim {

// "91.2% (7.76 interruptions/day, checkpoint every 4.2 min, stragglers x1.08)"
std::string GoodputText(const Goodput& g);
// {fraction, interruptions_per_day, job_mtbf_s, checkpoint_write_s, checkpoint_interval_s,
//  lost_s_per_day, straggler_factor, ...}; job_mtbf_s and checkpoint_interval_s are null when
// there are no unexpected interruptions (and no interval was set).
nlohmann::ordered_json GoodputJson(const Goodput& g);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_GOODPUT_REPORT_H_
