// In-layer traffic (TP collectives, CP ring-attention hops, EP all-to-alls) as flows on the step's
// links (sim/program/step_program.cc AddPass): alone a pass takes the analytic time of
// sim/program/step_costs.cc; sharing a NIC or an NVLink port with DP traffic, both slow down.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "sim/config/loader.h"
#include "sim/parallel/layout.h"
#include "sim/program/network_explain.h"
#include "sim/report/simulate.h"
#include "tests/model/test_models.h"
#include "tests/topology/test_specs.h"

namespace shardsim {
namespace {

struct L {
  int64_t dp, tp, cp, ep;
  bool moe = false;
  bool tp_overlap = false;
};

Scenario Make(const L& l) {
  Scenario sc;
  sc.name = "in-layer";
  sc.model = testing::Gpt(8, 2048, 16, 51200, 2048);
  if (l.moe) {
    sc.model.moe = MoeSpec{};
    sc.model.moe->num_experts = 16;
    sc.model.moe->top_k = 2;
    sc.model.moe->expert_ffn_hidden_size = 4096;
  }
  auto hw = LoadHardware("h100-sxm", LoadOptions{});
  EXPECT_TRUE(hw.ok());
  sc.hardware = *hw;
  sc.topology = testing::DgxH100();
  sc.gpus = l.dp * l.tp * l.cp;
  sc.training.seq_len = 4096;
  sc.training.micro_batch = 1;
  sc.training.global_batch = 4 * l.dp;
  sc.training.precision = DType::kBf16;
  sc.training.recompute = Recompute::kNone;
  sc.parallel.dp = l.dp;
  sc.parallel.tp = l.tp;
  sc.parallel.cp = l.cp;
  sc.parallel.ep = l.ep;
  sc.parallel.zero_stage = 1;
  sc.parallel.overlap_param_gather = false;  // no DP traffic beside the forwards
  sc.parallel.tp_comm_overlap = l.tp_overlap;
  return sc;
}

std::string Name(const L& l) {
  return "dp" + std::to_string(l.dp) + " tp" + std::to_string(l.tp) + " cp" + std::to_string(l.cp) +
         " ep" + std::to_string(l.ep) + (l.tp_overlap ? " overlap" : "");
}

// Device 0's passes (pp = 1: one chunk), by (category, micro-batch, bucket): start, end.
struct Span {
  double start = 1e300, end = 0.0;
  bool flows = false;
};
std::map<std::tuple<int, int, int>, Span> Passes(const SimResult& r) {
  std::map<std::tuple<int, int, int>, Span> out;
  const StepProgram& p = *r.program;
  for (int32_t t = 0; t < p.engine.num_tasks(); ++t) {
    const TaskInfo& i = (*p.tasks)[p.engine.label(TaskId(t))];
    if (i.device != 0) continue;
    if (i.category != TaskCategory::kForward && i.category != TaskCategory::kBackward) continue;
    Span& s = out[{static_cast<int>(i.category), i.microbatch, i.bucket}];
    s.start = std::min(s.start, r.run->start(TaskId(t)).seconds().value());
    s.end = std::max(s.end, r.run->end(TaskId(t)).seconds().value());
    s.flows = s.flows || p.engine.kind(TaskId(t)) == TaskKind::kFlow;
  }
  return out;
}

// The analytic pass times of step_costs.cc: every layer, the embedding and the head.
double Analytic(const SimResult& r, bool backward) {
  const auto t = [&](const BlockCost& b) { return (backward ? b.bwd : b.fwd).total().value(); };
  double sum = t(r.costs.embedding) + t(r.costs.head);
  for (int64_t k : r.plan->graph.layer_kind_of)
    sum += t(r.costs.layer_kinds.at(static_cast<size_t>(k)));
  return sum;
}

// TP4 x DP2 in one node (TP and DP on the same NVLink ports), TP8 x CP2 x DP2 and TP8 x EP2 x DP2
// on several nodes (CP hops, all-to-alls and DP rings on the same NICs).
const L kLayouts[] = {{2, 4, 1, 1}, {2, 4, 1, 1, false, true}, {2, 8, 2, 1}, {2, 8, 1, 2, true}};

// Alone a pass takes the analytic time: the forwards (no DP traffic runs beside them) and every
// backward but the last (whose gradient buckets are reduced beside it) of each micro-batch.
TEST(InLayerNetwork, UncontendedPassesTakeTheAnalyticTime) {
  for (const L& l : kLayouts) {
    Result<SimResult> r = Simulate(Make(l));
    ASSERT_TRUE(r.ok()) << Name(l) << ": " << r.status().ToString();
    const int64_t m = r->program->microbatches;
    int checked = 0, with_flows = 0;
    for (const auto& [key, span] : Passes(*r)) {
      const bool backward = std::get<0>(key) == static_cast<int>(TaskCategory::kBackward);
      if (backward && std::get<1>(key) == m - 1) continue;
      ++checked;
      with_flows += span.flows ? 1 : 0;
      EXPECT_NEAR((span.end - span.start) / Analytic(*r, backward), 1.0, 1e-9)
          << Name(l) << (backward ? " backward " : " forward ") << std::get<1>(key);
    }
    EXPECT_EQ(checked, 2 * m - 1) << Name(l);
    EXPECT_EQ(with_flows, checked) << Name(l) << ": the in-layer traffic is not on the network";
  }
}

// Seconds of the run's flows of `category` (all phases), and what they take alone (the
// collective model's time of each instance).
std::pair<double, double> FlowTime(const Scenario& sc, const SimResult& r, TaskCategory category) {
  Result<Layout> layout = Layout::Make(sc);
  EXPECT_TRUE(layout.ok());
  const StepProgram& p = *r.program;
  double ran = 0.0, alone = 0.0;
  for (int32_t t = 0; t < p.engine.num_tasks(); ++t) {
    const TaskInfo& i = (*p.tasks)[p.engine.label(TaskId(t))];
    if (i.category != category || p.engine.kind(TaskId(t)) != TaskKind::kFlow) continue;
    ran += (r.run->end(TaskId(t)) - r.run->start(TaskId(t))).seconds().value();
    if (i.phase != 0) continue;
    Result<CollectiveCost> c = layout->Cost(i.group, i.op, i.bytes, RankCoords{});
    EXPECT_TRUE(c.ok());
    alone += c->time.value();
  }
  return {ran, alone};
}

// A CP ring across nodes (TP8 CP2: the hop leaves on GPU 0's NIC) and the DP reduce-scatter of
// the gradient buckets (DP2 across nodes, on the same NIC) slow each other: the last backward
// (its hops beside the buckets) takes longer than alone, and the buckets' flows longer than
// their collective's time. Likewise an EP all-to-all across nodes (TP8 EP2) with DP on the NIC,
// and TP4's all-reduces with DP2's ring inside one node on the NVLink ports.
TEST(InLayerNetwork, InLayerFlowsAndDpBucketsSlowEachOther) {
  for (const L& l : {L{2, 8, 2, 1}, L{2, 8, 1, 2, true}, L{2, 4, 1, 1}}) {
    Scenario sc = Make(l);
    sc.parallel.overlap_grad_reduce = true;
    sc.parallel.dp_bucket_bytes = 4e6;
    Result<SimResult> r = Simulate(sc);
    ASSERT_TRUE(r.ok()) << Name(l) << ": " << r.status().ToString();
    const int64_t m = r->program->microbatches;
    double last_backward = 0.0;
    for (const auto& [key, span] : Passes(*r)) {
      if (std::get<0>(key) != static_cast<int>(TaskCategory::kBackward)) continue;
      if (std::get<1>(key) == m - 1) last_backward += span.end - span.start;
    }
    EXPECT_GT(last_backward, Analytic(*r, true) * 1.001) << Name(l);
    const auto [ran, alone] = FlowTime(sc, *r, TaskCategory::kGradReduce);
    EXPECT_GT(ran, alone * 1.01) << Name(l);
  }
}

// More bandwidth (NIC or NVLink) never makes these steps slower.
TEST(InLayerNetwork, MoreBandwidthNeverSlowsAStep) {
  for (const L& l : kLayouts) {
    Scenario sc = Make(l);
    Result<SimResult> base = Simulate(sc);
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    for (int k = 0; k < 2; ++k) {
      Scenario more = sc;
      (k == 0 ? more.topology.nic_bandwidth : more.topology.intra_bandwidth) *= 2;
      Result<SimResult> faster = Simulate(more);
      ASSERT_TRUE(faster.ok()) << faster.status().ToString();
      EXPECT_LE(faster->step_time.value(), base->step_time.value() * (1 + 1e-12))
          << Name(l) << " change " << k;
    }
  }
}

// The representative pipeline stands for its replicas' in-layer flows: every rank simulated, each
// with its own flows on the shared NICs, ports and uplinks, gives the same step (CP inside and
// across nodes, EP across nodes, NICs shared by two GPUs of different DP/CP ranks, leaf domains of
// two nodes behind a 4:1 spine, DP buckets beside them). Fails when the in-layer flows' weights
// drop the replicas they stand for (checked on a deliberate break: weights capped at 1).
TEST(InLayerNetwork, RepresentativeEqualsEveryRank) {
  const L layouts[] = {{2, 4, 1, 1}, {2, 8, 2, 1},       {2, 4, 2, 1},
                       {4, 4, 2, 1}, {2, 8, 1, 2, true}, {4, 4, 1, 4, true},
                       {4, 8, 2, 1}, {8, 8, 1, 8, true}};  // the last two on 64 GPUs
  const std::vector<std::string> cp_outer = {"tp", "dp", "cp", "pp"};
  // Variant 2: small TP, CP placed outside DP: the ring's hops and the all-to-alls leave each
  // node on NICs two ranks share, and cross the spine.
  const L outer[] = {
      {4, 1, 4, 1}, {8, 2, 2, 1}, {4, 2, 2, 1}, {16, 1, 1, 16, true}, {8, 2, 1, 8, true}};
  for (int variant = 0; variant < 3; ++variant) {
    for (const L& l : variant == 2 ? std::vector<L>(std::begin(outer), std::end(outer))
                                   : std::vector<L>(std::begin(layouts), std::end(layouts))) {
      Scenario sc = Make(l);
      sc.parallel.overlap_grad_reduce = true;
      sc.parallel.dp_bucket_bytes = 4e6;
      if (variant >= 1) sc.topology.nics_per_node = 4;
      if (variant == 2) {
        sc.parallel.order = cp_outer;
        sc.topology.fabric = FabricKind::kFatTree;
        sc.topology.nodes_per_leaf = 1;
        sc.topology.oversubscription = 4;
      }
      Result<SimResult> rep = Simulate(sc);
      SimOptions every;
      every.every_rank = true;
      Result<SimResult> all = Simulate(sc, every);
      ASSERT_TRUE(rep.ok()) << rep.status().ToString();
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      EXPECT_NEAR(all->step_time.value() / rep->step_time.value(), 1.0, 1e-9)
          << Name(l) << " variant " << variant;
    }
  }
}

// Context parallelism inside a node beats the same CP degree across nodes when the ring hop
// cannot hide behind the attention block (TP4 CP2 DP2 on two nodes, 4K tokens: the hop of 1 MiB
// of K and V takes ~22 us on one NIC, a block's attention ~10 us), and `--explain` shows the hop.
TEST(InLayerNetwork, CpInsideANodeRanksAboveCpAcrossNodes) {
  Scenario inside = Make(L{2, 4, 2, 1});
  Scenario across = inside;
  across.parallel.order = {"tp", "dp", "cp", "pp"};
  Result<SimResult> a = Simulate(inside);
  Result<SimResult> b = Simulate(across);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  const CpHop& in_hop = a->costs.layer_kinds.at(0).cp_hop;
  const CpHop& out_hop = b->costs.layer_kinds.at(0).cp_hop;
  EXPECT_EQ(in_hop.link, LinkClass::kNvlink);
  EXPECT_EQ(out_hop.link, LinkClass::kNic);
  EXPECT_GT(out_hop.fwd, out_hop.block_fwd);  // the hop cannot hide
  EXPECT_GT(a->tokens_per_s, b->tokens_per_s * 1.01);
  for (const SimResult* r : {&*a, &*b}) {
    const std::string text = ExplainNetwork(*r->program, *r->run);
    EXPECT_NE(text.find("cp send_recv (forward)"), std::string::npos) << text;
    EXPECT_NE(text.find("cp send_recv (backward)"), std::string::npos) << text;
  }
  EXPECT_NE(ExplainNetwork(*b->program, *b->run).find("nic"), std::string::npos);
}

}  // namespace
}  // namespace shardsim
