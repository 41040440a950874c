#include "sim/hardware/gemm_table.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace shardsim {
namespace {

// Index of the grid cell [axis[i], axis[i+1]] holding x (clamped), and the weight of axis[i+1].
std::pair<size_t, double> Locate(const std::vector<double>& axis, double x) {
  if (axis.size() == 1 || x <= axis.front()) return {0, 0.0};
  if (x >= axis.back()) return {axis.size() - 2, 1.0};
  const size_t hi =
      static_cast<size_t>(std::upper_bound(axis.begin(), axis.end(), x) - axis.begin());
  const size_t lo = hi - 1;
  return {lo, (x - axis[lo]) / (axis[hi] - axis[lo])};
}

}  // namespace

GemmTable::GemmTable(const std::vector<GemmMeasurement>& rows) {
  // Repeated shapes are merged by the geometric mean of their rates.
  std::array<std::map<std::tuple<int64_t, int64_t, int64_t>, std::pair<double, int>>, 5> merged;
  for (const GemmMeasurement& r : rows) {
    if (r.m <= 0 || r.n <= 0 || r.k <= 0 || !(r.flops_per_s > 0.0)) continue;
    auto& slot = merged[Index(r.dtype)][{r.m, r.n, r.k}];
    slot.first += std::log(r.flops_per_s);
    slot.second += 1;
  }
  for (size_t d = 0; d < merged.size(); ++d) {
    PerDType& t = tables_[d];
    std::vector<int64_t> ms, ns, ks;
    for (const auto& [shape, acc] : merged[d]) {
      const auto [m, n, k] = shape;
      t.points.push_back(Point{std::log2(static_cast<double>(m)), std::log2(static_cast<double>(n)),
                               std::log2(static_cast<double>(k)),
                               acc.first / static_cast<double>(acc.second)});
      ms.push_back(m);
      ns.push_back(n);
      ks.push_back(k);
    }
    for (auto* axis : {&ms, &ns, &ks}) {
      std::sort(axis->begin(), axis->end());
      axis->erase(std::unique(axis->begin(), axis->end()), axis->end());
    }
    if (t.points.empty() || ms.size() * ns.size() * ks.size() != t.points.size()) continue;
    // Full grid: the map iterates (m, n, k) in lexicographic order, i.e. [i_m][i_n][i_k].
    t.grid = true;
    for (int64_t v : ms) t.ms.push_back(std::log2(static_cast<double>(v)));
    for (int64_t v : ns) t.ns.push_back(std::log2(static_cast<double>(v)));
    for (int64_t v : ks) t.ks.push_back(std::log2(static_cast<double>(v)));
    for (const Point& p : t.points) t.values.push_back(p.log_rate);
  }
}

double GemmTable::Grid(const PerDType& t, double lm, double ln, double lk) const {
  const auto [im, wm] = Locate(t.ms, lm);
  const auto [in, wn] = Locate(t.ns, ln);
  const auto [ik, wk] = Locate(t.ks, lk);
  const size_t nn = t.ns.size(), nk = t.ks.size();
  auto at = [&](size_t a, size_t b, size_t c) {
    a = std::min(a, t.ms.size() - 1);
    b = std::min(b, nn - 1);
    c = std::min(c, nk - 1);
    return t.values[(a * nn + b) * nk + c];
  };
  double v = 0.0;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 2; ++b) {
      for (int c = 0; c < 2; ++c) {
        const double w = (a ? wm : 1.0 - wm) * (b ? wn : 1.0 - wn) * (c ? wk : 1.0 - wk);
        if (w == 0.0) continue;
        v += w * at(im + static_cast<size_t>(a), in + static_cast<size_t>(b),
                    ik + static_cast<size_t>(c));
      }
    }
  }
  return v;
}

double GemmTable::Scattered(const PerDType& t, double lm, double ln, double lk) const {
  double wsum = 0.0, vsum = 0.0;
  for (const Point& p : t.points) {
    const double d2 =
        (p.lm - lm) * (p.lm - lm) + (p.ln - ln) * (p.ln - ln) + (p.lk - lk) * (p.lk - lk);
    if (d2 < 1e-18) return p.log_rate;
    const double w = 1.0 / d2;  // inverse squared distance
    wsum += w;
    vsum += w * p.log_rate;
  }
  return vsum / wsum;
}

std::optional<double> GemmTable::FlopsPerSecond(DType dtype, int64_t m, int64_t n, int64_t k,
                                                int64_t batch) const {
  const PerDType& t = tables_[Index(dtype)];
  if (t.empty()) return std::nullopt;
  const double lm = std::log2(static_cast<double>(std::max<int64_t>(1, m * batch)));
  const double ln = std::log2(static_cast<double>(std::max<int64_t>(1, n)));
  const double lk = std::log2(static_cast<double>(std::max<int64_t>(1, k)));
  return std::exp(t.grid ? Grid(t, lm, ln, lk) : Scattered(t, lm, ln, lk));
}

}  // namespace shardsim
