// Least-squares fit log10(y) = slope log10(x) + intercept: convergence orders (error vs step) and
// Kozlov's limit rates (error vs N) are both read off this line.
#pragma once

#include <cmath>
#include <vector>

namespace clm {

struct LogLogFit {
  double slope = NAN;
  double intercept = NAN;  // log10(y) at x = 1
  double residual = NAN;   // RMS of the log10 residuals
  int points = 0;          // finite, positive pairs used
};

// Pairs with a non-finite or non-positive x or y are skipped (a diverged run's NaN error, say).
inline LogLogFit fit_loglog(const std::vector<double>& x, const std::vector<double>& y) {
  LogLogFit fit;
  std::vector<double> lx, ly;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (std::isfinite(x[i]) && std::isfinite(y[i]) && x[i] > 0 && y[i] > 0) {
      lx.push_back(std::log10(x[i]));
      ly.push_back(std::log10(y[i]));
    }
  }
  fit.points = int(lx.size());
  if (fit.points < 2) return fit;
  double mx = 0, my = 0;
  for (int i = 0; i < fit.points; ++i) {
    mx += lx[i] / fit.points;
    my += ly[i] / fit.points;
  }
  double sxy = 0, sxx = 0;
  for (int i = 0; i < fit.points; ++i) {
    sxy += (lx[i] - mx) * (ly[i] - my);
    sxx += (lx[i] - mx) * (lx[i] - mx);
  }
  if (sxx == 0) return fit;
  fit.slope = sxy / sxx;
  fit.intercept = my - fit.slope * mx;
  double ss = 0;
  for (int i = 0; i < fit.points; ++i) {
    const double r = ly[i] - (fit.slope * lx[i] + fit.intercept);
    ss += r * r;
  }
  fit.residual = std::sqrt(ss / fit.points);
  return fit;
}

}  // namespace clm
