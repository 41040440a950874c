// The data block of the simulate HTML report (html_report.h): what its scripts draw. Written as
// JSON; every time is an integer of nanoseconds since the step began (fields *_s: seconds), every
// size in bytes.
//
//   scenario, step_s: the scenario's name and the step time in seconds
//   timeline: {step_ns, kinds, links, rows: [{label, stage, device, stream}],
//              tasks: {row, start, end, kind, mb, chunk, compute, recompute, tp, cp, ep, bytes,
//                      link}}  (columns; kind indexes `kinds`, link indexes `links`)
//     One row per pipeline stage and stream that ran something (compute; pipeline sends to the
//     next and previous stage; parameter gathers; gradient reductions), for the devices of data-
//     and context-parallel rank 0. Compute tasks carry their parts (kernels without recompute,
//     recompute, exposed TP/CP/EP communication); the gaps of each compute row are tasks of kind
//     "idle", so kernels + idle cover the step exactly.
//   memory: {capacity, parts, stages: [{stage, device, total, values, detail, in_flight}],
//            worst_stage, over_time: {device, stage, base, step_ns, t_ns, bytes}}
//     Per stage, the device with the highest peak and its peak split into weights, gradients,
//     optimizer, activations, buffers (ZeRO-3 gathers, recompute, loss, MoE, communication) and
//     reserve (CUDA context, fragmentation); `total` is that device's simulated peak; `detail`
//     names the parts of buffers and reserve ({buffers: {name: bytes}, reserve: {...}});
//     `in_flight` the micro-batches whose activations the closed form holds. over_time: the
//     worst device's memory at each change of its live activations.
//   breakdown: [{part, label, seconds}]    the critical path by what it was doing
//   exposed: {bottlenecks: [{label, kind, resource, exposed_s, share}],
//             by_link: [{link, exposed_s}]}   (shares of the top-level step_s)
#ifndef SHARDSIM_REPORT_HTML_SIMULATE_DATA_H_
#define SHARDSIM_REPORT_HTML_SIMULATE_DATA_H_

#include <string>

#include "sim/config/spec.h"
#include "sim/report/simulate.h"

namespace shardsim {

std::string SimulateReportData(const Scenario& scenario, const SimResult& result);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_HTML_SIMULATE_DATA_H_
