// Expert parallelism end to end: the all-to-all of a MoE layer in closed form (bytes per rank and
// alpha-beta time on the links the EP group crosses), the load factor it shares with the busiest
// rank's expert GEMMs, node-limited routing, how smaller EP groups keep the traffic inside the
// node, how much of it is exposed, and that every valid ep is accepted.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/hardware/op_cost.h"
#include "sim/memory/budget.h"
#include "sim/model/op_graph.h"
#include "sim/parallel/layout.h"
#include "sim/parallel/stages.h"
#include "sim/program/step_costs.h"
#include "sim/program/step_program.h"
#include "sim/report/simulate.h"
#include "sim/schedule/schedule.h"
#include "tests/model/test_models.h"
#include "tests/topology/test_specs.h"

namespace shardsim {
namespace {

// dgx-h100 (tests/topology/test_specs.h): NVLink 450 GB/s x 0.8 per GPU, one 50 GB/s NIC per GPU
// at 0.94, 1 us inside a node and 5 us across.
constexpr double kNvlink = 450e9 * 0.8;
constexpr double kNic = 50e9 * 0.94;
constexpr double kIntra = 1e-6;
constexpr double kInter = 5e-6;

// A Mixtral-like MoE (h 4096, 64 experts of 1024, top-8), seq 4096, micro-batch 1, bf16.
Scenario Moe(int64_t gpus, int64_t dp, int64_t ep) {
  Scenario sc;
  sc.name = "ep-test";
  sc.model = testing::Llama(4, 4096, 32, 8, 14336, 32000);
  sc.model.moe = MoeSpec{};
  sc.model.moe->num_experts = 64;
  sc.model.moe->top_k = 8;
  sc.model.moe->expert_ffn_hidden_size = 1024;
  auto hw = LoadHardware("h100-sxm", LoadOptions{});
  EXPECT_TRUE(hw.ok()) << hw.status().ToString();
  sc.hardware = *hw;
  sc.topology = testing::DgxH100();
  sc.gpus = gpus;
  sc.training.seq_len = 4096;
  sc.training.micro_batch = 1;
  sc.training.global_batch = 4 * dp;
  sc.training.precision = DType::kBf16;
  sc.parallel.dp = dp;
  sc.parallel.ep = ep;
  sc.parallel.zero_stage = 1;
  return sc;
}

// T x h x 2 bytes: one micro-batch's activation.
constexpr double kAct = 4096.0 * 4096 * 2;

EpAllToAll Price(const Scenario& sc) {
  Result<Layout> layout = Layout::Make(sc);
  EXPECT_TRUE(layout.ok()) << layout.status().ToString();
  if (!layout.ok()) return EpAllToAll{};
  Result<EpAllToAll> a = PriceEpAllToAll(sc, *layout, Bytes(kAct));
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? *a : EpAllToAll{};
}

// The op graph and step costs of `sc` (failures are reported and leave them empty).
struct Priced {
  OpGraph graph;
  StepCosts costs;
};
Priced PriceAll(const Scenario& sc) {
  auto plan = MakePlan(sc);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  if (!plan.ok()) return Priced{};
  const OpCostModel hw(sc.hardware);
  auto costs = PriceStep(sc, *plan, hw);
  EXPECT_TRUE(costs.ok()) << costs.status().ToString();
  return costs.ok() ? Priced{plan->graph, *costs} : Priced{};
}

// Inside one node: S = T * top_k * h * 2 bytes; a rank keeps S/ep and sends the rest over its
// NVLink port: t = a_intra + S * (ep - 1)/ep / B_nvlink.
TEST(EpAllToAll, ClosedFormInsideOneNode) {
  const EpAllToAll a = Price(Moe(8, 8, 8));
  const double s = kAct * 8;
  EXPECT_DOUBLE_EQ(a.size.value(), s);
  EXPECT_DOUBLE_EQ(a.sent_per_rank.value(), s * 7 / 8);
  EXPECT_DOUBLE_EQ(a.cross_node_per_rank.value(), 0.0);
  EXPECT_DOUBLE_EQ(a.time.value(), kIntra + s * 7 / 8 / kNvlink);
  EXPECT_EQ(a.bottleneck, LinkClass::kNvlink);
}

// Across nodes: of the S * (ep - 1)/ep a rank sends, S * (ep - g)/ep goes to the other nodes over
// its NIC (one per GPU), the rest over NVLink, at the same time; the slower sets the time.
TEST(EpAllToAll, ClosedFormAcrossNodes) {
  for (int64_t ep : {16, 32, 64}) {
    const EpAllToAll a = Price(Moe(64, 64, ep));
    const double s = kAct * 8;
    const double n = static_cast<double>(ep);
    EXPECT_DOUBLE_EQ(a.sent_per_rank.value(), s * (n - 1) / n) << ep;
    EXPECT_DOUBLE_EQ(a.cross_node_per_rank.value(), s * (n - 8) / n) << ep;
    const double nic = s * (n - 8) / n / kNic;
    const double nvlink = s * 7 / n / kNvlink;
    EXPECT_NEAR(a.time.value(), kInter + std::max(nic, nvlink), 1e-12) << ep;
    EXPECT_EQ(a.bottleneck, LinkClass::kNic) << ep;
  }
}

// The busiest rank receives the capacity factor (or the imbalance) times the mean: its
// all-to-all bytes and its expert GEMM rows scale by the same factor.
TEST(EpAllToAll, LoadFactorStretchesTrafficLikeExpertWork) {
  const Scenario base = Moe(16, 16, 16);
  const EpAllToAll a0 = Price(base);
  auto rows = [](const Scenario& sc) {
    auto g = BuildOpGraph(sc.model, GraphOptionsFor(sc.training, sc.parallel));
    EXPECT_TRUE(g.ok());
    for (const Op& op : g->layer_kinds.back().ops) {
      if (op.name == "moe.experts.fc1") return static_cast<double>(op.matmul.m * op.matmul.batch);
    }
    return 0.0;
  };
  for (auto [cf, im] : {std::pair{1.25, 1.0}, std::pair{0.0, 1.5}}) {
    Scenario sc = base;
    sc.model.moe->capacity_factor = cf;
    sc.model.moe->imbalance = im;
    const double load = cf > 0.0 ? cf : im;
    const EpAllToAll a = Price(sc);
    EXPECT_DOUBLE_EQ(a.size.value(), a0.size.value() * load);
    EXPECT_DOUBLE_EQ(a.cross_node_per_rank.value(), a0.cross_node_per_rank.value() * load);
    EXPECT_NEAR(a.time.value() - kInter, (a0.time.value() - kInter) * load, 1e-12);
    EXPECT_NEAR(rows(sc) / rows(base), load, 1e-4);
  }
}

// The experts' model FLOPs count the routed copies they compute: with a capacity factor above 1
// the padding is hardware work only; below 1 the copies over capacity are dropped, so they count
// neither (MFU cannot pass HFU, nor 1).
TEST(EpAllToAll, ModelFlopsCountOnlyTheRoutedCopiesComputed) {
  for (double cf : {0.1, 0.5, 1.0, 2.0}) {
    Scenario sc = Moe(16, 16, 16);
    sc.model.moe->capacity_factor = cf;
    auto g = BuildOpGraph(sc.model, GraphOptionsFor(sc.training, sc.parallel));
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    int experts = 0;
    for (const Op& op : g->layer_kinds.back().ops) {
      if (op.name != "moe.experts.fc1") continue;
      EXPECT_NEAR(op.model_fwd_flops.value() / op.fwd.flops.value(), std::min(1.0, 1.0 / cf), 1e-3)
          << cf;
      ++experts;
    }
    EXPECT_EQ(experts, 1);
    Result<SimResult> r = Simulate(sc);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_LE(r->mfu, r->hfu) << cf;
    EXPECT_LT(r->hfu, 1.0) << cf;
  }
}

// Node-limited routing (DeepSeek-V3 §3.2.2): a token crosses the network once per remote node
// it reaches, M * (N - 1)/N on average, instead of top_k * (ep - g)/ep; NVLink then forwards
// every copy not on the receiving GPU, S * (g - 1)/g.
TEST(EpAllToAll, NodeLimitedRoutingCapsCrossNodeTraffic) {
  const double s = kAct * 8;
  for (int64_t m : {1, 2, 4}) {
    Scenario sc = Moe(64, 64, 64);
    sc.model.moe->max_nodes_per_token = m;
    const EpAllToAll a = Price(sc);
    const double md = static_cast<double>(m);
    const double cross = s * md * 7 / 8 / 8;  // M * (8 - 1)/8 copies of h out of top_k = 8
    EXPECT_DOUBLE_EQ(a.cross_node_per_rank.value(), cross) << m;
    const double nic = cross / kNic;
    const double nvlink = s * 7 / 8 / kNvlink;
    EXPECT_NEAR(a.time.value(), kInter + kIntra + std::max(nic, nvlink), 1e-12) << m;
  }
  // The limit only ever removes traffic: M = 8 (all nodes) leaves the per-copy volume.
  Scenario all = Moe(64, 64, 64);
  all.model.moe->max_nodes_per_token = 8;
  EXPECT_DOUBLE_EQ(Price(all).cross_node_per_rank.value(), s * 56 / 64);
  // An EP group inside one node is not affected.
  Scenario one = Moe(8, 8, 8);
  one.model.moe->max_nodes_per_token = 1;
  EXPECT_DOUBLE_EQ(Price(one).time.value(), Price(Moe(8, 8, 8)).time.value());
}

// More experts per rank (a smaller EP group for the same 64 experts) keeps more of each rank's
// tokens on its own node: S * (ep - 8)/ep crosses nodes, none once the group fits in a node.
TEST(EpAllToAll, MoreExpertsPerRankMeansLessCrossNodeTraffic) {
  double last_cross = 1e300;
  double last_time = 1e300;
  for (int64_t ep : {64, 32, 16, 8}) {
    const EpAllToAll a = Price(Moe(64, 64, ep));
    EXPECT_LT(a.cross_node_per_rank.value(), last_cross) << ep;
    EXPECT_LT(a.time.value(), last_time) << ep;
    last_cross = a.cross_node_per_rank.value();
    last_time = a.time.value();
  }
  EXPECT_DOUBLE_EQ(last_cross, 0.0);
  // The whole step agrees: the exposed all-to-all shrinks with the group.
  double last_exposed = 1e300;
  for (int64_t ep : {64, 16, 8}) {
    auto r = Simulate(Moe(64, 64, ep));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_LT(r->breakdown.ep.value(), last_exposed) << ep;
    last_exposed = r->breakdown.ep.value();
  }
}

// Per MoE layer and micro-batch: a dispatch and a combine forward and again backward, all on the
// compute stream without overlap; with ep_comm_overlap (DualPipe) the four hide behind the
// layer's forward + backward compute C, and the SMs they hold (20 of the GPU's) cost f * A.
TEST(EpAllToAll, ExposureWithAndWithoutOverlap) {
  for (bool overlap : {false, true}) {
    Scenario sc = Moe(64, 64, 64);
    sc.parallel.ep_comm_overlap = overlap;
    const Priced priced = PriceAll(sc);
    const StepCosts* costs = &priced.costs;
    ASSERT_FALSE(costs->layer_kinds.empty());
    const BlockCost& moe = costs->layer_kinds.back();
    const double t = costs->ep.time.value();
    if (!overlap) {
      EXPECT_DOUBLE_EQ(moe.fwd.ep.value(), 2 * t);
      EXPECT_DOUBLE_EQ(moe.bwd.ep.value(), 2 * t);
    } else {
      const double a = 4 * t;
      const double c = moe.fwd.compute.value() + moe.bwd.compute.value();
      const double f = 20.0 / static_cast<double>(sc.hardware.sm_count);
      const double exposed = std::max(a - c, f * a);
      EXPECT_NEAR(moe.fwd.ep.value(), exposed / 2, 1e-12);
      EXPECT_NEAR(moe.bwd.ep.value(), exposed / 2, 1e-12);
    }
    EXPECT_DOUBLE_EQ(costs->layer_kinds.front().fwd.ep.value(), 0.0);  // the dense layer kind
  }
}

// DualPipe overlaps the all-to-alls only inside a paired forward/backward chunk (DeepSeek-V3
// §3.2.1, deepseek-ai/DualPipe _forward_backward_chunk): on every rank, a pass the order pairs
// pays its layers' overlapped share (fwd.ep / bwd.ep), a pass it does not (the warm-up
// forwards, unpaired backwards, zero-bubble B passes) its layers' whole all-to-alls (ep_alone,
// as without overlap), and W passes none. 1F1B keeps the overlapped share on every pass.
TEST(EpAllToAll, DualPipeExposesTheUnpairedChunks) {
  for (PipelineSchedule sched : {PipelineSchedule::kDualPipe, PipelineSchedule::k1F1B}) {
    Scenario sc = Moe(64, 16, 16);
    sc.model.tied_embeddings = false;
    sc.parallel.pp = 4;
    sc.parallel.schedule = sched;
    sc.parallel.ep_comm_overlap = true;
    sc.training.global_batch = 8 * 16;  // 8 micro-batches: 2·pp
    const Priced priced = PriceAll(sc);
    auto plan = MakePlan(sc);
    auto memory = EstimateMemory(sc.model, sc.training, sc.parallel, sc.hardware);
    auto ranks = SplitLayers(sc.model.num_layers, sc.parallel);
    ASSERT_TRUE(plan.ok() && memory.ok() && ranks.ok());
    const OpCostModel hw(sc.hardware);
    auto prog = BuildStepProgram(sc, *plan, priced.costs, hw, *memory, ProgramOptions{});
    ASSERT_TRUE(prog.ok()) << prog.status().ToString();
    const ScheduleShape shape{sched, 4, sc.parallel.ChunksPerRank(), 8};
    int alone_passes = 0;
    for (const Device& d : prog->devices) {
      const PipelineRank& rank = (*ranks)[static_cast<size_t>(d.coords.pp)];
      const auto chunk_ep = [&](int32_t c, bool backward, bool alone) {
        double t = 0.0;
        const LayerRange& lr = rank.chunks[static_cast<size_t>(c)];
        for (int64_t i = lr.begin; i < lr.end; ++i) {
          const BlockCost& b = priced.costs.layer_kinds[static_cast<size_t>(
              priced.graph.layer_kind_of[static_cast<size_t>(i)])];
          t += alone ? b.ep_alone.value() : (backward ? b.bwd.ep : b.fwd.ep).value();
        }
        return t;
      };
      auto order = PipelineOrder(shape, d.coords.pp);
      ASSERT_TRUE(order.ok());
      // The passes of `d`, in its order: a pass is one task, or (its all-to-alls as flows on
      // links DP or PP traffic shares, step_program.cc AddPass) a few in a row, whose parts sum.
      std::vector<TaskInfo> passes;
      for (const TaskInfo& info : *prog->tasks) {
        if (info.device != d.index ||
            (info.category != TaskCategory::kForward && info.category != TaskCategory::kBackward)) {
          continue;
        }
        const bool same = !passes.empty() && passes.back().category == info.category &&
                          passes.back().chunk == info.chunk &&
                          passes.back().microbatch == info.microbatch &&
                          passes.back().bucket == info.bucket && passes.back().part == info.part;
        if (same) {
          passes.back().parts += info.parts;
        } else {
          passes.push_back(info);
        }
      }
      size_t next = 0;  // the compute tasks of `d` come in its order
      for (const TaskInfo& info : passes) {
        if (info.bucket > 0) continue;  // a backward split into gradient buckets: its first piece
        ASSERT_LT(next, order->size());
        const size_t i = next++;
        const ScheduleItem& it = (*order)[i];
        const bool paired = it.paired || (it.phase == Phase::kForward && i + 1 < order->size() &&
                                          (*order)[i + 1].paired);
        const bool alone = sched == PipelineSchedule::kDualPipe && !paired;
        const double buckets = static_cast<double>(info.buckets);
        double want = it.phase == Phase::kWeight
                          ? 0.0
                          : chunk_ep(it.chunk, it.phase != Phase::kForward, alone) / buckets;
        EXPECT_NEAR(info.parts.ep.value(), want, 1e-12)
            << Name(sched) << " rank " << d.coords.pp << " pass " << i;
        if (alone && it.phase != Phase::kWeight) ++alone_passes;
      }
      EXPECT_EQ(next, order->size());
    }
    // DualPipe, p = 4, m = 8: of each rank's 8 F and 8 B, 3 of each paired.
    EXPECT_EQ(alone_passes, sched == PipelineSchedule::kDualPipe ? 4 * (16 - 6) : 0);
  }
}

// DeepSeek-V3 §3.3.3: an fp8 dispatch moves half the bytes of the bf16 combine; each pass pays
// one of each, and the dispatched tokens wait in a 1-byte buffer.
TEST(EpAllToAll, Fp8DispatchHalvesTheDispatchOnly) {
  Scenario sc = Moe(64, 64, 64);
  sc.training.precision = DType::kFp8;
  const Priced p16 = PriceAll(sc);
  sc.training.fp8_dispatch = true;
  const Priced p8 = PriceAll(sc);
  ASSERT_FALSE(p16.costs.layer_kinds.empty() || p8.costs.layer_kinds.empty());
  const StepCosts& bf16 = p16.costs;
  const StepCosts& fp8 = p8.costs;
  const OpGraph& g16 = p16.graph;
  const OpGraph& g8 = p8.graph;
  EXPECT_DOUBLE_EQ(fp8.ep_dispatch.size.value(), bf16.ep.size.value() / 2);
  EXPECT_DOUBLE_EQ(fp8.ep.size.value(), bf16.ep.size.value());  // the combine stays bf16
  EXPECT_DOUBLE_EQ(fp8.layer_kinds.back().fwd.ep.value(),
                   fp8.ep_dispatch.time.value() + fp8.ep.time.value());
  EXPECT_LT(fp8.layer_kinds.back().fwd.ep.value(), bf16.layer_kinds.back().fwd.ep.value());
  auto buffer = [](const OpGraph& g, const std::string& name) {
    for (const Op& op : g.layer_kinds.back().ops) {
      if (op.name == name) return op.output.value();
    }
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(buffer(g8, "moe.dispatch"), buffer(g16, "moe.dispatch") / 2);
  EXPECT_DOUBLE_EQ(buffer(g8, "moe.combine"), buffer(g16, "moe.combine"));
}

// A multi-token-prediction module's block routes its tokens too: its all-to-alls are priced
// with the head, one layer's worth per module.
TEST(EpAllToAll, MtpBlocksPayTheirAllToAll) {
  for (int64_t depth : {0, 1, 2}) {
    Scenario sc = Moe(64, 64, 64);
    sc.model.mtp_depth = depth;
    const Priced priced = PriceAll(sc);
    const StepCosts* costs = &priced.costs;
    const double t = costs->ep.time.value();
    EXPECT_DOUBLE_EQ(costs->head.fwd.ep.value(), 2 * t * static_cast<double>(depth)) << depth;
    EXPECT_DOUBLE_EQ(costs->head.bwd.ep.value(), 2 * t * static_cast<double>(depth)) << depth;
  }
}

// Every ep that divides the experts and dp * cp is a valid layout, including groups that span
// context-parallel ranks (ep > dp); others are refused with the key to change.
TEST(EpAllToAll, EveryValidEpIsAccepted) {
  struct L {
    int64_t dp, cp;
  };
  for (const L l : {L{8, 1}, L{4, 2}, L{2, 4}, L{1, 8}}) {
    for (int64_t ep : {1, 2, 4, 8}) {
      Scenario sc = Moe(8, l.dp, ep);
      sc.model.moe->num_experts = 8;
      sc.model.moe->top_k = 2;
      sc.parallel.cp = l.cp;
      const std::string what = "dp " + std::to_string(l.dp) + " cp " + std::to_string(l.cp) +
                               " ep " + std::to_string(ep);
      EXPECT_TRUE(ValidateScenario(sc).ok()) << what << ": " << ValidateScenario(sc).ToString();
      auto r = Simulate(sc);
      ASSERT_TRUE(r.ok()) << what << ": " << r.status().ToString();
      EXPECT_GT(r->tokens_per_s, 0.0) << what;
      EXPECT_EQ(r->costs.ep.time.value() > 0.0, ep > 1) << what;
    }
  }
  const Status bad = ValidateScenario(Moe(8, 8, 3));
  ASSERT_EQ(bad.diagnostics().size(), 2u);
  EXPECT_EQ(bad.diagnostics()[0].message,
            "parallel.ep: 3 does not divide model.moe.num_experts (64)");
  EXPECT_EQ(bad.diagnostics()[1].message, "parallel.ep: 3 does not divide dp*cp = 8*1 = 8");
}

}  // namespace
}  // namespace shardsim
