#include "sim/report/library_residuals.h"

#include <filesystem>
#include <string>
#include <utility>

namespace shardsim {

Result<std::optional<ResidualSet>> LibraryResiduals(const LoadOptions& load) {
  for (const std::string& dir : LibraryDirs(load)) {
    const std::filesystem::path path = std::filesystem::path(dir) / kResidualsPath;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) continue;
    Result<ResidualSet> set = ReadResiduals(path.string());
    if (!set.ok()) return set.status();
    return std::optional<ResidualSet>(std::move(*set));
  }
  return std::optional<ResidualSet>();
}

Result<PredictionInterval> LibraryInterval(const Scenario& scenario, const LoadOptions& load) {
  Result<std::optional<ResidualSet>> set = LibraryResiduals(load);
  if (!set.ok()) return set.status();
  if (*set) return IntervalFor(**set, IntervalKeyOf(scenario));
  PredictionInterval none;
  none.note = std::string("no ") + kResidualsPath + " in the library folders";
  return none;
}

}  // namespace shardsim
