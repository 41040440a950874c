// Helpers shared by the sweep tests: the source tree as working directory (library names and
// fixture paths resolve as in the CLI), a scratch folder, the shardsim binary, whole files.
#ifndef SHARDSIM_TESTS_SWEEP_SWEEP_TEST_UTIL_H_
#define SHARDSIM_TESTS_SWEEP_SWEEP_TEST_UTIL_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "tests/cli/run_cli.h"

namespace shardsim::sweep_test {

inline LoadOptions Lib() {
  std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
  return LoadOptions{};
}

// A fresh folder under the system temp folder, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "shardsim-sweep-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

using testing::CliRun;
using testing::ReadFile;
using testing::WriteFile;

// Runs `shardsim ARGS` from the source tree.
inline CliRun Shardsim(const std::string& args, bool with_stderr = true) {
  Lib();
  return testing::Shardsim(args, with_stderr);
}

// The lines of `text`, without their ends.
inline std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace shardsim::sweep_test

#endif  // SHARDSIM_TESTS_SWEEP_SWEEP_TEST_UTIL_H_
