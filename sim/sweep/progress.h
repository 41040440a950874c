// Progress of a running sweep as text for a person watching stderr: a bar redrawn in place with
// the rate and the time left when stderr is a terminal, or a plain line every few seconds when
// it is a log file. Pure formatting: the caller says what time it is and writes the text.
#ifndef SHARDSIM_SWEEP_PROGRESS_H_
#define SHARDSIM_SWEEP_PROGRESS_H_

#include <string>

#include "sim/base/status.h"
#include "sim/sweep/runner.h"

namespace shardsim {

enum class ProgressStyle { kBar, kPlain, kNone };

// "bar", "plain", "none"; "auto" is `terminal` ? bar : plain.
Result<ProgressStyle> ParseProgressStyle(const std::string& text, bool terminal);

class ProgressMeter {
 public:
  // `label` opens every line ("sweep"). Plain lines come at most every `plain_every_s`, bar
  // redraws at most every `bar_every_s` seconds.
  ProgressMeter(ProgressStyle style, std::string label, double plain_every_s = 10.0,
                double bar_every_s = 0.1);

  // The text to write now ("" when nothing is due). `now_s`: seconds since the run started.
  std::string Update(const SweepProgress& p, double now_s);
  // The last state, always (the bar's line is ended).
  std::string Finish(const SweepProgress& p, double now_s);

 private:
  std::string Line(const SweepProgress& p, double now_s) const;

  ProgressStyle style_;
  std::string label_;
  double plain_every_s_, bar_every_s_;
  double last_s_ = -1e300;
};

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_PROGRESS_H_
