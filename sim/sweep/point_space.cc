#include "sim/sweep/point_space.h"

#include <limits>
#include <set>

#include "sim/base/strings.h"
#include "sim/config/config_node.h"
#include "sim/config/library.h"
#include "sim/config/loader.h"
#include "sim/config/value_reader.h"
#include "sim/goodput/goodput.h"
#include "sim/sweep/rows.h"

namespace shardsim {
namespace {

// The text of `dotted` in a resolved scenario tree, or nullptr.
const ConfigNode* FindPath(const ConfigNode& root, const std::string& dotted) {
  const ConfigNode* node = &root;
  size_t start = 0;
  while (node != nullptr) {
    const size_t dot = dotted.find('.', start);
    if (!node->is_map()) return nullptr;
    node = node->Find(dotted.substr(start, dot == std::string::npos ? dot : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return node != nullptr && node->is_scalar() ? node : nullptr;
}

std::string Restrictions(const LayoutAuto& l) {
  std::string out;
  auto list = [&](const char* name, const std::vector<int64_t>& xs) {
    if (xs.empty()) return;
    std::vector<std::string> parts;
    for (int64_t x : xs) parts.push_back(std::to_string(x));
    out += std::string(", ") + name + " in [" + Join(parts) + "]";
  };
  list("dp", l.dp);
  list("tp", l.tp);
  list("pp", l.pp);
  list("cp", l.cp);
  list("virtual_stages", l.virtual_stages);
  list("ep", l.ep);
  if (!l.schedules.empty()) {
    std::vector<std::string> parts;
    for (PipelineSchedule p : l.schedules) parts.emplace_back(Name(p));
    out += ", schedule in [" + Join(parts) + "]";
  }
  return out;
}

}  // namespace

Result<PointSpace> PointSpace::Enumerate(const SweepSpec& spec, const LoadOptions& options) {
  PointSpace space(spec);
  for (const SweepDim& dim : spec.dims) {
    for (const Axis& a : dim.axes) space.columns_.push_back(a.key);
    if (space.combos_ > kMaxPoints / static_cast<int64_t>(dim.size())) {
      return Status::Invalid("the sweep has more than " + std::to_string(kMaxPoints) +
                                 " points; split it into several sweeps",
                             dim.axes.front().key_origin.loc,
                             dim.axes.front().key_origin.source_line);
    }
    space.combos_ *= static_cast<int64_t>(dim.size());
  }
  if (spec.layout.enabled) {
    for (const std::string& k : LayoutKeys()) space.columns_.push_back(k);
  }
  if (spec.micro_batch_auto) space.columns_.push_back("training.micro_batch");
  // The GPU counts known before any point is built, for the goodput's straggler factor.
  std::set<int64_t> gpu_counts;
  const bool tokens = SpecSetsKey(spec, "training.tokens", options);
  if (!space.automatic()) {
    space.size_ = space.combos_;
    if (tokens) {
      for (const SweepDim& dim : spec.dims) {
        for (const Axis& a : dim.axes) {
          if (a.key != "gpus") continue;
          for (const AxisValue& v : a.values) {
            Result<int64_t> g = ParseInteger(v.text);
            if (g.ok() && *g > 0 && *g <= kMaxGpus) gpu_counts.insert(*g);
          }
        }
      }
      Result<ConfigNode> base = spec.base->Resolved(options);
      const ConfigNode* g = base.ok() ? FindPath(*base, "gpus") : nullptr;
      Result<int64_t> n = g != nullptr ? ParseInteger(g->text()) : Result<int64_t>(int64_t{0});
      if (n.ok() && *n > 0 && *n <= kMaxGpus) gpu_counts.insert(*n);
    }
    for (int64_t g : gpu_counts) {
      space.straggler_max_.emplace(g, ExpectedMaxStdNormal(static_cast<double>(g)));
    }
    return space;
  }
  FileCache cache;
  space.combo_info_.resize(static_cast<size_t>(space.combos_));
  for (int64_t c = 0; c < space.combos_; ++c) {
    Status s = space.Expand(c, options, &cache);
    if (!s.ok()) return s;
    if (static_cast<int64_t>(space.points_.size()) > kMaxPoints) {
      return Status::Invalid("the sweep has more than " + std::to_string(kMaxPoints) +
                                 " points; split it into several sweeps or restrict parallel: "
                                 "auto",
                             spec.layout.origin.loc, spec.layout.origin.source_line);
    }
  }
  space.size_ = static_cast<int64_t>(space.points_.size());
  if (tokens) {
    for (const Combo& c : space.combo_info_) {
      if (c.gpus > 0) gpu_counts.insert(c.gpus);
    }
  }
  for (int64_t g : gpu_counts) {
    space.straggler_max_.emplace(g, ExpectedMaxStdNormal(static_cast<double>(g)));
  }
  return space;
}

// The value index of each dimension in combination `combo` (mixed radix, first dimension most
// significant).
std::vector<size_t> PointSpace::ComboDigits(int64_t combo) const {
  std::vector<size_t> digit(spec_.dims.size());
  int64_t rest = combo;
  for (size_t d = spec_.dims.size(); d-- > 0;) {
    const int64_t n = static_cast<int64_t>(spec_.dims[d].size());
    digit[d] = static_cast<size_t>(rest % n);
    rest /= n;
  }
  return digit;
}

std::vector<Assignment> PointSpace::ComboAssignments(int64_t combo) const {
  std::vector<Assignment> out;
  const std::vector<size_t> digit = ComboDigits(combo);
  for (size_t d = 0; d < spec_.dims.size(); ++d) {
    for (const Axis& a : spec_.dims[d].axes) out.push_back({a.key, a.values[digit[d]].yaml});
  }
  return out;
}

// Expands combination `c` into points (appended to points_). Problems of the combination become
// one point carrying them; only a GPU count that cannot be read is an error of the whole spec.
Status PointSpace::Expand(int64_t c, const LoadOptions& options, FileCache* cache) {
  Combo& combo = combo_info_[static_cast<size_t>(c)];
  const std::vector<Assignment> assigns = ComboAssignments(c);
  auto problem = [&](std::string why) {
    combo.problem = std::move(why);
    points_.push_back(Point{c, -1, 0});
    return Status::Ok();
  };
  ScenarioDocument doc = *spec_.base;
  for (const Assignment& a : assigns) {
    Status s = doc.Set(a.key, a.yaml);
    if (!s.ok()) return problem(StatusReason(s));
  }
  if (!spec_.layout.enabled) {  // micro-batch only: the combination's own layout gives dp
    Status s = doc.Set("training.micro_batch", "1");
    if (!s.ok()) return problem(StatusReason(s));
    Result<Scenario> sc = doc.Build(options);
    if (!sc.ok()) return problem(StatusReason(sc.status()));
    combo.gpus = sc->gpus;
    for (int64_t mb : Divisors(sc->training.global_batch / sc->parallel.dp)) {
      points_.push_back(Point{c, -1, mb});
    }
    return Status::Ok();
  }
  // parallel: auto. The GPU count, expert degree and micro-batch as the scenario gives them.
  Resolver resolver(LibraryDirs(options), cache);
  Result<ResolvedDoc> resolved = resolver.Resolve(DocKind::kScenario, doc.tree(), "");
  if (!resolved.ok()) return problem(StatusReason(resolved.status()));
  const ConfigNode* gpus_node = FindPath(resolved->tree, "gpus");
  if (gpus_node == nullptr) {
    return Status::Invalid(
        "parallel: auto needs the GPU count: set gpus in the scenario or "
        "sweep it (gpus: [256, 512])",
        spec_.layout.origin.loc, spec_.layout.origin.source_line);
  }
  Result<int64_t> gpus = ParseInteger(gpus_node->text());
  if (!gpus.ok() || *gpus < 1) {
    return Status::Invalid("gpus: expected a positive integer, got " + gpus_node->Describe(),
                           gpus_node->loc(), gpus_node->origin().source_line);
  }
  if (*gpus > kMaxGpus) {
    return Status::Invalid("gpus: " + std::to_string(*gpus) + " is above " +
                               std::to_string(kMaxGpus) +
                               ", the most GPUs shardsim models (parallel: auto searches the "
                               "layouts of that many)",
                           gpus_node->loc(), gpus_node->origin().source_line);
  }
  combo.gpus = *gpus;
  combo.sets_group =
      FindPath(resolved->tree, "parallel.microbatch_group_size_per_vp_stage") != nullptr;
  // The GPU count is the enumeration's, not the probe's (whose layout must stay permissive).
  std::vector<Assignment> probe_assigns;
  // Nor is the micro-batch group: the layouts are searched without it (ValidLayouts), and each
  // point's document carries it (Document).
  for (const Assignment& a : assigns) {
    if (a.key != "gpus" && a.key != "parallel.microbatch_group_size_per_vp_stage") {
      probe_assigns.push_back(a);
    }
  }
  const ConfigNode* ep = FindPath(resolved->tree, "parallel.ep");
  probe_assigns.push_back({"parallel.ep", ep != nullptr ? ep->text() : "1"});
  const ConfigNode* mb = FindPath(resolved->tree, "training.micro_batch");
  if (!spec_.micro_batch_auto && mb != nullptr) {
    probe_assigns.push_back({"training.micro_batch", mb->text()});
  }
  Result<ScenarioDocument> probe = ProbeDocument(*spec_.base, probe_assigns);
  if (!probe.ok()) return problem(StatusReason(probe.status()));
  Result<Scenario> sc = probe->Build(options);
  if (!sc.ok()) return problem(StatusReason(sc.status()));
  combo.layouts = ValidLayouts(*sc, *gpus, spec_.layout, spec_.micro_batch_auto);
  if (combo.layouts.empty()) {
    return problem("parallel: auto: no layout of " + std::to_string(*gpus) +
                   " GPUs passes validation for model " + sc->model.name + " (" +
                   std::to_string(sc->model.num_heads) + " heads, " +
                   std::to_string(sc->model.num_layers) + " layers), seq_len " +
                   std::to_string(sc->training.seq_len) + ", global_batch " +
                   std::to_string(sc->training.global_batch) + Restrictions(spec_.layout));
  }
  for (size_t l = 0; l < combo.layouts.size(); ++l) {
    const int32_t li = static_cast<int32_t>(l);
    if (!spec_.micro_batch_auto) {
      points_.push_back(Point{c, li, 0});
      continue;
    }
    for (int64_t m : Divisors(sc->training.global_batch / combo.layouts[l].dp)) {
      points_.push_back(Point{c, li, m});
    }
  }
  return Status::Ok();
}

PointSpace::Point PointSpace::PointAt(int64_t i) const {
  if (!automatic()) return Point{i, -1, 0};
  return points_[static_cast<size_t>(i)];
}

std::vector<std::string> PointSpace::Inputs(int64_t i) const {
  const Point p = PointAt(i);
  std::vector<std::string> out;
  const std::vector<size_t> digit = ComboDigits(p.combo);
  for (size_t d = 0; d < spec_.dims.size(); ++d) {
    for (const Axis& a : spec_.dims[d].axes) out.push_back(a.values[digit[d]].text);
  }
  if (spec_.layout.enabled) {
    if (p.layout < 0) {
      out.resize(out.size() + LayoutKeys().size());
    } else {
      const LayoutChoice& l =
          combo_info_[static_cast<size_t>(p.combo)].layouts[static_cast<size_t>(p.layout)];
      for (int64_t v : {l.dp, l.tp, l.pp, l.cp}) out.push_back(std::to_string(v));
      out.emplace_back(Name(l.schedule));
      // As simulated: 2 for the V schedules (SimulatedVirtualStages).
      ParallelSpec shape;
      shape.schedule = l.schedule;
      shape.virtual_stages = l.virtual_stages;
      out.push_back(std::to_string(SimulatedVirtualStages(shape)));
      out.push_back(std::to_string(l.ep));
    }
  }
  if (spec_.micro_batch_auto) out.push_back(p.micro_batch > 0 ? std::to_string(p.micro_batch) : "");
  return out;
}

Result<ScenarioDocument> PointSpace::Document(int64_t i) const {
  const Point p = PointAt(i);
  ScenarioDocument doc = *spec_.base;
  std::vector<Assignment> sets = ComboAssignments(p.combo);
  if (p.layout >= 0) {
    const LayoutChoice& l =
        combo_info_[static_cast<size_t>(p.combo)].layouts[static_cast<size_t>(p.layout)];
    sets.push_back({"parallel.dp", std::to_string(l.dp)});
    sets.push_back({"parallel.tp", std::to_string(l.tp)});
    sets.push_back({"parallel.pp", std::to_string(l.pp)});
    sets.push_back({"parallel.cp", std::to_string(l.cp)});
    sets.push_back({"parallel.schedule", Name(l.schedule)});
    sets.push_back({"parallel.virtual_stages", std::to_string(l.virtual_stages)});
    sets.push_back({"parallel.ep", std::to_string(l.ep)});
    sets.push_back({"parallel.first_stage_layers", "0"});
    sets.push_back({"parallel.last_stage_layers", "0"});
    sets.push_back({"parallel.pipeline_layout", "\"\""});
    // Megatron-LM reads the micro-batch group only in the interleaved schedule.
    if (combo_info_[static_cast<size_t>(p.combo)].sets_group &&
        l.schedule != PipelineSchedule::kInterleaved1F1B) {
      sets.push_back({"parallel.microbatch_group_size_per_vp_stage", "0"});
    }
    if (l.edges_in_split) {
      sets.push_back({"parallel.account_for_embedding_in_pipeline_split", "true"});
      sets.push_back({"parallel.account_for_loss_in_pipeline_split", "true"});
    }
  }
  if (p.micro_batch > 0) sets.push_back({"training.micro_batch", std::to_string(p.micro_batch)});
  for (const Assignment& a : sets) {
    Status s = doc.Set(a.key, a.yaml);
    if (!s.ok()) return s;
  }
  return doc;
}

const std::string& PointSpace::Problem(int64_t i) const {
  if (!automatic()) return no_problem_;
  return combo_info_[static_cast<size_t>(PointAt(i).combo)].problem;
}

std::optional<double> PointSpace::StragglerExpectedMax(int64_t gpus) const {
  const auto it = straggler_max_.find(gpus);
  if (it == straggler_max_.end()) return std::nullopt;
  return it->second;
}

int64_t PointSpace::Gpus(int64_t i) const {
  if (!automatic()) return 0;
  return combo_info_[static_cast<size_t>(PointAt(i).combo)].gpus;
}

}  // namespace shardsim
