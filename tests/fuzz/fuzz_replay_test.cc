// Replays every seed and every input a fuzzer once found (tests/fuzz/corpus/<target>/,
// tests/fuzz/regressions/<target>/) through its target in the ordinary test suite, so a finding
// fixed stays fixed without clang or libFuzzer. Each must return (an answer or an error); under
// the sanitizer build (quickstart.sh asan) memory errors fail too. Hangs and blow-ups are the
// fuzzers' to find (run_fuzzers.sh: -timeout=10, -rss_limit_mb); here every input just runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/fuzz/targets.h"

namespace shardsim::fuzz {
namespace {

namespace fs = std::filesystem;

TEST(FuzzReplay, EveryCorpusAndRegressionInputEndsInAnAnswerOrAnError) {
  const fs::path root = fs::path(SHARDSIM_SOURCE_DIR) / "tests" / "fuzz";
  int replayed = 0;
  for (Target t : AllTargets()) {
    for (const char* kind : {"corpus", "regressions"}) {
      const fs::path dir = root / kind / Name(t);
      if (!fs::is_directory(dir)) continue;
      for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
        if (!e.is_regular_file()) continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        const std::string data = ss.str();
        SCOPED_TRACE(e.path().string());
        RunOne(t, reinterpret_cast<const uint8_t*>(data.data()), data.size(), SHARDSIM_SOURCE_DIR);
        ++replayed;
      }
    }
  }
  EXPECT_GT(replayed, 0);
}

}  // namespace
}  // namespace shardsim::fuzz
