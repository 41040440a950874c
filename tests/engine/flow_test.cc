// Flows on shared links: closed-form transfer times under max-min fair sharing.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/engine/engine.h"

namespace shardsim {
namespace {

SimTime Ps(int64_t ps) { return SimTime::FromPicos(ps); }
const ResourceId kNoStream;

// Picoseconds to move `bytes` at `rate` bytes/s, rounded up (a flow never finishes early).
int64_t TransferPs(double bytes, double rate) {
  return static_cast<int64_t>(std::ceil(bytes * 1e12 / rate));
}

TaskId Flow(Engine& e, double bytes, std::vector<ResourceId> links, SimTime latency = Ps(0),
            double cap = 0.0) {
  return e.AddFlow(kNoStream, Bytes(bytes), latency, links, 0, 0, BytesPerSec(cap));
}

// Alpha-beta: a flow alone takes latency + S/B. 1 GB over one NVLink-class link (450 GB/s) with
// 1 us latency: 1e6 ps + 2,222,222,222.2 ps, rounded up.
TEST(Flows, OneFlowAloneTakesLatencyPlusSizeOverBandwidth) {
  Engine e;
  const ResourceId link = e.AddLink("nvlink", BytesPerSec(450e9));
  const TaskId f = Flow(e, 1e9, {link}, Ps(1'000'000));
  auto r = e.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->end(f).picos(), 1'000'000 + 2'222'222'223);
  EXPECT_EQ(r->end(f).picos(), 1'000'000 + TransferPs(1e9, 450e9));
  EXPECT_EQ(r->LinkBusy(link).picos(), 2'222'222'223);
  EXPECT_DOUBLE_EQ(r->LinkBytes(link).value(), 1e9);
}

// Round figures come out exact, to the picosecond: 1 MB at 100 GB/s is 10 us.
TEST(Flows, RoundFiguresAreExact) {
  Engine e;
  const ResourceId link = e.AddLink("l", BytesPerSec(100e9));
  const TaskId f = Flow(e, 1e6, {link});
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end(f), Ps(10'000'000));
}

TEST(Flows, TwoEqualFlowsSharingALinkEachTakeTwiceAsLong) {
  Engine e;
  const ResourceId link = e.AddLink("l", BytesPerSec(1e9));
  const TaskId a = Flow(e, 1e6, {link});
  const TaskId b = Flow(e, 1e6, {link});
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end(a), Ps(2'000'000'000));  // 2S/B = 2 ms
  EXPECT_EQ(r->end(b), Ps(2'000'000'000));
  EXPECT_EQ(r->LinkBusy(link), Ps(2'000'000'000));
}

TEST(Flows, AFlowCrossingTwoLinksIsLimitedByTheSlower) {
  Engine e;
  const ResourceId fast = e.AddLink("fast", BytesPerSec(4e9));
  const ResourceId slow = e.AddLink("slow", BytesPerSec(1e9));
  const TaskId f = Flow(e, 1e6, {fast, slow});
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end(f), Ps(1'000'000'000));
  EXPECT_EQ(r->LinkBusy(fast), Ps(1'000'000'000));
  EXPECT_DOUBLE_EQ(r->LinkBytes(fast).value(), 1e6);
}

// The two-link example of max_min_test (a on L0 = 1 GB/s, b on L0+L1, c on L1 = 2 GB/s), run
// as 1 MB flows. Rates 0.5, 0.5, 1.5 GB/s: c ends first at 1e6/1.5e9 s; b stays limited by L0,
// so a and b end at 2 ms.
TEST(Flows, TextbookMaxMinThreeFlowsTwoLinks) {
  Engine e;
  const ResourceId l0 = e.AddLink("L0", BytesPerSec(1e9));
  const ResourceId l1 = e.AddLink("L1", BytesPerSec(2e9));
  const TaskId a = Flow(e, 1e6, {l0});
  const TaskId b = Flow(e, 1e6, {l0, l1});
  const TaskId c = Flow(e, 1e6, {l1});
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end(c).picos(), TransferPs(1e6, 1.5e9));  // 666,666,667
  EXPECT_EQ(r->end(a), Ps(2'000'000'000));
  EXPECT_EQ(r->end(b), Ps(2'000'000'000));
}

// The textbook example's ends in each of the first `rounds` rounds, 3 ms apart: c after 0.67 ms,
// a and b after 2 ms.
void ExpectTextbookRounds(const RunResult& r, const std::vector<TaskId>& a,
                          const std::vector<TaskId>& b, const std::vector<TaskId>& c,
                          size_t rounds) {
  for (size_t round = 0; round < rounds; ++round) {
    const int64_t t0 = int64_t{3'000'000'000} * static_cast<int64_t>(round);
    EXPECT_EQ(r.end(c[round]).picos(), t0 + TransferPs(1e6, 1.5e9)) << "round " << round;
    EXPECT_EQ(r.end(a[round]).picos(), t0 + 2'000'000'000) << "round " << round;
    EXPECT_EQ(r.end(b[round]).picos(), t0 + 2'000'000'000) << "round " << round;
  }
}

// The same contention again later (the textbook example above, three times over, 3 ms apart)
// ends the same durations after its start: a sharing problem met again is answered from the
// run's memo of solved problems (Simulation::SolveMemo) with the solver's own rates. The third
// round differs only in b's weight on L1 (2): L0 still bounds a and b at 0.5 GB/s, and c gets
// what b leaves of L1, 2 - 2 x 0.5 = 1 GB/s, so c ends after 1 ms, not 0.67 ms: the memo must
// not answer a problem that differs in one weight.
TEST(Flows, ARepeatedContentionSharesAlikeAndAWeightChangesIt) {
  Engine e;
  const ResourceId l0 = e.AddLink("L0", BytesPerSec(1e9));
  const ResourceId l1 = e.AddLink("L1", BytesPerSec(2e9));
  std::vector<TaskId> a, b, c;
  for (int round = 0; round < 3; ++round) {
    const SimTime at = Ps(int64_t{3'000'000'000} * round);
    const std::vector<ResourceId> both = {l0, l1};
    const std::vector<double> wb = {1.0, round == 2 ? 2.0 : 1.0};
    a.push_back(Flow(e, 1e6, {l0}, at));
    b.push_back(e.AddFlow(kNoStream, Bytes(1e6), at, both, 0, 0, BytesPerSec(0.0), wb));
    c.push_back(Flow(e, 1e6, {l1}, at));
  }
  auto r = e.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectTextbookRounds(*r, a, b, c, 2);
  EXPECT_EQ(r->end(c[2]).picos(), 6'000'000'000 + 1'000'000'000);
  EXPECT_EQ(r->end(a[2]).picos(), 6'000'000'000 + 2'000'000'000);
  EXPECT_EQ(r->end(b[2]).picos(), 6'000'000'000 + 2'000'000'000);
}

// Flows added like earlier ones (AddFlowLike) share their paths, so the same contention met again
// is the same component (the same links, the same paths, met in the same order) and is answered
// from the memo by its words alone (Simulation::Reshare), without its local problem. Round 1
// repeats round 0 with copies of a, b and c; round 2 starts the copies in another order (c, b,
// a), which the search meets as another component (L1 first) with the same rates. Every round
// ends as the textbook example: c after 0.67 ms, a and b after 2 ms.
TEST(Flows, AContentionOfCopiedFlowsSharesAlikeInAnyOrder) {
  Engine e;
  const ResourceId l0 = e.AddLink("L0", BytesPerSec(1e9));
  const ResourceId l1 = e.AddLink("L1", BytesPerSec(2e9));
  const TaskId a0 = Flow(e, 1e6, {l0});
  const TaskId b0 = Flow(e, 1e6, {l0, l1});
  const TaskId c0 = Flow(e, 1e6, {l1});
  std::vector<TaskId> a = {a0}, b = {b0}, c = {c0};
  const auto copy = [&e](std::vector<TaskId>& to, TaskId like, int round) {
    to.push_back(
        e.AddFlowLike(like, kNoStream, Bytes(1e6), Ps(int64_t{3'000'000'000} * round), 0, 0));
  };
  copy(a, a0, 1);
  copy(b, b0, 1);
  copy(c, c0, 1);
  copy(c, c0, 2);  // round 2 in the other order
  copy(b, b0, 2);
  copy(a, a0, 2);
  auto r = e.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectTextbookRounds(*r, a, b, c, 3);
  EXPECT_EQ(r->stats().reshares, 6);  // per round: all three at once, then c's end
}

// Piecewise rates: S and 3S share B; both at B/2 until the small one ends at 2S/B; the big one
// then has 2S left alone at B: it ends at 4S/B. With S = 1 MB, B = 1 GB/s: 2 ms and 4 ms.
TEST(Flows, AFinishingFlowReleasesBandwidth) {
  Engine e;
  const ResourceId link = e.AddLink("l", BytesPerSec(1e9));
  const TaskId small = Flow(e, 1e6, {link});
  const TaskId big = Flow(e, 3e6, {link});
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end(small), Ps(2'000'000'000));
  EXPECT_EQ(r->end(big), Ps(4'000'000'000));
}

// Processor sharing with ten phases: flows of k MB (k = 1..10) share a 1 GB/s link from time
// zero. Flow k ends when the k-th smallest is done: t_k = 1 ms x (10 + 9 + ... + (11 - k)), so the
// last ends at 55 ms. Rates like 1/3 or 1/7 GB/s are not exact in binary, yet every end stays
// within a picosecond or two of the fluid solution (measured: exact).
TEST(Flows, ProcessorSharingStaysExactOverManyPhases) {
  Engine e;
  const ResourceId link = e.AddLink("l", BytesPerSec(1e9));
  std::vector<TaskId> flows;
  for (int k = 1; k <= 10; ++k) {
    flows.push_back(Flow(e, 1e6 * k, {link}));
  }
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  int64_t expected = 0;
  for (int k = 1; k <= 10; ++k) {
    expected += int64_t{1'000'000'000} * (11 - k);
    const int64_t got = r->end(flows[static_cast<size_t>(k - 1)]).picos();
    EXPECT_GE(got, expected - 1) << "flow " << k;
    EXPECT_LE(got, expected + 2) << "flow " << k;
  }
}

// A late flow slows an earlier one: a (2S) alone for S/B moves S, then shares with b (S, which
// waited S/B of latency): each has S left at B/2, both end at S/B + 2S/B = 3 ms.
TEST(Flows, ALateFlowSlowsAnEarlierOne) {
  Engine e;
  const ResourceId link = e.AddLink("l", BytesPerSec(1e9));
  const TaskId a = Flow(e, 2e6, {link});
  const TaskId b = Flow(e, 1e6, {link}, Ps(1'000'000'000));
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start(b), Ps(0));  // its latency starts at once
  EXPECT_EQ(r->end(a), Ps(3'000'000'000));
  EXPECT_EQ(r->end(b), Ps(3'000'000'000));
}

TEST(Flows, RateCapIsHonored) {
  Engine e;
  const ResourceId link = e.AddLink("l", BytesPerSec(4e9));
  const TaskId capped = Flow(e, 1e6, {link}, Ps(0), 1e9);  // alone it could run at 4 GB/s
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end(capped), Ps(1'000'000'000));
}

// A capped flow leaves the rest of the link to the others: 1 + 3 GB/s on a 4 GB/s link.
TEST(Flows, CappedFlowLeavesTheRestToOthers) {
  Engine e;
  const ResourceId link = e.AddLink("l", BytesPerSec(4e9));
  const TaskId capped = Flow(e, 1e6, {link}, Ps(0), 1e9);
  const TaskId free = Flow(e, 3e6, {link});
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end(capped), Ps(1'000'000'000));
  EXPECT_EQ(r->end(free), Ps(1'000'000'000));
}

TEST(Flows, FlowsWithoutLinks) {
  Engine e;
  const TaskId instant = Flow(e, 1e9, {}, Ps(25));     // no link, no cap: latency only
  const TaskId capped = Flow(e, 1e6, {}, Ps(5), 1e9);  // its own cap: 5 ps + 1 ms
  const ResourceId link = e.AddLink("l", BytesPerSec(1e9));
  const TaskId empty = Flow(e, 0.0, {link}, Ps(7));  // nothing to move: latency only
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end(instant), Ps(25));
  EXPECT_EQ(r->end(capped), Ps(5 + 1'000'000'000));
  EXPECT_EQ(r->end(empty), Ps(7));
  EXPECT_EQ(r->LinkBusy(link), Ps(0));
}

// A flow on a stream occupies it for its latency and its transfer; the next task waits.
TEST(Flows, AFlowOnAStreamHoldsTheStream) {
  Engine e;
  const ResourceId s = e.AddStream("comm");
  const ResourceId link = e.AddLink("l", BytesPerSec(1e9));
  const std::vector<ResourceId> links{link};
  const TaskId f = e.AddFlow(s, Bytes(1e6), Ps(500), links, 0, 0);
  const TaskId d = e.AddDelay(s, Ps(10), 0, 0);
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end(f), Ps(500 + 1'000'000'000));
  EXPECT_EQ(r->start(d), r->end(f));
  EXPECT_EQ(e.kind(f), TaskKind::kFlow);
  EXPECT_EQ(e.fixed_time(f), Ps(500));
  EXPECT_DOUBLE_EQ(e.flow_bytes(f).value(), 1e6);
  ASSERT_EQ(e.flow_links(f).size(), 1u);
  EXPECT_EQ(e.flow_links(f)[0], link);
  EXPECT_TRUE(e.flow_links(d).empty());
  EXPECT_EQ(e.fixed_time(d), Ps(10));
  EXPECT_EQ(r->StreamBusy(s), Ps(500 + 1'000'000'000 + 10));
}

// Link busy time counts only time with a transfer in progress; bytes add up over flows.
TEST(Flows, LinkBusyTimeAndBytes) {
  Engine e;
  const ResourceId link = e.AddLink("l", BytesPerSec(1e9));
  const TaskId a = Flow(e, 1e6, {link});  // [0, 1 ms)
  const TaskId gap = e.AddDelay(kNoStream, Ps(3'000'000'000), 0, 0);
  const TaskId b = Flow(e, 2e6, {link});  // after gap: [3 ms, 5 ms)
  e.AddDependency(gap, b);
  auto r = e.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->end(a), Ps(1'000'000'000));
  EXPECT_EQ(r->end(b), Ps(5'000'000'000));
  EXPECT_EQ(r->LinkBusy(link), Ps(3'000'000'000));
  EXPECT_DOUBLE_EQ(r->LinkBytes(link).value(), 3e6);
}

// Max-min sharing is not monotone in capacity: giving a link more bandwidth can lengthen the
// step. x (1 s) gates d; a (1 GB on L1) gates c; c and d (1 GB each) share L2 (1 GB/s); e (5 s)
// follows d. With L1 = 0.5 GB/s, a ends at 2 s: d has L2 alone over [1, 2) s, c follows over
// [2, 3) s, e ends at 7 s. With L1 = 1 GB/s, a ends at 1 s, c and d share L2 from 1 s and both
// end at 3 s, so e ends at 8 s. The engine is right to report this (it is what fair sharing
// does); callers must not assume "more bandwidth never slows a step" for shared links.
TEST(Flows, MoreCapacityCanLengthenTheMakespanUnderSharing) {
  auto run = [](double l1_capacity) {
    Engine e;
    const ResourceId l1 = e.AddLink("L1", BytesPerSec(l1_capacity));
    const ResourceId l2 = e.AddLink("L2", BytesPerSec(1e9));
    const TaskId x = e.AddDelay(kNoStream, Ps(1'000'000'000'000), 0, 0);
    const TaskId a = Flow(e, 1e9, {l1});
    const TaskId c = Flow(e, 1e9, {l2});
    const TaskId d = Flow(e, 1e9, {l2});
    const TaskId after = e.AddDelay(kNoStream, Ps(5'000'000'000'000), 0, 0);
    e.AddDependency(a, c);
    e.AddDependency(x, d);
    e.AddDependency(d, after);
    auto r = e.Run();
    EXPECT_TRUE(r.ok());
    return r->makespan().picos();
  };
  EXPECT_EQ(run(0.5e9), 7'000'000'000'000);
  EXPECT_EQ(run(1e9), 8'000'000'000'000);
}

// A flow of weight w alone on a link of B bytes/s takes w * S / B, moves w * S across it, and
// names it as its bound. 1 MB at weight 4 on 100 GB/s: 40 us, 4 MB on the link.
TEST(Flows, AWeightedFlowTakesWeightTimesSizeOverBandwidth) {
  Engine e;
  const ResourceId link = e.AddLink("nic", BytesPerSec(100e9));
  const std::vector<ResourceId> links = {link};
  const std::vector<double> w = {4.0};
  const TaskId f = e.AddFlow(kNoStream, Bytes(1e6), Ps(0), links, 0, 0, BytesPerSec(0.0), w);
  auto r = e.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->end(f).picos(), 40'000'000);
  EXPECT_DOUBLE_EQ(r->LinkBytes(link).value(), 4e6);
  EXPECT_EQ(r->BoundBy(f), link);
}

// A flow over two links with different weights (an NVLink port carrying S and a NIC carrying
// 3S / 8 of it, say) is paced by the link with the largest weight / capacity; a second flow on
// the NIC alone then takes the NIC's bound for both. Flow A: 1 MB, NVLink 400 GB/s weight 1, NIC
// 50 GB/s weight 0.5: alone it would take max(2.5, 10) us = 10 us on the NIC. Flow B, 1 MB on the
// NIC: the NIC's load is 0.5 + 1 = 1.5, so each runs at 50 / 1.5 = 33.3 GB/s and moves its 1 MB
// in 30 us; the NIC carries 0.5 MB of A and 1 MB of B.
TEST(Flows, WeightedFlowsShareTheLinkTheyMeetOn) {
  Engine e;
  const ResourceId nv = e.AddLink("nvlink", BytesPerSec(400e9));
  const ResourceId nic = e.AddLink("nic", BytesPerSec(50e9));
  const std::vector<ResourceId> both = {nv, nic};
  const std::vector<double> wa = {1.0, 0.5};
  const TaskId a = e.AddFlow(kNoStream, Bytes(1e6), Ps(0), both, 0, 0, BytesPerSec(0.0), wa);
  const TaskId b = Flow(e, 1e6, {nic});
  auto r = e.Run();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NEAR(static_cast<double>(r->end(a).picos()), 30e6, 2);
  EXPECT_NEAR(static_cast<double>(r->end(b).picos()), 30e6, 2);
  EXPECT_EQ(r->BoundBy(a), nic);
  EXPECT_EQ(r->BoundBy(b), nic);
  EXPECT_NEAR(r->LinkBytes(nic).value(), 1.5e6, 1e-3);
}

// A weight must be positive and finite, one per link.
TEST(Flows, BadWeightsAreInternalErrors) {
  Engine e;
  const ResourceId link = e.AddLink("l", BytesPerSec(1e9));
  const std::vector<ResourceId> links = {link};
  const std::vector<double> zero = {0.0};
  e.AddFlow(kNoStream, Bytes(1.0), Ps(0), links, 0, 0, BytesPerSec(0.0), zero);
  auto r = e.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

// A flow made like another (AddFlowLike) crosses the same links with the same weights: two of
// them overlapping with their model on a shared link run exactly as three AddFlow flows would
// (each path slot is its own), and their own bytes and latency are kept.
TEST(Flows, AFlowLikeAnotherRunsAsTheSameFlowAddedInFull) {
  const auto run = [](bool like) {
    Engine e;
    const ResourceId a = e.AddLink("a", BytesPerSec(1e9));
    const ResourceId b = e.AddLink("b", BytesPerSec(4e9));
    const std::vector<ResourceId> links = {a, b};
    const std::vector<double> weights = {1.0, 2.0};
    std::vector<TaskId> t;
    t.push_back(e.AddFlow(kNoStream, Bytes(1e6), Ps(0), links, 0, 0, BytesPerSec(0.0), weights));
    for (double bytes : {2e6, 3e6}) {
      t.push_back(
          like ? e.AddFlowLike(t[0], kNoStream, Bytes(bytes), Ps(5), 0, 0)
               : e.AddFlow(kNoStream, Bytes(bytes), Ps(5), links, 0, 0, BytesPerSec(0.0), weights));
    }
    auto r = e.Run();
    EXPECT_TRUE(r.ok());
    std::vector<int64_t> ends;
    for (TaskId x : t) ends.push_back(r->end(x).picos());
    ends.push_back(r->LinkBusy(a).picos());
    EXPECT_EQ(e.flow_links(t[2]).size(), 2u);
    EXPECT_DOUBLE_EQ(e.flow_weights(t[2])[1], 2.0);
    EXPECT_DOUBLE_EQ(e.flow_bytes(t[2]).value(), 3e6);
    EXPECT_EQ(e.fixed_time(t[2]), Ps(5));
    return ends;
  };
  const std::vector<int64_t> full = run(false);
  EXPECT_EQ(run(true), full);
  // The first flow alone for 5 ps at 1 GB/s (`a` bounds it: `b` gives 4e9 / 2), then the three
  // at 1/3 GB/s each on `a` (`b` gives each 4e9 / (3 * 2)).
  EXPECT_EQ(full[0], 5 + TransferPs(1e6 - 1e9 * 5.0 / 1e12, 1e9 / 3.0));
}

TEST(Flows, AFlowLikeATaskThatIsNoFlowIsAnInternalError) {
  Engine e;
  const TaskId d = e.AddDelay(kNoStream, Ps(1), 0, 0);
  e.AddFlowLike(d, kNoStream, Bytes(1.0), Ps(0), 0, 0);
  auto r = e.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("AddFlowLike of task 0, which is not a flow"),
            std::string::npos);
}

// AppendCopies adds what AddDelay / AddFlowLike and AddDependency would, task by task: a
// recorded piece (a delay on a stream, then a flow on a shared link after it) copied twice runs
// exactly as the same tasks added in full, and each copy keeps its original's kind, stream,
// duration, bytes, path, weights and category, with the labels given.
TEST(Flows, AppendedCopiesRunAsTheTasksAddedInFull) {
  const auto run = [](bool copies) {
    Engine e;
    const ResourceId s = e.AddStream("s");
    const ResourceId a = e.AddLink("a", BytesPerSec(1e9));
    const std::vector<ResourceId> links = {a};
    const std::vector<double> weights = {2.0};
    const TaskId d0 = e.AddDelay(s, Ps(3'000'000), 0, 3);
    const TaskId f0 =
        e.AddFlow(kNoStream, Bytes(1e3), Ps(2), links, 1, 4, BytesPerSec(0.0), weights);
    e.AddDependency(d0, f0);
    const std::vector<std::pair<int32_t, int32_t>> deps = {{0, 1}};
    for (uint32_t label : {2u, 4u}) {
      if (copies) {
        EXPECT_EQ(e.AppendCopies(d0, 2, label, deps), TaskId(static_cast<int32_t>(label)));
      } else {
        const TaskId d = e.AddDelay(s, Ps(3'000'000), label, 3);
        const TaskId f = e.AddFlowLike(f0, kNoStream, Bytes(1e3), Ps(2), label + 1, 4);
        e.AddDependency(d, f);
      }
    }
    EXPECT_EQ(e.num_tasks(), 6);
    EXPECT_EQ(e.num_dependencies(), 3);
    for (int32_t t = 0; t < 6; ++t) {
      EXPECT_EQ(e.label(TaskId(t)), static_cast<uint32_t>(t));
      EXPECT_EQ(e.category(TaskId(t)), t % 2 == 0 ? 3 : 4);
    }
    EXPECT_EQ(e.stream(TaskId(4)), s);
    EXPECT_EQ(e.fixed_time(TaskId(4)), Ps(3'000'000));
    EXPECT_EQ(e.kind(TaskId(5)), TaskKind::kFlow);
    EXPECT_DOUBLE_EQ(e.flow_bytes(TaskId(5)).value(), 1e3);
    EXPECT_EQ(e.fixed_time(TaskId(5)), Ps(2));
    EXPECT_EQ(e.flow_links(TaskId(5)).size(), 1u);
    EXPECT_DOUBLE_EQ(e.flow_weights(TaskId(5))[0], 2.0);
    auto r = e.Run();
    EXPECT_TRUE(r.ok());
    std::vector<int64_t> ends;
    for (int32_t t = 0; t < 6; ++t) ends.push_back(r->end(TaskId(t)).picos());
    return ends;
  };
  const std::vector<int64_t> full = run(false);
  EXPECT_EQ(run(true), full);
  // The delays run back to back on the stream (3, 6, 9 us); each flow waits 2 ps, then moves
  // 1e3 B at 1e9 / 2 B/s alone on `a` (2 us), so they never overlap.
  EXPECT_EQ(full, (std::vector<int64_t>{3'000'000, 5'000'002, 6'000'000, 8'000'002, 9'000'000,
                                        11'000'002}));
}

TEST(Flows, CopiesOfTasksThatAreNotThereAreInternalErrors) {
  Engine e;
  const TaskId d = e.AddDelay(kNoStream, Ps(1), 0, 0);
  e.AppendCopies(d, 2, 1, {});
  auto r = e.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("AppendCopies: tasks 0 .. 1 are not all tasks"),
            std::string::npos);
  Engine f;
  const TaskId g = f.AddDelay(kNoStream, Ps(1), 0, 0);
  const std::vector<std::pair<int32_t, int32_t>> deps = {{0, 1}};
  f.AppendCopies(g, 1, 1, deps);
  auto q = f.Run();
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("AppendCopies: dependency 0 -> 1 is outside the 1 copies"),
            std::string::npos);
}

}  // namespace
}  // namespace shardsim
