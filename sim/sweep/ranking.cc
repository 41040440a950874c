#include "sim/sweep/ranking.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/base/units.h"
#include "sim/report/summary.h"
#include "sim/report/text_table.h"
#include "sim/report/ties.h"

namespace shardsim {
namespace {

std::string ShortName(const std::string& column) {
  const size_t dot = column.rfind('.');
  return dot == std::string::npos ? column : column.substr(dot + 1);
}

std::string Dollars(double v) {
  if (!std::isfinite(v)) return "-";
  return "$" + FormatSig(v, 4);
}

std::string TimeOrDash(const Row& r, Metric m) {
  return r.has(m) ? FormatSeconds(Seconds(r[m])) : "-";
}

// A CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string CsvField(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The figure a row is ranked by under `o` (higher is better for tokens/s, lower otherwise).
double RankFigure(const Row& r, const RankOptions& o, bool all_train) {
  switch (o.by) {
    case RankBy::kTokensPerS:
      return r[Metric::kTokensPerS];
    case RankBy::kTimeToTrain:
      return r[Metric::kTimeToTrain];
    case RankBy::kTimeToTrainIdeal:
      return r[Metric::kTimeToTrainIdeal];
    case RankBy::kGoodput:
      return r[Metric::kGoodput];
    case RankBy::kCost:
      return all_train ? CostToTrain(r, PriceOf(o, r)) : CostPerMillionTokens(r, PriceOf(o, r));
  }
  return Row::kAbsent;
}

bool AllTrain(const std::vector<Row>& rows) {
  return std::all_of(rows.begin(), rows.end(),
                     [](const Row& r) { return r.has(Metric::kTimeToTrain); });
}

}  // namespace

const char* RankByName(RankBy by) {
  switch (by) {
    case RankBy::kTokensPerS:
      return "tokens_per_s";
    case RankBy::kTimeToTrain:
      return "time_to_train";
    case RankBy::kCost:
      return "cost";
    case RankBy::kTimeToTrainIdeal:
      return "time_to_train_ideal";
    case RankBy::kGoodput:
      return "goodput";
  }
  return "";
}
bool RankNeedsTokens(RankBy by) {
  return by == RankBy::kTimeToTrain || by == RankBy::kTimeToTrainIdeal || by == RankBy::kGoodput;
}

double PriceOf(const RankOptions& o, const Row& r) {
  if (o.price_per_gpu_hour > 0.0) return o.price_per_gpu_hour;
  const auto it = o.point_price.find(r.point);
  return it != o.point_price.end() ? it->second : 0.0;
}

bool HasPrices(const RankOptions& o) {
  return o.price_per_gpu_hour > 0.0 || !o.point_price.empty();
}

void ApplyMemoryLimit(const MemoryLimit& limit, Row* r) {
  if (r->status != PointStatus::kOk || !r->has(Metric::kPeakMemory) ||
      !r->has(Metric::kMemoryCapacity)) {
    return;
  }
  const double peak = (*r)[Metric::kPeakMemory];
  const double capacity = (*r)[Metric::kMemoryCapacity];
  const double headroom = capacity - peak;
  if (limit.min_headroom_bytes > 0.0 && headroom < limit.min_headroom_bytes) {
    r->status = PointStatus::kNoFit;
    r->reason = "headroom: " + FormatBytes(Bytes(headroom)) + " left of " +
                FormatBytes(Bytes(capacity)) + " (peak " + FormatBytes(Bytes(peak)) +
                "), below --min-headroom " + FormatBytes(Bytes(limit.min_headroom_bytes));
  } else if (limit.max_fraction > 0.0 && peak > limit.max_fraction * capacity) {
    r->status = PointStatus::kNoFit;
    r->reason = "memory fraction: peak " + FormatBytes(Bytes(peak)) + " is " +
                Percent(peak / capacity) + " of " + FormatBytes(Bytes(capacity)) +
                ", above --max-memory-fraction " + FormatSig(limit.max_fraction, 4);
  }
}

double VsBest(const Row& r, const Row& best, const RankOptions& o) {
  const bool train = r.has(Metric::kTimeToTrain) && best.has(Metric::kTimeToTrain);
  const double v = RankFigure(r, o, train), b = RankFigure(best, o, train);
  if (!(b > 0.0) || !std::isfinite(v)) return Row::kAbsent;
  return v / b - 1.0;
}

bool IsTie(const Row& r, const Row& best, const RankOptions& o) {
  const bool train = r.has(Metric::kTimeToTrain) && best.has(Metric::kTimeToTrain);
  return TiesOnTime(RankFigure(r, o, train), RankFigure(best, o, train),
                    o.by == RankBy::kTokensPerS || o.by == RankBy::kGoodput, o.tie_fraction);
}

std::string ReasonGroup(const std::string& reason) {
  const size_t colon = reason.find(": ");
  return colon == std::string::npos ? reason : reason.substr(0, colon);
}

void SweepSummary::Add(const Row& row) {
  ++total_;
  ++by_status_[row.status];
  if (keep_ == Keep::kAllRows) rows_.push_back(row);
  if (Feasible(row.status)) {
    feasible_.push_back(row);
    return;
  }
  const std::string group = ReasonGroup(row.reason);
  InfeasibleGroup& g = groups_[{row.status, group}];
  if (g.count == 0) {
    g.status = row.status;
    g.group = group;
    g.example_point = row.point;
    g.example_reason = row.reason;
  }
  ++g.count;
}

int64_t SweepSummary::count(PointStatus s) const {
  const auto it = by_status_.find(s);
  return it == by_status_.end() ? 0 : it->second;
}

std::vector<InfeasibleGroup> SweepSummary::groups() const {
  std::vector<InfeasibleGroup> out;
  for (const auto& [key, g] : groups_) out.push_back(g);
  std::stable_sort(out.begin(), out.end(), [](const InfeasibleGroup& a, const InfeasibleGroup& b) {
    return a.count != b.count ? a.count > b.count : a.example_point < b.example_point;
  });
  return out;
}

Result<RankOptions> ParseRankOptions(const std::string& rank_by, int64_t top_k,
                                     std::optional<double> price) {
  RankOptions r;
  r.top_k = top_k;
  if (price) {
    if (!(std::isfinite(*price) && *price > 0.0)) {
      return Status::Invalid("--price-per-gpu-hour: must be a positive number of dollars, got " +
                             FormatSig(*price, 6));
    }
    r.price_per_gpu_hour = *price;
  }
  if (rank_by == "tokens_per_s") {
    r.by = RankBy::kTokensPerS;
  } else if (rank_by == "time_to_train") {
    r.by = RankBy::kTimeToTrain;
  } else if (rank_by == "cost") {
    r.by = RankBy::kCost;
  } else if (rank_by == "time_to_train_ideal") {
    r.by = RankBy::kTimeToTrainIdeal;
  } else if (rank_by == "goodput") {
    r.by = RankBy::kGoodput;
  } else {
    return Status::Invalid(
        "--rank-by: expected tokens_per_s, time_to_train, cost, time_to_train_ideal or goodput, "
        "got \"" +
        rank_by + "\"");
  }
  if (top_k < 0) return Status::Invalid("--top: must not be negative");
  // --rank-by cost without the flag takes each point's hardware.price_per_gpu_hour; Rank
  // refuses points without one.
  return r;
}

std::vector<size_t> ParetoFront(const std::vector<Row>& rows) {
  // Best throughput first: a row can only be dominated by rows before it in this order (or
  // equal-throughput rows, compared both ways), and dominance is transitive, so comparing with
  // the front found so far suffices.
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) order[i] = i;
  auto tps = [&](size_t i) { return rows[i][Metric::kTokensPerS]; };
  auto gpus = [&](size_t i) { return rows[i][Metric::kGpus]; };
  auto room = [&](size_t i) { return rows[i][Metric::kMemoryHeadroom]; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (tps(a) != tps(b)) return tps(a) > tps(b);
    if (gpus(a) != gpus(b)) return gpus(a) < gpus(b);
    return room(a) > room(b);
  });
  auto dominates = [&](size_t a, size_t b) {
    const bool no_worse = tps(a) >= tps(b) && gpus(a) <= gpus(b) && room(a) >= room(b);
    const bool better = tps(a) > tps(b) || gpus(a) < gpus(b) || room(a) > room(b);
    return no_worse && better;
  };
  std::vector<size_t> front;
  for (size_t i : order) {
    const bool dominated =
        std::any_of(front.begin(), front.end(), [&](size_t f) { return dominates(f, i); });
    if (!dominated) front.push_back(i);
  }
  std::sort(front.begin(), front.end());
  return front;
}

double CostToTrain(const Row& r, double price) {
  return r.has(Metric::kGpuHours) ? r[Metric::kGpuHours] * price : Row::kAbsent;
}

double CostPerMillionTokens(const Row& r, double price) {
  const double tps = r[Metric::kTokensPerS];
  if (!(tps > 0.0)) return Row::kAbsent;
  return r[Metric::kGpus] * price / 3600.0 / tps * kMega;
}

Result<std::vector<size_t>> Rank(const std::vector<Row>& rows, const RankOptions& o) {
  std::vector<double> key(rows.size());
  bool all_train = true;
  for (const Row& r : rows) all_train = all_train && r.has(Metric::kTimeToTrain);
  if (RankNeedsTokens(o.by) && !all_train) {
    return Status::Invalid(std::string("--rank-by ") + RankByName(o.by) +
                           " needs training.tokens in the scenario (the tokens to train on)");
  }
  if (o.by == RankBy::kCost) {
    for (const Row& r : rows) {
      if (!(PriceOf(o, r) > 0.0)) {
        return Status::Invalid(
            "--rank-by cost needs --price-per-gpu-hour or hardware.price_per_gpu_hour (point " +
            std::to_string(r.point) + "'s hardware gives no price)");
      }
    }
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const double f = RankFigure(rows[i], o, all_train);
    key[i] = (o.by == RankBy::kTokensPerS || o.by == RankBy::kGoodput) ? -f : f;
  }
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return key[a] != key[b] ? key[a] < key[b] : rows[a].point < rows[b].point;
  });
  return order;
}

Result<std::string> SweepReport(const SweepSummary& summary,
                                const std::vector<std::string>& columns, const RankOptions& o) {
  const std::vector<Row>& rows = summary.feasible_rows();
  std::string out;
  if (!rows.empty()) {
    Result<std::vector<size_t>> order = Rank(rows, o);
    if (!order.ok()) return order.status();
    const std::vector<size_t> front = ParetoFront(rows);
    std::vector<bool> on_front(rows.size(), false);
    for (size_t i : front) on_front[i] = true;
    const bool train = std::all_of(rows.begin(), rows.end(),
                                   [](const Row& r) { return r.has(Metric::kTimeToTrain); });
    const bool cost = HasPrices(o);
    const Row& best = rows[order->front()];
    auto table = [&](const std::vector<size_t>& which, bool ranked) {
      std::vector<std::string> head = {ranked ? "#" : "", "point"};
      for (const std::string& c : columns) head.push_back(ShortName(c));
      // "executed": the fraction of peak the kernels ran (the CSV's executed_fraction_of_peak),
      // beside MFU's convention (sim/report/flops_note.h).
      for (const char* h :
           {"tokens/s", "tok/s/GPU", "MFU", "executed", "step", "peak mem", "headroom"}) {
        head.push_back(h);
      }
      if (train) {
        for (const char* h : {"time to train", "ideal", "goodput"}) head.push_back(h);
      }
      if (cost) head.push_back(train ? "cost to train" : "$/M tokens");
      TextTable t(head);
      std::vector<size_t> left;
      for (size_t c = 0; c < columns.size(); ++c) left.push_back(2 + c);
      t.SetLeftAligned(left);
      for (size_t n = 0; n < which.size(); ++n) {
        const Row& r = rows[which[n]];
        std::vector<std::string> cells = {ranked ? std::to_string(n + 1) +
                                                       (on_front[which[n]] ? "*" : "") +
                                                       (n > 0 && IsTie(r, best, o) ? "~" : "")
                                                 : "",
                                          std::to_string(r.point)};
        for (const std::string& v : r.inputs) cells.push_back(v);
        cells.push_back(FormatSig(r[Metric::kTokensPerS], 4));
        cells.push_back(FormatSig(r[Metric::kTokensPerSPerGpu], 4));
        cells.push_back(Percent(r[Metric::kMfu]));
        cells.push_back(r.has(Metric::kExecutedFractionOfPeak)
                            ? Percent(r[Metric::kExecutedFractionOfPeak])
                            : "-");
        cells.push_back(TimeOrDash(r, Metric::kStepTime));
        cells.push_back(FormatBytes(Bytes(r[Metric::kPeakMemory])));
        cells.push_back(FormatBytes(Bytes(r[Metric::kMemoryHeadroom])));
        if (train) {
          cells.push_back(TimeOrDash(r, Metric::kTimeToTrain));
          cells.push_back(TimeOrDash(r, Metric::kTimeToTrainIdeal));
          cells.push_back(r.has(Metric::kGoodput) ? Percent(r[Metric::kGoodput]) : "-");
        }
        if (cost) {
          cells.push_back(Dollars(train ? CostToTrain(r, PriceOf(o, r))
                                        : CostPerMillionTokens(r, PriceOf(o, r))));
        }
        t.AddRow(cells);
      }
      return t.ToString();
    };
    const char* by = o.by == RankBy::kTokensPerS         ? "tokens/s"
                     : o.by == RankBy::kTimeToTrain      ? "time to train (booked)"
                     : o.by == RankBy::kTimeToTrainIdeal ? "ideal time to train"
                     : o.by == RankBy::kGoodput          ? "goodput"
                                                : (train ? "cost to train" : "cost per token");
    std::vector<size_t> top(
        order->begin(),
        order->begin() + std::min<int64_t>(o.top_k, static_cast<int64_t>(order->size())));
    int64_t ties = 0;
    for (size_t i = 1; i < order->size(); ++i) ties += IsTie(rows[(*order)[i]], best, o) ? 1 : 0;
    out += "Top " + std::to_string(top.size()) + " of " + std::to_string(rows.size()) +
           " feasible points by " + by + " (* = on the Pareto front";
    if (o.tie_fraction > 0.0) {
      out += "; ~ = a tie: within ±" + FormatSig(100.0 * o.tie_fraction, 2) +
             "% of the best, shardsim's stated uncertainty; " + std::to_string(ties) +
             (ties == 1 ? " point ties" : " points tie") + " with the best";
    }
    out += ")\n";
    out += table(top, true);
    // An MFU above 100% is not printed without the reason (simulate's `flops:` note, here for the
    // row of the table with the highest MFU; every row's figures are in the result file).
    const Row* over = nullptr;
    for (size_t i : top) {
      const Row& r = rows[i];
      if (r[Metric::kMfu] > 1.0 && (over == nullptr || r[Metric::kMfu] > (*over)[Metric::kMfu])) {
        over = &r;
      }
    }
    if (over != nullptr && !FlopsNoteOf(*over).empty()) {
      out += "  flops: MFU above 100% (point " + std::to_string(over->point) +
             "): " + FlopsNoteOf(*over) + "\n";
    }
    // The front, fewest GPUs first, then best throughput.
    std::vector<size_t> f = front;
    std::stable_sort(f.begin(), f.end(), [&](size_t a, size_t b) {
      if (rows[a][Metric::kGpus] != rows[b][Metric::kGpus]) {
        return rows[a][Metric::kGpus] < rows[b][Metric::kGpus];
      }
      return rows[a][Metric::kTokensPerS] > rows[b][Metric::kTokensPerS];
    });
    const size_t shown =
        std::min<size_t>(f.size(), static_cast<size_t>(std::max<int64_t>(o.top_k, 1)));
    out += "\nPareto front: " + std::to_string(f.size()) +
           " points (throughput vs GPUs vs memory headroom)" +
           (shown < f.size() ? ", first " + std::to_string(shown) + " by GPUs" : std::string()) +
           "\n";
    f.resize(shown);
    out += table(f, false);
  }
  out += InfeasibleReport(summary);
  return out;
}

std::string InfeasibleReport(const SweepSummary& s) {
  const int64_t outranked = s.count(PointStatus::kOutranked);
  const int64_t infeasible = s.total() - s.feasible() - outranked;
  std::string out;
  if (infeasible > 0) {
    out = "\nInfeasible: " + std::to_string(infeasible) + " of " + std::to_string(s.total()) +
          " points (pruned " + std::to_string(s.count(PointStatus::kPruned)) +
          ", simulated and not fitting " + std::to_string(s.count(PointStatus::kNoFit)) +
          ", invalid " + std::to_string(s.count(PointStatus::kInvalid)) + ", failed " +
          std::to_string(s.count(PointStatus::kError)) +
          (s.count(PointStatus::kCannotFinish) > 0
               ? ", cannot finish (goodput) " + std::to_string(s.count(PointStatus::kCannotFinish))
               : std::string()) +
          ")\n";
    TextTable t({"status", "reason", "points", "example"});
    t.SetLeftAligned({1, 3});
    for (const InfeasibleGroup& g : s.groups()) {
      if (g.status == PointStatus::kOutranked) continue;
      t.AddRow({Name(g.status), g.group, std::to_string(g.count),
                "point " + std::to_string(g.example_point) + ": " + g.example_reason});
    }
    out += t.ToString();
  }
  if (outranked > 0) {
    for (const InfeasibleGroup& g : s.groups()) {
      if (g.status != PointStatus::kOutranked) continue;
      out += "\nNot simulated (--prune-to-top): " + std::to_string(outranked) + " of " +
             std::to_string(s.total()) + " points cannot enter the top K; e.g. point " +
             std::to_string(g.example_point) + ": " + g.example_reason + "\n";
    }
  }
  return out;
}

}  // namespace shardsim

namespace shardsim {

Result<std::string> RankedCsv(const SweepSummary& summary, const std::vector<std::string>& columns,
                              const RankOptions& o) {
  const std::vector<Row>& rows = summary.feasible_rows();
  std::string out = "rank,point";
  for (const std::string& c : columns) out += "," + CsvField(c);
  const bool cost = HasPrices(o);
  const bool train = AllTrain(rows);
  out +=
      ",tokens_per_s,tokens_per_s_per_gpu,mfu,step_time_s,peak_memory_bytes,"
      "memory_headroom_bytes";
  if (cost) out += train ? ",cost_to_train_usd" : ",usd_per_million_tokens";
  out += ",vs_best,tie,pareto\n";
  if (rows.empty()) return out;
  Result<std::vector<size_t>> order = Rank(rows, o);
  if (!order.ok()) return order.status();
  std::vector<bool> on_front(rows.size(), false);
  for (size_t i : ParetoFront(rows)) on_front[i] = true;
  const Row& best = rows[order->front()];
  const auto num = [](const Row& r, Metric m) {
    return r.has(m) ? FormatNumber(r[m]) : std::string();
  };
  for (size_t n = 0; n < order->size(); ++n) {
    const Row& r = rows[(*order)[n]];
    out += std::to_string(n + 1) + "," + std::to_string(r.point);
    for (const std::string& v : r.inputs) out += "," + CsvField(v);
    for (Metric m : {Metric::kTokensPerS, Metric::kTokensPerSPerGpu, Metric::kMfu,
                     Metric::kStepTime, Metric::kPeakMemory, Metric::kMemoryHeadroom}) {
      out += "," + num(r, m);
    }
    if (cost) {
      const double c =
          train ? CostToTrain(r, PriceOf(o, r)) : CostPerMillionTokens(r, PriceOf(o, r));
      out += "," + (std::isfinite(c) ? FormatNumber(c) : std::string());
    }
    const double vs = VsBest(r, best, o);
    out += "," + (std::isfinite(vs) ? FormatNumber(vs) : std::string());
    out += std::string(",") + (n > 0 && IsTie(r, best, o) ? "true" : "false");
    out += std::string(",") + (on_front[(*order)[n]] ? "true" : "false") + "\n";
  }
  return out;
}

}  // namespace shardsim
