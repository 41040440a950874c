// The note printed beside MFU / HFU wherever a report shows them (simulate's text, JSON and
// HTML, sweep rows and their HTML report, check-claim): MFU and HFU follow the published FLOPs
// conventions (Megatron-LM / PaLM: causal attention counted as the full s x s square), while the
// executed figure (FlopsSummary::executed_per_step) is what the kernels ran. A utilization above
// 100% is therefore never shown without saying why: the executed fraction cannot exceed the
// sustained peak.
#ifndef SHARDSIM_REPORT_FLOPS_NOTE_H_
#define SHARDSIM_REPORT_FLOPS_NOTE_H_

#include <string>

namespace shardsim {

// HFU's FLOPs per step (the conventions with recompute) over the FLOPs executed: above 1 when
// the conventions count work the kernels skip (the masked half of causal attention). 0 when
// nothing was executed.
double ConventionOverExecuted(double hardware_flops_per_step, double executed_flops_per_step);

// "MFU / HFU count causal attention as the full s x s square (the published convention); the
// kernels ran its unmasked half: HFU's FLOPs are 1.21x those executed, 41.3% of peak was
// executed" when `convention_over_executed` is above 1; "" otherwise. `executed_fraction`: the
// executed FLOP/s per GPU over the dense peak (0..1).
std::string FlopsConventionNote(double convention_over_executed, double executed_fraction);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_FLOPS_NOTE_H_
