// `clmbench analyze --problem P --speed LIST [--out F.h5]`: eigenvalues of the linearization about steady
// motion (analysis/steady_motion.hpp) against speed, and the speeds where the stability changes
// (for the bicycle the weave and capsize speeds of [Meijaard-2007]).
//
// Per speed: the 2k eigenvalues of dF/dz (Eigen's EigenSolver on the 2k x 2k Jacobian), sorted by real part
// descending and, within a conjugate pair, positive imaginary part first. Stability changes: between
// consecutive speeds of the (sorted) list where the spectral abscissa g(v) = max Re(eigenvalue) changes
// sign, the root of g is bracketed and bisected to 1e-12 (1 + v) (each bisection step is one linearization);
// it is named by the eigenvalue that crosses: an oscillatory pair (|Im| above 1e-6 (1 + max |eigenvalue|))
// gives the problem's oscillatory name ("weave"), a real one its real name ("capsize"). Only changes the
// speed list brackets are found.
// HDF5 (issue 12): /analysis/speed [K], /analysis/eigenvalues_real and /analysis/eigenvalues_imag [K, 2k],
// attributes problem, speed_unit, state_names, param.<name>, and <name>_speed for each stability change
// found (<name>_speed_2 for a second one of the same kind).
#pragma once

#include <cmath>
#include <complex>
#include <map>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "analysis/steady_motion.hpp"

namespace clm {

struct StabilityChange {
  std::string name;      // "weave", "capsize", ...
  double speed = 0;      // where the spectral abscissa crosses zero
  bool stable_above = false;  // the crossing eigenvalue's real part is negative just above the speed
  double published = std::nan("");  // the published speed of this change (default parameters only), else NaN
  std::string source;               // its docs/references.md key
};

struct SpeedAnalysis {
  std::string problem;
  std::string speed_unit;
  std::vector<std::string> state_names;
  std::vector<double> speeds;                                    // as given
  std::vector<std::vector<std::complex<double>>> eigenvalues;    // per speed, sorted (see above)
  std::vector<StabilityChange> changes;                          // in increasing speed
  std::vector<std::pair<std::string, double>> parameters;        // resolved (analyze_problem_speeds)
};

// Eigenvalues of J sorted by real part descending, then imaginary part descending.
std::vector<std::complex<double>> sorted_eigenvalues(const Mat& J);

SpeedAnalysis analyze_speeds(const std::string& problem, const SteadyMotionLinearizer& linearizer,
                             const std::vector<double>& speeds);

// Human-readable: the table speed | eigenvalues (re, im), then one line per stability change,
// "weave speed = 4.292382536341 m/s (...)".
std::string format_speed_analysis(const SpeedAnalysis& a);

// "0,0.5,1" (commas and/or blanks) or "start:stop:step" (stop included when it is reached within
// 1e-9 step); finite, at most 100000 speeds. InputError naming `what` otherwise.
std::vector<double> parse_speed_list(const std::string& text, const std::string& what);


}  // namespace clm
