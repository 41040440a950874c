#include "sim/sweep/price_cache.h"

#include <vector>

#include "sim/sweep/point_space.h"

namespace shardsim {

std::string PriceCache::Key(const PointSpace& space, int64_t point) {
  const std::vector<std::string>& columns = space.input_columns();
  const std::vector<std::string> inputs = space.Inputs(point);
  std::string key;
  for (size_t c = 0; c < columns.size() && c < inputs.size(); ++c) {
    if (columns[c] == "parallel.schedule" || columns[c] == "parallel.virtual_stages") continue;
    key += inputs[c];
    key += '\n';
  }
  return key;
}

std::shared_ptr<const StepCosts> PriceCache::Get(
    const std::string& key, const std::function<std::shared_ptr<const StepCosts>()>& price) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = prices_.find(key);
    if (it != prices_.end()) {
      ++hits_;
      return it->second;
    }
  }
  // Priced outside the lock; a point of the same key priced meanwhile by another thread gives
  // the same prices, and the first stored stays.
  std::shared_ptr<const StepCosts> priced = price();
  std::lock_guard<std::mutex> lock(mu_);
  ++misses_;
  return prices_.emplace(key, std::move(priced)).first->second;
}

int64_t PriceCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

int64_t PriceCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

}  // namespace shardsim
