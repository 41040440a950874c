// Where `shardsim comm` finds a topology by name.
//
// Temporary: until sim/config's LoadTopology (branch `config`) is on main, the topologies shipped
// in topologies/*.yaml are also listed here, value for value; tests/collective/comm_cli_test.cc
// checks the list against the files' names. Once the loader lands, FindTopology becomes a call to
// LoadTopology(name_or_path, {library_dir}) and this table goes away.
#ifndef SHARDSIM_CLI_COMM_TOPOLOGIES_H_
#define SHARDSIM_CLI_COMM_TOPOLOGIES_H_

#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/spec.h"

namespace shardsim {

// Errors: an unknown name (with "did you mean"), or a path (files need the YAML loader).
Result<TopologySpec> FindTopology(const std::string& name, const std::string& library_dir);
std::vector<std::string> BuiltinTopologyNames();

}  // namespace shardsim

#endif  // SHARDSIM_CLI_COMM_TOPOLOGIES_H_
