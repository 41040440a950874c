#include "sim/sweep/progress.h"

#include <algorithm>
#include <cmath>

#include "sim/base/units.h"

namespace shardsim {
namespace {

constexpr int kBarWidth = 30;

// "47 s", "12 min 5 s", "3 h 20 min"
std::string Duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const int64_t t = static_cast<int64_t>(std::llround(s));
  if (t < 60) return std::to_string(t) + " s";
  if (t < 3600) return std::to_string(t / 60) + " min " + std::to_string(t % 60) + " s";
  return std::to_string(t / 3600) + " h " + std::to_string(t % 3600 / 60) + " min";
}

}  // namespace

Result<ProgressStyle> ParseProgressStyle(const std::string& text, bool terminal) {
  if (text == "auto") return terminal ? ProgressStyle::kBar : ProgressStyle::kPlain;
  if (text == "bar") return ProgressStyle::kBar;
  if (text == "plain") return ProgressStyle::kPlain;
  if (text == "none") return ProgressStyle::kNone;
  return Status::Invalid("--progress: expected auto, bar, plain or none, got \"" + text + "\"");
}

ProgressMeter::ProgressMeter(ProgressStyle style, std::string label, double plain_every_s,
                             double bar_every_s)
    : style_(style),
      label_(std::move(label)),
      plain_every_s_(plain_every_s),
      bar_every_s_(bar_every_s) {}

std::string ProgressMeter::Line(const SweepProgress& p, double now_s) const {
  const int64_t fresh = p.done - p.resumed;
  const double rate = now_s > 0 ? static_cast<double>(fresh) / now_s : 0.0;
  const double left = rate > 0 ? static_cast<double>(p.total - p.done) / rate : NAN;
  const double frac =
      p.total > 0 ? static_cast<double>(p.done) / static_cast<double>(p.total) : 1.0;
  const std::string counts = std::to_string(p.done) + "/" + std::to_string(p.total);
  const std::string rest =
      FormatSig(100.0 * frac, 3) + "%, " + FormatSig(rate, 3) + " points/s, " +
      (p.done >= p.total ? "done in " + Duration(now_s) : "ETA " + Duration(left)) + ", " +
      std::to_string(p.feasible) + " feasible";
  if (style_ == ProgressStyle::kBar) {
    const int filled = static_cast<int>(std::floor(frac * kBarWidth));
    return "\r" + label_ + " [" + std::string(static_cast<size_t>(filled), '#') +
           std::string(static_cast<size_t>(kBarWidth - filled), '.') + "] " + counts + " " + rest +
           "   ";
  }
  return label_ + ": " + counts + " points (" + rest + ")\n";
}

std::string ProgressMeter::Update(const SweepProgress& p, double now_s) {
  if (style_ == ProgressStyle::kNone) return "";
  const double every = style_ == ProgressStyle::kBar ? bar_every_s_ : plain_every_s_;
  if (now_s - last_s_ < every) return "";
  last_s_ = now_s;
  return Line(p, now_s);
}

std::string ProgressMeter::Finish(const SweepProgress& p, double now_s) {
  if (style_ == ProgressStyle::kNone) return "";
  return Line(p, now_s) + (style_ == ProgressStyle::kBar ? "\n" : "");
}

}  // namespace shardsim
