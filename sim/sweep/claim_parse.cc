// Reading a throughput claim written the way vendors and papers write them.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/base/strings.h"
#include "sim/sweep/claim.h"

namespace shardsim {
namespace {

constexpr const char* kForms =
    "write the claim as e.g. \"1200 tokens/s/GPU\", \"3.2M tokens/s\", \"400 TFLOP/s per GPU\", "
    "\"200 PFLOP/s total\", \"45% MFU\" or \"15T tokens in 54 days\"";

double Suffix(const std::string& s) {
  if (s == "k") return 1e3;
  if (s == "m") return 1e6;
  if (s == "b" || s == "g") return 1e9;
  if (s == "t") return 1e12;
  if (s == "p") return 1e15;
  if (s == "e") return 1e18;
  return 1.0;
}

// Seconds per unit of a duration word ("days" -> 86400).
double DurationUnit(const std::string& u) {
  if (u[0] == 's') return 1.0;
  if (u.rfind("mi", 0) == 0) return 60.0;
  if (u[0] == 'h') return 3600.0;
  if (u[0] == 'd') return 86400.0;
  if (u[0] == 'w') return 7 * 86400.0;
  return 0.0;
}

// Lower case, thousands separators removed ("1,200" -> "1200"), spaces trimmed and single.
std::string Normalize(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    // A thousands separator: a comma between digits with exactly three digits after it
    // ("1,200,000"); "1,2M" (a decimal comma) is left in, and the claim does not parse.
    const auto digit = [&](size_t k) {
      return k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]));
    };
    const bool thousands = c == ',' && i > 0 && digit(i - 1) && digit(i + 1) && digit(i + 2) &&
                           digit(i + 3) && !digit(i + 4);
    if (thousands) continue;
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Splits a trailing sequence length off a normalized claim ("... at seq 4096", "..., 8k
// context", "... @ 4096-token sequences"): returns it (8k = 8192) and leaves the rest in `s`;
// 0 when there is none; -1 when it is there but not a positive integer in range. Read from the
// right in one pass (no regular expression on user text):
//   claim = REST [ ,]* (at |@ ?|with |for )? (WORD ' '? (=|:|of)? ' '? N | N '-'|' '? (tokens? )?
//   WORD) N = [0-9]+ ' '? k? (' tokens?')?  (after WORD) or [0-9]+ ' '? k? (before WORD) WORD =
//   seq(uence)?s?( length| len)? | context( length)? | ctx
int64_t TakeSequence(std::string& s) {
  static const std::vector<std::string> kWords = [] {
    std::vector<std::string> w;
    for (const char* stem : {"sequences", "sequence", "seqs", "seq"}) {
      for (const char* tail : {" length", " len", ""}) w.push_back(std::string(stem) + tail);
    }
    for (const char* other : {"context length", "context", "ctx"}) w.push_back(other);
    return w;
  }();
  const auto ends = [](std::string_view v, std::string_view w) {
    return v.size() >= w.size() && v.substr(v.size() - w.size()) == w;
  };
  const auto strip = [&](std::string_view& v, std::string_view w) {
    if (!ends(v, w)) return false;
    v.remove_suffix(w.size());
    return true;
  };
  const auto strip_word = [&](std::string_view& v) {
    for (const std::string& w : kWords) {
      if (strip(v, w)) return true;
    }
    return false;
  };
  // Digits at the end of v, taken off; "" when none.
  const auto strip_digits = [](std::string_view& v) {
    size_t n = 0;
    while (n < v.size() && std::isdigit(static_cast<unsigned char>(v[v.size() - 1 - n]))) ++n;
    const std::string_view d = v.substr(v.size() - n);
    v.remove_suffix(n);
    return d;
  };
  const auto finish = [&](std::string_view rest, std::string_view digits, bool k) -> int64_t {
    for (std::string_view lead : {"at ", "@ ", "@", "with ", "for "}) {
      if (strip(rest, lead)) break;
    }
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == ',')) rest.remove_suffix(1);
    if (digits.size() > 9) return -1;
    const int64_t v = std::atoll(std::string(digits).c_str()) * (k ? 1024 : 1);
    if (v < 1) return -1;
    s = std::string(rest);
    return v;
  };
  const std::string_view all = s;
  {  // WORD first: "seq 4096", "sequence length: 8k", "context of 4096 tokens"
    std::string_view v = all;
    if (!strip(v, " tokens")) strip(v, " token");
    const bool k = strip(v, "k");
    strip(v, " ");
    const std::string_view digits = strip_digits(v);
    if (!digits.empty()) {
      strip(v, " ");
      if (!strip(v, "=") && !strip(v, ":")) strip(v, "of");
      strip(v, " ");
      if (strip_word(v)) return finish(v, digits, k);
    }
  }
  {  // the number first: "4096 seq", "8k context", "4096-token sequences"
    std::string_view v = all;
    if (strip_word(v)) {
      if (!strip(v, "tokens ")) strip(v, "token ");
      if (!strip(v, "-")) strip(v, " ");
      const bool k = strip(v, "k");
      strip(v, " ");
      const std::string_view digits = strip_digits(v);
      if (!digits.empty()) return finish(v, digits, k);
    }
  }
  return 0;
}

}  // namespace

const char* Name(Verdict v) {
  switch (v) {
    case Verdict::kImpossible:
      return "impossible";
    case Verdict::kImplausible:
      return "implausible";
    case Verdict::kPlausible:
      return "plausible";
    case Verdict::kConservative:
      return "conservative";
  }
  return "plausible";
}

namespace {

// A matcher over the normalized claim, one pass, no backtracking beyond a fixed handful of
// alternatives: std::regex recursed once per character (28,000 digits overflowed the stack;
// 8,000 took 21 s). Each function consumes a prefix of `s` or fails leaving it as it was. The
// grammar is the one the regular expressions of earlier versions wrote:
//   NUM   = [0-9]*\.?[0-9]+(e[+-]?[0-9]+)?
//   train = NUM ' '? [kmbt]? ' '? (tokens?|tok) ' in ' NUM ' '? DURATION
//   mfu   = NUM ' '? '%'? ' '? 'mfu'  |  'mfu' ' '? (of|=|:|is)? ' '? NUM ' '? '%'?
//   flops = NUM ' '? [gtpe] 'flop' (s|/s|/sec)? (' '? SCOPE)?
//   rate  = NUM ' '? [kmbt]? ' '? (tokens?|tok) (' '?/' '?s | ' '?/' '?sec | ' per s'(ec(ond)?)?)
//           (' '? (/ ?gpu|per gpu|/ ?device|per device))?
struct Scan {
  std::string_view s;

  bool Lit(std::string_view w) {
    if (s.substr(0, w.size()) != w) return false;
    s.remove_prefix(w.size());
    return true;
  }
  void OptSpace() { Lit(" "); }
  // One of `chars`, or 0.
  char OneOf(std::string_view chars) {
    if (!s.empty() && chars.find(s.front()) != std::string_view::npos) {
      const char c = s.front();
      s.remove_prefix(1);
      return c;
    }
    return 0;
  }
  size_t Digits() {
    size_t n = 0;
    while (n < s.size() && s[n] >= '0' && s[n] <= '9') ++n;
    return n;
  }
  // NUM; its text, or empty when there is none. The exponent is taken when well formed (the
  // regex's greedy group: after a number comes a space, a letter other than a digit, or '%').
  std::string_view Number() {
    const std::string_view start = s;
    size_t n = Digits();
    s.remove_prefix(n);
    if (!s.empty() && s.front() == '.') {
      s.remove_prefix(1);
      const size_t frac = Digits();
      if (frac == 0) {
        s = start;
        return {};
      }
      s.remove_prefix(frac);
      n += 1 + frac;
    } else if (n == 0) {
      s = start;
      return {};
    }
    if (!s.empty() && s.front() == 'e') {
      size_t k = 1;
      if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
      size_t d = 0;
      while (k + d < s.size() && s[k + d] >= '0' && s[k + d] <= '9') ++d;
      if (d > 0) {
        s.remove_prefix(k + d);
        n += k + d;
      }
    }
    return start.substr(0, n);
  }
  // "tokens", "token" or "tok".
  bool Tokens() { return Lit("tokens") || Lit("token") || Lit("tok"); }
  bool End() const { return s.empty(); }
};

bool IsDuration(std::string_view u) {
  for (std::string_view w :
       {"s",  "sec", "secs", "second", "seconds", "min", "mins", "minute", "minutes", "h",
        "hr", "hrs", "hour", "hours",  "d",       "day", "days", "w",      "week",    "weeks"}) {
    if (u == w) return true;
  }
  return false;
}

// What follows the number of a rate or a time to train: [kmbt]? then the token word, with the
// rest checked by `tail`. Tried with the suffix letter and without it ("5 tokens/s": the 't' of
// "tokens" is not the suffix T).
template <class Tail>
bool SuffixedTokens(Scan sc, char* suffix, Tail tail) {
  for (int with = 1; with >= 0; --with) {
    Scan t = sc;
    t.OptSpace();
    char c = 0;
    if (with == 1 && (c = t.OneOf("kmbt")) == 0) continue;
    t.OptSpace();
    if (!t.Tokens()) continue;
    // Greedy "tokens" is safe: no tail starts with 's' or "en".
    if (tail(t)) {
      *suffix = c;
      return true;
    }
  }
  return false;
}

bool RateTail(Scan t, bool* per_gpu) {
  bool unit = false;
  for (std::string_view u : {" per second", " per sec", " per s"}) {
    Scan k = t;
    if (k.Lit(u)) {
      t = k;
      unit = true;
      break;
    }
  }
  if (!unit) {
    t.OptSpace();
    if (!t.Lit("/")) return false;
    t.OptSpace();
    if (!t.Lit("sec") && !t.Lit("s")) return false;
  }
  if (t.End()) {
    *per_gpu = false;
    return true;
  }
  t.OptSpace();
  for (std::string_view scope : {"/ gpu", "/gpu", "per gpu", "/ device", "/device", "per device"}) {
    if (t.s == scope) {
      *per_gpu = true;
      return true;
    }
  }
  return false;
}

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> ParseLayoutOption(
    const std::string& text) {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> kKeys = {
      {{"dp"}, "parallel.dp"},
      {{"tp"}, "parallel.tp"},
      {{"pp"}, "parallel.pp"},
      {{"cp"}, "parallel.cp"},
      {{"ep"}, "parallel.ep"},
      {{"vp", "virtual_stages"}, "parallel.virtual_stages"},
      {{"mbg", "microbatch_group_size_per_vp_stage"},
       "parallel.microbatch_group_size_per_vp_stage"},
      {{"schedule"}, "parallel.schedule"},
      {{"zero", "zero_stage"}, "parallel.zero_stage"},
      {{"sp", "sequence_parallel"}, "parallel.sequence_parallel"},
      {{"mb", "micro_batch"}, "training.micro_batch"},
      {{"recompute"}, "training.recompute"},
  };
  const std::string accepted =
      "dp, tp, pp, cp, ep, vp, mbg, schedule, zero, sp, mb, recompute (e.g. "
      "\"tp=4,pp=4,vp=5,mb=1\")";
  std::vector<std::pair<std::string, std::string>> out;
  bool schedule_given = false, interleave = false;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    start = end + 1;
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty()) {
      if (end == text.size()) break;
      continue;
    }
    const size_t eq = item.find('=');
    const std::string key = eq == std::string::npos ? item : item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    std::string dotted;
    for (const auto& [names, path] : kKeys) {
      for (const std::string& n : names) {
        if (n == key) dotted = path;
      }
    }
    if (dotted.empty() || value.empty()) {
      return Status::Invalid("--layout: '" + item + "' is not KEY=VALUE with KEY one of " +
                             accepted);
    }
    for (const auto& [k, v] : out) {
      if (k == dotted) return Status::Invalid("--layout: " + key + " is given twice");
    }
    if (dotted == "parallel.schedule") schedule_given = true;
    if (dotted == "parallel.virtual_stages" && value != "1") interleave = true;
    out.emplace_back(dotted, value);
    if (end == text.size()) break;
  }
  if (out.empty()) return Status::Invalid("--layout: empty; give KEY=VALUE items of " + accepted);
  if (interleave && !schedule_given) out.emplace_back("parallel.schedule", "interleaved_1f1b");
  return out;
}

Result<Claim> ParseClaim(const std::string& text) {
  std::string norm = Normalize(text);
  const int64_t seq = TakeSequence(norm);
  if (seq < 0) {
    return Status::Invalid("claim \"" + text +
                           "\": the sequence length must be a positive integer (\"at seq 4096\")");
  }
  Claim c;
  c.text = text;
  c.seq_len = seq;
  // strtod, not stod: a figure too large for a double reads as infinity and is refused below
  // instead of throwing std::out_of_range.
  auto number = [](std::string_view t) { return std::strtod(std::string(t).c_str(), nullptr); };
  const Scan all{norm};
  bool parsed = false;
  // A time to train: "15t tokens in 54 days".
  {
    Scan sc = all;
    const std::string_view tokens = sc.Number();
    char suffix = 0;
    std::string_view duration_num, duration_unit;
    if (!tokens.empty() && SuffixedTokens(sc, &suffix, [&](Scan t) {
          if (!t.Lit(" in ")) return false;
          duration_num = t.Number();
          if (duration_num.empty()) return false;
          t.OptSpace();
          duration_unit = t.s;
          return IsDuration(duration_unit);
        })) {
      c.kind = ClaimKind::kTimeToTrain;
      c.train_tokens = number(tokens) * Suffix(std::string(suffix ? 1 : 0, suffix));
      c.value = number(duration_num) * DurationUnit(std::string(duration_unit));
      parsed = true;
    }
  }
  // MFU: "45% mfu", "0.45 mfu", "mfu of 45%".
  if (!parsed) {
    Scan sc = all;
    std::string_view num = sc.Number();
    bool percent = false;
    bool ok = false;
    if (!num.empty()) {
      sc.OptSpace();
      percent = sc.Lit("%");
      sc.OptSpace();
      ok = sc.Lit("mfu") && sc.End();
    } else if (sc.Lit("mfu")) {
      sc.OptSpace();
      // A number never starts with a letter or a sign, so taking the word is never wrong.
      for (std::string_view w : {"of", "=", ":", "is"}) {
        if (sc.Lit(w)) break;
      }
      sc.OptSpace();
      num = sc.Number();
      if (!num.empty()) {
        sc.OptSpace();
        percent = sc.Lit("%");
        ok = sc.End();
      }
    }
    if (ok) {
      c.kind = ClaimKind::kMfu;
      c.value = number(num);
      if (percent || c.value > 1.0) c.value /= 100.0;
      parsed = true;
    }
  }
  // FLOP/s: "400 tflop/s per gpu", "200 pflop/s total".
  if (!parsed) {
    Scan sc = all;
    const std::string_view num = sc.Number();
    Scan t = sc;
    t.OptSpace();
    const char prefix = num.empty() ? 0 : t.OneOf("gtpe");
    if (prefix != 0 && t.Lit("flop")) {
      // (s|/s|/sec)? then the scope: each reading is tried, as the regex's alternatives were.
      for (std::string_view unit : {"/sec", "/s", "s", ""}) {
        Scan u = t;
        if (!u.Lit(unit)) continue;
        std::string_view scope;
        bool ok = u.End();
        if (!ok) {
          Scan v = u;
          v.OptSpace();
          for (std::string_view w : {"/ gpu", "/gpu", "per gpu", "/ device", "/device",
                                     "per device", "total", "aggregate", "in total"}) {
            if (v.s == w) {
              scope = w;
              ok = true;
            }
          }
        }
        if (!ok) continue;
        if (scope.empty()) {
          return Status::Invalid(
              "claim \"" + text + "\": say whether the FLOP/s are per GPU (\"" + std::string(num) +
              " " + static_cast<char>(std::toupper(static_cast<unsigned char>(prefix))) +
              "FLOP/s per GPU\") or in total (\"... total\")");
        }
        const bool total = scope == "total" || scope == "aggregate" || scope == "in total";
        c.kind = total ? ClaimKind::kFlopsTotal : ClaimKind::kFlopsPerGpu;
        c.value = number(num) * Suffix(std::string(1, prefix));
        parsed = true;
        break;
      }
    }
  }
  // Tokens per second: "1200 tokens/s/gpu", "3.2m tokens/s".
  if (!parsed) {
    Scan sc = all;
    const std::string_view num = sc.Number();
    char suffix = 0;
    bool per_gpu = false;
    if (!num.empty() &&
        SuffixedTokens(sc, &suffix, [&](Scan t) { return RateTail(t, &per_gpu); })) {
      c.kind = per_gpu ? ClaimKind::kTokensPerSPerGpu : ClaimKind::kTokensPerS;
      c.value = number(num) * Suffix(std::string(suffix ? 1 : 0, suffix));
      parsed = true;
    }
  }
  if (!parsed) {
    return Status::Invalid("claim \"" + text + "\" is not in a form shardsim reads; " + kForms);
  }
  if (!std::isfinite(c.train_tokens)) {
    return Status::Invalid("claim \"" + text + "\": the figure must be a positive number");
  }
  if (!(c.value > 0.0) || !std::isfinite(c.value) ||
      (c.kind == ClaimKind::kTimeToTrain && !(c.train_tokens > 0.0))) {
    return Status::Invalid("claim \"" + text + "\": the figure must be a positive number");
  }
  return c;
}

}  // namespace shardsim
