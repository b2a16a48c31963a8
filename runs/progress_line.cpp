#include "runs/progress_line.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "core/types.hpp"

namespace clm {

ProgressMode progress_mode(const std::string& text) {
  if (text == "auto") return isatty(STDERR_FILENO) ? ProgressMode::kTerminal : ProgressMode::kPlain;
  if (text == "always") return ProgressMode::kAlways;
  if (text == "never") return ProgressMode::kNever;
  throw InputError("--progress must be auto, always or never, got '" + text + "'");
}

ProgressLine::Timing ProgressLine::default_timing(ProgressMode mode) {
  switch (mode) {
    case ProgressMode::kTerminal:
      return {2.0, 0.25};  // work under 2 s shows nothing; redraws at 4 Hz
    case ProgressMode::kPlain:
      return {30.0, 30.0};  // a log line every 30 s, only for work that takes that long
    case ProgressMode::kAlways:
      return {0.0, 1.0};
    case ProgressMode::kNever:
      break;
  }
  return {0.0, 0.0};
}

ProgressLine::Clock ProgressLine::steady_seconds() {
  return [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
}

std::string ProgressLine::number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", value);
  return buf;
}

std::string ProgressLine::duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  // A run that will not finish in a lifetime (rk4 at dt 1e-300) said "ETA -9223372036854775808 s": the
  // estimate overflowed lround (issue 21).
  constexpr double kCentury = 100 * 365.25 * 86400;
  if (seconds >= kCentury) return "more than 100 years";
  char buf[64];
  const long s = std::lround(seconds);
  if (s >= 2 * 86400) {
    std::snprintf(buf, sizeof buf, "%ld d %02ld h", s / 86400, (s % 86400) / 3600);
    return buf;
  }
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%ld s", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", s / 3600, (s % 3600) / 60);
  }
  return buf;
}

ProgressLine::ProgressLine(std::ostream& out, ProgressMode mode, std::string label, Clock clock, Timing timing)
    : out_(out), mode_(mode), label_(std::move(label)), clock_(std::move(clock)), timing_(timing) {
  if (timing_.delay_s < 0) timing_ = default_timing(mode_);
  start_ = clock_();
}

bool ProgressLine::due() const {
  if (mode_ == ProgressMode::kNever) return false;
  const double now = clock_();
  if (now - start_ < timing_.delay_s) return false;
  return last_draw_ < 0 || now - last_draw_ >= timing_.redraw_s;
}

std::string ProgressLine::line(double fraction, const std::string& detail, bool closing) const {
  const double f = std::clamp(fraction, 0.0, 1.0);
  const double elapsed = clock_() - start_;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%5.1f%%", 100 * f);
  std::ostringstream s;
  s << label_ << ": " << pct;
  if (!detail.empty()) s << ", " << detail;
  s << ", elapsed " << duration_text(elapsed);
  if (!closing && f < 1) s << ", ETA " << (f > 0 ? duration_text(elapsed * (1 - f) / f) : std::string("-"));
  return s.str();
}

void ProgressLine::draw(const std::string& text) {
  if (mode_ == ProgressMode::kTerminal) {
    // \r and erase-to-end-of-line: the line is redrawn in place.
    out_ << "\r\033[K" << text << std::flush;
    drawn_width_ = text.size();
  } else {
    out_ << text << "\n" << std::flush;
  }
  last_draw_ = clock_();
  ++lines_;
}

void ProgressLine::update(double fraction, const std::string& detail) {
  if (due()) draw(line(fraction, detail));
}

void ProgressLine::update(double fraction, const std::function<std::string()>& detail) {
  if (due()) draw(line(fraction, detail()));
}

void ProgressLine::finish(double fraction, const std::string& detail) {
  switch (mode_) {
    case ProgressMode::kTerminal:
      if (drawn_width_ > 0) out_ << "\r\033[K" << std::flush;
      drawn_width_ = 0;
      break;
    case ProgressMode::kPlain:
      if (lines_ > 0) draw(line(fraction, detail, true));
      break;
    case ProgressMode::kAlways:
      draw(line(fraction, detail, true));
      break;
    case ProgressMode::kNever:
      break;
  }
}

}  // namespace clm
