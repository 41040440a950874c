#include "sim/config/value_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace shardsim {

Result<int64_t> ParseInteger(std::string_view text) {
  const std::string_view s = TrimView(text);
  const std::string quoted = "\"" + std::string(s) + "\"";
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (begin != end && *begin == '+') ++begin;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec == std::errc::result_out_of_range) {
    return Status::Invalid(quoted + " is out of range for an integer");
  }
  if (ec == std::errc() && ptr == end && begin != end) return v;
  // Exact integers in exponent form ("1e3") are accepted; "1.5" and "2048.0" are not.
  if (s.find_first_of("eE") != std::string_view::npos && s.find('.') == std::string_view::npos) {
    Result<double> d = ParseNumber(s);
    if (d.ok() && std::floor(*d) == *d) {
      if (std::fabs(*d) >= 9.2e18)
        return Status::Invalid(quoted + " is out of range for an integer");
      return static_cast<int64_t>(*d);
    }
  }
  return Status::Invalid("expected an integer, got " + quoted);
}

Result<double> ParseNumber(std::string_view text) {
  const std::string_view s = TrimView(text);
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (begin != end && *begin == '+') ++begin;
  double v = 0.0;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || ptr != end || begin == end || !std::isfinite(v)) {
    return Status::Invalid("expected a number, got \"" + std::string(s) + "\"");
  }
  return v;
}

MapReader::MapReader(const ConfigNode* map, KeyOrigin where, std::string msg_prefix,
                     std::string origin_prefix, DiagnosticSink* sink, Origins* origins)
    : map_(map),
      where_(std::move(where)),
      msg_prefix_(std::move(msg_prefix)),
      origin_prefix_(std::move(origin_prefix)),
      sink_(sink),
      origins_(origins) {}

bool MapReader::Has(std::string_view key) const { return present() && map_->Find(key) != nullptr; }

const ConfigNode* MapReader::Get(std::string_view key, Need need) {
  known_.emplace_back(key);
  const ConfigNode* n = present() ? map_->Find(key) : nullptr;
  if (n == nullptr) {
    if (need == Need::kRequired && map_ != nullptr && map_->is_map()) {
      // At the key that opens the mapping, or, for a whole document, at the mapping itself.
      const KeyOrigin& at = where_.loc.known() || !map_->loc().known() ? where_ : map_->origin();
      sink_->Add(at.loc, "missing required key '" + MsgPath(key) + "'", at.source_line);
    }
    return nullptr;
  }
  if (origins_ != nullptr) origins_->Set(OriginPath(key), n->origin());
  return n;
}

void MapReader::AcceptFreeText(std::string* source) {
  for (const char* k : {"notes", "cite"}) Get(k);
  if (source != nullptr) {
    String("source", source);
  } else {
    Get("source");
  }
}

void MapReader::Error(const ConfigNode& at, std::string_view key, const std::string& message) {
  // An empty value ("gpus:" at the end of its line) has no text of its own: YAML marks it at the
  // next token, often the next line's key. The key's own line is where to look.
  if (at.is_null()) {
    ErrorAtKey(key, message);
    return;
  }
  sink_->Add(at.loc(), MsgPath(key) + ": " + message, at.origin().source_line);
}

void MapReader::ErrorAtKey(std::string_view key, const std::string& message) {
  const KeyOrigin* o = present() ? map_->FindKeyOrigin(key) : nullptr;
  const KeyOrigin& at = o != nullptr ? *o : where_;
  sink_->Add(at.loc, MsgPath(key) + ": " + message, at.source_line);
}

bool IsNumberNode(const ConfigNode& n) { return n.is_scalar() && !n.quoted(); }

std::string NotANumber(const ConfigNode& n, const std::string& what) {
  return "expected " + what + ", got " + (n.quoted() ? "the string " : std::string()) +
         n.Describe() + (n.quoted() ? " (write the number without quotes)" : "");
}

bool MapReader::Int(std::string_view key, int64_t* out, Need need, int64_t lo, int64_t hi) {
  const ConfigNode* n = Get(key, need);
  if (n == nullptr) return false;
  if (!IsNumberNode(*n)) {
    Error(*n, key, NotANumber(*n, "an integer"));
    return false;
  }
  Result<int64_t> v = ParseInteger(n->text());
  if (!v.ok()) {
    Error(*n, key, v.status().message());
    return false;
  }
  if (*v < lo || *v > hi) {
    std::string range;
    if (lo == 1 && hi == std::numeric_limits<int64_t>::max()) {
      range = "must be positive";
    } else if (hi == std::numeric_limits<int64_t>::max()) {
      range = lo == 0 ? "must not be negative" : "must be at least " + std::to_string(lo);
    } else {
      range = "must be between " + std::to_string(lo) + " and " + std::to_string(hi);
    }
    Error(*n, key, range + ", got " + std::to_string(*v));
    return false;
  }
  *out = *v;
  return true;
}

bool MapReader::PositiveInt(std::string_view key, int64_t* out, Need need) {
  return Int(key, out, need, 1);
}

bool MapReader::NonNegativeInt(std::string_view key, int64_t* out, Need need) {
  return Int(key, out, need, 0);
}

bool MapReader::Number(std::string_view key, double* out, Need need) {
  const ConfigNode* n = Get(key, need);
  if (n == nullptr) return false;
  if (!IsNumberNode(*n)) {
    Error(*n, key, NotANumber(*n, "a number"));
    return false;
  }
  Result<double> v = ParseNumber(n->text());
  if (!v.ok()) {
    Error(*n, key, v.status().message());
    return false;
  }
  *out = *v;
  return true;
}

bool MapReader::PositiveNumber(std::string_view key, double* out, Need need) {
  double v = 0.0;
  if (!Number(key, &v, need)) return false;
  if (!(v > 0.0)) {
    Error(*map_->Find(key), key, "must be positive, got " + map_->Find(key)->text());
    return false;
  }
  *out = v;
  return true;
}

bool MapReader::Fraction(std::string_view key, double* out, Need need) {
  double v = 0.0;
  if (!Number(key, &v, need)) return false;
  if (!(v > 0.0 && v <= 1.0)) {
    Error(*map_->Find(key), key, "must be in (0, 1], got " + map_->Find(key)->text());
    return false;
  }
  *out = v;
  return true;
}

bool MapReader::Quantity(std::string_view key, Dimension dim, double* out, Need need,
                         bool allow_zero) {
  const ConfigNode* n = Get(key, need);
  if (n == nullptr) return false;
  if (!n->is_scalar()) {
    Error(
        *n, key,
        "expected a quantity like \"" + std::string(ExampleUnit(dim)) + "\", got " + n->Describe());
    return false;
  }
  Result<double> v = ParseQuantity(n->text(), dim);
  if (!v.ok()) {
    Error(*n, key, v.status().message());
    return false;
  }
  if (*v < 0.0 || (*v == 0.0 && !allow_zero)) {
    Error(*n, key,
          std::string(allow_zero ? "must not be negative" : "must be positive") + ", got \"" +
              n->text() + "\"");
    return false;
  }
  *out = *v;
  return true;
}

bool MapReader::Bool(std::string_view key, bool* out, Need need) {
  const ConfigNode* n = Get(key, need);
  if (n == nullptr) return false;
  if (n->is_scalar() && !n->quoted()) {
    const std::string t = ToLower(n->text());
    if (t == "true" || t == "false") {
      *out = t == "true";
      return true;
    }
  }
  Error(*n, key, "expected true or false, got " + n->Describe());
  return false;
}

bool MapReader::String(std::string_view key, std::string* out, Need need) {
  const ConfigNode* n = Get(key, need);
  if (n == nullptr) return false;
  if (!n->is_scalar()) {
    Error(*n, key, "expected a string, got " + n->Describe());
    return false;
  }
  *out = n->text();
  return true;
}

MapReader MapReader::Sub(std::string_view key, Need need) {
  const ConfigNode* n = Get(key, need);
  const KeyOrigin* ko = n != nullptr ? map_->FindKeyOrigin(key) : nullptr;
  KeyOrigin where = ko != nullptr ? *ko : where_;
  std::string msg = MsgPath(key) + ".";
  std::string org = OriginPath(key) + ".";
  if (n != nullptr && !n->is_map()) {
    Error(*n, key, "expected a mapping, got " + n->Describe());
    n = nullptr;
  }
  return MapReader(n, std::move(where), std::move(msg), std::move(org), sink_, origins_);
}

void MapReader::Finish() {
  if (!present()) return;
  for (size_t i = 0; i < map_->size(); ++i) {
    const std::string& k = map_->key(i);
    if (std::find(known_.begin(), known_.end(), k) != known_.end()) continue;
    const KeyOrigin& o = map_->key_origin(i);
    // A near miss gets the one it was probably meant to be; anything else the keys valid here.
    std::string hint = DidYouMean(k, known_);
    if (hint.empty() && !known_.empty()) hint = "; valid keys here: " + Join(known_);
    sink_->Add(o.loc, MsgPath(k) + ": unknown key" + hint, o.source_line);
  }
}

}  // namespace shardsim
