// Eigenvalues against speed and the stability changes (analysis/speed_analysis.hpp).
#include "analysis/speed_analysis.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/value_parsing.hpp"

namespace clm {

std::vector<std::complex<double>> sorted_eigenvalues(const Mat& J) {
  const Eigen::EigenSolver<Mat> es(J, false);
  if (es.info() != Eigen::Success) throw NumericalFailure("eigenvalues of the linearization did not converge");
  std::vector<std::complex<double>> ev(es.eigenvalues().data(), es.eigenvalues().data() + es.eigenvalues().size());
  std::sort(ev.begin(), ev.end(), [](const std::complex<double>& a, const std::complex<double>& b) {
    return a.real() != b.real() ? a.real() > b.real() : a.imag() > b.imag();
  });
  return ev;
}

namespace {

double spectral_abscissa(const std::vector<std::complex<double>>& ev) { return ev.front().real(); }

// The eigenvalue with the largest real part (a conjugate pair's upper member) is oscillatory when its
// imaginary part is not round-off.
bool leading_is_oscillatory(const std::vector<std::complex<double>>& ev) {
  double scale = 1;
  for (const auto& e : ev) scale = std::max(scale, std::abs(e));
  return std::abs(ev.front().imag()) > 1e-6 * scale;
}

}  // namespace

SpeedAnalysis analyze_speeds(const std::string& problem, const SteadyMotionLinearizer& lin,
                             const std::vector<double>& speeds) {
  SpeedAnalysis a;
  a.problem = problem;
  a.speed_unit = lin.speed_unit();
  a.state_names = lin.state_names();
  a.speeds = speeds;
  auto at = [&](double v) { return sorted_eigenvalues(lin.jacobian(v)); };
  for (double v : speeds) a.eigenvalues.push_back(at(v));

  std::vector<std::pair<double, double>> grid;  // (speed, abscissa), sorted, unique
  for (size_t i = 0; i < speeds.size(); ++i) grid.emplace_back(speeds[i], spectral_abscissa(a.eigenvalues[i]));
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end(), [](auto x, auto y) { return x.first == y.first; }), grid.end());
  for (size_t i = 0; i + 1 < grid.size(); ++i) {
    double lo = grid[i].first, hi = grid[i + 1].first, glo = grid[i].second, ghi = grid[i + 1].second;
    if (!(glo > 0 && ghi < 0) && !(glo < 0 && ghi > 0)) continue;
    const bool stable_above = ghi < 0;
    while (hi - lo > 1e-12 * (1 + std::abs(hi))) {
      const double mid = 0.5 * (lo + hi);
      const double gm = spectral_abscissa(at(mid));
      if ((gm > 0) == (glo > 0)) lo = mid;
      else hi = mid;
    }
    const double root = 0.5 * (lo + hi);
    const auto ev = at(root);
    const std::string name = leading_is_oscillatory(ev) ? lin.oscillatory_crossing_name() : lin.real_crossing_name();
    a.changes.push_back({name, root, stable_above, lin.published_crossing_speed(name), lin.published_crossing_source()});
  }
  return a;
}

std::string format_speed_analysis(const SpeedAnalysis& a) {
  std::ostringstream s;
  const std::string unit = a.speed_unit.empty() ? "" : " " + a.speed_unit;
  s << "Linearization of " << a.problem << " about steady motion, state (";
  for (size_t i = 0; i < a.state_names.size(); ++i) s << (i ? ", " : "") << a.state_names[i];
  s << "); eigenvalues sorted by real part (re, im)\n";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%12s", ("speed" + (unit.empty() ? "" : " [" + a.speed_unit + "]")).c_str());
  s << buf;
  for (size_t k = 0; k < (a.eigenvalues.empty() ? 0 : a.eigenvalues.front().size()); ++k) {
    std::snprintf(buf, sizeof buf, "  %18s %18s", ("re" + std::to_string(k + 1)).c_str(), ("im" + std::to_string(k + 1)).c_str());
    s << buf;
  }
  s << "\n";
  for (size_t i = 0; i < a.speeds.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%12.6g", a.speeds[i]);
    s << buf;
    for (const auto& e : a.eigenvalues[i]) {
      std::snprintf(buf, sizeof buf, "  %18.14f %18.14f", e.real(), e.imag());
      s << buf;
    }
    s << "\n";
  }
  if (a.changes.empty()) s << "no change of stability between the speeds given\n";
  for (const auto& c : a.changes) {
    std::snprintf(buf, sizeof buf, "%.13g", c.speed);
    s << c.name << " speed = " << buf << unit << " ("
      << (c.stable_above ? "stable just above, unstable just below" : "unstable just above, stable just below")
      << ")";
    if (std::isfinite(c.published)) {
      // Digits shared with the published value: -log10 of the relative difference.
      const double d = std::abs(c.speed - c.published) / std::abs(c.published);
      char pub[64], dig[32];
      std::snprintf(pub, sizeof pub, "%.15g", c.published);
      if (d == 0) std::snprintf(dig, sizeof dig, "all digits");
      else std::snprintf(dig, sizeof dig, "%.1f digits", -std::log10(d));
      s << "; published " << pub << unit << " [" << c.source << "]: " << dig;
    }
    s << "\n";
  }
  return s.str();
}

std::vector<double> parse_speed_list(const std::string& text, const std::string& what) {
  std::vector<double> out;
  if (text.find(':') != std::string::npos) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
      const size_t colon = text.find(':', start);
      parts.push_back(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    if (parts.size() != 3) throw InputError(what + ": a range is start:stop:step, got '" + echo_value(text) + "'");
    const double a = parse_number(parts[0], what + " start"), b = parse_number(parts[1], what + " stop"),
                 h = parse_number(parts[2], what + " step");
    if (!(h > 0)) throw InputError(what + ": the step of '" + echo_value(text) + "' must be > 0");
    if (b < a) throw InputError(what + ": stop < start in '" + echo_value(text) + "'");
    const double count = std::floor((b - a) / h + 1e-9);
    if (count > 1e5) throw InputError(what + ": '" + echo_value(text) + "' gives more than 100000 speeds");
    for (long i = 0; i <= static_cast<long>(count); ++i) out.push_back(a + static_cast<double>(i) * h);
  } else {
    out = parse_number_list(text, what);
    if (out.size() > 100000) throw InputError(what + ": more than 100000 speeds");
  }
  return out;
}



}  // namespace clm
