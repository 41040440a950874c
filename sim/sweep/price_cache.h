// The priced passes of a sweep's points, shared by the points that differ only in keys the
// pricing does not read: what lets `sweep --prune-to-top` bound tens of thousands of points
// without pricing each (sim/sweep/top_k.h).
//
// PriceStep (sim/program/step_costs.h) reads the op graph (BuildOpGraph), the in-layer
// collectives and the layout (Layout::Make), none of which reads parallel.schedule or
// parallel.virtual_stages (nor the layer split over the pipeline ranks those choose): the points
// of a layout that differ only in those two keys have the same prices, byte for byte. The key of a
// point is therefore its input values (PointSpace::Inputs: every key the sweep varies; the others
// are the same for every point) with those two columns left out. tests/sweep/top_k_test.cc holds
// the cached prices equal to each point's own on a space of every schedule.
//
// Thread-safe; deterministic at any thread count (a price is a function of its key alone, and the
// first one stored for a key is the one every point reads).
#ifndef SHARDSIM_SWEEP_PRICE_CACHE_H_
#define SHARDSIM_SWEEP_PRICE_CACHE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "sim/program/step_costs.h"

namespace shardsim {

class PointSpace;

class PriceCache {
 public:
  // The key of point `point` of `space`: its inputs but parallel.schedule and
  // parallel.virtual_stages.
  static std::string Key(const PointSpace& space, int64_t point);

  // The prices stored for `key`, else price() stored and returned (nullptr: the point cannot be
  // priced, and no point of that key can).
  std::shared_ptr<const StepCosts> Get(
      const std::string& key, const std::function<std::shared_ptr<const StepCosts>()>& price);

  int64_t hits() const;
  int64_t misses() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const StepCosts>> prices_;
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_PRICE_CACHE_H_
