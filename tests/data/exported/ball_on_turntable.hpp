// BallOnTurntableFile: exported by `clmbench mechanism export` from the mechanism file
// tests/data/mechanisms/ball_on_turntable.toml (sha256 1d25e1f72348dee6c3185a8659590bfff982d454f8b171640674d860c292cf2e).
// The terms the suite derives from the file (M = d2T/dqd2, V - T0, A, b)
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

struct BallOnTurntableFile {
  static constexpr const char* kName = "ball_on_turntable_file";
  static constexpr const char* kDescription = "homogeneous ball rolling on a turntable spinning at W; ZXZ Euler angles";
  static constexpr int kDof = 5;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "phi", "theta", "psi"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "rad", "rad"};

  double m = 1.0;
  double a = 1.0;
  double W = 1.0;
  static constexpr std::array kParameters = {
      ParameterSpec<BallOnTurntableFile>{"m", &BallOnTurntableFile::m, "[kg]"},
      ParameterSpec<BallOnTurntableFile>{"a", &BallOnTurntableFile::a, "radius [m]"},
      ParameterSpec<BallOnTurntableFile>{"W", &BallOnTurntableFile::W, "turntable angular velocity [rad/s]"},
  };

  int dof() const { return 5; }
  int constraints() const { return 2; }
  void validate() const {
    if (!std::isfinite(m)) throw InputError("ball_on_turntable_file: parameter m must be finite");
    if (m < 0.0) throw InputError("ball_on_turntable_file: parameter m is below its min 0.0");
    if (!std::isfinite(a)) throw InputError("ball_on_turntable_file: parameter a must be finite");
    if (a < 0.0) throw InputError("ball_on_turntable_file: parameter a is below its min 0.0");
    if (!std::isfinite(W)) throw InputError("ball_on_turntable_file: parameter W must be finite");
  }

  template <class T>
  void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out) const {
    using namespace elementary;
    const T v15 = T(m) * T(0.4);
    const T v16 = T(a) * v15;
    const T v17 = T(a) * v16;
    const T v19 = T(m) / T(2.0);
    const T v24 = v17 / T(2.0);
    const T v32 = cos(q_in[3]);
    const T v33 = v17 * v32;
    const T v41 = T(2.0) * v19;
    const T v48 = T(2.0) * v24;
    out(0, 0) = v41;
    out(0, 1) = T(0.0);
    out(0, 2) = T(0.0);
    out(0, 3) = T(0.0);
    out(0, 4) = T(0.0);
    out(1, 0) = T(0.0);
    out(1, 1) = v41;
    out(1, 2) = T(0.0);
    out(1, 3) = T(0.0);
    out(1, 4) = T(0.0);
    out(2, 0) = T(0.0);
    out(2, 1) = T(0.0);
    out(2, 2) = v48;
    out(2, 3) = T(0.0);
    out(2, 4) = v33;
    out(3, 0) = T(0.0);
    out(3, 1) = T(0.0);
    out(3, 2) = T(0.0);
    out(3, 3) = v48;
    out(3, 4) = T(0.0);
    out(4, 0) = T(0.0);
    out(4, 1) = T(0.0);
    out(4, 2) = v33;
    out(4, 3) = T(0.0);
    out(4, 4) = v48;
  }

  template <class T>
  T potential([[maybe_unused]] const VecN<T, kDof>& q_in, [[maybe_unused]] const T& t_in) const {
    using namespace elementary;
    return T(0.0);
  }

  template <class T>
  void pfaffian([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kConstraints, kDof>& out) const {
    using namespace elementary;
    const T v54 = sin(q_in[2]);
    const T v55 = T(a) * v54;
    const T v58 = sin(q_in[3]);
    const T v59 = T(a) * v58;
    const T v60 = cos(q_in[2]);
    const T v61 = v59 * v60;
    const T v66 = T(a) * v60;
    const T v69 = v54 * v59;
    const T v74 = -v55;
    out(0, 0) = T(1.0);
    out(0, 1) = T(0.0);
    out(0, 2) = T(0.0);
    out(0, 3) = v74;
    out(0, 4) = v61;
    out(1, 0) = T(0.0);
    out(1, 1) = T(1.0);
    out(1, 2) = T(0.0);
    out(1, 3) = v66;
    out(1, 4) = v69;
  }

  template <class T>
  void affine_term([[maybe_unused]] const VecN<T, kDof>& q_in, [[maybe_unused]] const T& t_in, VecN<T, kConstraints>& out) const {
    using namespace elementary;
    const T v64 = q_in[1] * T(W);
    const T v72 = q_in[0] * T(W);
    const T v75 = -v72;
    out[0] = v64;
    out[1] = v75;
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    using T = double;
    using namespace elementary;
    q0.resize(5);
    qd0.resize(5);
    const T v77 = T(a) * T(0.1);
    const T v81 = T(a) * T(0.01);
    const T v82 = T(W) * v81;
    const T v84 = T(a) * T(0.03);
    const T v85 = T(W) * v84;
    const T v87 = T(W) * T(0.3);
    const T v89 = T(W) * T(0.07);
    const T v91 = T(W) * T(-0.01);
    q0[0] = v77;
    q0[1] = T(0.0);
    q0[2] = T(0.0);
    q0[3] = T(1.5707963267948966);
    q0[4] = T(0.0);
    qd0[0] = v82;
    qd0[1] = v85;
    qd0[2] = v87;
    qd0[3] = v89;
    qd0[4] = v91;
  }
};

}  // namespace clm
