// The fuzz targets of shardsim: each feeds one kind of user input through the code that reads it.
//
// A target must return normally for every input: an answer or an error Status. A crash, a
// sanitizer report, a hang or a blow-up of memory is a finding. The same functions run in two
// ways: under libFuzzer (tests/fuzz/fuzz_main.cc, one binary per target, built with
// -DSHARDSIM_FUZZ=ON and clang), and in the ordinary test suite, which replays every file of
// tests/fuzz/corpus/<target>/ and tests/fuzz/regressions/<target>/ (fuzz_replay_test.cc).
#ifndef SHARDSIM_TESTS_FUZZ_TARGETS_H_
#define SHARDSIM_TESTS_FUZZ_TARGETS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardsim::fuzz {

enum class Target {
  kScenario,
  kModel,
  kHardware,
  kTopology,
  kHfJson,
  kSweep,
  kClaim,
  kGemmCsv,
  kMergeCsv
};

// "scenario", "model", "hardware", "topology", "hf_json", "sweep", "claim", "gemm_csv",
// "merge_csv": the folder names under corpus/ and regressions/, and the binaries' suffixes.
const char* Name(Target t);
std::vector<Target> AllTargets();

// Runs `data` through target `t`. Files it needs are written under a private temporary folder
// of this process; library names resolve in `library` (the source tree).
void RunOne(Target t, const uint8_t* data, size_t size, const std::string& library);

}  // namespace shardsim::fuzz

#endif  // SHARDSIM_TESTS_FUZZ_TARGETS_H_
