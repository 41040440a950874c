// `shardsim comm`: the time of one collective on a topology, in nccl-tests' terms, as text for
// people and JSON for programs (the CLI and the Python module print the same).
//
// The group is every GPU (`gpus`), or with ranks_per_node R the first R GPUs of each of
// gpus / R nodes (as `mpirun -npernode R`). algbw = S / t and busbw = algbw * factor as
// nccl-tests defines them (doc/PERFORMANCE.md); GB/s = 1e9 bytes/s.
#ifndef SHARDSIM_REPORT_COMM_REPORT_H_
#define SHARDSIM_REPORT_COMM_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/collective/collective.h"
#include "sim/config/loader.h"
#include "sim/config/spec.h"

namespace shardsim {

// The options of `shardsim comm`, as written on its command line.
struct CommRequest {
  std::string topology;  // a name in the library's topologies/ or a YAML path
  int64_t gpus = 0;
  std::string op = "all_reduce";
  std::string size;   // "1GiB", "64 MB" or bytes; "" = 1GiB
  std::string sizes;  // "FROM:TO[:FACTOR]" (nccl-tests' sweep); "" = one size
  std::string algo = "auto";
  int64_t ranks_per_node = 0;
  bool ranks_per_node_given = false;  // 0 is the default (every GPU of each node), not a value
  int64_t concurrent_groups = 1;
};

struct CommRun {
  CommRequest request;
  TopologySpec spec;
  CollectiveOp op;
  std::vector<double> sizes;          // bytes, ascending
  std::vector<CollectiveCost> costs;  // parallel to sizes
};

// Errors (kInvalidInput): an unknown topology, op or algorithm, a size that does not read, a
// group the topology cannot hold.
Result<CommRun> RunComm(const CommRequest& request, const LoadOptions& load);

// `comm --json` (with its final line break): time_s, algbw_gbps, busbw_gbps, ... for one size;
// `results` (one per size) for a --sizes sweep.
std::string CommJson(const CommRun& run);
// `comm`'s table for one size, nccl-tests' sweep table for --sizes.
std::string CommText(const CommRun& run);

}  // namespace shardsim

#endif  // SHARDSIM_REPORT_COMM_REPORT_H_
