// Small text helpers shared by the reports.
#ifndef SHARDSIM_REPORT_SUMMARY_H_
#define SHARDSIM_REPORT_SUMMARY_H_

#include <string>

#include "sim/config/spec.h"

namespace shardsim {

// "TP8 PP4 DP16 CP1, ZeRO-1, SP, interleaved_1f1b v2"
std::string LayoutSummary(const Scenario& scenario);
// 0.4567 -> "45.7%"
std::string Percent(double fraction);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_SUMMARY_H_
