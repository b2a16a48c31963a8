// PendulumCartesianFile: exported by `clmbench mechanism export` from the mechanism file
// tests/data/mechanisms/pendulum_cartesian.toml (sha256 db6afa9f4b4494ba380794eb2fcc7eca9c885c212eb363d39bc3c119771679b7).
// The terms the suite derives from the file (M = d2T/dqd2, V - T0, h)
// as templated straight-line code; equal to the file's tapes to round-off (parameter products the tapes fold
// into constants are computed here). Do not edit: export again.
// Promote it to the zoo: problems/NAME.hpp, runs/zoo/NAME.cpp and a line in runs/zoo/zoo.def (docs/guide/extending.md).
#pragma once

#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/elementary_functions.hpp"
#include "core/problem.hpp"

namespace clm {

struct PendulumCartesianFile {
  static constexpr const char* kName = "pendulum_cartesian_file";
  static constexpr const char* kDescription = "planar pendulum in Cartesian coordinates, y up";
  static constexpr int kDof = 2;
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr const char* kCoordinateNames[] = {"x", "y"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m"};

  double m = 1.0;
  double L = 1.0;
  double g = 9.81;
  static constexpr std::array kParameters = {
      ParameterSpec<PendulumCartesianFile>{"m", &PendulumCartesianFile::m, "bob mass [kg]"},
      ParameterSpec<PendulumCartesianFile>{"L", &PendulumCartesianFile::L, "rod length [m]"},
      ParameterSpec<PendulumCartesianFile>{"g", &PendulumCartesianFile::g, "gravity, along -y [m/s^2]"},
  };

  int dof() const { return 2; }
  int constraints() const { return 1; }
  void validate() const {
    if (!std::isfinite(m)) throw InputError("pendulum_cartesian_file: parameter m must be finite");
    if (m < 0.0) throw InputError("pendulum_cartesian_file: parameter m is below its min 0.0");
    if (!std::isfinite(L)) throw InputError("pendulum_cartesian_file: parameter L must be finite");
    if (L < 0.0) throw InputError("pendulum_cartesian_file: parameter L is below its min 0.0");
    if (!std::isfinite(g)) throw InputError("pendulum_cartesian_file: parameter g must be finite");
  }

  template <class T>
  void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out) const {
    using namespace elementary;
    const T v9 = T(m) / T(2.0);
    const T v20 = T(2.0) * v9;
    out(0, 0) = v20;
    out(0, 1) = T(0.0);
    out(1, 0) = T(0.0);
    out(1, 1) = v20;
  }

  template <class T>
  T potential([[maybe_unused]] const VecN<T, kDof>& q_in) const {
    using namespace elementary;
    const T v14 = T(m) * T(g);
    const T v15 = q_in[1] * v14;
    return v15;
  }

  template <class T>
  void constraint([[maybe_unused]] const VecN<T, kDof>& q_in, VecN<T, kConstraints>& out) const {
    using namespace elementary;
    const T v23 = t_pow(q_in[0], 2.0);
    const T v24 = t_pow(q_in[1], 2.0);
    const T v25 = v23 + v24;
    const T v26 = t_pow(T(L), 2.0);
    const T v27 = v25 - v26;
    const T v28 = v27 / T(2.0);
    out[0] = v28;
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    using T = double;
    using namespace elementary;
    q0.resize(2);
    qd0.resize(2);
    const T v30 = T(L) * T(0.8414709848078965);
    const T v31 = -T(L);
    const T v33 = v31 * T(0.5403023058681398);
    const T v34 = T(L) * T(0.5403023058681398);
    const T v36 = v34 * T(0.5);
    const T v37 = v30 * T(0.5);
    q0[0] = v30;
    q0[1] = v33;
    qd0[0] = v36;
    qd0[1] = v37;
  }
};

}  // namespace clm
