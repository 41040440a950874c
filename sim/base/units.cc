#include "sim/base/units.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <utility>

namespace shardsim {

SimTime SimTime::FromSeconds(Seconds s) {
  const double ps = s.value() * 1e12;
  if (!(ps > 0.0)) return SimTime(0);  // also catches NaN
  if (ps >= 9.2e18) return Max();
  // std::llround (half away from zero) without the library call: ps is in (0, 2^63), so the
  // truncation is exact and so is ps - trunc(ps) (the fraction of a double is a double).
  const auto whole = static_cast<int64_t>(ps);
  return SimTime(whole + (ps - static_cast<double>(whole) >= 0.5 ? 1 : 0));
}

namespace {

struct UnitEntry {
  std::string_view name;
  double factor;
};

// Byte units: decimal (GB = 1e9) and binary (GiB = 2^30).
constexpr std::array<UnitEntry, 13> kByteUnits = {{{"B", 1.0},
                                                   {"KB", kKilo},
                                                   {"kB", kKilo},
                                                   {"MB", kMega},
                                                   {"GB", kGiga},
                                                   {"TB", kTera},
                                                   {"PB", kPeta},
                                                   {"KiB", kKiB},
                                                   {"MiB", kMiB},
                                                   {"GiB", kGiB},
                                                   {"TiB", kTiB},
                                                   {"PiB", 1024.0 * kTiB},
                                                   {"bytes", 1.0}}};

// Bit units for link rates (Gb/s = 1e9 bits/s = 1.25e8 bytes/s).
constexpr std::array<UnitEntry, 5> kBitUnits = {{{"b", 0.125},
                                                 {"Kb", 0.125 * kKilo},
                                                 {"Mb", 0.125 * kMega},
                                                 {"Gb", 0.125 * kGiga},
                                                 {"Tb", 0.125 * kTera}}};

constexpr std::array<UnitEntry, 7> kFlopPrefixes = {
    {{"", 1.0}, {"K", kKilo}, {"M", kMega}, {"G", kGiga}, {"T", kTera}, {"P", kPeta}, {"E", 1e18}}};

// Times from picoseconds (a latency) to days (a restart, an MTBF), short names and long.
constexpr std::array<UnitEntry, 19> kTimeUnits = {{{"s", 1.0},
                                                   {"ms", 1e-3},
                                                   {"us", 1e-6},
                                                   {"\xC2\xB5s", 1e-6},  // µs
                                                   {"ns", 1e-9},
                                                   {"ps", 1e-12},
                                                   {"min", 60.0},
                                                   {"h", 3600.0},
                                                   {"d", 86400.0},
                                                   {"sec", 1.0},
                                                   {"second", 1.0},
                                                   {"seconds", 1.0},
                                                   {"minute", 60.0},
                                                   {"minutes", 60.0},
                                                   {"hr", 3600.0},
                                                   {"hour", 3600.0},
                                                   {"hours", 3600.0},
                                                   {"day", 86400.0},
                                                   {"days", 86400.0}}};

template <size_t N>
const UnitEntry* Find(const std::array<UnitEntry, N>& table, std::string_view unit) {
  for (const UnitEntry& e : table) {
    if (e.name == unit) return &e;
  }
  return nullptr;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Looks up `unit` for `dim`; returns the factor to SI base units, or 0 if not a valid unit.
double UnitFactor(std::string_view unit, Dimension dim) {
  switch (dim) {
    case Dimension::kBytes:
      if (const UnitEntry* e = Find(kByteUnits, unit)) return e->factor;
      return 0.0;
    case Dimension::kBandwidth: {
      std::string_view base = unit;
      if (base.size() > 2 && base.substr(base.size() - 2) == "/s") {
        base.remove_suffix(2);
      } else if (base.size() > 2 && base.substr(base.size() - 2) == "ps") {  // Gbps, GBps
        base.remove_suffix(2);
        if (const UnitEntry* e = Find(kBitUnits, std::string(base) + "")) return e->factor;
        if (base.size() >= 1 && base.back() == 'B') {
          if (const UnitEntry* e = Find(kByteUnits, base)) return e->factor;
        }
        return 0.0;
      } else {
        return 0.0;
      }
      if (const UnitEntry* e = Find(kByteUnits, base)) return e->factor;
      if (const UnitEntry* e = Find(kBitUnits, base)) return e->factor;
      if (base.size() > 3 && base.substr(base.size() - 3) == "bit") {
        base.remove_suffix(3);
        if (const UnitEntry* e = Find(kBitUnits, std::string(base) + "b")) return e->factor;
      }
      return 0.0;
    }
    case Dimension::kFlopRate: {
      std::string_view base = unit;
      for (std::string_view suffix : {"FLOP/s", "FLOPS", "FLOPs/s", "flop/s"}) {
        if (base.size() >= suffix.size() && base.substr(base.size() - suffix.size()) == suffix) {
          base.remove_suffix(suffix.size());
          if (const UnitEntry* e = Find(kFlopPrefixes, base)) return e->factor;
          return 0.0;
        }
      }
      return 0.0;
    }
    case Dimension::kTime:
      if (const UnitEntry* e = Find(kTimeUnits, unit)) return e->factor;
      return 0.0;
    case Dimension::kCount:
      if (unit.empty()) return 1.0;
      if (unit == "K") return kKilo;
      if (unit == "M") return kMega;
      if (unit == "B" || unit == "G") return kGiga;
      if (unit == "T") return kTera;
      return 0.0;
  }
  return 0.0;
}

// The units a quantity of `dim` takes, for error messages.
std::string_view UnitNames(Dimension dim) {
  switch (dim) {
    case Dimension::kBytes:
      return "units: B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB";
    case Dimension::kBandwidth:
      return "units: B/s to PB/s, KiB/s to PiB/s, b/s to Tb/s, Gbit/s, Gbps, GBps";
    case Dimension::kFlopRate:
      return "units: FLOP/s with K, M, G, T, P or E";
    case Dimension::kTime:
      return "units: ps, ns, us, ms, s, min, h, d, or sec, minutes, hours, days";
    case Dimension::kCount:
      return "suffixes: K, M, B or G, T";
  }
  return "";
}

}  // namespace

std::string_view ExampleUnit(Dimension dim) {
  switch (dim) {
    case Dimension::kBytes:
      return "80 GiB";
    case Dimension::kBandwidth:
      return "450 GB/s";
    case Dimension::kFlopRate:
      return "989.4 TFLOP/s";
    case Dimension::kTime:
      return "5 us";
    case Dimension::kCount:
      return "15e12";
  }
  return "";
}

Result<double> ParseQuantity(std::string_view text, Dimension dim) {
  const std::string_view s = Trim(text);
  double number = 0.0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (begin != end && *begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, number);
  if (ec != std::errc() || ptr == begin) {
    return Status::Invalid("\"" + std::string(s) +
                           "\" is not a number with a unit; expected e.g. \"" +
                           std::string(ExampleUnit(dim)) + "\"");
  }
  if (!std::isfinite(number)) {
    return Status::Invalid("\"" + std::string(s) + "\" is not a finite number");
  }
  const std::string_view unit = Trim(std::string_view(ptr, static_cast<size_t>(end - ptr)));
  if (unit.empty() && dim != Dimension::kCount) {
    return Status::Invalid("\"" + std::string(s) + "\" has no unit; expected e.g. \"" +
                           std::string(ExampleUnit(dim)) + "\"");
  }
  const double factor = UnitFactor(unit, dim);
  if (factor == 0.0) {
    return Status::Invalid("\"" + std::string(s) + "\": unknown unit \"" + std::string(unit) +
                           "\"; expected e.g. \"" + std::string(ExampleUnit(dim)) + "\" (" +
                           std::string(UnitNames(dim)) + ")");
  }
  // The range is checked on the value in base units, after the unit multiplies it: "1e308 PiB"
  // is a finite number but an infinite size.
  const double value = number * factor;
  if (!std::isfinite(value)) {
    return Status::Invalid("\"" + std::string(s) + "\" is too large (beyond a double's range)");
  }
  const double magnitude = std::fabs(value);
  // A rate below one byte (FLOP) per second, or a time beyond the simulator's clock (int64
  // picoseconds, about 106 days), is no device or link: it is a typo of a unit or an exponent,
  // and would only surface later as a step longer than the clock holds.
  if ((dim == Dimension::kBandwidth || dim == Dimension::kFlopRate) && value != 0.0 &&
      magnitude < 1.0) {
    return Status::Invalid("\"" + std::string(s) + "\" is below one " +
                           (dim == Dimension::kBandwidth ? "byte" : "FLOP") +
                           " per second; expected e.g. \"" + std::string(ExampleUnit(dim)) + "\"");
  }
  if (dim == Dimension::kTime && magnitude > kMaxSimSeconds) {
    return Status::Invalid("\"" + std::string(s) +
                           "\" is longer than the simulator's clock holds (int64 picoseconds, "
                           "about 106 days); expected e.g. \"" +
                           std::string(ExampleUnit(dim)) + "\"");
  }
  return value;
}

std::string FormatSig(double v, int digits) {
  if (v == 0.0 || !std::isfinite(v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  const int decimals = std::max(0, digits - 1 - magnitude);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string FormatSci(double v) {
  if (v == 0.0 || !std::isfinite(v)) return FormatSig(v);
  const int exponent = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  return FormatSig(v / std::pow(10.0, exponent), 3) + "e" + std::to_string(exponent);
}

namespace {
std::string Scaled(double v, const std::array<std::pair<double, std::string_view>, 6>& steps,
                   std::string_view unit) {
  for (const auto& [factor, prefix] : steps) {
    if (std::fabs(v) >= factor || factor == steps.back().first) {
      return FormatSig(v / factor) + " " + std::string(prefix) + std::string(unit);
    }
  }
  return FormatSig(v) + " " + std::string(unit);
}
}  // namespace

std::string FormatBytes(Bytes b) {
  static constexpr std::array<std::pair<double, std::string_view>, 6> kSteps = {
      {{1024.0 * kTiB, "PiB"},
       {kTiB, "TiB"},
       {kGiB, "GiB"},
       {kMiB, "MiB"},
       {kKiB, "KiB"},
       {1.0, "B"}}};
  return Scaled(b.value(), kSteps, "");
}

std::string FormatSeconds(Seconds s) {
  const double v = s.value();
  const double a = std::fabs(v);
  if (a >= 3600.0 * 24 * 2) return FormatSig(v / 86400.0) + " days";
  if (a >= 3600.0 * 2) return FormatSig(v / 3600.0) + " h";
  if (a >= 1.0 || a == 0.0) return FormatSig(v) + " s";
  if (a >= 1e-3) return FormatSig(v * 1e3) + " ms";
  if (a >= 1e-6) return FormatSig(v * 1e6) + " us";
  return FormatSig(v * 1e9) + " ns";
}

std::string FormatRate(double per_second, std::string_view unit) {
  static constexpr std::array<std::pair<double, std::string_view>, 6> kSteps = {
      {{1e18, "E"}, {kPeta, "P"}, {kTera, "T"}, {kGiga, "G"}, {kMega, "M"}, {1.0, ""}}};
  return Scaled(per_second, kSteps, unit);
}

std::string FormatCount(double n) {
  static constexpr std::array<std::pair<double, std::string_view>, 6> kSteps = {
      {{1e18, "E"}, {kTera, "T"}, {kGiga, "B"}, {kMega, "M"}, {kKilo, "K"}, {1.0, ""}}};
  std::string s = Scaled(n, kSteps, "");
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace shardsim
