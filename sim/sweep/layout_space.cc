#include "sim/sweep/layout_space.h"

#include <algorithm>

#include "sim/config/loader.h"
#include "sim/sweep/sweep_spec.h"

namespace shardsim {
namespace {

bool Allowed(const std::vector<int64_t>& only, int64_t v) {
  return only.empty() || std::find(only.begin(), only.end(), v) != only.end();
}

}  // namespace

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> low, high;
  // d <= n / d, not d * d <= n, which overflows near INT64_MAX.
  for (int64_t d = 1; d <= n / d; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

bool SplitKeysGiven(const Scenario& s) {
  // Given, true or false (an axis or the base may say false on purpose); the scenario's origins
  // record the keys its file or the sweep wrote.
  return s.origins.Get("parallel.account_for_embedding_in_pipeline_split").loc.known() ||
         s.origins.Get("parallel.account_for_loss_in_pipeline_split").loc.known();
}

bool SearchCountsEdges(int64_t layers, int64_t pp) { return pp > 1 && layers % pp != 0; }

void ApplyLayout(const LayoutChoice& l, Scenario* s) {
  s->parallel.dp = l.dp;
  s->parallel.tp = l.tp;
  s->parallel.pp = l.pp;
  s->parallel.cp = l.cp;
  s->parallel.schedule = l.schedule;
  s->parallel.virtual_stages = l.virtual_stages;
  s->parallel.ep = l.ep;
  s->parallel.first_stage_layers = 0;
  s->parallel.last_stage_layers = 0;
  s->parallel.pipeline_layout.clear();
  if (l.edges_in_split) {
    s->parallel.account_for_embedding_in_pipeline_split = true;
    s->parallel.account_for_loss_in_pipeline_split = true;
  }
}

std::vector<LayoutChoice> ValidLayouts(const Scenario& scenario, int64_t gpus,
                                       const LayoutAuto& restrict, bool micro_batch_auto) {
  // The bound before the search: the divisor loops cost sqrt(gpus) (gpus: 9223372036854775807
  // never answered). Callers report the bound (TopologySpec::GpusProblem).
  if (gpus < 1 || gpus > kMaxGpus) return {};
  Scenario s = scenario;
  s.gpus = gpus;
  if (micro_batch_auto) s.training.micro_batch = 1;
  // The layouts are searched without Megatron-LM's micro-batch group, whether the base or a sweep
  // axis gives it: each point's document carries it to its interleaved layouts, validated there
  // (an invalid point, with the reason), and drops it for the others (PointSpace::Document).
  s.parallel.microbatch_group_size_per_vp_stage = 0;
  const int64_t layers = std::max<int64_t>(1, s.model.num_layers);
  std::vector<LayoutChoice> out;
  auto schedule_ok = [&](PipelineSchedule p, bool by_default) {
    if (restrict.schedules.empty()) return by_default;
    return std::find(restrict.schedules.begin(), restrict.schedules.end(), p) !=
           restrict.schedules.end();
  };
  const bool moe = s.model.moe.has_value();
  const bool base_split_keys = SplitKeysGiven(scenario);
  auto consider = [&](LayoutChoice l) {
    const int64_t chunks = l.pp * l.virtual_stages;
    l.edges_in_split =
        !base_split_keys && SearchCountsEdges(layers, l.pp) && (layers + 2) % chunks == 0;
    const std::vector<int64_t> eps =
        moe ? Divisors(l.dp * l.cp) : std::vector<int64_t>{scenario.parallel.ep};
    for (int64_t ep : eps) {
      if (!Allowed(restrict.ep, ep)) continue;
      l.ep = ep;
      // The base's split keys, then the layout's (ApplyLayout only ever sets them).
      s.parallel.account_for_embedding_in_pipeline_split =
          scenario.parallel.account_for_embedding_in_pipeline_split;
      s.parallel.account_for_loss_in_pipeline_split =
          scenario.parallel.account_for_loss_in_pipeline_split;
      ApplyLayout(l, &s);
      if (ValidateScenario(s).ok()) out.push_back(l);
    }
  };
  for (int64_t tp : Divisors(gpus)) {
    if (!Allowed(restrict.tp, tp)) continue;
    for (int64_t pp : Divisors(gpus / tp)) {
      if (!Allowed(restrict.pp, pp)) continue;
      for (int64_t cp : Divisors(gpus / tp / pp)) {
        const int64_t dp = gpus / tp / pp / cp;
        if (!Allowed(restrict.cp, cp) || !Allowed(restrict.dp, dp)) continue;
        const LayoutChoice base{dp, tp, pp, cp, PipelineSchedule::k1F1B, 1};
        if (schedule_ok(PipelineSchedule::kGpipe, pp > 1)) {
          LayoutChoice l = base;
          l.schedule = PipelineSchedule::kGpipe;
          consider(l);
        }
        if (schedule_ok(PipelineSchedule::k1F1B, true)) consider(base);
        if (pp > 1 && schedule_ok(PipelineSchedule::kInterleaved1F1B, true)) {
          for (int64_t v = 2; v * pp <= layers + 2; ++v) {
            if (!Allowed(restrict.virtual_stages, v)) continue;
            LayoutChoice l = base;
            l.schedule = PipelineSchedule::kInterleaved1F1B;
            l.virtual_stages = v;
            consider(l);
          }
        }
        // The zero-bubble and DualPipe schedules (issue 16), each where validation takes it: ZB-V
        // and DualPipeV split the model in 2*pp stages, DualPipe needs an even pp and
        // micro-batch count, the split schedules refuse ZeRO-3 and (DualPipe, the V shapes) tied
        // embeddings.
        for (PipelineSchedule z :
             {PipelineSchedule::kZbH1, PipelineSchedule::kZbH2, PipelineSchedule::kZbV,
              PipelineSchedule::kDualPipe, PipelineSchedule::kDualPipeV}) {
          if (pp > 1 && schedule_ok(z, true)) {
            LayoutChoice l = base;
            l.schedule = z;
            consider(l);
          }
        }
      }
    }
  }
  return out;
}

}  // namespace shardsim
