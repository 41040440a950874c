// The shardsim command line: see sim/cli/cli.h.
#include "sim/cli/cli.h"

int main(int argc, char** argv) { return shardsim::RunCli(argc, argv); }
