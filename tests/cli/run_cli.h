// Runs the built `shardsim` binary for end-to-end CLI tests: exit code and output.
#ifndef SHARDSIM_TESTS_CLI_RUN_CLI_H_
#define SHARDSIM_TESTS_CLI_RUN_CLI_H_

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace shardsim::testing {

struct CliRun {
  int code = -1;
  std::string out;  // stdout, and stderr too unless `stderr_too` is false
};

inline CliRun Shardsim(const std::string& args, bool stderr_too = true) {
  const std::string cmd = std::string(SHARDSIM_BINARY) + " " + args + (stderr_too ? " 2>&1" : " 2>/dev/null");
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

}  // namespace shardsim::testing

#endif  // SHARDSIM_TESTS_CLI_RUN_CLI_H_
