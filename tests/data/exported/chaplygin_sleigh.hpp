// ChaplyginSleighFile: exported by `clmbench mechanism export` from the mechanism file
// tests/data/mechanisms/chaplygin_sleigh.toml (sha256 ada08880c304e8094e204ec483e1ffd927144b56b3f45f4039d06709980615b0).
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
#include "problems/point_spec.hpp"
#include "problems/body_velocity_spec.hpp"

namespace clm {

struct ChaplyginSleighFile {
  static constexpr const char* kName = "chaplygin_sleigh_file";
  static constexpr const char* kDescription = "Chaplygin sleigh: a knife edge at distance b behind the centre of mass";
  static constexpr int kDof = 3;
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "theta"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad"};
  static constexpr const char* kReferencePointName = "blade";
  static constexpr std::array<const char*, 2> kReferencePointComponents = {"x", "y"};
  static constexpr const char* kReferencePointUnit = "m";

  double m = 1.0;
  double Ic = 0.5;
  double b = 0.3;
  static constexpr std::array kParameters = {
      ParameterSpec<ChaplyginSleighFile>{"m", &ChaplyginSleighFile::m, "mass [kg]"},
      ParameterSpec<ChaplyginSleighFile>{"Ic", &ChaplyginSleighFile::Ic, "moment of inertia about the centre of mass [kg m^2]"},
      ParameterSpec<ChaplyginSleighFile>{"b", &ChaplyginSleighFile::b, "distance from the centre of mass back to the blade [m]"},
  };

  int dof() const { return 3; }
  int constraints() const { return 1; }
  void validate() const {
    if (!std::isfinite(m)) throw InputError("chaplygin_sleigh_file: parameter m must be finite");
    if (m < 0.0) throw InputError("chaplygin_sleigh_file: parameter m is below its min 0.0");
    if (!std::isfinite(Ic)) throw InputError("chaplygin_sleigh_file: parameter Ic must be finite");
    if (Ic < 0.0) throw InputError("chaplygin_sleigh_file: parameter Ic is below its min 0.0");
    if (!std::isfinite(b)) throw InputError("chaplygin_sleigh_file: parameter b must be finite");
  }

  template <class T>
  void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out) const {
    using namespace elementary;
    const T v11 = T(m) / T(2.0);
    const T v16 = T(Ic) / T(2.0);
    const T v24 = T(2.0) * v11;
    const T v29 = T(2.0) * v16;
    out(0, 0) = v24;
    out(0, 1) = T(0.0);
    out(0, 2) = T(0.0);
    out(1, 0) = T(0.0);
    out(1, 1) = v24;
    out(1, 2) = T(0.0);
    out(2, 0) = T(0.0);
    out(2, 1) = T(0.0);
    out(2, 2) = v29;
  }

  template <class T>
  T potential([[maybe_unused]] const VecN<T, kDof>& q_in) const {
    using namespace elementary;
    return T(0.0);
  }

  template <class T>
  void pfaffian([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kConstraints, kDof>& out) const {
    using namespace elementary;
    const T v30 = sin(q_in[2]);
    const T v31 = -v30;
    const T v33 = cos(q_in[2]);
    const T v38 = -T(b);
    out(0, 0) = v31;
    out(0, 1) = v33;
    out(0, 2) = v38;
  }

  template <class T>
  void velocity_basis([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, Eigen::Dynamic>& out) const {
    using namespace elementary;
    const T v30 = sin(q_in[2]);
    const T v33 = cos(q_in[2]);
    const T v38 = -T(b);
    const T v39 = v30 * v38;
    const T v40 = T(b) * v33;
    out(0, 0) = v33;
    out(0, 1) = v39;
    out(1, 0) = v30;
    out(1, 1) = v40;
    out(2, 0) = T(0.0);
    out(2, 1) = T(1.0);
  }

  template <class T>
  void transversal_frame([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kConstraints>& out) const {
    using namespace elementary;
    const T v30 = sin(q_in[2]);
    const T v31 = -v30;
    const T v33 = cos(q_in[2]);
    out(0, 0) = v31;
    out(1, 0) = v33;
    out(2, 0) = T(0.0);
  }

  void reference_point_position([[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    const T v30 = sin(q_in[2]);
    const T v33 = cos(q_in[2]);
    const T v40 = T(b) * v33;
    const T v41 = q_in[0] - v40;
    const T v42 = T(b) * v30;
    const T v43 = q_in[1] - v42;
    out[0] = v41;
    out[1] = v43;
  }

  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"blade", "m", 2}, {"centre_of_mass", "m", 2}};
    return kPoints;
  }

  void point_positions([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    const T v30 = sin(q_in[2]);
    const T v33 = cos(q_in[2]);
    const T v40 = T(b) * v33;
    const T v41 = q_in[0] - v40;
    const T v42 = T(b) * v30;
    const T v43 = q_in[1] - v42;
    out[0] = v41;
    out[1] = v43;
    out[2] = q_in[0];
    out[3] = q_in[1];
  }

  const std::vector<BodyVelocitySpec>& body_velocities() const {
    static const std::vector<BodyVelocitySpec> kBodyVelocities{{"u1", "m/s", "forward speed of the centre of mass"}, {"omega", "rad/s", "turning rate"}};
    return kBodyVelocities;
  }

  void body_velocity_values([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, [[maybe_unused]] const Vec& qd_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    const T v30 = sin(q_in[2]);
    const T v33 = cos(q_in[2]);
    const T v44 = T(qd_in[0]) * v33;
    const T v45 = T(qd_in[1]) * v30;
    const T v46 = v44 + v45;
    out[0] = v46;
    out[1] = T(qd_in[2]);
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    using T = double;
    using namespace elementary;
    q0.resize(3);
    qd0.resize(3);
    const T v48 = T(b) * T(0.8);
    q0[0] = T(0.0);
    q0[1] = T(0.0);
    q0[2] = T(0.0);
    qd0[0] = T(1.0);
    qd0[1] = v48;
    qd0[2] = T(0.8);
  }
};

}  // namespace clm
