#include "sim/engine/max_min.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace shardsim {

void MaxMinSolver::Freeze(int32_t flow, double rate, std::span<const int32_t> flow_begin,
                          std::span<const int32_t> flow_links, std::span<const double> weight,
                          std::span<double> rates) {
  rates[static_cast<size_t>(flow)] = rate;
  frozen_[static_cast<size_t>(flow)] = 1;
  --remaining_;
  for (int32_t k = flow_begin[static_cast<size_t>(flow)];
       k < flow_begin[static_cast<size_t>(flow) + 1]; ++k) {
    const auto l = static_cast<size_t>(flow_links[static_cast<size_t>(k)]);
    const double w = weight.empty() ? 1.0 : weight[static_cast<size_t>(k)];
    // Rounding may leave a saturated link a hair below zero; nothing can use a negative rest.
    cap_left_[l] = std::max(0.0, cap_left_[l] - w * rate);
    load_[l] = --unfrozen_[l] == 0 ? 0.0 : std::max(0.0, load_[l] - w);
  }
}

void MaxMinSolver::Solve(std::span<const double> capacity, std::span<const int32_t> flow_begin,
                         std::span<const int32_t> flow_links, std::span<const double> cap,
                         std::span<double> rates, std::span<const double> weight,
                         std::span<int32_t> bound) {
  const size_t num_links = capacity.size();
  const size_t num_flows = cap.size();
  constexpr double kInf = std::numeric_limits<double>::infinity();

  cap_left_.assign(capacity.begin(), capacity.end());
  unfrozen_.assign(num_links, 0);
  load_.assign(num_links, 0.0);
  for (size_t k = 0; k < flow_links.size(); ++k) {
    const auto l = static_cast<size_t>(flow_links[k]);
    ++unfrozen_[l];
    load_[l] += weight.empty() ? 1.0 : weight[k];
  }
  for (int32_t& b : bound) b = -1;
  link_begin_.assign(num_links + 1, 0);
  for (size_t l = 0; l < num_links; ++l) {
    link_begin_[l + 1] = link_begin_[l] + unfrozen_[l];
  }
  link_flows_.resize(flow_links.size());
  live_links_.clear();
  for (size_t l = 0; l < num_links; ++l) {
    if (unfrozen_[l] > 0) {
      live_links_.push_back(static_cast<int32_t>(l));
    }
  }
  {
    // Fill link -> flows, reusing bottlenecks_ as the per-link write cursor.
    bottlenecks_.assign(link_begin_.begin(), link_begin_.end() - 1);
    for (size_t i = 0; i < num_flows; ++i) {
      for (int32_t k = flow_begin[i]; k < flow_begin[i + 1]; ++k) {
        const auto l = static_cast<size_t>(flow_links[static_cast<size_t>(k)]);
        link_flows_[static_cast<size_t>(bottlenecks_[l]++)] = static_cast<int32_t>(i);
      }
    }
  }

  frozen_.assign(num_flows, 0);
  remaining_ = static_cast<int32_t>(num_flows);
  capped_.clear();
  for (size_t i = 0; i < num_flows; ++i) {
    const bool has_links = flow_begin[i + 1] > flow_begin[i];
    if (cap[i] > 0.0) {
      capped_.push_back(static_cast<int32_t>(i));
    } else if (!has_links) {
      Freeze(static_cast<int32_t>(i), kInf, flow_begin, flow_links, weight, rates);
    }
  }
  std::sort(capped_.begin(), capped_.end(), [&](int32_t a, int32_t b) {
    const double ca = cap[static_cast<size_t>(a)];
    const double cb = cap[static_cast<size_t>(b)];
    return ca < cb || (ca == cb && a < b);
  });
  size_t next_capped = 0;

  while (remaining_ > 0) {
    // The water level of this round: the smallest fair share of a link or the smallest cap.
    double share = kInf;
    size_t kept = 0;
    for (int32_t l : live_links_) {
      const auto li = static_cast<size_t>(l);
      if (unfrozen_[li] == 0) {
        continue;
      }
      live_links_[kept++] = l;
      share = std::min(share, cap_left_[li] / load_[li]);
    }
    live_links_.resize(kept);
    while (next_capped < capped_.size() &&
           frozen_[static_cast<size_t>(capped_[next_capped])] != 0) {
      ++next_capped;
    }
    if (next_capped < capped_.size()) {
      share = std::min(share, cap[static_cast<size_t>(capped_[next_capped])]);
    }

    // Freeze every flow of every link saturating at this level, then every flow capped at it.
    bottlenecks_.clear();
    for (int32_t l : live_links_) {
      const auto li = static_cast<size_t>(l);
      if (cap_left_[li] / load_[li] <= share) {
        bottlenecks_.push_back(l);
      }
    }
    for (int32_t l : bottlenecks_) {
      const auto li = static_cast<size_t>(l);
      for (int32_t k = link_begin_[li]; k < link_begin_[li + 1]; ++k) {
        const int32_t flow = link_flows_[static_cast<size_t>(k)];
        if (frozen_[static_cast<size_t>(flow)] == 0) {
          if (!bound.empty()) bound[static_cast<size_t>(flow)] = l;
          Freeze(flow, share, flow_begin, flow_links, weight, rates);
        }
      }
    }
    for (; next_capped < capped_.size(); ++next_capped) {
      const int32_t flow = capped_[next_capped];
      if (frozen_[static_cast<size_t>(flow)] != 0) {
        continue;
      }
      if (cap[static_cast<size_t>(flow)] > share) {
        break;
      }
      Freeze(flow, share, flow_begin, flow_links, weight, rates);
    }
  }
}

}  // namespace shardsim
