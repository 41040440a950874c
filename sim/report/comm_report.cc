#include "sim/report/comm_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/strings.h"
#include "sim/base/units.h"
#include "sim/report/text_table.h"
#include "sim/topology/cluster.h"
#include "sim/topology/group.h"

namespace shardsim {
namespace {

using Json = nlohmann::ordered_json;

// The most rows `--sizes` prints (nccl-tests' own sweeps stay well under it).
constexpr size_t kMaxSizes = 200;

// A byte count: a quantity with a unit ("1GiB", "64 MB") or a bare number of bytes; whole bytes.
Result<double> ParseSize(const std::string& flag, const std::string& text) {
  Result<double> q = ParseQuantity(text, Dimension::kBytes);
  if (!q.ok()) {
    Result<double> bare = ParseQuantity(text, Dimension::kCount);
    if (!bare.ok() || TrimView(text).find_first_not_of("+-0123456789.eE") != std::string::npos) {
      return Status::Invalid(flag + ": " + q.status().message());
    }
    q = bare;
  }
  if (*q < 0) return Status::Invalid(flag + ": size must not be negative, got " + text);
  // 1 PiB: above any buffer a GPU (or a cluster's step) moves in one collective.
  constexpr double kMaxSize = 1125899906842624.0;
  if (!(*q <= kMaxSize)) {
    return Status::Invalid(flag + ": size must be at most 1PiB (1125899906842624 bytes), got " +
                           text);
  }
  if (*q != std::floor(*q)) {
    return Status::Invalid(
        flag + ": " + text +
        " is not a whole number of bytes; sizes are whole bytes, e.g. 2 or 1KiB");
  }
  return *q;
}

// The sizes round(from * factor^k) <= to, k = 0, 1, ..., each once, ascending, and at most
// `limit` + 1 of them (one more than allowed tells the range is too long). Each step jumps to the
// first k whose size rounds above the last one, so a factor near 1 costs no more steps.
std::vector<double> GeometricSizes(double from, double to, double factor, size_t limit) {
  std::vector<double> out;
  const double log_factor = std::log(factor);
  double k = 0;
  for (double v = from; v <= to && out.size() <= limit;) {
    out.push_back(v);
    // From * factor^k >= v + 0.5 from this k on (one lower, for rounding in the logarithm).
    k = std::max(k + 1, std::ceil(std::log((v + 0.5) / from) / log_factor) - 1);
    while ((v = std::round(from * std::pow(factor, k))) <= out.back()) ++k;
  }
  return out;
}

// "1KiB:8GiB" or "1KiB:8GiB:4": from, to (inclusive), multiplied by a factor (default 2), each
// size rounded to whole bytes and listed once.
Result<std::vector<double>> ParseSizes(const std::string& text) {
  const size_t a = text.find(':');
  if (a == std::string::npos) {
    return Status::Invalid(
        "--sizes: expected FROM:TO or FROM:TO:FACTOR, e.g. \"1KiB:8GiB\", got \"" + text + "\"");
  }
  const size_t b = text.find(':', a + 1);
  Result<double> from = ParseSize("--sizes", text.substr(0, a));
  if (!from.ok()) return from.status();
  Result<double> to =
      ParseSize("--sizes", text.substr(a + 1, b == std::string::npos ? b : b - a - 1));
  if (!to.ok()) return to.status();
  double factor = 2.0;
  if (b != std::string::npos) {
    Result<double> f = ParseQuantity(text.substr(b + 1), Dimension::kCount);
    if (!f.ok() || *f <= 1.0) {
      return Status::Invalid("--sizes: the factor must be a number above 1, got \"" +
                             text.substr(b + 1) + "\"");
    }
    factor = *f;
  }
  if (*from <= 0 || *to < *from) {
    return Status::Invalid("--sizes: need 0 < FROM <= TO, got \"" + text + "\"");
  }
  std::vector<double> out = GeometricSizes(*from, *to, factor, kMaxSizes);
  if (out.size() > kMaxSizes) {
    return Status::Invalid("--sizes: \"" + text + "\" gives more than " +
                           std::to_string(kMaxSizes) +
                           " sizes (use a larger FACTOR or a narrower range)");
  }
  return out;
}

// nccl-tests prints time in us with 2, 1 or 0 decimals as it grows (common.cu).
std::string NcclTime(double seconds) {
  const double us = seconds * 1e6;
  char buf[32];
  std::snprintf(buf, sizeof buf, us >= 10000 ? "%7.0f" : us >= 100 ? "%7.1f" : "%7.2f", us);
  return buf;
}

const char* RedOp(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduceScatter ? "sum" : "none";
}

Json LoadsJson(const CollectiveCost& c) {
  Json loads = Json::array();
  for (const LinkLoad& l : c.loads) {
    loads.push_back({{"link_class", Name(l.link_class)},
                     {"bytes_per_unit", l.bytes_per_unit},
                     {"bytes_per_rank", l.bytes_per_rank},
                     {"groups_sharing", l.groups_sharing},
                     {"capacity_gbps", l.capacity.value() / 1e9},
                     {"effective_gbps", l.effective_bandwidth.value() / 1e9},
                     {"time_s", l.time.value()}});
  }
  return loads;
}

std::string SingleText(const CommRequest& a, const TopologySpec& spec, CollectiveOp op, double size,
                       const CollectiveCost& c) {
  std::string s = std::string(Name(op)) + " of " + FormatBytes(Bytes(size)) + " over " +
                  std::to_string(c.shape.ranks) + " GPUs of " + spec.name + " (" +
                  c.shape.ToString() + ")\n";
  TextTable t({"", ""});
  t.SetLeftAligned({0, 1});
  t.AddRow({"algorithm", Name(c.algo)});
  if (!c.choice.empty()) t.AddRow({"why", c.choice});
  t.AddRow({"time", FormatSeconds(c.time) + " = " + FormatSeconds(c.latency_part) + " latency + " +
                        FormatSeconds(c.bandwidth_part) + " bandwidth"});
  t.AddRow({"algbw", FormatSig(c.algbw / 1e9, 5) + " GB/s"});
  t.AddRow({"busbw", FormatSig(c.busbw / 1e9, 5) + " GB/s"});
  t.AddRow({"bottleneck", c.bottleneck});
  if (a.concurrent_groups > 1)
    t.AddRow({"concurrent", std::to_string(a.concurrent_groups) + " groups"});
  s += t.ToString();
  TextTable loads({"link class", "bytes/rank", "groups", "capacity", "share", "time"});
  for (const LinkLoad& l : c.loads) {
    loads.AddRow({Name(l.link_class), FormatBytes(Bytes(l.bytes_per_rank)),
                  std::to_string(l.groups_sharing), FormatRate(l.capacity.value(), "B/s"),
                  FormatRate(l.effective_bandwidth.value(), "B/s"), FormatSeconds(l.time)});
  }
  return s + "\n" + loads.ToString();
}

std::string SweepText(CollectiveOp op, const std::vector<double>& sizes,
                      const std::vector<CollectiveCost>& costs) {
  std::string s =
      "#                                                              out-of-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw  algorithm  "
      "bottleneck\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n";
  for (size_t i = 0; i < sizes.size(); ++i) {
    const CollectiveCost& c = costs[i];
    char line[256];
    std::snprintf(line, sizeof line, "%12.0f  %12.0f  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %-9s  %s\n",
                  sizes[i], sizes[i] / 4, "float", RedOp(op),
                  op == CollectiveOp::kBroadcast ? 0 : -1, NcclTime(c.time.value()).c_str(),
                  c.algbw / 1e9, c.busbw / 1e9, Name(c.algo), c.bottleneck.c_str());
    s += line;
  }
  return s;
}

}  // namespace

Result<CommRun> RunComm(const CommRequest& a, const LoadOptions& load) {
  Result<TopologySpec> spec = LoadTopology(a.topology, load);
  if (!spec.ok()) return spec.status();
  Result<CollectiveOp> op = ParseCollectiveOp(a.op);
  if (!op.ok()) return Status::Invalid("--op: " + op.status().message());
  Result<Algorithm> algo = ParseAlgorithm(a.algo);
  if (!algo.ok()) return Status::Invalid("--algo: " + algo.status().message());
  if (a.gpus < 1 || a.gpus > kMaxGpus) {
    return Status::Invalid("--gpus must be between 1 and " + std::to_string(kMaxGpus) +
                           " (2^24), got " + std::to_string(a.gpus));
  }

  // The cluster and the group: every GPU, or R per node on gpus / R nodes.
  const int64_t gpn = spec->gpus_per_node;
  int64_t cluster_gpus = a.gpus;
  Result<Group> group = Group::Strided(0, {{a.gpus, 1}});
  if (a.ranks_per_node_given && a.ranks_per_node < 1) {
    return Status::Invalid("--ranks-per-node must be at least 1, got " +
                           std::to_string(a.ranks_per_node));
  }
  if (a.ranks_per_node > 0) {
    const int64_t r = a.ranks_per_node;
    if (r > gpn || a.gpus % r != 0) {
      return Status::Invalid("--ranks-per-node " + std::to_string(r) + ": must divide --gpus (" +
                             std::to_string(a.gpus) + ") and be at most the " +
                             std::to_string(gpn) + " GPUs per node of " + spec->name);
    }
    cluster_gpus = a.gpus / r * gpn;
    group = Group::Strided(0, {{r, 1}, {a.gpus / r, gpn}});
  }
  if (!group.ok()) return group.status();
  Result<Cluster> cluster = Cluster::Build(*spec, cluster_gpus);
  if (!cluster.ok()) return cluster.status();

  std::vector<double> sizes;
  if (!a.sizes.empty()) {
    Result<std::vector<double>> s = ParseSizes(a.sizes);
    if (!s.ok()) return s.status();
    sizes = *s;
  } else {
    Result<double> s = ParseSize("--size", a.size.empty() ? "1GiB" : a.size);
    if (!s.ok()) return s.status();
    sizes = {*s};
  }
  CollectiveOptions options;
  options.algorithm = *algo;
  options.concurrent_groups = a.concurrent_groups;
  std::vector<CollectiveCost> costs;
  for (double size : sizes) {
    Result<CollectiveCost> c = CostCollective(*cluster, *group, *op, Bytes(size), options);
    if (!c.ok()) return c.status();
    costs.push_back(*c);
  }
  // Groups share a unit (a node's NICs, a leaf's uplinks) only as far as they fit on it; past
  // that the model uses the most that fit. Asking for more is refused rather than capped silently.
  if (a.concurrent_groups > 1) {
    int64_t most = 1;
    for (const LinkLoad& l : costs.front().loads) most = std::max(most, l.groups_sharing);
    if (a.concurrent_groups > most) {
      return Status::Invalid(
          "--concurrent-groups " + std::to_string(a.concurrent_groups) + ": at most " +
          std::to_string(most) + (most == 1 ? " group" : " groups") + " of this shape (" +
          std::to_string(costs.front().shape.ranks) + " ranks, " +
          std::to_string(costs.front().shape.ranks_per_node) + " per node) share a link on " +
          spec->name +
          " (NVSwitch ports are per GPU; a node's NICs are shared by the groups on it, a leaf's "
          "uplinks by the groups under it); more would run on links of their own. Ask for at "
          "most " +
          std::to_string(most));
    }
  }

  return CommRun{a, std::move(*spec), *op, std::move(sizes), std::move(costs)};
}

std::string CommJson(const CommRun& run) {
  const CommRequest& a = run.request;
  const std::vector<double>& sizes = run.sizes;
  const std::vector<CollectiveCost>& costs = run.costs;
  const GroupShape& shape = costs.front().shape;
  Json j = {{"topology", run.spec.name},
            {"gpus", a.gpus},
            {"ranks", shape.ranks},
            {"ranks_per_node", shape.ranks_per_node},
            {"nodes", shape.nodes},
            {"op", Name(run.op)},
            {"concurrent_groups", a.concurrent_groups}};
  auto row = [](double size, const CollectiveCost& c) {
    return Json{{"size_bytes", size},
                {"algorithm", Name(c.algo)},
                {"time_s", c.time.value()},
                {"latency_s", c.latency_part.value()},
                {"bandwidth_s", c.bandwidth_part.value()},
                {"algbw_gbps", c.algbw / 1e9},
                {"busbw_gbps", c.busbw / 1e9},
                {"bottleneck", c.bottleneck}};
  };
  if (!costs[0].choice.empty() && a.sizes.empty()) j["algorithm_choice"] = costs[0].choice;
  if (a.sizes.empty()) {
    j.update(row(sizes[0], costs[0]));
    j["loads"] = LoadsJson(costs[0]);
  } else {
    j["results"] = Json::array();
    for (size_t i = 0; i < sizes.size(); ++i) j["results"].push_back(row(sizes[i], costs[i]));
  }
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string CommText(const CommRun& run) {
  const CommRequest& a = run.request;
  if (a.sizes.empty()) return SingleText(a, run.spec, run.op, run.sizes[0], run.costs[0]);
  const GroupShape& shape = run.costs.front().shape;
  const std::string head = "# " + std::string(Name(run.op)) + " over " +
                           std::to_string(shape.ranks) + " GPUs of " + run.spec.name + " (" +
                           shape.ToString() + ")\n";
  return head + SweepText(run.op, run.sizes, run.costs);
}

}  // namespace shardsim
