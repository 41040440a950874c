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

double Log2(int64_t v) { return std::log2(static_cast<double>(std::max<int64_t>(1, v))); }

}  // namespace

GemmTable::GemmTable(const std::vector<GemmMeasurement>& rows, bool grouped) : grouped_(grouped) {
  // Pass-less plain rows: a full grid per dtype takes the trilinear path. Repeated shapes are
  // merged by the geometric mean of their rates.
  std::array<std::map<std::tuple<int64_t, int64_t, int64_t>, std::pair<double, int>>, kNumDTypes>
      merged;
  for (const GemmMeasurement& r : rows) {
    if (grouped_ || r.pass != KernelPass::kAny) continue;
    if (r.m <= 0 || r.n <= 0 || r.k <= 0 || !(r.flops_per_s > 0.0)) continue;
    auto& slot = merged[Index(r.dtype)][{r.m, r.n, r.k}];
    slot.first += std::log(r.flops_per_s);
    slot.second += 1;
  }
  for (size_t d = 0; d < merged.size(); ++d) {
    std::vector<int64_t> ms, ns, ks;
    for (const auto& [shape, acc] : merged[d]) {
      ms.push_back(std::get<0>(shape));
      ns.push_back(std::get<1>(shape));
      ks.push_back(std::get<2>(shape));
    }
    for (auto* axis : {&ms, &ns, &ks}) {
      std::sort(axis->begin(), axis->end());
      axis->erase(std::unique(axis->begin(), axis->end()), axis->end());
    }
    if (merged[d].empty() || ms.size() * ns.size() * ks.size() != merged[d].size()) continue;
    // Full grid: the map iterates (m, n, k) in lexicographic order, i.e. [i_m][i_n][i_k].
    Grid& g = grids_[d];
    g.grid = true;
    for (int64_t v : ms) g.ms.push_back(Log2(v));
    for (int64_t v : ns) g.ns.push_back(Log2(v));
    for (int64_t v : ks) g.ks.push_back(Log2(v));
    for (const auto& [shape, acc] : merged[d]) {
      g.values.push_back(acc.first / static_cast<double>(acc.second));
    }
  }
  std::vector<ScatteredTable::Row> scattered;
  for (const GemmMeasurement& r : rows) {
    if (r.m <= 0 || r.n <= 0 || r.k <= 0 || !(r.flops_per_s > 0.0)) continue;
    if (!grouped_ && r.pass == KernelPass::kAny && grids_[Index(r.dtype)].grid) continue;
    scattered.push_back(
        ScatteredTable::Row{Key(r.pass, r.dtype),
                            {r.m, r.n, r.k, grouped_ ? std::max<int64_t>(1, r.groups) : 1},
                            r.flops_per_s});
  }
  scattered_ = ScatteredTable(scattered);
}

bool GemmTable::Has(DType dtype) const {
  if (grids_[Index(dtype)].grid) return true;
  for (KernelPass p : {KernelPass::kAny, KernelPass::kForward, KernelPass::kBackwardInput,
                       KernelPass::kBackwardWeight}) {
    if (scattered_.Has(Key(p, dtype))) return true;
  }
  return false;
}

double GemmTable::GridValue(const Grid& t, double lm, double ln, double lk) const {
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

std::optional<GemmLookup> GemmTable::Find(DType dtype, int64_t m, int64_t n, int64_t k,
                                          int64_t batch, KernelPass pass) const {
  const int64_t b = std::max<int64_t>(1, batch);
  const int64_t rows = grouped_ ? m : m * b;
  for (KernelPass p : {pass, KernelPass::kAny}) {
    if (p == KernelPass::kAny && !grouped_ && grids_[Index(dtype)].grid) {
      GemmLookup out;
      out.grid = true;
      out.flops_per_s = std::exp(GridValue(grids_[Index(dtype)], Log2(rows), Log2(n), Log2(k)));
      return out;
    }
    const std::optional<ScatteredTable::Lookup> at =
        scattered_.Find(Key(p, dtype), {std::max<int64_t>(1, rows), std::max<int64_t>(1, n),
                                        std::max<int64_t>(1, k), grouped_ ? b : 1});
    if (at) {
      GemmLookup out;
      out.pass = p;
      out.at = *at;
      out.flops_per_s = at->rate;
      return out;
    }
    if (p == KernelPass::kAny) break;
  }
  return std::nullopt;
}

std::optional<double> GemmTable::FlopsPerSecond(DType dtype, int64_t m, int64_t n, int64_t k,
                                                int64_t batch) const {
  const std::optional<GemmLookup> l = Find(dtype, m, n, k, batch, KernelPass::kAny);
  if (!l) return std::nullopt;
  return l->flops_per_s;
}

}  // namespace shardsim
