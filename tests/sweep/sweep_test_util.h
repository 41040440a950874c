// Helpers shared by the sweep tests: the source tree as working directory (library names and
// fixture paths resolve as in the CLI), a scratch folder, the shardsim binary, whole files.
#ifndef SHARDSIM_TESTS_SWEEP_SWEEP_TEST_UTIL_H_
#define SHARDSIM_TESTS_SWEEP_SWEEP_TEST_UTIL_H_

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/config/loader.h"

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

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

struct CliRun {
  int code = -1;
  std::string out;  // stdout and stderr together
};

// Runs `shardsim ARGS` from the source tree.
inline CliRun Shardsim(const std::string& args, bool with_stderr = true) {
  Lib();
  const std::string cmd =
      std::string(SHARDSIM_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace shardsim::sweep_test

#endif  // SHARDSIM_TESTS_SWEEP_SWEEP_TEST_UTIL_H_
