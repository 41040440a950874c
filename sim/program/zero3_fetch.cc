#include "sim/program/zero3_fetch.h"

#include <algorithm>
#include <map>

namespace shardsim {

std::vector<std::vector<size_t>> PlanFetches(const std::vector<FetchUse>& trace,
                                             const FetchLimits& limits) {
  const size_t n = trace.size();
  std::vector<std::vector<size_t>> issued(n);
  std::map<int64_t, bool> available;
  // __most_recent_step_id_param_fetched_for: the last use of a submodule a fetch or a prefetch
  // has taken off the trace.
  std::map<int64_t, int64_t> fetched_for;
  int64_t live = 0;  // __n_available_params
  size_t next = 0;   // the head of __param_queue
  auto gather = [&](size_t at, size_t use) {
    const FetchUse& u = trace[use];
    available[u.unit] = true;
    live += u.numel;
    issued[at].push_back(use);
  };
  for (size_t i = 0; i < n; ++i) {
    const FetchUse& u = trace[i];
    if (u.numel > 0 && !available[u.unit]) gather(i, i);
    auto f = fetched_for.try_emplace(u.unit, -1).first;
    if (f->second < static_cast<int64_t>(i)) {  // pops the current use off the queue
      next = std::max(next, i + 1);
      f->second = static_cast<int64_t>(i);
    }
    if (limits.prefetch_bucket > 0) {
      const int64_t budget = std::min(limits.max_live - live, limits.prefetch_bucket);
      int64_t prefetching = 0;
      while (next < n && prefetching < budget) {
        const FetchUse& v = trace[next];
        int64_t& last = fetched_for.try_emplace(v.unit, -1).first->second;
        last = std::max(last, static_cast<int64_t>(next));
        if (v.numel > 0 && !available[v.unit]) {
          gather(i, next);
          prefetching += v.numel;
        }
        ++next;
      }
    }
    // release_sub_module after the pass of use i.
    if (u.numel == 0 || fetched_for[u.unit] > static_cast<int64_t>(i)) continue;
    bool reused = false;
    int64_t traversed = 0;
    for (size_t j = i + 1; j < n && traversed < limits.max_reuse; ++j) {
      if (trace[j].unit == u.unit) {
        reused = true;
        break;
      }
      traversed += trace[j].numel;
    }
    if (reused) continue;
    available[u.unit] = false;
    live -= u.numel;
  }
  return issued;
}

std::vector<ReduceBucket> PlanReduceBuckets(const std::vector<int64_t>& grads, int64_t bucket) {
  std::vector<ReduceBucket> out;
  int64_t held = 0;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (held > 0 && held + grads[i] > bucket) {
      out.push_back({i, held});
      held = 0;
    }
    held += grads[i];
  }
  if (held > 0 && !grads.empty()) out.push_back({grads.size() - 1, held});
  return out;
}

}  // namespace shardsim
