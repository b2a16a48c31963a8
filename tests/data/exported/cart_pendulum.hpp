// CartPendulum: exported by `clmbench mechanism export` from the mechanism file
// tests/data/mechanisms/cart_pendulum.toml (sha256 9d1efbf187ad3fc994b9ae54fe6e1a8b9fc21f72d4c12f5ea9ab4e7c82d3351a).
// The terms the suite derives from the file (M = d2T/dqd2, V - T0, h, A, b)
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

struct CartPendulum {
  static constexpr const char* kName = "cart_pendulum";
  static constexpr const char* kDescription = "knife-edge cart towing a bob on a rigid rod: one position row (the rod), one velocity row (the blade)";
  static constexpr int kDof = 5;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kMixed;
  static constexpr int kPositionConstraints = 1;
  static constexpr const char* kCoordinateNames[] = {"x", "y", "theta", "xp", "yp"};
  static constexpr const char* kConstraintNames[] = {"rod", "blade"};
  static constexpr const char* kCoordinateUnits[] = {"m", "m", "rad", "m", "m"};
  static constexpr const char* kReferencePointName = "cart";
  static constexpr std::array<const char*, 2> kReferencePointComponents = {"x", "y"};
  static constexpr const char* kReferencePointUnit = "m";

  double m = 2.0;
  double I = 0.3;
  double b = 0.25;
  double mp = 0.7;
  double L = 0.8;
  double k = 1.5;
  double g = 9.81;
  double alpha = 0.4;
  static constexpr std::array kParameters = {
      ParameterSpec<CartPendulum>{"m", &CartPendulum::m, "cart mass [kg]"},
      ParameterSpec<CartPendulum>{"I", &CartPendulum::I, "cart moment of inertia about its centre [kg m^2]"},
      ParameterSpec<CartPendulum>{"b", &CartPendulum::b, "blade ahead of the centre [m]"},
      ParameterSpec<CartPendulum>{"mp", &CartPendulum::mp, "bob mass [kg]"},
      ParameterSpec<CartPendulum>{"L", &CartPendulum::L, "rod length [m]"},
      ParameterSpec<CartPendulum>{"k", &CartPendulum::k, "spring holding the cart to the origin [N/m]"},
      ParameterSpec<CartPendulum>{"g", &CartPendulum::g, "gravity [m/s^2]"},
      ParameterSpec<CartPendulum>{"alpha", &CartPendulum::alpha, "inclination of the plane [rad]"},
  };

  int dof() const { return 5; }
  int constraints() const { return 2; }
  int position_constraints() const { return 1; }
  void validate() const {
    if (!std::isfinite(m)) throw InputError("cart_pendulum: parameter m must be finite");
    if (m < 0.0) throw InputError("cart_pendulum: parameter m is below its min 0.0");
    if (!std::isfinite(I)) throw InputError("cart_pendulum: parameter I must be finite");
    if (I < 0.0) throw InputError("cart_pendulum: parameter I is below its min 0.0");
    if (!std::isfinite(b)) throw InputError("cart_pendulum: parameter b must be finite");
    if (!std::isfinite(mp)) throw InputError("cart_pendulum: parameter mp must be finite");
    if (mp < 0.0) throw InputError("cart_pendulum: parameter mp is below its min 0.0");
    if (!std::isfinite(L)) throw InputError("cart_pendulum: parameter L must be finite");
    if (L < 0.0) throw InputError("cart_pendulum: parameter L is below its min 0.0");
    if (!std::isfinite(k)) throw InputError("cart_pendulum: parameter k must be finite");
    if (!std::isfinite(g)) throw InputError("cart_pendulum: parameter g must be finite");
    if (!std::isfinite(alpha)) throw InputError("cart_pendulum: parameter alpha must be finite");
  }

  template <class T>
  void mass_matrix([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kDof, kDof>& out) const {
    using namespace elementary;
    const T v30 = T(m) / T(2.0);
    const T v35 = T(I) / T(2.0);
    const T v39 = T(mp) / T(2.0);
    const T v58 = T(2.0) * v30;
    const T v63 = T(2.0) * v35;
    const T v66 = T(2.0) * v39;
    out(0, 0) = v58;
    out(0, 1) = T(0.0);
    out(0, 2) = T(0.0);
    out(0, 3) = T(0.0);
    out(0, 4) = T(0.0);
    out(1, 0) = T(0.0);
    out(1, 1) = v58;
    out(1, 2) = T(0.0);
    out(1, 3) = T(0.0);
    out(1, 4) = T(0.0);
    out(2, 0) = T(0.0);
    out(2, 1) = T(0.0);
    out(2, 2) = v63;
    out(2, 3) = T(0.0);
    out(2, 4) = T(0.0);
    out(3, 0) = T(0.0);
    out(3, 1) = T(0.0);
    out(3, 2) = T(0.0);
    out(3, 3) = v66;
    out(3, 4) = T(0.0);
    out(4, 0) = T(0.0);
    out(4, 1) = T(0.0);
    out(4, 2) = T(0.0);
    out(4, 3) = T(0.0);
    out(4, 4) = v66;
  }

  template <class T>
  T potential([[maybe_unused]] const VecN<T, kDof>& q_in) const {
    using namespace elementary;
    const T v45 = T(k) / T(2.0);
    const T v46 = t_pow(q_in[0], 2.0);
    const T v47 = t_pow(q_in[1], 2.0);
    const T v48 = v46 + v47;
    const T v49 = v45 * v48;
    const T v50 = T(mp) * T(g);
    const T v51 = sin(T(alpha));
    const T v52 = v50 * v51;
    const T v53 = q_in[3] * v52;
    const T v54 = v49 + v53;
    return v54;
  }

  template <class T>
  void constraint([[maybe_unused]] const VecN<T, kDof>& q_in, VecN<T, kPositionConstraints>& out) const {
    using namespace elementary;
    const T v69 = q_in[3] - q_in[0];
    const T v70 = t_pow(v69, 2.0);
    const T v71 = q_in[4] - q_in[1];
    const T v72 = t_pow(v71, 2.0);
    const T v73 = v70 + v72;
    const T v74 = t_pow(T(L), 2.0);
    const T v75 = v73 - v74;
    const T v76 = v75 / T(2.0);
    out[0] = v76;
  }

  template <class T>
  void pfaffian([[maybe_unused]] const VecN<T, kDof>& q_in, MatN<T, kConstraints - kPositionConstraints, kDof>& out) const {
    using namespace elementary;
    const T v77 = sin(q_in[2]);
    const T v78 = -v77;
    const T v80 = cos(q_in[2]);
    const T v94 = -T(b);
    out(0, 0) = v78;
    out(0, 1) = v80;
    out(0, 2) = v94;
    out(0, 3) = T(0.0);
    out(0, 4) = T(0.0);
  }

  void reference_point_position([[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    out[0] = q_in[0];
    out[1] = q_in[1];
  }

  const std::vector<PointSpec>& points() const {
    static const std::vector<PointSpec> kPoints{{"cart", "m", 2}, {"bob", "m", 2}};
    return kPoints;
  }

  void point_positions([[maybe_unused]] double t_in, [[maybe_unused]] const Vec& q_in, Vec& out) const {
    using T = double;
    using namespace elementary;
    out[0] = q_in[0];
    out[1] = q_in[1];
    out[2] = q_in[3];
    out[3] = q_in[4];
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    using T = double;
    using namespace elementary;
    q0.resize(5);
    qd0.resize(5);
    const T v26 = T(b) * T(0.8);
    const T v27 = T(0.29552020666133955) + v26;
    const T v29 = v27 / T(0.955336489125606);
    const T v99 = T(L) * T(-0.4161468365471424);
    const T v100 = T(0.1) + v99;
    const T v102 = T(L) * T(0.9092974268256817);
    const T v103 = T(-0.2) + v102;
    const T v104 = T(-1.5) * v102;
    const T v105 = T(1.0) - v104;
    const T v106 = T(-1.5) * v99;
    const T v107 = v29 + v106;
    q0[0] = T(0.1);
    q0[1] = T(-0.2);
    q0[2] = T(0.3);
    q0[3] = v100;
    q0[4] = v103;
    qd0[0] = T(1.0);
    qd0[1] = v29;
    qd0[2] = T(0.8);
    qd0[3] = v105;
    qd0[4] = v107;
  }
};

}  // namespace clm
