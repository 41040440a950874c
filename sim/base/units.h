// Physical quantities as thin strong types, and the parsing of quantities written with units.
//
// Quantities are doubles in SI base units (bytes, FLOPs, seconds) wrapped in a tag type, so that
// a byte count cannot be passed where a FLOP count is expected and the only conversions are the
// physical ones (Bytes / BytesPerSec = Seconds). SimTime is the engine's clock: int64 picoseconds,
// exact to order and free of epsilons. Conventions: GB = 1e9 bytes, GiB = 2^30 bytes, Gb/s =
// 1e9 bits/s, TFLOP/s = 1e12 FLOP/s.
#ifndef SHARDSIM_BASE_UNITS_H_
#define SHARDSIM_BASE_UNITS_H_

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "sim/base/status.h"

namespace shardsim {

inline constexpr double kKilo = 1e3;
inline constexpr double kMega = 1e6;
inline constexpr double kGiga = 1e9;
inline constexpr double kTera = 1e12;
inline constexpr double kPeta = 1e15;
inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kTiB = 1024.0 * kGiB;

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : v_(v) {}
  constexpr double value() const { return v_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity operator*(double f) const { return Quantity(v_ * f); }
  constexpr Quantity operator/(double f) const { return Quantity(v_ / f); }
  constexpr double operator/(Quantity o) const { return v_ / o.v_; }  // a ratio
  constexpr Quantity& operator+=(Quantity o) {
    v_ += o.v_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    v_ -= o.v_;
    return *this;
  }
  constexpr Quantity& operator*=(double f) {
    v_ *= f;
    return *this;
  }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double v_ = 0.0;
};

template <class Tag>
constexpr Quantity<Tag> operator*(double f, Quantity<Tag> q) {
  return q * f;
}

struct BytesTag {};
struct FlopsTag {};
struct SecondsTag {};
struct BytesPerSecTag {};
struct FlopsPerSecTag {};

using Bytes = Quantity<BytesTag>;
using Flops = Quantity<FlopsTag>;
using Seconds = Quantity<SecondsTag>;
using BytesPerSec = Quantity<BytesPerSecTag>;
using FlopsPerSec = Quantity<FlopsPerSecTag>;

constexpr Seconds operator/(Bytes b, BytesPerSec r) { return Seconds(b.value() / r.value()); }
constexpr Seconds operator/(Flops f, FlopsPerSec r) { return Seconds(f.value() / r.value()); }
constexpr BytesPerSec operator/(Bytes b, Seconds t) { return BytesPerSec(b.value() / t.value()); }
constexpr FlopsPerSec operator/(Flops f, Seconds t) { return FlopsPerSec(f.value() / t.value()); }
constexpr Bytes operator*(BytesPerSec r, Seconds t) { return Bytes(r.value() * t.value()); }
constexpr Flops operator*(FlopsPerSec r, Seconds t) { return Flops(r.value() * t.value()); }

// The engine's clock: integer picoseconds. Events order exactly; a step of a day fits easily
// (int64 picoseconds cover 106 days).
class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime FromPicos(int64_t ps) { return SimTime(ps); }
  // Rounds to the nearest picosecond; negative and NaN inputs become zero, huge ones saturate.
  static SimTime FromSeconds(Seconds s);
  static constexpr SimTime Zero() { return SimTime(0); }
  static constexpr SimTime Max() { return SimTime(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t picos() const { return ps_; }
  constexpr Seconds seconds() const { return Seconds(static_cast<double>(ps_) * 1e-12); }

  constexpr SimTime operator+(SimTime o) const { return SimTime(ps_ + o.ps_); }
  constexpr SimTime operator-(SimTime o) const { return SimTime(ps_ - o.ps_); }
  constexpr SimTime& operator+=(SimTime o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr auto operator<=>(const SimTime&) const = default;

 private:
  constexpr explicit SimTime(int64_t ps) : ps_(ps) {}
  int64_t ps_ = 0;
};

// What a quantity written in an input file measures; decides which units are accepted.
enum class Dimension { kBytes, kBandwidth, kFlopRate, kTime, kCount };

// Parses "3.35 TB/s", "80 GiB", "400 Gb/s", "989.4 TFLOP/s", "25 us", "15e12" into SI base units
// (bytes, bytes/s, FLOP/s, seconds, plain number). A missing or wrong unit is an error whose
// message says what was expected, e.g. "80" has no unit; expected e.g. "80 GiB". Negative values
// are accepted here; callers decide what range is valid. The value in base units must be finite;
// a non-zero rate (kBandwidth, kFlopRate) at least 1 per second and a time at most
// kMaxSimSeconds: beyond those the simulator's clock cannot hold what they lead to.
inline constexpr double kMaxSimSeconds = 9.2e6;  // SimTime's int64 picoseconds: 9.22e18 ps
Result<double> ParseQuantity(std::string_view text, Dimension dim);

// An example of a valid value of this dimension, used in error messages ("80 GiB").
std::string_view ExampleUnit(Dimension dim);

// Human-readable forms for tables: 3 significant digits and a unit.
std::string FormatBytes(Bytes b);                                  // "12.3 GiB", "512 MiB"
std::string FormatSeconds(Seconds s);                              // "1.23 s", "456 ms", "12.0 us"
std::string FormatRate(double per_second, std::string_view unit);  // "989 TFLOP/s", "450 GB/s"
std::string FormatCount(double n);                                 // "70.6 B", "1.02 M"
std::string FormatSig(double v, int digits = 3);  // plain number, `digits` significant digits
std::string FormatSci(double v);                  // "4.04e18": FLOP counts

}  // namespace shardsim

#endif  // SHARDSIM_BASE_UNITS_H_
