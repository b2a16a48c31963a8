// PendulumPolarFile: exported by `clmbench mechanism export` from the mechanism file
// tests/data/mechanisms/pendulum_polar.toml (sha256 0fd9cd1a549acbf494381f3044c3c94d3e3531420352022fec37d6ec0d176023).
// The terms the suite derives from the file (M = d2T/dqd2, V - T0, h, the forces)
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

struct PendulumPolarFile {
  static constexpr const char* kName = "pendulum_polar_file";
  static constexpr const char* kDescription = "planar pendulum in polar coordinates (r, theta), theta from the downward vertical";
  static constexpr int kDof = 2;
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr const char* kCoordinateNames[] = {"r", "theta"};
  static constexpr const char* kCoordinateUnits[] = {"m", "rad"};

  double m = 1.0;
  double L = 1.0;
  double g = 9.81;
  double fx = 0.0;
  static constexpr std::array kParameters = {
      ParameterSpec<PendulumPolarFile>{"m", &PendulumPolarFile::m, "[kg]"},
      ParameterSpec<PendulumPolarFile>{"L", &PendulumPolarFile::L, "[m]"},
      ParameterSpec<PendulumPolarFile>{"g", &PendulumPolarFile::g, "[m/s^2]"},
      ParameterSpec<PendulumPolarFile>{"fx", &PendulumPolarFile::fx, "horizontal force on the bob [N]"},
  };

  int dof() const { return 2; }
  int constraints() const { return 1; }
  void validate() const {
    if (!std::isfinite(m)) throw InputError("pendulum_polar_file: parameter m must be finite");
    if (m < 0.0) throw InputError("pendulum_polar_file: parameter m is below its min 0.0");
    if (!std::isfinite(L)) throw InputError("pendulum_polar_file: parameter L must be finite");
    if (L < 0.0) throw InputError("pendulum_polar_file: parameter L is below its min 0.0");
    if (!std::isfinite(g)) throw InputError("pendulum_polar_file: parameter g must be finite");
    if (!std::isfinite(fx)) throw InputError("pendulum_polar_file: parameter fx must be finite");
  }

  template <class T>
  void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out) const {
    using namespace elementary;
    const T v10 = T(m) / T(2.0);
    const T v12 = t_pow(q_in[0], 2.0);
    const T v26 = T(2.0) * v10;
    const T v30 = T(2.0) * v12;
    const T v31 = v10 * v30;
    out(0, 0) = v26;
    out(0, 1) = T(0.0);
    out(1, 0) = T(0.0);
    out(1, 1) = v31;
  }

  template <class T>
  T potential([[maybe_unused]] const VecN<T, kDof>& q_in) const {
    using namespace elementary;
    const T v17 = -T(m);
    const T v18 = T(g) * v17;
    const T v19 = q_in[0] * v18;
    const T v20 = cos(q_in[1]);
    const T v21 = v19 * v20;
    return v21;
  }

  template <class T>
  void constraint([[maybe_unused]] const VecN<T, kDof>& q_in, VecN<T, kConstraints>& out) const {
    using namespace elementary;
    const T v32 = q_in[0] - T(L);
    out[0] = v32;
  }

  template <class T, class Q, class Out>
  void generalized_force([[maybe_unused]] const T& t_in, [[maybe_unused]] const Q& q_in, [[maybe_unused]] const Q& qd_in, Out& out) const {
    using namespace elementary;
    const T v20 = cos(q_in[1]);
    const T v33 = sin(q_in[1]);
    const T v34 = T(fx) * v33;
    const T v35 = q_in[0] * T(fx);
    const T v36 = v20 * v35;
    out[0] = v34;
    out[1] = v36;
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    using T = double;
    using namespace elementary;
    q0.resize(2);
    qd0.resize(2);
    q0[0] = T(L);
    q0[1] = T(1.0);
    qd0[0] = T(0.0);
    qd0[1] = T(0.5);
  }
};

}  // namespace clm
