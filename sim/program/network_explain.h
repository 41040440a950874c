// What the step's network did (`simulate --explain`, and `network` in `simulate --json`): per kind
// of communication (category, group and op), the algorithm NCCL runs, its phases, the links each
// phase crosses with the bytes it and its replicas put on each (sim/program/step_links.h), and
// from the run: how many instances ran, their time, the class of the link that bounded them
// (RunResult::BoundBy) and the most flows that crossed that link at once.
#ifndef SHARDSIM_PROGRAM_NETWORK_EXPLAIN_H_
#define SHARDSIM_PROGRAM_NETWORK_EXPLAIN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/run_result.h"
#include "sim/program/step_program.h"

namespace shardsim {

struct NetworkLinkUse {
  std::string link;  // the engine link's name, e.g. "nic of gpu 1024"
  LinkClass link_class = LinkClass::kNic;
  double bytes = 0.0;         // this phase's bytes on it, replicas included
  double multiplicity = 1.0;  // the replicas the flow stands for on it
};

struct NetworkPhase {
  Seconds latency;
  Bytes bytes_per_rank;  // the flow's F (step_links.h)
  std::vector<NetworkLinkUse> links;
};

struct NetworkKind {
  std::string category;  // Name(TaskCategory)
  std::string group;     // Name(CommGroup)
  std::string op;        // Name(CollectiveOp)
  std::string algorithm;
  Bytes largest;  // nccl-tests size of its largest instance
  int32_t device = 0;
  std::vector<NetworkPhase> phases;
  int64_t instances = 0;
  Seconds flow_time;         // sum of its flows' durations in the run
  std::string bounded_by;    // class of the link that bounded most of its bytes, or ""
  std::string busiest_link;  // that link, and the most flows it carried at once
  int64_t most_flows_at_once = 0;
};

struct NetworkSummary {
  std::vector<std::pair<std::string, int64_t>> link_counts;   // class name -> engine links
  std::vector<std::pair<std::string, double>> link_capacity;  // class name -> bytes/s
  std::vector<NetworkKind> kinds;
};

NetworkSummary SummarizeNetwork(const StepProgram& program, const RunResult& run);
std::string ExplainNetwork(const StepProgram& program, const RunResult& run);

}  // namespace shardsim

#endif  // SHARDSIM_PROGRAM_NETWORK_EXPLAIN_H_
