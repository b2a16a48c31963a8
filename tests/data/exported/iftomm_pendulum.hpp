// IftommPendulumFile: exported by `clmbench mechanism export` from the mechanism file
// tests/data/mechanisms/iftomm_pendulum.toml (sha256 c9c6a41aeca62180099e4ebd853189449879e5ac12e26ae73fd6efdfb7cf0e7b).
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
#include "problems/point_spec.hpp"

namespace clm {

struct IftommPendulumFile {
  static constexpr const char* kName = "iftomm_pendulum_file";
  static constexpr const char* kDescription = "IFToMM A01 simple pendulum released horizontally, q = (x, y)";
  static constexpr int kDof = 2;
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr const char* kCoordinateNames[] = {"x", "y"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m"};
  static constexpr double kReferenceTime = 1.0;
  static constexpr std::array<double, 2> kReferenceQ = {-0.9862917511318753, -0.16501085312554117};
  static constexpr std::array<double, 2> kReferenceQd = {-0.2969055159163158, 1.7746436411126556};
  static constexpr std::array<double, 1> kReferenceLambda = {-4.856269407484676};
  static constexpr const char* kReferenceSource = "IFToMM-library";
  static constexpr const char* kReferenceDescription = "A01's elliptic closed form at t = 1 s, mpmath at 40 digits";
  static constexpr const char* kReferencePointName = "P1";
  static constexpr std::array<const char*, 2> kReferencePointComponents = {"x", "y"};
  static constexpr const char* kReferencePointUnit = "m";

  double m = 1.0;
  double L = 1.0;
  double g = 9.81;
  static constexpr std::array kParameters = {
      ParameterSpec<IftommPendulumFile>{"m", &IftommPendulumFile::m, "point mass [kg]"},
      ParameterSpec<IftommPendulumFile>{"L", &IftommPendulumFile::L, "rod length [m]"},
      ParameterSpec<IftommPendulumFile>{"g", &IftommPendulumFile::g, "gravity, along -y [m/s^2]"},
  };

  int dof() const { return 2; }
  int constraints() const { return 1; }
  void validate() const {
    if (!std::isfinite(m)) throw InputError("iftomm_pendulum_file: parameter m must be finite");
    if (m < 0.0) throw InputError("iftomm_pendulum_file: parameter m is below its min 0.0");
    if (!std::isfinite(L)) throw InputError("iftomm_pendulum_file: parameter L must be finite");
    if (L < 0.0) throw InputError("iftomm_pendulum_file: parameter L is below its min 0.0");
    if (!std::isfinite(g)) throw InputError("iftomm_pendulum_file: parameter g must be finite");
  }

  template <class T>
  void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out) const {
    using namespace elementary;
    const T v9 = T(m) / T(2.0);
    const T v21 = T(2.0) * v9;
    out(0, 0) = v21;
    out(0, 1) = T(0.0);
    out(1, 0) = T(0.0);
    out(1, 1) = v21;
  }

  template <class T>
  T potential([[maybe_unused]] const VecN<T, kDof>& q_in) const {
    using namespace elementary;
    const T v14 = T(m) * T(g);
    const T v15 = q_in[1] + T(L);
    const T v16 = v14 * v15;
    return v16;
  }

  template <class T>
  void constraint([[maybe_unused]] const VecN<T, kDof>& q_in, VecN<T, kConstraints>& out) const {
    using namespace elementary;
    const T v24 = t_pow(q_in[0], 2.0);
    const T v25 = t_pow(q_in[1], 2.0);
    const T v26 = v24 + v25;
    const T v27 = t_pow(T(L), 2.0);
    const T v28 = v26 - v27;
    const T v29 = v28 / T(2.0);
    out[0] = v29;
  }

  void reference_point_position([[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    out[0] = q_in[0];
    out[1] = q_in[1];
  }

  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"P1", "m", 2}};
    return kPoints;
  }

  void point_positions([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    out[0] = q_in[0];
    out[1] = q_in[1];
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    using T = double;
    using namespace elementary;
    q0.resize(2);
    qd0.resize(2);
    q0[0] = T(L);
    q0[1] = T(0.0);
    qd0[0] = T(0.0);
    qd0[1] = T(0.0);
  }
};

}  // namespace clm
