// libFuzzer's entry point for one target, chosen at compile time (SHARDSIM_FUZZ_TARGET, a
// shardsim::fuzz::Target enumerator). Built by -DSHARDSIM_FUZZ=ON; run by run_fuzzers.sh.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardsim::fuzz::RunOne(shardsim::fuzz::Target::SHARDSIM_FUZZ_TARGET, data, size,
                         SHARDSIM_SOURCE_DIR);
  return 0;
}
