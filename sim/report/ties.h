// When a sweep point ties with the best: the one rule the text report, the ranked CSV
// (sim/sweep/ranking.cc IsTie) and the HTML report (sim/report/html_sweep.cc) apply.
#ifndef SHARDSIM_REPORT_TIES_H_
#define SHARDSIM_REPORT_TIES_H_

#include <cmath>

namespace shardsim {

// The stated uncertainty is on time (a step, a time to train): a point ties with the best when
// its time is at most (1 + fraction) times the best's, whichever figure ranks them. A throughput
// or goodput (`higher_better`) is a time's inverse, so there the ratio is the best's figure over
// the point's: tokens/s within 1 / 1.15 = 0.87 of the best, not 0.85, and the same points tie
// under --rank-by tokens_per_s and time_to_train. Both figures positive, else no tie.
inline bool TiesOnTime(double figure, double best, bool higher_better, double fraction) {
  if (!(fraction > 0.0) || !(figure > 0.0) || !(best > 0.0)) return false;
  const double slower = higher_better ? best / figure : figure / best;
  // 1e-12: 115 / 100 - 1 is 0.15000000000000013 in doubles.
  return std::isfinite(slower) && slower - 1.0 <= fraction + 1e-12;
}

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_TIES_H_
