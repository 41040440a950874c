// Max-min fair bandwidth sharing: the rate of every flow crossing a set of shared links.
//
// An allocation is max-min fair when no flow's rate can grow without shrinking the rate of a flow
// that has an equal or smaller rate (Bertsekas & Gallager, "Data Networks", 2nd ed. 1992, ch. 6,
// max-min flow control; Nace & Pioro, "Max-min fairness and its applications to routing and
// load-balancing in communication networks: a tutorial", IEEE Comm. Surveys & Tutorials 10(4),
// 2008). It is computed by progressive filling (water-filling): raise every unfrozen flow's rate
// together; when a link saturates (its remaining capacity divided by its unfrozen flows is the
// smallest such share) or a flow reaches its own cap, freeze those flows at that share; repeat.
// This is the algorithm of SimGrid's LMM solver (simgrid/simgrid, src/kernel/lmm/maxmin.cpp), with
// its consumption weights: flow i crossing link l at rate r uses w_il * r of l's capacity (a
// weight of m stands for m identical flows that are not simulated one by one, or for a flow
// that moves w times its own bytes across that link), so a link's fair share is its remaining
// capacity over the sum of its unfrozen flows' weights. Tests: tests/engine/max_min_test.cc
// (Keshav's single-link example, two-link example, caps, weights).
#ifndef SHARDSIM_ENGINE_MAX_MIN_H_
#define SHARDSIM_ENGINE_MAX_MIN_H_

#include <cstdint>
#include <span>
#include <vector>

namespace shardsim {

// Reusable solver: keeps its scratch vectors between calls so that solving does not allocate once
// they have grown. Not thread-safe; one per Simulation.
class MaxMinSolver {
 public:
  // Solves one sharing problem.
  //   capacity[l]:  capacity of link l, bytes/s, > 0.
  //   flow_begin:   size F+1; flow i crosses links flow_links[flow_begin[i] .. flow_begin[i+1]),
  //                 indices into `capacity`, each at most once per flow.
  //   cap[i]:       flow i's own rate limit in bytes/s; 0 means none.
  //   rates[i]:     output, bytes/s. A flow with neither a link nor a cap gets +infinity.
  //   weight:       parallel to flow_links, each > 0: what the flow uses of that link per byte/s
  //                 of its rate; empty = every weight 1.
  //   bound:        optional output (empty, or size F): the index of the link that froze flow i
  //                 (the first of its links to saturate), -1 when its cap did or nothing limits it.
  // Cost: O(rounds x links + sum of path lengths); rounds <= number of distinct bottlenecks.
  void Solve(std::span<const double> capacity, std::span<const int32_t> flow_begin,
             std::span<const int32_t> flow_links, std::span<const double> cap,
             std::span<double> rates, std::span<const double> weight = {},
             std::span<int32_t> bound = {});

 private:
  void Freeze(int32_t flow, double rate, std::span<const int32_t> flow_begin,
              std::span<const int32_t> flow_links, std::span<const double> weight,
              std::span<double> rates);

  std::vector<double> cap_left_;     // per link: capacity not yet given to frozen flows
  std::vector<int32_t> unfrozen_;    // per link: flows on it not frozen yet
  std::vector<double> load_;         // per link: sum of the weights of its unfrozen flows
  std::vector<int32_t> link_begin_;  // link -> flows CSR
  std::vector<int32_t> link_flows_;
  std::vector<uint8_t> frozen_;       // per flow
  std::vector<int32_t> live_links_;   // links that still have unfrozen flows
  std::vector<int32_t> bottlenecks_;  // links saturating in the current round
  std::vector<int32_t> capped_;       // capped flows, by increasing cap
  int32_t remaining_ = 0;             // flows not frozen yet
};

}  // namespace shardsim

#endif  // SHARDSIM_ENGINE_MAX_MIN_H_
