#include "sim/cli/cli.h"

#include <cstdio>

namespace shardsim {

int RunCli(int argc, char** argv) {
  (void)argc;
  (void)argv;
  std::fprintf(stderr, "shardsim: not built yet\n");
  return 2;
}

}  // namespace shardsim
