// Chaplygin sleigh (seed 000, "Chaplygin's Sleigh"): a rigid body on a horizontal plane whose blade at
// p = r_c - b e1' cannot slip sideways. q = (x, y, theta), (x, y) the centre of mass.
//   T = m/2 (xd^2 + yd^2) + Ic/2 thetad^2, V = 0,
//   A(q) = (-sin theta, cos theta, -b)   (v_p . e2' = 0).
// Reduced dynamics (seed 000, after eq. 2.18): u' = b w^2, w' = -beta u w, beta = m b / (m b^2 + Ic),
// with u = xd cos(theta) + yd sin(theta) and w = thetad.
#pragma once

#include <array>
#include <cmath>

#include "core/problem.hpp"

namespace clm {

struct ChaplyginSleigh {
  static constexpr const char* kName = "chaplygin_sleigh";
  static constexpr const char* kDescription =
      "rigid body with a knife edge at distance b behind the centre of mass; q = (x, y, theta)";
  static constexpr int kDof = 3;
  static constexpr int kConstraints = 1;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kPfaffian;

  double m = 1.0;
  double Ic = 0.5;
  double b = 0.3;
  static constexpr std::array kParameters = {
      ParameterSpec<ChaplyginSleigh>{"m", &ChaplyginSleigh::m, "mass [kg]"},
      ParameterSpec<ChaplyginSleigh>{"Ic", &ChaplyginSleigh::Ic, "moment of inertia about the centre of mass [kg m^2]"},
      ParameterSpec<ChaplyginSleigh>{"b", &ChaplyginSleigh::b, "distance from the centre of mass back to the blade [m]"},
  };

  int dof() const { return 3; }
  int constraints() const { return 1; }
  void validate() const {
    if (!(m > 0)) throw InputError("chaplygin_sleigh: parameter m must be > 0");
    if (!(Ic > 0)) throw InputError("chaplygin_sleigh: parameter Ic must be > 0");
    if (!std::isfinite(b)) throw InputError("chaplygin_sleigh: parameter b must be finite");
  }

  template <class T>
  void mass_matrix(const VecN<T, 3>&, MatN<T, 3, 3>& M) const {
    M.setZero();
    M(0, 0) = T(m);
    M(1, 1) = T(m);
    M(2, 2) = T(Ic);
  }
  template <class T>
  T potential(const VecN<T, 3>&) const {
    return T(0.0);
  }
  template <class T>
  void pfaffian(const VecN<T, 3>& q, MatN<T, 1, 3>& A) const {
    using std::cos;
    using std::sin;
    A(0, 0) = -sin(q[2]);
    A(0, 1) = cos(q[2]);
    A(0, 2) = T(-b);
  }
  // Translation along the blade and rotation about the blade point (seed 000, after eq. 2.18).
  template <class T>
  void velocity_basis(const VecN<T, 3>& q, MatN<T, 3, Eigen::Dynamic>& S) const {
    using std::cos;
    using std::sin;
    S(0, 0) = cos(q[2]);
    S(1, 0) = sin(q[2]);
    S(2, 0) = T(0.0);
    S(0, 1) = -b * sin(q[2]);
    S(1, 1) = b * cos(q[2]);
    S(2, 1) = T(1.0);
  }
  // Forward speed u = 1, turning rate w = 0.8: q = 0, qd = S (1, 0.8).
  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0, 0, 0;
    qd0 << 1.0, 0.8 * b, 0.8;
  }
};

}  // namespace clm
