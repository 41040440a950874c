#include "sim/report/flops_note.h"

#include "sim/base/units.h"
#include "sim/report/summary.h"

namespace shardsim {

double ConventionOverExecuted(double hardware_flops_per_step, double executed_flops_per_step) {
  return executed_flops_per_step > 0.0 ? hardware_flops_per_step / executed_flops_per_step : 0.0;
}

std::string FlopsConventionNote(double f, double executed_fraction) {
  if (!(f > 1.0)) return "";
  return "MFU / HFU count causal attention as the full s x s square (the published convention); "
         "the kernels ran its unmasked half: HFU's FLOPs are " +
         FormatSig(f, 3) + "x those executed, " + Percent(executed_fraction) +
         " of peak was executed";
}

}  // namespace shardsim
