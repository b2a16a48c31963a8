// A progress display for long work on stderr: one line redrawn in place on a terminal, plain lines at a
// slow pace otherwise (a CI log or `2> file` then still shows that a long run is alive), nothing for work
// that finishes quickly. Used for a run's integration (fraction of t_end, steps/s, ETA) and for the runs of
// a sweep (runs done / total, failures, ETA).
//
// Modes (the --progress flag): auto = kTerminal when stderr is a terminal, else kPlain; always = kPlain
// from the first update with a closing line (what a test or a log that must show progress uses); never.
// Timing comes from an injectable clock so that tests can drive it.
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>

namespace clm {

enum class ProgressMode { kNever, kTerminal, kPlain, kAlways };

// Parses the --progress value ("auto" | "always" | "never"); auto resolves against whether stderr is a
// terminal. InputError for any other text.
ProgressMode progress_mode(const std::string& text);

class ProgressLine {
 public:
  using Clock = std::function<double()>;  // seconds, monotone

  struct Timing {
    double delay_s;     // nothing is shown before this much time has passed (kTerminal, kPlain)
    double redraw_s;    // minimum time between two lines (kTerminal: redraws; kPlain/kAlways: lines)
  };
  static Timing default_timing(ProgressMode mode);

  // `label` starts every line ("run sleigh_kkt", "sweep").
  ProgressLine(std::ostream& out, ProgressMode mode, std::string label, Clock clock = steady_seconds(),
               Timing timing = {-1, -1});

  // fraction in [0, 1] of the work done; detail is appended after the percentage ("t = 4.2 of 10,
  // 1.2e6 steps/s"). Cheap when nothing is due (one clock read).
  void update(double fraction, const std::string& detail);
  // Like update, but the detail is built only when a line is due.
  void update(double fraction, const std::function<std::string()>& detail);
  // Ends the display: a terminal line is cleared (the caller prints its own result line); kAlways prints
  // a closing line (fraction reached, detail, elapsed); kPlain prints one only when it printed before.
  void finish(double fraction, const std::string& detail);

  double elapsed() const { return clock_() - start_; }
  bool shown() const { return lines_ > 0; }

  static Clock steady_seconds();
  // 4 significant digits ("4.2", "1.235e+06"): a number for a human, not for reading back.
  static std::string number(double value);
  // "12 s", "3 min 05 s", "2 h 10 min": a duration for a human.
  static std::string duration_text(double seconds);

 private:
  std::string line(double fraction, const std::string& detail, bool closing = false) const;
  bool due() const;
  void draw(const std::string& text);

  std::ostream& out_;
  ProgressMode mode_;
  std::string label_;
  Clock clock_;
  Timing timing_;
  double start_;
  double last_draw_ = -1;
  long lines_ = 0;
  size_t drawn_width_ = 0;
};

}  // namespace clm
