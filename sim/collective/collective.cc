// Names, parsing and nccl-tests' bus-bandwidth factors of the collectives.
#include "sim/collective/collective.h"

#include <array>
#include <string>
#include <utility>

#include "sim/base/strings.h"

namespace shardsim {
namespace {

constexpr std::array<CollectiveOp, 6> kOps = {
    CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
    CollectiveOp::kAllToAll,  CollectiveOp::kBroadcast,     CollectiveOp::kSendRecv};
constexpr std::array<Algorithm, 7> kAlgorithms = {
    Algorithm::kAuto, Algorithm::kRing,     Algorithm::kTree,  Algorithm::kHierarchical,
    Algorithm::kNvls, Algorithm::kNvlsTree, Algorithm::kDirect};

// nccl-tests program names (all_reduce_perf -> allreduce) are accepted too.
constexpr std::array<std::pair<std::string_view, CollectiveOp>, 6> kOpAliases = {
    {{"allreduce", CollectiveOp::kAllReduce},
     {"reducescatter", CollectiveOp::kReduceScatter},
     {"allgather", CollectiveOp::kAllGather},
     {"alltoall", CollectiveOp::kAllToAll},
     {"bcast", CollectiveOp::kBroadcast},
     {"sendrecv", CollectiveOp::kSendRecv}}};

}  // namespace

const char* Name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "all_reduce";
    case CollectiveOp::kReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::kAllGather:
      return "all_gather";
    case CollectiveOp::kAllToAll:
      return "all_to_all";
    case CollectiveOp::kBroadcast:
      return "broadcast";
    case CollectiveOp::kSendRecv:
      return "send_recv";
  }
  return "?";
}

const char* Name(Algorithm a) {
  switch (a) {
    case Algorithm::kAuto:
      return "auto";
    case Algorithm::kRing:
      return "ring";
    case Algorithm::kTree:
      return "tree";
    case Algorithm::kHierarchical:
      return "hierarchical";
    case Algorithm::kNvls:
      return "nvls";
    case Algorithm::kNvlsTree:
      return "nvls_tree";
    case Algorithm::kDirect:
      return "direct";
  }
  return "?";
}

Result<CollectiveOp> ParseCollectiveOp(std::string_view text) {
  std::vector<std::string> names;
  for (CollectiveOp op : kOps) {
    if (text == Name(op)) return op;
    names.push_back(Name(op));
  }
  for (const auto& [alias, op] : kOpAliases) {
    if (text == alias) return op;
  }
  return Status::Invalid("unknown collective '" + std::string(text) + "' (expected " + Join(names) +
                         ")" + DidYouMean(text, names));
}

Result<Algorithm> ParseAlgorithm(std::string_view text) {
  std::vector<std::string> names;
  for (Algorithm a : kAlgorithms) {
    if (text == Name(a)) return a;
    names.push_back(Name(a));
  }
  return Status::Invalid("unknown algorithm '" + std::string(text) + "' (expected " + Join(names) +
                         ")" + DidYouMean(text, names));
}

double BusBandwidthFactor(CollectiveOp op, int64_t ranks) {
  const double n = static_cast<double>(ranks);
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll:
      return (n - 1) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace shardsim
