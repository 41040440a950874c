// The command-line front end: parses arguments, runs the pipeline, prints, and picks the exit
// code. The only module that writes to stdout/stderr or decides how the process ends.
// Exit codes (docs/reference.md §7): 0 ok; 1 ran but infeasible; 2 bad input or usage.
#ifndef SHARDSIM_CLI_CLI_H_
#define SHARDSIM_CLI_CLI_H_

namespace shardsim {

int RunCli(int argc, char** argv);

}  // namespace shardsim

#endif  // SHARDSIM_CLI_CLI_H_
