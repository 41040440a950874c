// The step's network (sim/program/step_links.h): collectives as flows on physical links, in
// closed form alone and sharing links with other kinds of flow.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/parallel/layout.h"
#include "sim/program/network_explain.h"
#include "sim/program/step_links.h"
#include "sim/report/comm_report.h"
#include "sim/report/simulate.h"
#include "tests/model/test_models.h"
#include "tests/topology/test_specs.h"

namespace shardsim {
namespace {

constexpr double kS = 64.0 * 1048576.0;

Scenario Make(int64_t gpus, int64_t dp, int64_t tp, int64_t pp, const TopologySpec& topo) {
  Scenario sc;
  sc.name = "network";
  sc.model = testing::Gpt(16, 2048, 16, 51200, 2048);
  auto hw = LoadHardware("h100-sxm", LoadOptions{});
  EXPECT_TRUE(hw.ok());
  sc.hardware = *hw;
  sc.topology = topo;
  sc.gpus = gpus;
  sc.training.seq_len = 2048;
  sc.training.micro_batch = 1;
  sc.training.global_batch = 8 * dp * pp;
  sc.training.precision = DType::kBf16;
  sc.training.recompute = Recompute::kNone;
  sc.parallel.dp = dp;
  sc.parallel.tp = tp;
  sc.parallel.pp = pp;
  return sc;
}

// One collective's flows in an engine of their own; each entry of `comms` starts at time zero
// (its phases in a row). Returns each one's finishing time in seconds.
struct Comm {
  CommGroup group;
  CollectiveOp op;
  double bytes;
  RankCoords at;
};
std::vector<double> RunTogether(const Layout& layout, const std::vector<Comm>& comms) {
  Engine e;
  StepNetwork net(layout, false);
  std::vector<TaskId> last;
  for (const Comm& c : comms) {
    Result<CollectiveCost> cost = layout.Cost(c.group, c.op, Bytes(c.bytes), c.at);
    EXPECT_TRUE(cost.ok()) << cost.status().ToString();
    if (!cost.ok()) return {};
    TaskId prev;
    for (const PhaseFlow& f : net.Flows(*cost, c.at, e)) {
      const TaskId t =
          e.AddFlow(ResourceId(), f.bytes, f.latency, f.links, 0, 0, BytesPerSec(0.0), f.weights);
      if (prev.valid()) e.AddDependency(prev, t);
      prev = t;
    }
    last.push_back(prev);
  }
  Result<RunResult> r = e.Run();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::vector<double> out;
  for (TaskId t : last) out.push_back(r.ok() ? r->end(t).seconds().value() : 0.0);
  return out;
}

double Alone(const Layout& layout, const Comm& c) { return RunTogether(layout, {c}).at(0); }

double Nic(const TopologySpec& t) { return t.nic_bandwidth * t.inter_efficiency; }

// A cross-node point-to-point transfer runs on the one NIC path of its GPU pair: a + S/B of one
// NIC (50 GB/s at 0.94), whether the group holds 2 ranks (one per node: the pipeline pair of
// TP=8, PP=2) or 16 on those two nodes (a DP=16 group's shift).
TEST(Network, CrossNodePointToPointIsOneNicPath) {
  const TopologySpec t = testing::DgxH100();
  const double expect = t.inter_latency + kS / Nic(t);
  {
    Result<Layout> l = Layout::Make(Make(16, 1, 8, 2, t));
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    EXPECT_NEAR(Alone(*l, {CommGroup::kPp, CollectiveOp::kSendRecv, kS, {}}), expect, 1e-11);
  }
  {
    Result<Layout> l = Layout::Make(Make(16, 16, 1, 1, t));
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    EXPECT_NEAR(Alone(*l, {CommGroup::kGrad, CollectiveOp::kSendRecv, kS, {}}), expect, 1e-11);
  }
}

// `comm` and `simulate` agree on one collective alone: `shardsim comm`'s time (the collective
// model, sim/report/comm_report.h) equals the same group's flows on the step's network (a DP
// group of every GPU, TP = 1), inside a node and across two, for each op and a small and a large
// size. (`comm --concurrent` still shares analytically: see docs/architecture.md.)
TEST(Network, CommAgreesWithTheStepNetworkAlone) {
  for (const char* topology : {"dgx-h100", "dgx-a100"}) {
    for (int64_t gpus : {8, 16}) {
      for (const char* op : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all"}) {
        for (const char* size : {"1MiB", "256MiB"}) {
          CommRequest req;
          req.topology = topology;
          req.gpus = gpus;
          req.op = op;
          req.size = size;
          Result<CommRun> run = RunComm(req, LoadOptions{});
          ASSERT_TRUE(run.ok()) << run.status().ToString();
          Result<Layout> l = Layout::Make(Make(gpus, gpus, 1, 1, run->spec));
          ASSERT_TRUE(l.ok()) << l.status().ToString();
          const double net = Alone(*l, {CommGroup::kGrad, run->op, run->sizes.at(0), {}});
          // Up to the engine's picosecond rounding of each phase.
          EXPECT_NEAR(net, run->costs.at(0).time.value(), 1e-11)
              << topology << " " << gpus << " GPUs " << op << " " << size;
        }
      }
    }
  }
}

// Ring all-reduce / reduce-scatter / all-gather keep their closed forms on uniform rings: inside
// a node 2(n-1)a + 2(n-1)/n S/B on the NVLink port; across nodes (TP=8: one rank of the DP group
// per node, so each GPU's own NIC carries the ring) 2(n-1)a_inter + 2(n-1)/n S/B_nic.
TEST(Network, RingClosedFormsOnUniformRings) {
  const TopologySpec t = testing::DgxA100();
  {
    Result<Layout> l = Layout::Make(Make(8, 8, 1, 1, t));
    ASSERT_TRUE(l.ok());
    const double b = t.intra_bandwidth * t.intra_efficiency;
    EXPECT_NEAR(Alone(*l, {CommGroup::kGrad, CollectiveOp::kAllReduce, kS, {}}),
                14 * t.intra_latency + 14.0 / 8 * kS / b, 1e-11);
    EXPECT_NEAR(Alone(*l, {CommGroup::kGrad, CollectiveOp::kReduceScatter, kS, {}}),
                7 * t.intra_latency + 7.0 / 8 * kS / b, 1e-11);
    EXPECT_NEAR(Alone(*l, {CommGroup::kGrad, CollectiveOp::kAllGather, kS, {}}),
                7 * t.intra_latency + 7.0 / 8 * kS / b, 1e-11);
  }
  {
    Result<Layout> l = Layout::Make(Make(32, 4, 8, 1, t));
    ASSERT_TRUE(l.ok());
    Result<CollectiveCost> c =
        l->Cost(CommGroup::kGrad, CollectiveOp::kReduceScatter, Bytes(kS), {});
    ASSERT_TRUE(c.ok());
    ASSERT_EQ(c->algo, Algorithm::kRing);
    EXPECT_NEAR(Alone(*l, {CommGroup::kGrad, CollectiveOp::kReduceScatter, kS, {}}),
                3 * t.inter_latency + 3.0 / 4 * kS / Nic(t), 1e-11);
    // The collective model, alone, agrees with the engine.
    EXPECT_NEAR(Alone(*l, {CommGroup::kGrad, CollectiveOp::kReduceScatter, kS, {}}),
                c->time.value(), 1e-11);
  }
}

// An over-subscribed spine: 4 nodes in 2 leaf domains of 2 nodes, a DP group of one GPU per node
// (TP=8). Its all-to-all sends half of every rank's bytes across the spine, with all 16 GPUs of a
// leaf doing the same: at over-subscription 2 the leaf uplinks bound it and it slows; the ring
// leaves each leaf domain once, so 16 rings put 8 x 2(n-1)/n S on 2 x 8 x 50 / 2 GB/s: exactly the
// NIC's time, and it does not slow.
TEST(Network, OversubscribedSpineSlowsAllToAllButNotARing) {
  auto with = [](double oversub) {
    TopologySpec t = testing::DgxH100();
    t.fabric = FabricKind::kFatTree;
    t.nodes_per_leaf = 2;
    t.oversubscription = oversub;
    return t;
  };
  Result<Layout> flat = Layout::Make(Make(32, 4, 8, 1, with(1)));
  Result<Layout> over = Layout::Make(Make(32, 4, 8, 1, with(2)));
  ASSERT_TRUE(flat.ok() && over.ok());
  const Comm a2a{CommGroup::kGrad, CollectiveOp::kAllToAll, kS, {}};
  const Comm ring{CommGroup::kGrad, CollectiveOp::kReduceScatter, kS, {}};
  const double a_flat = Alone(*flat, a2a);
  const double a_over = Alone(*over, a2a);
  EXPECT_GT(a_over, 1.2 * a_flat);
  const TopologySpec t = with(2);
  // All-to-all at over-subscription 2: per rank S/2 across the leaf, 16 ranks, 2 x 8 x 50 x 0.94
  // / 2 GB/s of uplinks: 8 S / 376 GB/s.
  EXPECT_NEAR(a_over, t.inter_latency + 8 * kS / (2 * 8 * Nic(t) / 2), 1e-11);
  EXPECT_NEAR(Alone(*over, ring), Alone(*flat, ring), 1e-11);
  EXPECT_NEAR(Alone(*over, ring), 3 * t.inter_latency + 3.0 / 4 * kS / Nic(t), 1e-11);
}

// Two kinds of flow on one NIC slow each other: the DP reduce-scatter of GPU 0 (TP=8, DP=2: its
// partner is GPU 8 on the next node) and its pipeline send to GPU 16 (PP=2) both leave through
// GPU 0's NIC. Started together they share it max-min fairly, and both end later than alone.
TEST(Network, DpReduceScatterAndPipelineSendsShareTheNic) {
  const TopologySpec t = testing::DgxH100();
  Result<Layout> l = Layout::Make(Make(32, 2, 8, 2, t));
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  const Comm rs{CommGroup::kGrad, CollectiveOp::kReduceScatter, 2 * kS, {}};
  const Comm pp{CommGroup::kPp, CollectiveOp::kSendRecv, kS, {}};
  const double rs_alone = Alone(*l, rs);
  const double pp_alone = Alone(*l, pp);
  EXPECT_NEAR(pp_alone, t.inter_latency + kS / Nic(t), 1e-11);
  EXPECT_NEAR(rs_alone, t.inter_latency + kS / Nic(t), 1e-11);  // (n-1)/n * 2S = S
  const std::vector<double> both = RunTogether(*l, {rs, pp});
  ASSERT_EQ(both.size(), 2u);
  // Equal bytes on one NIC: each at half the rate, both done at a + 2S/B.
  EXPECT_NEAR(both[0], t.inter_latency + 2 * kS / Nic(t), 1e-11);
  EXPECT_NEAR(both[1], t.inter_latency + 2 * kS / Nic(t), 1e-11);
}

// More bandwidth never slows a step: for a few layouts, doubling the NVLink or NIC bandwidth or
// lifting the spine's over-subscription gives a step no longer than before.
TEST(Network, MoreBandwidthNeverSlowsAStep) {
  struct L {
    int64_t dp, tp, pp;
    int zero;
  };
  for (const L& l : {L{4, 8, 2, 1}, L{8, 2, 2, 0}, L{16, 2, 1, 3}, L{2, 4, 4, 2}}) {
    TopologySpec t = testing::DgxH100();
    t.fabric = FabricKind::kFatTree;
    t.nodes_per_leaf = 2;
    t.oversubscription = 3;
    Scenario sc = Make(l.dp * l.tp * l.pp, l.dp, l.tp, l.pp, t);
    sc.parallel.zero_stage = l.zero;
    Result<SimResult> base = Simulate(sc);
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    for (int k = 0; k < 3; ++k) {
      Scenario more = sc;
      if (k == 0) more.topology.nic_bandwidth *= 2;
      if (k == 1) more.topology.intra_bandwidth *= 2;
      if (k == 2) more.topology.oversubscription = 1;
      Result<SimResult> faster = Simulate(more);
      ASSERT_TRUE(faster.ok()) << faster.status().ToString();
      EXPECT_LE(faster->step_time.value(), base->step_time.value() * (1 + 1e-12))
          << "dp" << l.dp << " tp" << l.tp << " pp" << l.pp << " change " << k;
    }
  }
}

// What bounded each kind of communication comes from the run: a DP group of one GPU per node
// across two 2-node leaf domains (TP=8, DP=4, ZeRO-1) reduces its gradients on each GPU's NIC when
// the spine is not over-subscribed, and on the leaf uplinks when it is 4:1 (16 GPUs' rings
// through 2 x 8 x 50 / 4 GB/s). The bottleneck row, the network summary and --explain say so.
TEST(Network, TheBoundingLinkComesFromTheSimulation) {
  for (double oversub : {1.0, 4.0}) {
    TopologySpec t = testing::DgxH100();
    t.fabric = FabricKind::kFatTree;
    t.nodes_per_leaf = 2;
    t.oversubscription = oversub;
    Scenario sc = Make(32, 4, 8, 1, t);
    sc.parallel.zero_stage = 1;
    sc.parallel.overlap_grad_reduce = false;
    Result<SimResult> r = Simulate(sc);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const std::string want = oversub > 1 ? "leaf uplink (spine)" : "nic (inter-node)";
    const NetworkSummary net = SummarizeNetwork(*r->program, *r->run);
    bool found = false;
    for (const NetworkKind& k : net.kinds) {
      if (k.category != "grad_reduce") continue;
      found = true;
      EXPECT_EQ(k.bounded_by, want) << "oversubscription " << oversub;
      EXPECT_EQ(k.busiest_link.rfind(want, 0), 0u) << k.busiest_link;
      ASSERT_EQ(k.phases.size(), 1u);
      // The ring's bytes on the leaf uplinks: 16 GPUs x (n-1)/n S / 2 ranks behind the leaf.
      bool leaf = false;
      for (const NetworkLinkUse& l : k.phases[0].links) {
        if (l.link_class != LinkClass::kLeafUplink) continue;
        leaf = true;
        EXPECT_DOUBLE_EQ(l.multiplicity, 16.0);
      }
      EXPECT_TRUE(leaf);
    }
    EXPECT_TRUE(found);
    bool row = false;
    for (const Bottleneck& b : r->bottlenecks) {
      if (b.collective != "dp reduce_scatter") continue;
      row = true;
      EXPECT_EQ(b.resource, want);
    }
    EXPECT_TRUE(row) << "oversubscription " << oversub;
    const std::string text = ExplainNetwork(*r->program, *r->run);
    EXPECT_NE(text.find("dp reduce_scatter (grad_reduce): ring, 1 phase"), std::string::npos)
        << text;
    EXPECT_NE(text.find("bounded by " + want), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace shardsim
