#include "sim/hardware/scattered_table.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace shardsim {
namespace {

std::array<double, ScatteredTable::kDims> Log2(const ScatteredTable::Shape& s) {
  std::array<double, ScatteredTable::kDims> x{};
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::log2(static_cast<double>(std::max<int64_t>(1, s[i])));
  return x;
}

}  // namespace

ScatteredTable::ScatteredTable(const std::vector<Row>& rows) {
  std::map<std::pair<int, Shape>, std::pair<double, int>> merged;  // ordered: deterministic
  for (const Row& r : rows) {
    if (!(r.rate > 0.0)) continue;
    auto& slot = merged[{r.key, r.shape}];
    slot.first += std::log(r.rate);
    slot.second += 1;
  }
  for (const auto& [id, acc] : merged) {
    const auto& [key, shape] = id;
    PerKey& t = tables_[key];
    if (t.points.empty()) {
      t.lo = shape;
      t.hi = shape;
    }
    for (size_t i = 0; i < shape.size(); ++i) {
      t.lo[i] = std::min(t.lo[i], shape[i]);
      t.hi[i] = std::max(t.hi[i], shape[i]);
    }
    t.points.push_back(Point{Log2(shape), shape, acc.first / static_cast<double>(acc.second)});
  }
}

size_t ScatteredTable::size(int key) const {
  auto it = tables_.find(key);
  return it == tables_.end() ? 0 : it->second.points.size();
}

std::optional<ScatteredTable::Lookup> ScatteredTable::Find(int key, const Shape& query) const {
  auto it = tables_.find(key);
  if (it == tables_.end() || it->second.points.empty()) return std::nullopt;
  const PerKey& t = it->second;
  Lookup out;
  for (size_t i = 0; i < query.size(); ++i) {
    out.clamped[i] = std::clamp(query[i], t.lo[i], t.hi[i]);
    out.outside = out.outside || out.clamped[i] != query[i];
  }
  const std::array<double, kDims> x = Log2(out.clamped);
  // (squared distance, index), the kNearest smallest; ties by row order (deterministic).
  std::vector<std::pair<double, size_t>> d;
  d.reserve(t.points.size());
  for (size_t i = 0; i < t.points.size(); ++i) {
    double d2 = 0.0;
    for (size_t j = 0; j < x.size(); ++j)
      d2 += (t.points[i].x[j] - x[j]) * (t.points[i].x[j] - x[j]);
    d.emplace_back(d2, i);
  }
  const size_t n = std::min(kNearest, d.size());
  std::partial_sort(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(n), d.end());
  out.nearest = t.points[d[0].second].shape;
  if (d[0].first < 1e-18) {
    out.exact = true;
    out.rows = 1;
    out.rate = std::exp(t.points[d[0].second].log_rate);
    return out;
  }
  double wsum = 0.0, vsum = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double w = 1.0 / d[i].first;
    wsum += w;
    vsum += w * t.points[d[i].second].log_rate;
  }
  out.rows = static_cast<int>(n);
  out.rate = std::exp(vsum / wsum);
  return out;
}

}  // namespace shardsim
