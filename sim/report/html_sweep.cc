#include "sim/report/html_sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "sim/base/units.h"
#include "sim/report/html_page.h"
#include "sim/report/summary.h"
#include "sim/report/ties.h"

namespace shardsim {

using Json = nlohmann::ordered_json;

namespace {

std::string Esc(std::string_view s) { return HtmlEscape(s); }

// Chart coordinates need no more than six significant digits; the tables keep exact values.
double Round6(double v) {
  if (v == 0.0 || !std::isfinite(v)) return v;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return std::strtod(buf, nullptr);
}

// The front of points maximizing y and minimizing `x` (see ParetoFront).
std::vector<size_t> Front(const std::vector<size_t>& candidates, const std::vector<double>& x,
                          const std::vector<double>& y) {
  std::vector<size_t> order = candidates;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<size_t> front;
  double best = -INFINITY;
  for (size_t g = 0; g < order.size();) {
    size_t end = g;
    double top = -INFINITY;
    while (end < order.size() && x[order[end]] == x[order[g]]) top = std::max(top, y[order[end++]]);
    if (top > best) {  // a point of smaller x with y >= top would dominate the whole group
      for (size_t k = g; k < end; ++k) {
        if (y[order[k]] == top) front.push_back(order[k]);
      }
      best = top;
    }
    g = end;
  }
  return front;
}

std::optional<double> RankValue(const SweepHtmlPoint& p, SweepRankBy by) {
  switch (by) {
    case SweepRankBy::kTokensPerS:
      return -p.tokens_per_s;
    case SweepRankBy::kTimeToTrain:
      return p.time_to_train_s;
    case SweepRankBy::kCost:
      return p.cost;
    case SweepRankBy::kTimeToTrainIdeal:
      return p.time_to_train_ideal_s;
    case SweepRankBy::kGoodput:
      if (p.goodput) return -*p.goodput;
      return std::nullopt;
  }
  return std::nullopt;
}

const char* RankName(SweepRankBy by) {
  switch (by) {
    case SweepRankBy::kTokensPerS:
      return "tokens/s";
    case SweepRankBy::kTimeToTrain:
      return "time to train";
    case SweepRankBy::kCost:
      return "cost";
    case SweepRankBy::kTimeToTrainIdeal:
      return "ideal time to train";
    case SweepRankBy::kGoodput:
      return "goodput";
  }
  return "";
}

std::string Td(std::string_view key, double value, const std::string& text) {
  return "<td class=\"num\">" + KeyedValue(key, JsonNumber(value), text) + "</td>";
}

std::string TopTable(const SweepHtmlInput& r, const std::vector<size_t>& top,
                     const std::vector<size_t>& front_gpus, const std::vector<size_t>& front_room) {
  bool ttt = false, cost = false;
  for (size_t i : top) {
    ttt = ttt || r.points[i].time_to_train_s.has_value();
    cost = cost || r.points[i].cost.has_value();
  }
  std::string out =
      "<div class=\"table-scroll\"><table class=\"ranked\" id=\"top-table\"><thead><tr><th>#</th>";
  for (const std::string& k : r.input_keys) out += "<th>" + Esc(k) + "</th>";
  out +=
      "<th class=\"num\">GPUs</th><th class=\"num\">tokens/s</th><th class=\"num\">per GPU</th>"
      "<th class=\"num\">MFU</th><th class=\"num\">executed</th><th class=\"num\">step</th>"
      "<th class=\"num\">peak memory</th><th class=\"num\">headroom</th>";
  if (ttt) {
    out +=
        "<th class=\"num\">time to train</th><th class=\"num\">ideal</th>"
        "<th class=\"num\">goodput</th>";
  }
  if (cost) out += "<th class=\"num\">cost</th>";
  out += "<th>Pareto</th>";
  const bool ties = r.tie_fraction > 0.0 && !top.empty();
  if (ties) out += "<th class=\"num\">vs best</th>";
  out += "</tr></thead><tbody>\n";
  const std::optional<double> best =
      top.empty() ? std::nullopt : RankValue(r.points[top.front()], r.rank_by);
  auto on = [](const std::vector<size_t>& f, size_t i) {
    return std::find(f.begin(), f.end(), i) != f.end();
  };
  for (size_t rank = 0; rank < top.size(); ++rank) {
    const size_t i = top[rank];
    const SweepHtmlPoint& p = r.points[i];
    out += "<tr data-i=\"" + std::to_string(i) + "\" data-rank=\"" + std::to_string(rank + 1) +
           "\"><td>" + std::to_string(rank + 1) + "</td>";
    for (size_t k = 0; k < r.input_keys.size(); ++k) {
      out += "<td>" + Esc(k < p.inputs.size() ? p.inputs[k] : "") + "</td>";
    }
    out += "<td class=\"num\">" + std::to_string(p.gpus) + "</td>";
    out += Td("tokens_per_s", p.tokens_per_s, GroupedNumber(p.tokens_per_s));
    out +=
        Td("tokens_per_s_per_gpu", p.tokens_per_s_per_gpu, GroupedNumber(p.tokens_per_s_per_gpu));
    out += Td("mfu", p.mfu, Percent(p.mfu));
    out += p.executed_fraction > 0.0
               ? Td("executed_fraction_of_peak", p.executed_fraction, Percent(p.executed_fraction))
               : "<td></td>";
    out += Td("step_time_s", p.step_time_s, FormatSeconds(Seconds(p.step_time_s)));
    out += Td("peak_memory_bytes", p.peak_memory_bytes, FormatBytes(Bytes(p.peak_memory_bytes)));
    out += "<td class=\"num\">" + Esc(FormatBytes(Bytes(p.HeadroomBytes()))) + "</td>";
    if (ttt) {
      out += p.time_to_train_s ? Td("time_to_train_s", *p.time_to_train_s,
                                    FormatSeconds(Seconds(*p.time_to_train_s)))
                               : "<td></td>";
      out += p.time_to_train_ideal_s ? Td("time_to_train_ideal_s", *p.time_to_train_ideal_s,
                                          FormatSeconds(Seconds(*p.time_to_train_ideal_s)))
                                     : "<td></td>";
      out += p.goodput ? Td("goodput", *p.goodput, Percent(*p.goodput)) : "<td></td>";
    }
    if (cost) out += p.cost ? Td("cost", *p.cost, GroupedNumber(*p.cost)) : "<td></td>";
    std::string marks;
    if (on(front_gpus, i)) marks += "GPUs";
    if (on(front_room, i)) marks += std::string(marks.empty() ? "" : ", ") + "headroom";
    out += "<td>" + marks + "</td>";
    if (ties) {
      // The ranking figure against the best's (tokens/s are ranked negated: the ratio is the
      // same); a tie by the rule the text report applies (TiesOnTime, sim/report/ties.h), on
      // the figures as ranked: negated ones are higher-is-better.
      const std::optional<double> v = RankValue(p, r.rank_by);
      std::string cell;
      if (v && best && *best != 0.0) {
        const double d = *v / *best - 1.0;
        char buf[32];
        std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * d);
        cell = rank == 0 ? "best" : std::string(buf);
        const bool negated = *v < 0.0;
        if (rank > 0 &&
            TiesOnTime(negated ? -*v : *v, negated ? -*best : *best, negated, r.tie_fraction)) {
          cell += " tie";
        }
      }
      out += "<td class=\"num\" data-tie=\"" +
             std::string(rank > 0 && cell.find("tie") != std::string::npos ? "1" : "0") + "\">" +
             Esc(cell) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  // As simulate's `flops:` note (sim/report/flops_note.h): an MFU counting work the kernels
  // skip is not shown without the reason and the range of the factor over the rows above.
  double low = 0.0, high = 0.0;
  for (size_t i : top) {
    const double f = r.points[i].convention_over_executed;
    if (!(f > 1.0)) continue;
    low = low > 0.0 ? std::min(low, f) : f;
    high = std::max(high, f);
  }
  if (high > 1.0) {
    out +=
        "<p class=\"hint\" id=\"flops-note\">MFU counts causal attention as the full s x s "
        "square (the published convention); the kernels ran its unmasked half: on the rows "
        "above, HFU's FLOPs are " +
        Esc(FormatSig(low, 3) + (high > low ? "x to " + FormatSig(high, 3) : "")) +
        "x those executed. <em>executed</em> is the share of the dense peak the kernels ran, "
        "which cannot pass the sustained peak.</p>\n";
  }
  return out;
}

// Distinct strings in order of first appearance, so that a column of n points carries each
// string once and n small indices.
struct Interned {
  std::map<std::string, int> index;
  std::vector<std::string> values;
  int Add(const std::string& v) {
    const auto [it, added] = index.emplace(v, static_cast<int>(values.size()));
    if (added) values.push_back(v);
    return it->second;
  }
};

Json Data(const SweepHtmlInput& r, const std::vector<size_t>& top, const std::vector<size_t>& fg,
          const std::vector<size_t>& fh) {
  const size_t n = r.points.size();
  Json values = Json::array(), inputs = Json::array();
  for (size_t k = 0; k < r.input_keys.size(); ++k) {
    Interned distinct;
    std::vector<int> column(n);
    for (size_t i = 0; i < n; ++i) {
      column[i] = distinct.Add(k < r.points[i].inputs.size() ? r.points[i].inputs[k] : "");
    }
    values.push_back(distinct.values);
    inputs.push_back(column);
  }
  Interned reasons, bottlenecks;
  std::vector<int> reason(n, -1), bottleneck(n, -1), feasible(n), simulated(n);
  std::vector<int64_t> gpus(n);
  std::vector<double> tps(n), tps_gpu(n), mfu(n), step(n);
  Json peak = Json::array(), cap = Json::array(), ttt = Json::array(), cost = Json::array();
  Json executed = Json::array();
  bool any_ttt = false, any_cost = false, any_executed = false;
  for (size_t i = 0; i < n; ++i) {
    const SweepHtmlPoint& p = r.points[i];
    gpus[i] = p.gpus;
    feasible[i] = p.feasible ? 1 : 0;
    simulated[i] = p.simulated ? 1 : 0;
    tps[i] = Round6(p.tokens_per_s);
    tps_gpu[i] = Round6(p.tokens_per_s_per_gpu);
    mfu[i] = Round6(p.mfu);
    step[i] = Round6(p.step_time_s);
    peak.push_back(p.peak_memory_bytes > 0.0 ? Json(Round6(p.peak_memory_bytes)) : Json(nullptr));
    cap.push_back(Round6(p.capacity_bytes));
    ttt.push_back(p.time_to_train_s ? Json(Round6(*p.time_to_train_s)) : Json(nullptr));
    cost.push_back(p.cost ? Json(Round6(*p.cost)) : Json(nullptr));
    executed.push_back(p.executed_fraction > 0.0 ? Json(Round6(p.executed_fraction))
                                                 : Json(nullptr));
    any_executed = any_executed || p.executed_fraction > 0.0;
    any_ttt = any_ttt || p.time_to_train_s.has_value();
    any_cost = any_cost || p.cost.has_value();
    if (!p.feasible) reason[i] = reasons.Add(p.reason);
    if (!p.bottleneck.empty()) bottleneck[i] = bottlenecks.Add(p.bottleneck);
  }
  // x = GPUs only when the sweep has more than one GPU count.
  const bool several_gpus =
      std::any_of(gpus.begin(), gpus.end(), [&](int64_t g) { return g != gpus.front(); });
  Json j = {{"title", r.title},
            {"keys", r.input_keys},
            {"values", values},
            {"inputs", inputs},
            {"gpus", gpus},
            {"tokens_per_s", tps},
            {"tokens_per_s_per_gpu", tps_gpu},
            {"mfu", mfu},
            {"step_time_s", step},
            {"peak_bytes", peak},
            {"capacity_bytes", cap},
            {"feasible", feasible},
            {"simulated", simulated},
            {"reason", reason},
            {"reasons", reasons.values},
            {"bottleneck", bottleneck},
            {"bottlenecks", bottlenecks.values},
            {"front_gpus", fg},
            {"front_headroom", fh},
            {"top", top},
            {"default_x", several_gpus ? "gpus" : "headroom"}};
  if (any_ttt) j["time_to_train_s"] = ttt;
  if (any_cost) j["cost"] = cost;
  if (any_executed) j["executed_fraction_of_peak"] = executed;
  return j;
}

}  // namespace

std::string ReasonGroupOf(const std::string& reason) {
  const size_t colon = reason.find(": ");
  return colon == std::string::npos ? reason : reason.substr(0, colon);
}

std::vector<size_t> ParetoFront(const std::vector<SweepHtmlPoint>& points, ParetoAxes axes) {
  std::vector<size_t> candidates;
  std::vector<double> x(points.size()), y(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const SweepHtmlPoint& p = points[i];
    if (!p.feasible) continue;
    if (axes == ParetoAxes::kThroughputVsHeadroom && !p.HasMemory()) continue;
    candidates.push_back(i);
    // Front() minimizes x: GPUs as they are, headroom negated.
    x[i] = axes == ParetoAxes::kThroughputVsGpus ? static_cast<double>(p.gpus) : -p.HeadroomBytes();
    y[i] = p.tokens_per_s;
  }
  std::vector<size_t> front = Front(candidates, x, y);
  if (axes == ParetoAxes::kThroughputVsHeadroom) std::reverse(front.begin(), front.end());
  return front;
}

std::vector<size_t> RankPoints(const SweepHtmlInput& r) {
  std::vector<size_t> order;
  for (size_t i = 0; i < r.points.size(); ++i) {
    if (r.points[i].feasible) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const std::optional<double> va = RankValue(r.points[a], r.rank_by);
    const std::optional<double> vb = RankValue(r.points[b], r.rank_by);
    if (va.has_value() != vb.has_value()) return va.has_value();
    return va.has_value() && *va < *vb;
  });
  if (order.size() > r.top_k) order.resize(r.top_k);
  return order;
}

std::string SweepHtml(const SweepHtmlInput& r) {
  const std::vector<size_t> top = RankPoints(r);
  const std::vector<size_t> fg = ParetoFront(r.points, ParetoAxes::kThroughputVsGpus);
  const std::vector<size_t> fh = ParetoFront(r.points, ParetoAxes::kThroughputVsHeadroom);
  size_t feasible = 0, simulated = 0;
  // Infeasible points grouped as the text output groups them (by the reason's group, with the
  // first point's reason as the example), largest first; the full reason of each point is on
  // its hover.
  struct Group {
    std::string group, example;
    size_t count = 0, first = 0;
  };
  std::map<std::string, Group> by_group;
  for (size_t i = 0; i < r.points.size(); ++i) {
    const SweepHtmlPoint& p = r.points[i];
    feasible += p.feasible ? 1 : 0;
    simulated += p.simulated ? 1 : 0;
    if (p.feasible) continue;
    Group& g = by_group[ReasonGroupOf(p.reason)];
    if (g.count++ == 0) {
      g.group = ReasonGroupOf(p.reason);
      g.example = p.reason;
      g.first = i;
    }
  }
  std::vector<Group> reasons;
  for (const auto& [key, g] : by_group) reasons.push_back(g);
  std::stable_sort(reasons.begin(), reasons.end(), [](const Group& a, const Group& b) {
    return a.count != b.count ? a.count > b.count : a.first < b.first;
  });

  std::string body = "<header><p class=\"kicker\">shardsim sweep</p><h1>" + Esc(r.title) +
                     "</h1><p class=\"sub\">" + Esc(r.description) + "</p></header>\n<main>\n";
  const auto count = [](std::string_view key, size_t v) {
    return KeyedValue(key, std::to_string(v), GroupedNumber(static_cast<double>(v)));
  };
  body += "<section id=\"verdict\" class=\"verdict " + std::string(feasible > 0 ? "ok" : "bad") +
          "\"><strong>" + count("points.total", r.points.size()) +
          " points</strong>: " + count("points.feasible", feasible) + " feasible, " +
          count("points.infeasible", r.points.size() - feasible) + " infeasible, " +
          count("points.simulated", simulated) + " simulated. ";
  if (!top.empty()) {
    const SweepHtmlPoint& b = r.points[top.front()];
    std::string layout;
    for (size_t k = 0; k < r.input_keys.size() && k < b.inputs.size(); ++k) {
      layout += (layout.empty() ? "" : ", ") + r.input_keys[k] + " " + b.inputs[k];
    }
    body +=
        "Best by " + std::string(RankName(r.rank_by)) + ": " +
        KeyedValue("best.tokens_per_s", JsonNumber(b.tokens_per_s), GroupedNumber(b.tokens_per_s)) +
        " tokens/s on " + std::to_string(b.gpus) + " GPUs (" + Esc(layout) + ").";
  } else {
    body += "No point is feasible.";
  }
  body += "</section>\n";
  body +=
      "<div class=\"two\"><section class=\"panel\" id=\"scatter\"><h2>Throughput of every point"
      "</h2><p class=\"hint\">Blue: feasible; red, joined: the Pareto front; grey: infeasible "
      "(hover for the reason; points never simulated sit on the strip below the axis). Click "
      "a point for its layout.</p><div class=\"toolbar\"><label>x axis <select id=\"x-axis\">"
      "<option value=\"gpus\">GPUs</option><option value=\"headroom\">memory headroom"
      "</option></select></label><span class=\"view-label\" id=\"scatter-note\"></span></div>"
      "<div class=\"chart\" id=\"chart-scatter\"></div><div class=\"legend\" "
      "id=\"legend-scatter\"></div></section>\n";
  body +=
      "<section class=\"panel\" id=\"detail\"><h2>Selected point</h2><div class=\"detail\" "
      "id=\"point-detail\"><p class=\"hint\">Click a point of the chart or a row of the table."
      "</p></div></section></div>\n";
  body += "<section class=\"panel\" id=\"top\"><h2>Top " + std::to_string(top.size()) + " by " +
          RankName(r.rank_by) + "</h2>" + TopTable(r, top, fg, fh) + "</section>\n";
  body += "<section class=\"panel\" id=\"infeasible\"><h2>Infeasible points by reason</h2>";
  if (reasons.empty()) {
    body += "<p class=\"hint\">Every point is feasible.</p>";
  } else {
    body += "<ul class=\"reasons\">";
    for (const Group& g : reasons) {
      body += "<li data-reason-count=\"" + std::to_string(g.count) + "\"><strong>" +
              Esc(GroupedNumber(static_cast<double>(g.count))) + "</strong> " + Esc(g.group);
      if (g.example != g.group) {
        body += " <span class=\"hint\">(e.g. " + Esc(g.example) + ")</span>";
      }
      body += "</li>";
    }
    body += "</ul>";
  }
  body +=
      "</section>\n</main>\n<footer>shardsim sweep report: self-contained, its scripts and "
      "data are inline and nothing is fetched when it opens.</footer>\n";
  HtmlPage page;
  page.title = "shardsim sweep: " + r.title;
  page.kind = "sweep";
  page.body = std::move(body);
  page.data_json = Data(r, top, fg, fh).dump(-1, ' ', false, Json::error_handler_t::replace);
  page.scripts = {"charts.js", "sweep.js"};
  return RenderHtmlPage(page);
}

}  // namespace shardsim
