// Finding the validation residuals (hardware/calibration/residuals.json) in the library folders,
// for the CLI and the Python module alike.
#ifndef SHARDSIM_REPORT_LIBRARY_RESIDUALS_H_
#define SHARDSIM_REPORT_LIBRARY_RESIDUALS_H_

#include <optional>

#include "sim/base/status.h"
#include "sim/config/loader.h"
#include "sim/report/interval.h"

namespace shardsim {

// The residuals of the first library folder holding kResidualsPath; none when no folder does.
// A residuals file that does not read is an error.
Result<std::optional<ResidualSet>> LibraryResiduals(const LoadOptions& load);
// The step-time prediction interval for `scenario` from LibraryResiduals; not available (with a
// note) when there are none.
Result<PredictionInterval> LibraryInterval(const Scenario& scenario, const LoadOptions& load);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_LIBRARY_RESIDUALS_H_
