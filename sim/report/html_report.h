// Self-contained HTML reports: one file each, with its stylesheet, scripts and data inline, that
// opens in any browser with no network access (no CDN scripts or fonts).
//
// `shardsim simulate --html FILE` (SimulateHtml): the inputs and assumptions; the headline figures
// (step time, tokens/s, MFU, peak memory against capacity) and the verdict; a zoomable timeline of
// the step, one row per pipeline stage and stream, with forward, backward, recompute, exposed
// communication and idle time coloured apart; per-stage memory as stacked bars against the
// capacity line and the worst device's memory over the step; exposed communication by kind and
// by link class, with the bottleneck named in words.
//
// The figures a program checks carry their exact values as attributes (data-key / data-value,
// html_page.h), equal to those of `simulate --json`; the charts are inline SVG whose elements
// carry data-* attributes (tests/html/ reads both from the page rendered in headless Chromium).
#ifndef SHARDSIM_REPORT_HTML_REPORT_H_
#define SHARDSIM_REPORT_HTML_REPORT_H_

#include <string>

#include "sim/config/spec.h"
#include "sim/report/simulate.h"

namespace shardsim {

// The HTML document of one simulated step. `result` must come from Simulate(scenario) (its
// program and run are drawn as the timeline).
std::string SimulateHtml(const Scenario& scenario, const SimResult& result);

// The bottleneck in one sentence: what the kernels take, then the largest exposed cost — which
// collective on which link class, the pipeline bubble, recompute or the optimizer — with its time
// and share of the step. Also printed by the HTML report's verdict.
std::string BottleneckInWords(const SimResult& result);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_HTML_REPORT_H_
