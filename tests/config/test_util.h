// Helpers shared by the sim/config tests: run from the source tree so that fixture paths (and the
// paths printed in messages) are stable, and load scenarios written inline in a test.
#ifndef SHARDSIM_TESTS_CONFIG_TEST_UTIL_H_
#define SHARDSIM_TESTS_CONFIG_TEST_UTIL_H_

#include <filesystem>
#include <string>

#include "sim/config/loader.h"

namespace shardsim::testing_util {

// Changes to the source tree and returns options whose library is the test fixtures.
inline LoadOptions TestLib() {
  std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
  return LoadOptions{{"tests/config/data/lib"}};
}

// A scenario written in the test, as if it were the file tests/config/data/<name>.
inline Result<Scenario> BuildText(const std::string& text,
                                  const std::string& name = "inline.yaml") {
  const LoadOptions lib = TestLib();
  Result<ScenarioDocument> doc = ScenarioDocument::ParseText(text, "tests/config/data/" + name);
  if (!doc.ok()) return doc.status();
  return doc->Build(lib);
}

// The head of a scenario on the fixture library, to which a test appends its own keys.
inline std::string Head(const std::string& model = "tiny-llama") {
  return "model: " + model + "\nhardware: test-gpu\ntopology: test-dgx\n";
}

}  // namespace shardsim::testing_util

#endif  // SHARDSIM_TESTS_CONFIG_TEST_UTIL_H_
