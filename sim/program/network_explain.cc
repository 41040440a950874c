#include "sim/program/network_explain.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace shardsim {
namespace {

// The most flows crossing `link` at once during the run (their transfer phases, latency excluded).
int64_t MostAtOnce(const StepProgram& p, const RunResult& run, ResourceId link) {
  std::vector<std::pair<int64_t, int>> ev;
  for (int32_t t = 0; t < p.engine.num_tasks(); ++t) {
    const TaskId id(t);
    if (p.engine.kind(id) != TaskKind::kFlow) continue;
    const auto links = p.engine.flow_links(id);
    if (std::find(links.begin(), links.end(), link) == links.end()) continue;
    const int64_t from = run.start(id).picos() + p.engine.fixed_time(id).picos();
    const int64_t to = run.end(id).picos();
    if (to <= from) continue;
    ev.push_back({from, 1});
    ev.push_back({to, -1});
  }
  std::sort(ev.begin(), ev.end());  // ends before starts at the same instant
  int64_t now = 0, most = 0;
  for (const auto& [at, d] : ev) {
    now += d;
    most = std::max(most, now);
  }
  return most;
}

}  // namespace

NetworkSummary SummarizeNetwork(const StepProgram& p, const RunResult& run) {
  NetworkSummary out;
  std::array<int64_t, kNumLinkClasses> count{};
  std::array<double, kNumLinkClasses> capacity{};
  for (const StepLink& l : p.links) {
    ++count[static_cast<size_t>(l.link_class)];
    capacity[static_cast<size_t>(l.link_class)] = p.engine.link_capacity(l.id).value();
  }
  for (size_t c = 0; c < kNumLinkClasses; ++c) {
    if (count[c] == 0) continue;
    out.link_counts.push_back({Name(static_cast<LinkClass>(c)), count[c]});
    out.link_capacity.push_back({Name(static_cast<LinkClass>(c)), capacity[c]});
  }
  // Per kind, from the run: instances, time, the bytes each class and link bounded.
  struct Seen {
    int64_t tasks = 0;
    double seconds = 0.0;
    std::array<double, kNumLinkClasses> bound_bytes{};
    std::map<int32_t, double> bound_link_bytes;
  };
  using Key = std::tuple<int, int, int>;
  std::map<Key, Seen> seen;
  for (int32_t t = 0; t < p.engine.num_tasks(); ++t) {
    const TaskId id(t);
    if (p.engine.kind(id) != TaskKind::kFlow) continue;
    const TaskInfo& i = (*p.tasks)[static_cast<size_t>(p.engine.label(id))];
    Seen& s =
        seen[{static_cast<int>(i.category), static_cast<int>(i.group), static_cast<int>(i.op)}];
    if (i.phase == 0) ++s.tasks;
    s.seconds += (run.end(id) - run.start(id)).seconds().value();
    const ResourceId b = run.BoundBy(id);
    if (b.valid()) {
      s.bound_bytes[static_cast<size_t>(i.link)] += p.engine.flow_bytes(id).value();
      s.bound_link_bytes[b.v] += p.engine.flow_bytes(id).value();
    }
  }
  for (const CommKind& k : p.comm_kinds) {
    NetworkKind n;
    n.category = Name(k.category);
    n.group = Name(k.group);
    n.op = Name(k.op);
    n.algorithm = Name(k.algo);
    n.largest = k.size;
    n.device = k.device;
    for (const PhaseFlow& f : k.phases) {
      NetworkPhase ph;
      ph.latency = f.latency.seconds();
      ph.bytes_per_rank = f.bytes;
      for (size_t l = 0; l < f.links.size(); ++l) {
        ph.links.push_back(NetworkLinkUse{p.engine.resource_name(f.links[l]), f.classes[l],
                                          f.link_bytes[l], f.multiplicity[l]});
      }
      n.phases.push_back(std::move(ph));
    }
    const Seen& s =
        seen[{static_cast<int>(k.category), static_cast<int>(k.group), static_cast<int>(k.op)}];
    n.instances = s.tasks;
    n.flow_time = Seconds(s.seconds);
    size_t best = 0;
    for (size_t c = 0; c < kNumLinkClasses; ++c) {
      if (s.bound_bytes[c] > s.bound_bytes[best]) best = c;
    }
    if (s.bound_bytes[best] > 0.0) {
      n.bounded_by = Name(static_cast<LinkClass>(best));
      int32_t link = -1;
      double most = 0.0;
      for (const auto& [l, bytes] : s.bound_link_bytes) {
        if (bytes > most) {
          most = bytes;
          link = l;
        }
      }
      n.busiest_link = p.engine.resource_name(ResourceId(link));
      n.most_flows_at_once = MostAtOnce(p, run, ResourceId(link));
    }
    out.kinds.push_back(std::move(n));
  }
  return out;
}

std::string ExplainNetwork(const StepProgram& p, const RunResult& run) {
  const NetworkSummary s = SummarizeNetwork(p, run);
  std::string out =
      "Network (sim/program/step_links.h): engine links in bytes/s, one per physical unit the "
      "simulated devices use; each collective a flow per phase, shared max-min with every flow "
      "on the same link; xN = the replicas it stands for on that link\n";
  out += "  links:";
  for (size_t c = 0; c < s.link_counts.size(); ++c) {
    out += " " + std::to_string(s.link_counts[c].second) + " x " + s.link_counts[c].first + " at " +
           FormatRate(s.link_capacity[c].second, "B/s") + ";";
  }
  out += "\n";
  for (const NetworkKind& k : s.kinds) {
    out += "  " + k.group + " " + k.op + " (" + k.category + "): " + k.algorithm + ", " +
           std::to_string(k.phases.size()) + (k.phases.size() == 1 ? " phase" : " phases") +
           "; largest " + FormatBytes(k.largest) + " on device " + std::to_string(k.device) + "\n";
    for (size_t n = 0; n < k.phases.size(); ++n) {
      const NetworkPhase& f = k.phases[n];
      out += "    phase " + std::to_string(n + 1) + ": latency " + FormatSeconds(f.latency) + ", " +
             FormatBytes(f.bytes_per_rank) + " per rank;";
      for (const NetworkLinkUse& l : f.links) {
        out += " " + l.link + " " + FormatBytes(Bytes(l.bytes)) + " x" + FormatSig(l.multiplicity) +
               ";";
      }
      out += "\n";
    }
    if (k.instances == 0) continue;
    out += "    in the run: " + std::to_string(k.instances) + " instances, " +
           FormatSeconds(k.flow_time) + " of flows in all";
    if (!k.bounded_by.empty()) {
      out += "; bounded by " + k.bounded_by + " (most on " + k.busiest_link + ", up to " +
             std::to_string(k.most_flows_at_once) + " flows at once)";
    }
    out += "\n";
  }
  return out;
}

}  // namespace shardsim
