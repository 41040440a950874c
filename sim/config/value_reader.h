// Typed reading of a mapping of a configuration file, collecting every problem at once.
//
// A MapReader walks one ConfigNode mapping: each Get/Int/Quantity/... call reads a key (and marks
// it known), checks its type, range and unit, and records where it was written into an Origins
// map. Finish() then reports every key nobody asked for as "unknown key; did you mean ...?".
// Messages are prefixed with the key's dotted path ("memory.capacity: ...") and located at the
// offending value (or key), so they print as `file:line:col: error: path: message`.
#ifndef SHARDSIM_CONFIG_VALUE_READER_H_
#define SHARDSIM_CONFIG_VALUE_READER_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/status.h"
#include "sim/base/strings.h"
#include "sim/base/units.h"
#include "sim/config/config_node.h"
#include "sim/config/spec.h"

namespace shardsim {

// Scalar parsing shared by the readers and the CSV loader; messages carry no key path.
// An integer: digits with an optional sign, or an exact integer in exponent form ("1e3").
Result<int64_t> ParseInteger(std::string_view text);
// A finite decimal number ("0.85", "1e-3").
Result<double> ParseNumber(std::string_view text);
// Whether `n` can hold a number: a scalar, not quoted (a quoted scalar is a string in YAML and
// JSON: "8192" is not the number 8192). Else the message for it: "expected `what`, got ...".
bool IsNumberNode(const ConfigNode& n);
std::string NotANumber(const ConfigNode& n, const std::string& what);

enum class Need { kOptional, kRequired };

class MapReader {
 public:
  // Reads `map` (which must outlive the reader; a non-map is reported once). Messages name keys
  // `msg_prefix + key`; origins are recorded under `origin_prefix + key`. `where` locates
  // "missing required key" errors (the mapping's own key, or the file alone for a document).
  MapReader(const ConfigNode* map, KeyOrigin where, std::string msg_prefix,
            std::string origin_prefix, DiagnosticSink* sink, Origins* origins);

  bool present() const { return map_ != nullptr && map_->is_map(); }
  bool Has(std::string_view key) const;
  // The node of `key` (marked known, origin recorded), or nullptr; reports it missing if required.
  const ConfigNode* Get(std::string_view key, Need need = Need::kOptional);
  // Marks free-text keys (source, notes, cite) as known; returns `source` when present.
  void AcceptFreeText(std::string* source);

  // Each returns true when the key was present and valid (then *out is set).
  bool Int(std::string_view key, int64_t* out, Need need = Need::kOptional,
           int64_t lo = std::numeric_limits<int64_t>::min(),
           int64_t hi = std::numeric_limits<int64_t>::max());
  bool PositiveInt(std::string_view key, int64_t* out, Need need = Need::kOptional);
  bool NonNegativeInt(std::string_view key, int64_t* out, Need need = Need::kOptional);
  bool Number(std::string_view key, double* out, Need need = Need::kOptional);
  bool PositiveNumber(std::string_view key, double* out, Need need = Need::kOptional);
  // A fraction in (0, 1].
  bool Fraction(std::string_view key, double* out, Need need = Need::kOptional);
  // A quantity with a unit ("80 GiB"); must be > 0 unless allow_zero.
  bool Quantity(std::string_view key, Dimension dim, double* out, Need need = Need::kOptional,
                bool allow_zero = false);
  bool Bool(std::string_view key, bool* out, Need need = Need::kOptional);
  bool String(std::string_view key, std::string* out, Need need = Need::kOptional);
  // One of `values` by its Name() ("swiglu").
  template <class E>
  bool Enum(std::string_view key, E* out, const std::vector<E>& values,
            Need need = Need::kOptional) {
    const ConfigNode* n = Get(key, need);
    if (n == nullptr) return false;
    std::vector<std::string> names;
    for (E v : values) names.emplace_back(Name(v));
    if (n->is_scalar()) {
      for (size_t i = 0; i < values.size(); ++i) {
        if (n->text() == names[i]) {
          *out = values[i];
          return true;
        }
      }
    }
    Error(*n, key,
          n->Describe() + " is not one of " + Join(names) +
              (n->is_scalar() ? DidYouMean(n->text(), names) : std::string()));
    return false;
  }

  // A nested mapping reader (not present() when the key is absent; an error if not a mapping).
  MapReader Sub(std::string_view key, Need need = Need::kOptional);

  // "path: message" at `at`.
  void Error(const ConfigNode& at, std::string_view key, const std::string& message);
  void ErrorAtKey(std::string_view key, const std::string& message);
  // Reports keys of the mapping that were never read.
  void Finish();

  std::string MsgPath(std::string_view key) const { return msg_prefix_ + std::string(key); }
  std::string OriginPath(std::string_view key) const { return origin_prefix_ + std::string(key); }
  const ConfigNode* node() const { return map_; }
  DiagnosticSink* sink() const { return sink_; }
  Origins* origins() const { return origins_; }

 private:
  const ConfigNode* map_;
  KeyOrigin where_;
  std::string msg_prefix_;
  std::string origin_prefix_;
  DiagnosticSink* sink_;
  Origins* origins_;
  std::vector<std::string> known_;
};

}  // namespace shardsim

#endif  // SHARDSIM_CONFIG_VALUE_READER_H_
