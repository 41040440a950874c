#include "sim/engine/max_min.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace shardsim {
namespace {

struct Problem {
  std::vector<double> capacity;
  std::vector<int32_t> begin{0};
  std::vector<int32_t> links;
  std::vector<double> cap;

  void AddFlow(std::vector<int32_t> path, double rate_cap = 0.0) {
    links.insert(links.end(), path.begin(), path.end());
    begin.push_back(static_cast<int32_t>(links.size()));
    cap.push_back(rate_cap);
  }
  std::vector<double> Solve() const {
    std::vector<double> rates(cap.size(), -1.0);
    MaxMinSolver solver;
    solver.Solve(capacity, begin, links, cap, rates);
    return rates;
  }
};

// S. Keshav, "An Engineering Approach to Computer Networking" (1997), pp. 215-217, example 1:
// four sources demanding 2, 2.6, 4 and 5 share a resource of capacity 10; the max-min fair
// allocation is 2, 2.6, 2.7, 2.7. Demands are rate caps on one link.
TEST(MaxMin, KeshavSingleResourceExample) {
  Problem p;
  p.capacity = {10.0};
  for (double demand : {2.0, 2.6, 4.0, 5.0}) {
    p.AddFlow({0}, demand);
  }
  const std::vector<double> r = p.Solve();
  EXPECT_DOUBLE_EQ(r[0], 2.0);
  EXPECT_DOUBLE_EQ(r[1], 2.6);
  EXPECT_DOUBLE_EQ(r[2], 2.7);
  EXPECT_DOUBLE_EQ(r[3], 2.7);
}

// Three flows, two links: a on L0 (1 GB/s), b on L0 and L1, c on L1 (2 GB/s). L0 saturates first
// at 0.5 GB/s each for a and b; c takes what b leaves of L1: 1.5 GB/s. (Derived by hand with the
// progressive-filling rule; an equal split of L1 would waste 0.5 GB/s.)
TEST(MaxMin, ThreeFlowsTwoLinks) {
  Problem p;
  p.capacity = {1e9, 2e9};
  p.AddFlow({0});
  p.AddFlow({0, 1});
  p.AddFlow({1});
  const std::vector<double> r = p.Solve();
  EXPECT_DOUBLE_EQ(r[0], 0.5e9);
  EXPECT_DOUBLE_EQ(r[1], 0.5e9);
  EXPECT_DOUBLE_EQ(r[2], 1.5e9);
}

// The "parking lot": one long flow over n links, one short flow on each link. Every link carries
// two flows, so every flow gets C/2.
TEST(MaxMin, ParkingLot) {
  Problem p;
  const int n = 5;
  p.capacity.assign(n, 4.0);
  std::vector<int32_t> all;
  all.reserve(n);
  for (int32_t l = 0; l < n; ++l) {
    all.push_back(l);
  }
  p.AddFlow(all);
  for (int32_t l = 0; l < n; ++l) {
    p.AddFlow({l});
  }
  for (double rate : p.Solve()) {
    EXPECT_DOUBLE_EQ(rate, 2.0);
  }
}

// A cap below the fair share frees capacity for the others; a flow with neither link nor cap is
// unlimited; a capped flow with no link runs at its cap.
TEST(MaxMin, CapsAndUnconstrainedFlows) {
  Problem p;
  p.capacity = {9.0};
  p.AddFlow({0}, 1.0);
  p.AddFlow({0});
  p.AddFlow({0});
  p.AddFlow({});
  p.AddFlow({}, 3.5);
  const std::vector<double> r = p.Solve();
  EXPECT_DOUBLE_EQ(r[0], 1.0);
  EXPECT_DOUBLE_EQ(r[1], 4.0);
  EXPECT_DOUBLE_EQ(r[2], 4.0);
  EXPECT_EQ(r[3], std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(r[4], 3.5);
}

// A feasible allocation is max-min fair if and only if every flow has a bottleneck: a saturated
// link on which no other flow has a larger rate (Bertsekas & Gallager, ch. 6), or its own cap.
// Checked on random problems, which also checks feasibility.
TEST(MaxMin, EveryFlowHasABottleneckOnRandomProblems) {
  std::mt19937 rng(2024);
  MaxMinSolver solver;  // reused across problems, as in the engine
  for (int trial = 0; trial < 300; ++trial) {
    Problem p;
    const int num_links = 1 + static_cast<int>(rng() % 8);
    for (int l = 0; l < num_links; ++l) {
      p.capacity.push_back(1.0 + static_cast<double>(rng() % 100));
    }
    const int num_flows = 1 + static_cast<int>(rng() % 12);
    for (int f = 0; f < num_flows; ++f) {
      std::vector<int32_t> path;
      for (int32_t l = 0; l < num_links; ++l) {
        if (rng() % 3 == 0) {
          path.push_back(l);
        }
      }
      if (path.empty()) {
        path.push_back(static_cast<int32_t>(rng() % static_cast<unsigned>(num_links)));
      }
      const double cap = rng() % 4 == 0 ? 0.5 + static_cast<double>(rng() % 30) : 0.0;
      p.AddFlow(path, cap);
    }
    std::vector<double> r(p.cap.size());
    solver.Solve(p.capacity, p.begin, p.links, p.cap, r);

    std::vector<double> load(p.capacity.size(), 0.0);
    for (size_t f = 0; f < p.cap.size(); ++f) {
      ASSERT_GT(r[f], 0.0);
      if (p.cap[f] > 0.0) {
        ASSERT_LE(r[f], p.cap[f] * (1 + 1e-12));
      }
      for (int32_t k = p.begin[f]; k < p.begin[f + 1]; ++k) {
        load[static_cast<size_t>(p.links[static_cast<size_t>(k)])] += r[f];
      }
    }
    for (size_t l = 0; l < load.size(); ++l) {
      ASSERT_LE(load[l], p.capacity[l] * (1 + 1e-12));
    }
    for (size_t f = 0; f < p.cap.size(); ++f) {
      bool bottleneck = p.cap[f] > 0.0 && r[f] >= p.cap[f] * (1 - 1e-12);
      for (int32_t k = p.begin[f]; k < p.begin[f + 1] && !bottleneck; ++k) {
        const auto l = static_cast<size_t>(p.links[static_cast<size_t>(k)]);
        if (load[l] < p.capacity[l] * (1 - 1e-12)) {
          continue;  // not saturated
        }
        bool largest = true;
        for (size_t g = 0; g < p.cap.size(); ++g) {
          for (int32_t j = p.begin[g]; j < p.begin[g + 1]; ++j) {
            if (static_cast<size_t>(p.links[static_cast<size_t>(j)]) == l &&
                r[g] > r[f] * (1 + 1e-12)) {
              largest = false;
            }
          }
        }
        bottleneck = largest;
      }
      ASSERT_TRUE(bottleneck) << "trial " << trial << " flow " << f;
    }
  }
}

// Consumption weights (SimGrid LMM): a flow of weight 3 on a link stands for three flows. With
// one plain flow beside it on a link of 8, water-filling gives each unit of weight 8 / 4 = 2: the
// weighted flow runs at 2 (using 6), the plain one at 2. The link that froze both is link 0.
TEST(MaxMin, AWeightCountsAsThatManyFlows) {
  const std::vector<double> capacity = {8.0};
  const std::vector<int32_t> begin = {0, 1, 2};
  const std::vector<int32_t> links = {0, 0};
  const std::vector<double> cap = {0.0, 0.0};
  const std::vector<double> weight = {3.0, 1.0};
  std::vector<double> rates(2, -1.0);
  std::vector<int32_t> bound(2, 7);
  MaxMinSolver solver;
  solver.Solve(capacity, begin, links, cap, rates, weight, bound);
  EXPECT_DOUBLE_EQ(rates[0], 2.0);
  EXPECT_DOUBLE_EQ(rates[1], 2.0);
  EXPECT_EQ(bound[0], 0);
  EXPECT_EQ(bound[1], 0);
}

// Two links, 10 and 4: flow A crosses both (weight 2 on link 1), flow B link 0 only. Link 1
// saturates first at 4 / 2 = 2 for A; B takes what A leaves on link 0: 10 - 2 = 8. A's bound is
// link 1, B's link 0; a capped flow's bound is -1.
TEST(MaxMin, WeightedBottleneckAndTheLinkThatBoundEachFlow) {
  const std::vector<double> capacity = {10.0, 4.0};
  const std::vector<int32_t> begin = {0, 2, 3, 4};
  const std::vector<int32_t> links = {0, 1, 0, 0};
  const std::vector<double> cap = {0.0, 0.0, 0.5};
  const std::vector<double> weight = {1.0, 2.0, 1.0, 1.0};
  std::vector<double> rates(3, -1.0);
  std::vector<int32_t> bound(3, 7);
  MaxMinSolver solver;
  solver.Solve(capacity, begin, links, cap, rates, weight, bound);
  EXPECT_DOUBLE_EQ(rates[0], 2.0);
  EXPECT_DOUBLE_EQ(rates[2], 0.5);
  EXPECT_DOUBLE_EQ(rates[1], 7.5);
  EXPECT_EQ(bound[0], 1);
  EXPECT_EQ(bound[1], 0);
  EXPECT_EQ(bound[2], -1);
}

// A weighted problem with rates that do not come out round: capacities and weights drawn as
// arbitrary doubles, some flows capped, ties between links forced now and then.
struct WeightedProblem {
  std::vector<double> capacity;
  std::vector<int32_t> begin{0};
  std::vector<int32_t> links;
  std::vector<double> weight;
  std::vector<double> cap;

  static WeightedProblem Random(std::mt19937& rng) {
    std::uniform_real_distribution<double> unit(0.05, 1.0);
    WeightedProblem p;
    const int num_links = 1 + static_cast<int>(rng() % 6);
    for (int l = 0; l < num_links; ++l) {
      // A third of the links repeat an earlier capacity (ties between bottlenecks).
      p.capacity.push_back(l > 0 && rng() % 3 == 0 ? p.capacity[rng() % p.capacity.size()]
                                                   : 1e11 * unit(rng) / 7.0);
    }
    const int num_flows = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < num_flows; ++f) {
      for (int32_t l = 0; l < num_links; ++l) {
        if (rng() % 2 == 0) continue;
        p.links.push_back(l);
        p.weight.push_back(rng() % 2 == 0 ? 1.0 : 16.0 * unit(rng));
      }
      if (static_cast<int32_t>(p.links.size()) == p.begin.back()) {
        p.links.push_back(static_cast<int32_t>(rng() % static_cast<unsigned>(num_links)));
        p.weight.push_back(1.0);
      }
      p.begin.push_back(static_cast<int32_t>(p.links.size()));
      p.cap.push_back(rng() % 5 == 0 ? 1e10 * unit(rng) : 0.0);
    }
    return p;
  }
  void Solve(MaxMinSolver& solver, std::vector<double>* rates, std::vector<int32_t>* bound) const {
    rates->assign(cap.size(), -1.0);
    bound->assign(cap.size(), 7);
    solver.Solve(capacity, begin, links, cap, *rates, weight, *bound);
  }
};

// The engine re-shares every component touched by a changed link in one solve
// (Simulation::Reshare: the breadth-first search collects them all, in an order that keeps each
// component's links and flows in their own relative order), and would re-share a component alone
// if the other one had not changed at that time. Both must give the same rates and bounds, bit for
// bit, or a flow's end would depend on unrelated flows changing at the same picosecond. Progressive
// filling decomposes exactly: each round's level is the smallest share over all links, a link
// freezes only at its own share, and a component's capacities are reduced only by its own flows,
// in its own order. Two random disjoint problems, solved apart and together (links and flows
// interleaved at random, each problem's order kept), on 500 pairs.
TEST(MaxMin, DisjointProblemsSolvedTogetherGiveTheSameBitsAsApart) {
  std::mt19937 rng(17);
  MaxMinSolver solver;
  for (int trial = 0; trial < 500; ++trial) {
    const std::array<WeightedProblem, 2> part = {WeightedProblem::Random(rng),
                                                 WeightedProblem::Random(rng)};
    std::array<std::vector<double>, 2> rates;
    std::array<std::vector<int32_t>, 2> bound;
    for (size_t k = 0; k < 2; ++k) part[k].Solve(solver, &rates[k], &bound[k]);

    // An order-keeping interleaving of each problem's links, then of its flows.
    const auto interleave = [&rng](size_t a, size_t b) {
      std::vector<int> owner(a, 0);
      owner.insert(owner.end(), b, 1);
      std::shuffle(owner.begin(), owner.end(), rng);
      return owner;
    };
    std::array<std::vector<int32_t>, 2> joint_link;  // a problem's link -> the joint problem's
    std::array<size_t, 2> next = {0, 0};
    WeightedProblem joint;
    for (int k : interleave(part[0].capacity.size(), part[1].capacity.size())) {
      joint_link[static_cast<size_t>(k)].push_back(static_cast<int32_t>(joint.capacity.size()));
      joint.capacity.push_back(
          part[static_cast<size_t>(k)].capacity[next[static_cast<size_t>(k)]++]);
    }
    std::vector<std::pair<size_t, size_t>> origin;  // joint flow -> (problem, flow)
    next = {0, 0};
    for (int k : interleave(part[0].cap.size(), part[1].cap.size())) {
      const WeightedProblem& p = part[static_cast<size_t>(k)];
      const size_t f = next[static_cast<size_t>(k)]++;
      for (int32_t j = p.begin[f]; j < p.begin[f + 1]; ++j) {
        joint.links.push_back(joint_link[static_cast<size_t>(k)]
                                        [static_cast<size_t>(p.links[static_cast<size_t>(j)])]);
        joint.weight.push_back(p.weight[static_cast<size_t>(j)]);
      }
      joint.begin.push_back(static_cast<int32_t>(joint.links.size()));
      joint.cap.push_back(p.cap[f]);
      origin.emplace_back(static_cast<size_t>(k), f);
    }
    std::vector<double> joint_rates;
    std::vector<int32_t> joint_bound;
    joint.Solve(solver, &joint_rates, &joint_bound);
    for (size_t i = 0; i < origin.size(); ++i) {
      const auto [k, f] = origin[i];
      ASSERT_EQ(joint_rates[i], rates[k][f]) << "trial " << trial << ", joint flow " << i;
      const int32_t b = bound[k][f];
      ASSERT_EQ(joint_bound[i], b < 0 ? -1 : joint_link[k][static_cast<size_t>(b)])
          << "trial " << trial << ", joint flow " << i;
    }
  }
}

// A flow alone on its links, solved, gets exactly what Simulation::ShareAlone gives it without the
// solver: the smallest capacity / weight over its links, bound by the first link (in path order)
// that reaches it, or its cap when that is lower (bound -1).
TEST(MaxMin, ALoneFlowGetsItsSmallestCapacityOverWeightBoundByTheFirst) {
  std::mt19937 rng(23);
  MaxMinSolver solver;
  for (int trial = 0; trial < 500; ++trial) {
    WeightedProblem p = WeightedProblem::Random(rng);
    p.begin.resize(2);  // keep the first flow only
    p.links.resize(static_cast<size_t>(p.begin[1]));
    p.weight.resize(p.links.size());
    p.cap.resize(1);
    double alone = std::numeric_limits<double>::infinity();
    int32_t first = -1;
    for (size_t j = 0; j < p.links.size(); ++j) {
      const double c = p.capacity[static_cast<size_t>(p.links[j])] / p.weight[j];
      if (c < alone) {
        alone = c;
        first = p.links[j];
      }
    }
    if (p.cap[0] > 0.0 && p.cap[0] < alone) {
      alone = p.cap[0];
      first = -1;
    }
    std::vector<double> rates;
    std::vector<int32_t> bound;
    p.Solve(solver, &rates, &bound);
    ASSERT_EQ(rates[0], alone) << "trial " << trial;
    ASSERT_EQ(bound[0], first) << "trial " << trial;
  }
}

}  // namespace
}  // namespace shardsim
