// Runs commands (the built `shardsim` binary for end-to-end CLI tests) for their exit code and
// output, and reads and writes whole files: what the CLI, sweep and HTML tests share.
#ifndef SHARDSIM_TESTS_CLI_RUN_CLI_H_
#define SHARDSIM_TESTS_CLI_RUN_CLI_H_

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace shardsim::testing {

struct CliRun {
  int code = -1;
  std::string out;  // stdout, and stderr too unless `stderr_too` is false
};

// Runs `command` through /bin/sh, capturing its stdout (redirect stderr in `command` to keep it).
inline CliRun RunCommand(const std::string& command) {
  CliRun r;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 65536> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline CliRun Shardsim(const std::string& args, bool stderr_too = true) {
  return RunCommand(std::string(SHARDSIM_BINARY) + " " + args +
                    (stderr_too ? " 2>&1" : " 2>/dev/null"));
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace shardsim::testing

#endif  // SHARDSIM_TESTS_CLI_RUN_CLI_H_
