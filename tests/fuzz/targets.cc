#include "tests/fuzz/targets.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "sim/config/loader.h"
#include "sim/report/budget_report.h"
#include "sim/sweep/claim.h"
#include "sim/sweep/merge.h"
#include "sim/sweep/sweep_spec.h"

namespace shardsim::fuzz {
namespace {

// A folder of this process for the files a target reads.
const std::string& WorkDir() {
  static const std::string dir = [] {
    std::string t = (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    t += "/shardsim-fuzz-XXXXXX";
    std::vector<char> name(t.begin(), t.end());
    name.push_back('\0');
    if (::mkdtemp(name.data()) == nullptr) std::abort();
    return std::string(name.data());
  }();
  return dir;
}

std::string Write(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = WorkDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

void Write(const std::string& name, const std::string& text) {
  Write(name, reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace

const char* Name(Target t) {
  switch (t) {
    case Target::kScenario:
      return "scenario";
    case Target::kModel:
      return "model";
    case Target::kHardware:
      return "hardware";
    case Target::kTopology:
      return "topology";
    case Target::kHfJson:
      return "hf_json";
    case Target::kSweep:
      return "sweep";
    case Target::kClaim:
      return "claim";
    case Target::kGemmCsv:
      return "gemm_csv";
    case Target::kMergeCsv:
      return "merge_csv";
  }
  return "?";
}

std::vector<Target> AllTargets() {
  return {Target::kScenario, Target::kModel, Target::kHardware, Target::kTopology, Target::kHfJson,
          Target::kSweep,    Target::kClaim, Target::kGemmCsv,  Target::kMergeCsv};
}

void RunOne(Target t, const uint8_t* data, size_t size, const std::string& library) {
  LoadOptions options;
  options.library_dirs = {library};
  switch (t) {
    case Target::kScenario: {
      Result<Scenario> sc = LoadScenario(Write("scenario.yaml", data, size), options);
      if (!sc.ok()) return;
      Result<BudgetReport> b = BuildBudget(*sc);
      if (b.ok()) (void)BudgetJson(*sc, *b);
      return;
    }
    case Target::kModel:
      (void)LoadModel(Write("model.yaml", data, size), options);
      return;
    case Target::kHardware:
      (void)LoadHardware(Write("hardware.yaml", data, size), options);
      return;
    case Target::kTopology:
      (void)LoadTopology(Write("topology.yaml", data, size), options);
      return;
    case Target::kHfJson:
      (void)ImportHfConfig(Write("config.json", data, size));
      return;
    case Target::kSweep: {
      const std::string text(reinterpret_cast<const char*>(data), size);
      (void)ParseSweepSpec(text, WorkDir() + "/sweep.yaml", options);
      return;
    }
    case Target::kClaim: {
      const std::string text(reinterpret_cast<const char*>(data), size);
      (void)ParseClaim(text);
      return;
    }
    case Target::kGemmCsv: {
      Write("gemm.csv", data, size);
      Write("gemm_hw.yaml", "base: h100-sxm\ngemm_table: gemm.csv\n");
      (void)LoadHardware(WorkDir() + "/gemm_hw.yaml", options);
      return;
    }
    case Target::kMergeCsv: {
      const std::string in = Write("shard.csv", data, size);
      MergeOptions mo;
      mo.overwrite = true;
      (void)MergeResultFiles({in}, WorkDir() + "/merged.csv", mo);
      return;
    }
  }
}

}  // namespace shardsim::fuzz
