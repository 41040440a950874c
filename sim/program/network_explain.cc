#include "sim/program/network_explain.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
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

std::string LinkName(const StepProgram& p, ResourceId id) { return p.engine.resource_name(id); }

}  // namespace

std::string ExplainNetwork(const StepProgram& p, const RunResult& run) {
  std::string out =
      "Network (sim/program/step_links.h): engine links in bytes/s, one per physical unit the "
      "simulated devices use; each collective a flow per phase, shared max-min with every flow "
      "on the same link; xN = the replicas it stands for on that link\n";
  std::array<int64_t, kNumLinkClasses> count{};
  std::array<double, kNumLinkClasses> capacity{};
  for (const StepLink& l : p.links) {
    ++count[static_cast<size_t>(l.link_class)];
    capacity[static_cast<size_t>(l.link_class)] = p.engine.link_capacity(l.id).value();
  }
  out += "  links:";
  for (size_t c = 0; c < kNumLinkClasses; ++c) {
    if (count[c] == 0) continue;
    out += " " + std::to_string(count[c]) + " x " + Name(static_cast<LinkClass>(c)) + " at " +
           FormatRate(capacity[c], "B/s") + ";";
  }
  out += "\n";
  // Per kind, from the run: instances, time, bounding class (by bytes).
  struct Seen {
    int64_t tasks = 0;
    double seconds = 0.0;
    std::array<double, kNumLinkClasses> bound_bytes{};
    std::map<int32_t, double> bound_link_bytes;
  };
  std::map<std::tuple<int, int, int>, Seen> seen;
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
    const Seen& s =
        seen[{static_cast<int>(k.category), static_cast<int>(k.group), static_cast<int>(k.op)}];
    out += std::string("  ") + Name(k.group) + " " + Name(k.op) + " (" + Name(k.category) +
           "): " + Name(k.algo) + ", " + std::to_string(k.phases.size()) +
           (k.phases.size() == 1 ? " phase" : " phases") + "; largest " + FormatBytes(k.size) +
           " on device " + std::to_string(k.device) + "\n";
    for (size_t n = 0; n < k.phases.size(); ++n) {
      const PhaseFlow& f = k.phases[n];
      out += "    phase " + std::to_string(n + 1) + ": latency " +
             FormatSeconds(f.latency.seconds()) + ", " + FormatBytes(f.bytes) + " per rank;";
      for (size_t l = 0; l < f.links.size(); ++l) {
        out += " " + LinkName(p, f.links[l]) + " " + FormatBytes(Bytes(f.link_bytes[l])) + " x" +
               FormatSig(f.multiplicity[l]) + ";";
      }
      out += "\n";
    }
    if (s.tasks == 0) continue;
    size_t best = 0;
    for (size_t c = 0; c < kNumLinkClasses; ++c) {
      if (s.bound_bytes[c] > s.bound_bytes[best]) best = c;
    }
    out += "    in the run: " + std::to_string(s.tasks) + " instances, " +
           FormatSeconds(Seconds(s.seconds)) + " of flows in all";
    if (s.bound_bytes[best] > 0.0) {
      int32_t link = -1;
      double most = 0.0;
      for (const auto& [l, bytes] : s.bound_link_bytes) {
        if (bytes > most) {
          most = bytes;
          link = l;
        }
      }
      out += std::string("; bounded by ") + Name(static_cast<LinkClass>(best)) + " (most on " +
             LinkName(p, ResourceId(link)) + ", up to " +
             std::to_string(MostAtOnce(p, run, ResourceId(link))) + " flows at once)";
    }
    out += "\n";
  }
  return out;
}

}  // namespace shardsim
