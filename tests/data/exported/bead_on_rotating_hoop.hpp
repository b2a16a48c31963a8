// BeadOnRotatingHoop: exported by `clmbench mechanism export` from the mechanism file
// mechanisms/bead_on_rotating_hoop.toml (sha256 8addc09280543399eb3de0e3b2c458765610ab3aa5c39cdf4d5f3f28e153089d).
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
#include "problems/body_velocity_spec.hpp"

namespace clm {

struct BeadOnRotatingHoop {
  static constexpr const char* kName = "bead_on_rotating_hoop";
  static constexpr const char* kDescription = "bead on a hoop spun at the constant rate W about its vertical diameter; Cartesian (x, y, z), z up";
  static constexpr int kDof = 3;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "z"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "m"};
  static constexpr const char* kReferencePointName = "bead";
  static constexpr std::array<const char*, 3> kReferencePointComponents = {"x", "y", "z"};
  static constexpr const char* kReferencePointUnit = "m";

  double m = 0.1;
  double R = 0.5;
  double W = 6.0;
  double g = 9.81;
  static constexpr std::array kParameters = {
      ParameterSpec<BeadOnRotatingHoop>{"m", &BeadOnRotatingHoop::m, "bead mass [kg]"},
      ParameterSpec<BeadOnRotatingHoop>{"R", &BeadOnRotatingHoop::R, "hoop radius [m]"},
      ParameterSpec<BeadOnRotatingHoop>{"W", &BeadOnRotatingHoop::W, "spin rate of the hoop [rad/s]"},
      ParameterSpec<BeadOnRotatingHoop>{"g", &BeadOnRotatingHoop::g, "gravity, along -z [m/s^2]"},
  };

  int dof() const { return 3; }
  int constraints() const { return 2; }
  void validate() const {
    if (!std::isfinite(m)) throw InputError("bead_on_rotating_hoop: parameter m must be finite");
    if (m < 0.0) throw InputError("bead_on_rotating_hoop: parameter m is below its min 0.0");
    if (!std::isfinite(R)) throw InputError("bead_on_rotating_hoop: parameter R must be finite");
    if (R < 0.0) throw InputError("bead_on_rotating_hoop: parameter R is below its min 0.0");
    if (!std::isfinite(W)) throw InputError("bead_on_rotating_hoop: parameter W must be finite");
    if (!std::isfinite(g)) throw InputError("bead_on_rotating_hoop: parameter g must be finite");
  }

  template <class T>
  void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out) const {
    using namespace elementary;
    const T v12 = T(m) / T(2.0);
    const T v25 = T(2.0) * v12;
    out(0, 0) = v25;
    out(0, 1) = T(0.0);
    out(0, 2) = T(0.0);
    out(1, 0) = T(0.0);
    out(1, 1) = v25;
    out(1, 2) = T(0.0);
    out(2, 0) = T(0.0);
    out(2, 1) = T(0.0);
    out(2, 2) = v25;
  }

  template <class T>
  T potential([[maybe_unused]] const VecN<T, kDof>& q_in, [[maybe_unused]] const T& t_in) const {
    using namespace elementary;
    const T v19 = T(m) * T(g);
    const T v20 = q_in[2] * v19;
    return v20;
  }

  template <class T>
  void constraint([[maybe_unused]] const VecN<T, kDof>& q_in, [[maybe_unused]] const T& t_in, VecN<T, kConstraints>& out) const {
    using namespace elementary;
    const T v30 = t_pow(q_in[0], 2.0);
    const T v31 = t_pow(q_in[1], 2.0);
    const T v32 = v30 + v31;
    const T v33 = t_pow(q_in[2], 2.0);
    const T v34 = v32 + v33;
    const T v35 = t_pow(T(R), 2.0);
    const T v36 = v34 - v35;
    const T v37 = v36 / T(2.0);
    const T v38 = -q_in[0];
    const T v39 = t_in * T(W);
    const T v40 = sin(v39);
    const T v41 = v38 * v40;
    const T v42 = cos(v39);
    const T v43 = q_in[1] * v42;
    const T v44 = v41 + v43;
    out[0] = v37;
    out[1] = v44;
  }

  void reference_point_position([[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    out[0] = q_in[0];
    out[1] = q_in[1];
    out[2] = q_in[2];
  }

  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"bead", "m", 3}, {"hoop_side", "m", 3}, {"hoop_bottom", "m", 3}};
    return kPoints;
  }

  void point_positions([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    const T v39 = t_in * T(W);
    const T v40 = sin(v39);
    const T v42 = cos(v39);
    const T v45 = T(R) * v42;
    const T v46 = T(R) * v40;
    const T v47 = -T(R);
    out[0] = q_in[0];
    out[1] = q_in[1];
    out[2] = q_in[2];
    out[3] = v45;
    out[4] = v46;
    out[5] = T(0.0);
    out[6] = T(0.0);
    out[7] = T(0.0);
    out[8] = v47;
  }

  const std::vector<BodyVelocitySpec>& body_velocities() const {
    static const std::vector<BodyVelocitySpec> kBodyVelocities{{"speed_along_hoop", "m/s", "R theta', the bead's speed relative to the hoop"}};
    return kBodyVelocities;
  }

  void body_velocity_values([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, [[maybe_unused]] const Vec& qd_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    const T v39 = t_in * T(W);
    const T v40 = sin(v39);
    const T v42 = cos(v39);
    const T v48 = T(qd_in[0]) * v42;
    const T v49 = T(qd_in[1]) * v40;
    const T v50 = v48 + v49;
    const T v51 = -q_in[2];
    const T v52 = v50 * v51;
    const T v53 = v52 / T(R);
    const T v54 = q_in[0] * v42;
    const T v55 = q_in[1] * v40;
    const T v56 = v54 + v55;
    const T v57 = T(qd_in[2]) * v56;
    const T v58 = v57 / T(R);
    const T v59 = v53 + v58;
    out[0] = v59;
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    using T = double;
    using namespace elementary;
    q0.resize(3);
    qd0.resize(3);
    const T v47 = -T(R);
    const T v62 = T(R) * T(0.7173560908995228);
    const T v64 = v47 * T(0.6967067093471654);
    const T v65 = T(R) * T(0.6967067093471654);
    const T v67 = v65 * T(0.5);
    const T v68 = T(W) * v62;
    const T v69 = v62 * T(0.5);
    q0[0] = v62;
    q0[1] = T(0.0);
    q0[2] = v64;
    qd0[0] = v67;
    qd0[1] = v68;
    qd0[2] = v69;
  }
};

}  // namespace clm
