// Reading a throughput claim written the way vendors and papers write them.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>
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
// 0 when there is none. -1 when it is there but not a positive integer in range.
int64_t TakeSequence(std::string& s) {
  static const std::string kLead = R"(^(.*?)[ ,]*(?:at |@ ?|with |for )?)";
  static const std::string kWord =
      R"((?:seq(?:uence)?s?(?: length| len)?|context(?: length)?|ctx))";
  static const std::regex kWordFirst(kLead + kWord +
                                     R"( ?(?:=|:|of)? ?([0-9]+) ?(k)?(?: tokens?)?$)");
  static const std::regex kNumberFirst(kLead + R"(([0-9]+) ?(k)?(?:-| )?(?:tokens? )?)" + kWord +
                                       "$");
  std::smatch m;
  if (!std::regex_match(s, m, kWordFirst) && !std::regex_match(s, m, kNumberFirst)) return 0;
  const std::string digits = m[2];
  const bool k = m[3].matched;
  std::string rest = m[1];
  if (digits.size() > 9) return -1;
  const int64_t v = std::atoll(digits.c_str()) * (k ? 1024 : 1);
  if (v < 1) return -1;
  s = rest;
  return v;
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

Result<std::vector<std::pair<std::string, std::string>>> ParseLayoutOption(
    const std::string& text) {
  static const std::vector<std::pair<std::vector<std::string>, std::string>> kKeys = {
      {{"dp"}, "parallel.dp"},
      {{"tp"}, "parallel.tp"},
      {{"pp"}, "parallel.pp"},
      {{"cp"}, "parallel.cp"},
      {{"ep"}, "parallel.ep"},
      {{"vp", "virtual_stages"}, "parallel.virtual_stages"},
      {{"schedule"}, "parallel.schedule"},
      {{"zero", "zero_stage"}, "parallel.zero_stage"},
      {{"sp", "sequence_parallel"}, "parallel.sequence_parallel"},
      {{"mb", "micro_batch"}, "training.micro_batch"},
      {{"recompute"}, "training.recompute"},
  };
  const std::string accepted =
      "dp, tp, pp, cp, ep, vp, schedule, zero, sp, mb, recompute (e.g. "
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
  std::string s = Normalize(text);
  const int64_t seq = TakeSequence(s);
  if (seq < 0) {
    return Status::Invalid("claim \"" + text +
                           "\": the sequence length must be a positive integer (\"at seq 4096\")");
  }
  static const std::string kNum = R"(([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?))";
  static const std::regex kTrain(
      "^" + kNum + R"( ?([kmbt])? ?(?:tokens?|tok) in )" + kNum +
      R"( ?(s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?)$)");
  static const std::regex kMfuAfter("^" + kNum + R"( ?(%)? ?mfu$)");
  static const std::regex kMfuBefore("^mfu ?(?:of|=|:|is)? ?" + kNum + R"( ?(%)?$)");
  static const std::regex kFlops(
      "^" + kNum +
      R"( ?([gtpe])flop(?:s|/s|/sec)?(?: ?(/ ?gpu|per gpu|/ ?device|per device|total|aggregate|in total))?$)");
  static const std::regex kTokens(
      "^" + kNum +
      R"( ?([kmbt])? ?(?:tokens?|tok)(?: ?/ ?s| ?/ ?sec| per s(?:ec(?:ond)?)?)(?: ?(/ ?gpu|per gpu|/ ?device|per device))?$)");
  Claim c;
  c.text = text;
  c.seq_len = seq;
  std::smatch m;
  // strtod, not stod: a figure too large for a double reads as infinity and is refused below
  // instead of throwing std::out_of_range.
  auto number = [](const std::string& t) { return std::strtod(t.c_str(), nullptr); };
  if (std::regex_match(s, m, kTrain)) {
    c.kind = ClaimKind::kTimeToTrain;
    c.train_tokens = number(m[1]) * Suffix(m[2]);
    c.value = number(m[3]) * DurationUnit(m[4]);
  } else if (std::regex_match(s, m, kMfuAfter) || std::regex_match(s, m, kMfuBefore)) {
    c.kind = ClaimKind::kMfu;
    c.value = number(m[1]);
    if (m[2].matched || c.value > 1.0) c.value /= 100.0;
  } else if (std::regex_match(s, m, kFlops)) {
    const std::string scope = m[3];
    if (scope.empty()) {
      return Status::Invalid(
          "claim \"" + text + "\": say whether the FLOP/s are per GPU (\"" + std::string(m[1]) +
          " " + static_cast<char>(std::toupper(static_cast<unsigned char>(*m[2].first))) +
          "FLOP/s per GPU\") or in total (\"... total\")");
    }
    const bool total = scope == "total" || scope == "aggregate" || scope == "in total";
    c.kind = total ? ClaimKind::kFlopsTotal : ClaimKind::kFlopsPerGpu;
    c.value = number(m[1]) * Suffix(m[2]);
  } else if (std::regex_match(s, m, kTokens)) {
    c.kind = m[3].matched ? ClaimKind::kTokensPerSPerGpu : ClaimKind::kTokensPerS;
    c.value = number(m[1]) * Suffix(m[2]);
  } else {
    return Status::Invalid("claim \"" + text + "\" is not in a form shardsim reads; " + kForms);
  }
  if (!(c.value > 0.0) || !std::isfinite(c.value) ||
      (c.kind == ClaimKind::kTimeToTrain && !(c.train_tokens > 0.0))) {
    return Status::Invalid("claim \"" + text + "\": the figure must be a positive number");
  }
  return c;
}

}  // namespace shardsim
