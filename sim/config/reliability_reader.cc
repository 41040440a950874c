// Reading the `storage:` block (topology or scenario) and the scenario's `reliability:` block:
// what sim/goodput needs to turn the ideal time to train into the time as booked. Every key is
// optional; sim/goodput supplies (and cites) the defaults.
#include "sim/config/readers.h"
#include "sim/config/value_reader.h"

namespace shardsim {
namespace {

// A non-negative plain number ("1.97e-5"); true when present and valid.
bool NonNegativeNumber(MapReader& r, const char* key, std::optional<double>* out) {
  double v = 0.0;
  if (!r.Number(key, &v)) return false;
  if (v < 0.0) {
    r.ErrorAtKey(key, "must not be negative, got " + r.node()->Find(key)->text());
    return false;
  }
  *out = v;
  return true;
}

// A quantity of `dim` into an optional (positive, or zero when allow_zero).
void OptionalQuantity(MapReader& r, const char* key, Dimension dim, bool allow_zero,
                      std::optional<double>* out) {
  double v = 0.0;
  if (r.Quantity(key, dim, &v, Need::kOptional, allow_zero)) *out = v;
}

}  // namespace

void ReadStorage(MapReader& parent, StorageSpec* out) {
  MapReader s = parent.Sub("storage");
  if (!s.present()) return;
  OptionalQuantity(s, "write_bandwidth_per_node", Dimension::kBandwidth, false,
                   &out->write_bandwidth_per_node);
  OptionalQuantity(s, "aggregate_write_bandwidth", Dimension::kBandwidth, false,
                   &out->aggregate_write_bandwidth);
  OptionalQuantity(s, "host_copy_bandwidth", Dimension::kBandwidth, false,
                   &out->host_copy_bandwidth);
  s.AcceptFreeText(nullptr);
  s.Finish();
}

void MergeStorage(const StorageSpec& over, StorageSpec* base) {
  if (over.write_bandwidth_per_node) base->write_bandwidth_per_node = over.write_bandwidth_per_node;
  if (over.aggregate_write_bandwidth) {
    base->aggregate_write_bandwidth = over.aggregate_write_bandwidth;
  }
  if (over.host_copy_bandwidth) base->host_copy_bandwidth = over.host_copy_bandwidth;
}

void ReadReliability(MapReader& parent, ReliabilitySpec* out) {
  MapReader r = parent.Sub("reliability");
  if (!r.present()) return;
  NonNegativeNumber(r, "interruptions_per_gpu_hour", &out->interruptions_per_gpu_hour);
  NonNegativeNumber(r, "planned_interruptions_per_gpu_hour",
                    &out->planned_interruptions_per_gpu_hour);
  OptionalQuantity(r, "restart_time", Dimension::kTime, true, &out->restart_time);
  OptionalQuantity(r, "checkpoint_interval", Dimension::kTime, false, &out->checkpoint_interval);
  r.Bool("async_checkpoint", &out->async_checkpoint);
  std::optional<double> cv;
  if (NonNegativeNumber(r, "straggler_cv", &cv)) {
    // Beyond 1 a normal slowdown model would give ranks negative step times often.
    if (*cv >= 1.0) {
      r.ErrorAtKey("straggler_cv",
                   "must be below 1 (a standard deviation over the mean step "
                   "time, e.g. 0.02), got " +
                       r.node()->Find("straggler_cv")->text());
    } else {
      out->straggler_cv = cv;
    }
  }
  r.AcceptFreeText(nullptr);
  r.Finish();
}

}  // namespace shardsim
