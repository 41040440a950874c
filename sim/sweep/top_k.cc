#include "sim/sweep/top_k.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <queue>
#include <utility>

#include "sim/base/units.h"
#include "sim/schedule/schedule.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/point_space.h"
#include "sim/sweep/price_cache.h"

namespace shardsim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kTokensPerJob = 8;

// The ranking figure of a feasible row as a score, higher better (NaN: none).
double Score(const Row& r, RankBy by) {
  switch (by) {
    case RankBy::kTokensPerS:
      return r[Metric::kTokensPerS];
    case RankBy::kTimeToTrain:
      return -r[Metric::kTimeToTrain];
    case RankBy::kTimeToTrainIdeal:
      return -r[Metric::kTimeToTrainIdeal];
    case RankBy::kCost:
    case RankBy::kGoodput:
      break;
  }
  return Row::kAbsent;
}

// The best score a point can reach (+inf: unknown). Simulated tokens/s is tokens_per_step / step
// with step > the bound; the ideal time to train tokens / (tokens/s), the booked one that over a
// goodput of at most 1.
double ScoreBound(const PointBound& b, RankBy by) {
  if (!(b.step.seconds > 0.0) || !(b.tokens_per_step > 0.0)) return kInf;
  const double tokens_per_s = b.tokens_per_step / b.step.seconds;
  if (by == RankBy::kTokensPerS) return tokens_per_s;
  if (!(b.tokens > 0.0)) return kInf;
  return -(b.tokens / tokens_per_s);
}

std::string Figure(double score, RankBy by) {
  if (by == RankBy::kTokensPerS) return FormatSig(score, 6) + " tokens/s";
  return FormatSeconds(Seconds(-score));
}

}  // namespace

bool TopKSupports(RankBy by) {
  return by == RankBy::kTokensPerS || by == RankBy::kTimeToTrain || by == RankBy::kTimeToTrainIdeal;
}

std::vector<Row> EvaluateTopK(const PointSpace& space, const std::vector<int64_t>& points,
                              const TopKOptions& o, const LoadOptions& load,
                              const std::function<void(int64_t)>& done, TopKStats* stats) {
  const size_t n = points.size();
  const int jobs = std::max(1, o.jobs);
  std::vector<PointBound> bounds(n);
  std::vector<double> score(n, kInf);
  tbb::task_arena arena(jobs);
  PriceCache prices;  // the points of one layout that differ in schedule share their prices
  OrderCache orders;  // and the points of one pipeline shape its run orders
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n), [&](const tbb::blocked_range<size_t>& r) {
      for (size_t i = r.begin(); i != r.end(); ++i) {
        bounds[i] = BoundPoint(space, points[i], load, &prices, &orders);
        score[i] = ScoreBound(bounds[i], o.by);
      }
    });
  });
  std::vector<Row> rows(n);
  std::vector<bool> have(n, false);
  // Settled points keep the row their bound came with; the others are simulated best bound
  // first, ties in point order.
  std::vector<size_t> order;
  int64_t decided = 0;
  for (size_t i = 0; i < n; ++i) {
    if (bounds[i].settled) {
      rows[i] = std::move(*bounds[i].settled);
      ApplyMemoryLimit(o.memory_limit, &rows[i]);
      have[i] = true;
      if (done) done(++decided);
    } else {
      order.push_back(i);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return score[a] > score[b]; });
  const size_t candidates = order.size();
  // The K best scores of the feasible rows so far (in bound order); the K-th is the threshold.
  std::priority_queue<double, std::vector<double>, std::greater<double>> best;
  std::atomic<double> threshold{-kInf};
  std::atomic<size_t> next{0};
  // The first candidate in bound order that is outranked (serial stage only).
  size_t stop_at = candidates;
  const size_t k = static_cast<size_t>(o.k);
  arena.execute([&] {
    tbb::parallel_pipeline(
        static_cast<size_t>(jobs) * kTokensPerJob,
        tbb::make_filter<void, size_t>(tbb::filter_mode::serial_in_order,
                                       [&](tbb::flow_control& fc) -> size_t {
                                         const size_t j = next.fetch_add(1);
                                         // The serial stage would find it (and every later one)
                                         // outranked: the threshold only rises.
                                         if (j >= candidates ||
                                             score[order[j]] < threshold.load()) {
                                           fc.stop();
                                           return 0;
                                         }
                                         return j;
                                       }) &
            tbb::make_filter<size_t, std::pair<size_t, Row>>(
                tbb::filter_mode::parallel,
                [&](size_t j) {
                  Row row = EvaluatePoint(space, points[order[j]], load, &orders);
                  ApplyMemoryLimit(o.memory_limit, &row);
                  return std::pair<size_t, Row>(j, std::move(row));
                }) &
            tbb::make_filter<std::pair<size_t, Row>, void>(
                tbb::filter_mode::serial_in_order, [&](std::pair<size_t, Row> in) {
                  const size_t j = in.first;
                  if (j >= stop_at) return;
                  if (best.size() == k && score[order[j]] < best.top()) {
                    stop_at = j;
                    return;
                  }
                  const double s = Score(in.second, o.by);
                  if (Feasible(in.second.status) && std::isfinite(s)) {
                    best.push(s);
                    if (best.size() > k) best.pop();
                    if (best.size() == k) threshold.store(best.top());
                  }
                  rows[order[j]] = std::move(in.second);
                  have[order[j]] = true;
                  if (done) done(++decided);
                }));
  });
  TopKStats st;
  const std::string kth = std::to_string(k) + (k % 10 == 1 && k % 100 != 11   ? "st"
                                               : k % 10 == 2 && k % 100 != 12 ? "nd"
                                               : k % 10 == 3 && k % 100 != 13 ? "rd"
                                                                              : "th");
  for (size_t i = 0; i < n; ++i) {
    if (std::isfinite(score[i])) ++st.bounded;
    if (have[i]) {
      ++st.simulated;
      continue;
    }
    ++st.outranked;
    Row& row = rows[i];
    row.point = points[i];
    row.inputs = space.Inputs(points[i]);
    row.status = PointStatus::kOutranked;
    if (space.Gpus(points[i]) > 0) row[Metric::kGpus] = static_cast<double>(space.Gpus(points[i]));
    row.reason = "top-k: at best " + Figure(score[i], o.by) + " (step at least " +
                 FormatSeconds(Seconds(bounds[i].step.seconds)) + ", the compute stream of " +
                 "pipeline rank " + std::to_string(bounds[i].step.stage) + "), worse than the " +
                 kth + " best simulated, " + Figure(best.top(), o.by);
    if (done) done(++decided);
  }
  if (stats != nullptr) *stats = st;
  return rows;
}

}  // namespace shardsim
