// CoinOnIncline: exported by `clmbench mechanism export` from the mechanism file
// mechanisms/coin_on_incline.toml (sha256 3db556dbc68ca712f815463cf31749b28138f50f6ac09658a888a24c36b680bb).
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

struct CoinOnIncline {
  static constexpr const char* kName = "coin_on_incline";
  static constexpr const char* kDescription = "upright coin rolling on an inclined plane (x up the slope, y across, heading phi, rolling angle psi)";
  static constexpr int kDof = 4;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "phi", "psi"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "rad"};
  static constexpr const char* kReferencePointName = "contact";
  static constexpr std::array<const char*, 2> kReferencePointComponents = {"x", "y"};
  static constexpr const char* kReferencePointUnit = "m";

  double m = 1.0;
  double a = 0.5;
  double alpha = 0.3;
  double g = 9.81;
  static constexpr std::array kParameters = {
      ParameterSpec<CoinOnIncline>{"m", &CoinOnIncline::m, "mass [kg]"},
      ParameterSpec<CoinOnIncline>{"a", &CoinOnIncline::a, "radius [m]"},
      ParameterSpec<CoinOnIncline>{"alpha", &CoinOnIncline::alpha, "inclination of the plane [rad]"},
      ParameterSpec<CoinOnIncline>{"g", &CoinOnIncline::g, "gravity [m/s^2]"},
  };

  int dof() const { return 4; }
  int constraints() const { return 2; }
  void validate() const {
    if (!std::isfinite(m)) throw InputError("coin_on_incline: parameter m must be finite");
    if (m < 0.0) throw InputError("coin_on_incline: parameter m is below its min 0.0");
    if (!std::isfinite(a)) throw InputError("coin_on_incline: parameter a must be finite");
    if (a < 0.0) throw InputError("coin_on_incline: parameter a is below its min 0.0");
    if (!std::isfinite(alpha)) throw InputError("coin_on_incline: parameter alpha must be finite");
    if (alpha < 0.0) throw InputError("coin_on_incline: parameter alpha is below its min 0.0");
    if (alpha > 1.5707963) throw InputError("coin_on_incline: parameter alpha is above its max 1.5707963");
    if (!std::isfinite(g)) throw InputError("coin_on_incline: parameter g must be finite");
  }

  template <class T>
  void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out) const {
    using namespace elementary;
    const T v14 = t_pow(T(a), 2.0);
    const T v15 = T(m) * v14;
    const T v17 = v15 / T(4.0);
    const T v18 = v15 / T(2.0);
    const T v31 = T(m) / T(2.0);
    const T v36 = v17 / T(2.0);
    const T v40 = v18 / T(2.0);
    const T v50 = T(2.0) * v31;
    const T v55 = T(2.0) * v36;
    const T v58 = T(2.0) * v40;
    out(0, 0) = v50;
    out(0, 1) = T(0.0);
    out(0, 2) = T(0.0);
    out(0, 3) = T(0.0);
    out(1, 0) = T(0.0);
    out(1, 1) = v50;
    out(1, 2) = T(0.0);
    out(1, 3) = T(0.0);
    out(2, 0) = T(0.0);
    out(2, 1) = T(0.0);
    out(2, 2) = v55;
    out(2, 3) = T(0.0);
    out(3, 0) = T(0.0);
    out(3, 1) = T(0.0);
    out(3, 2) = T(0.0);
    out(3, 3) = v58;
  }

  template <class T>
  T potential([[maybe_unused]] const VecN<T, kDof>& q_in) const {
    using namespace elementary;
    const T v19 = T(m) * T(g);
    const T v21 = sin(T(alpha));
    const T v44 = v19 * v21;
    const T v45 = q_in[0] * v44;
    return v45;
  }

  template <class T>
  void pfaffian([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kConstraints, kDof>& out) const {
    using namespace elementary;
    const T v26 = sin(q_in[2]);
    const T v59 = cos(q_in[2]);
    const T v60 = T(a) * v59;
    const T v63 = T(a) * v26;
    const T v66 = -v60;
    const T v67 = -v63;
    out(0, 0) = T(1.0);
    out(0, 1) = T(0.0);
    out(0, 2) = T(0.0);
    out(0, 3) = v66;
    out(1, 0) = T(0.0);
    out(1, 1) = T(1.0);
    out(1, 2) = T(0.0);
    out(1, 3) = v67;
  }

  bool closed_form([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, [[maybe_unused]] const Vec& qd_in, Vec& q_out, Vec& qd_out) const {
    using T = double;
    using namespace elementary;
    const T v14 = t_pow(T(a), 2.0);
    const T v15 = T(m) * v14;
    const T v18 = v15 / T(2.0);
    const T v19 = T(m) * T(g);
    const T v20 = T(a) * v19;
    const T v21 = sin(T(alpha));
    const T v22 = v20 * v21;
    const T v23 = v15 + v18;
    const T v24 = T(qd_in[2]) * v23;
    const T v25 = v22 / v24;
    const T v26 = sin(q_in[2]);
    const T v27 = v25 * v26;
    const T v28 = T(qd_in[3]) + v27;
    const T v29 = T(qd_in[2]) * t_in;
    const T v30 = q_in[2] + v29;
    const T v53 = T(qd_in[2]) * T(2.0);
    const T v59 = cos(q_in[2]);
    const T v68 = sin(v30);
    const T v69 = v68 - v26;
    const T v70 = v28 * v69;
    const T v71 = v70 / T(qd_in[2]);
    const T v72 = t_pow(v68, 2.0);
    const T v73 = t_pow(v26, 2.0);
    const T v74 = v72 - v73;
    const T v75 = v25 * v74;
    const T v76 = v75 / v53;
    const T v77 = v71 - v76;
    const T v78 = T(a) * v77;
    const T v79 = q_in[0] + v78;
    const T v80 = -v28;
    const T v81 = cos(v30);
    const T v82 = v81 - v59;
    const T v83 = v80 * v82;
    const T v84 = v83 / T(qd_in[2]);
    const T v85 = t_in / T(2.0);
    const T v86 = T(2.0) * v30;
    const T v87 = sin(v86);
    const T v88 = q_in[2] * T(2.0);
    const T v89 = sin(v88);
    const T v90 = v87 - v89;
    const T v91 = T(qd_in[2]) * T(4.0);
    const T v92 = v90 / v91;
    const T v93 = v85 - v92;
    const T v94 = v25 * v93;
    const T v95 = v84 - v94;
    const T v96 = T(a) * v95;
    const T v97 = q_in[1] + v96;
    const T v98 = t_in * v28;
    const T v99 = q_in[3] + v98;
    const T v100 = v25 * v82;
    const T v101 = v100 / T(qd_in[2]);
    const T v102 = v99 + v101;
    const T v103 = T(qd_in[2]) * v81;
    const T v104 = v28 * v103;
    const T v105 = v104 / T(qd_in[2]);
    const T v106 = T(2.0) * v68;
    const T v107 = v103 * v106;
    const T v108 = v25 * v107;
    const T v109 = v108 / v53;
    const T v110 = v105 - v109;
    const T v111 = T(a) * v110;
    const T v112 = T(qd_in[2]) * v68;
    const T v113 = -v112;
    const T v114 = v80 * v113;
    const T v115 = v114 / T(qd_in[2]);
    const T v117 = cos(v86);
    const T v118 = v53 * v117;
    const T v119 = v118 / v91;
    const T v120 = T(0.5) - v119;
    const T v121 = v25 * v120;
    const T v122 = v115 - v121;
    const T v123 = T(a) * v122;
    const T v124 = v25 * v113;
    const T v125 = v124 / T(qd_in[2]);
    const T v126 = v28 + v125;
    q_out[0] = v79;
    q_out[1] = v97;
    q_out[2] = v30;
    q_out[3] = v102;
    qd_out[0] = v111;
    qd_out[1] = v123;
    qd_out[2] = T(qd_in[2]);
    qd_out[3] = v126;
    for (int i = 0; i < 4; ++i)
      if (!std::isfinite(q_out[i]) || !std::isfinite(qd_out[i])) return false;  // a start it does not cover
    return true;
  }

  void reference_point_position([[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    out[0] = q_in[0];
    out[1] = q_in[1];
  }

  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"contact", "m", 2}};
    return kPoints;
  }

  void point_positions([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    out[0] = q_in[0];
    out[1] = q_in[1];
  }

  const std::vector<BodyVelocitySpec>& body_velocities() const {
    static const std::vector<BodyVelocitySpec> kBodyVelocities{{"forward_speed", "m/s", "speed along the disk's plane (a psi' while it rolls)"}, {"turning_rate", "rad/s", "heading rate, constant in the exact motion"}, {"rolling_rate", "rad/s", "rolling rate psi' = P - Q sin(phi)"}};
    return kBodyVelocities;
  }

  void body_velocity_values([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, [[maybe_unused]] const Vec& qd_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    const T v26 = sin(q_in[2]);
    const T v59 = cos(q_in[2]);
    const T v127 = T(qd_in[0]) * v59;
    const T v128 = T(qd_in[1]) * v26;
    const T v129 = v127 + v128;
    out[0] = v129;
    out[1] = T(qd_in[2]);
    out[2] = T(qd_in[3]);
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    using T = double;
    using namespace elementary;
    q0.resize(4);
    qd0.resize(4);
    const T v132 = T(a) * T(3.0);
    const T v134 = v132 * T(0.9800665778412416);
    const T v136 = v132 * T(0.19866933079506122);
    q0[0] = T(0.0);
    q0[1] = T(0.0);
    q0[2] = T(0.2);
    q0[3] = T(0.0);
    qd0[0] = v134;
    qd0[1] = v136;
    qd0[2] = T(2.0);
    qd0[3] = T(3.0);
  }
};

}  // namespace clm
