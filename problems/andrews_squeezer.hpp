// Andrews' squeezing mechanism [HW-II, VII.7] [Bari-testset] (problem "andrews", andrews.f; Schiehlen 1990): seven rigid bodies in the plane driven by a constant torque, with a
// spring between a point of body 3 and a point fixed in the ground. q = (beta, Theta, gamma, Phi, delta,
// Omega, epsilon), the relative angles of the test set, n = 7; six holonomic loop-closure constraints
// h(q) = 0 (three closed loops through the fixed points A, B), m = 6. No gravity (the test set has none).
//
// Written from energies like every problem:
//   T = 1/2 qd^T M(q) qd with the test set's mass matrix ([HW-II, VII.7]): it depends on
//       Theta, Phi and Omega, so the Coriolis / centrifugal terms of the test set's force vector f(q, qd) come
//       out of autodiff (tests/andrews_test.cpp checks c(q, qd) + dV/dq against that hand-written vector);
//   V = 1/2 c0 (l - l0)^2 - mom beta: the spring between D(gamma) = (xb, yb) + sd (cos g, sin g) +
//       sc (sin g, -cos g) and C = (xc, yc), with l = |D - C|, and the constant drive torque mom on beta
//       written as the potential -mom beta (a conservative, state-independent force: M, V and h are all
//       templates, so the formulations' autodiff Jacobians apply; the energy T + V is then conserved, the
//       torque's work included);
//   h = the test set's g(q) (its gp(q) is dh/dq, which autodiff reproduces).
// Sign convention: the test set writes M qdd = f(q, qd) - G^T lambda; the suite M qdd + c = F + A^T lambda, so
// the suite's multipliers are the negatives of the test set's (andrews.f's y(22..27)).
// Initial data: the test set's consistent values at t = 0 (beta0 = -0.0617..., qd0 = 0); for other parameters
// the six dependent angles are re-assembled by Newton on h(q) = 0 with beta fixed (validate() refuses
// parameters for which that fails). Reference: the test set's PSIDE solution at t = 0.03 (rtol = atol = 1e-14).
#pragma once

#include <ceres/jet.h>

#include <Eigen/LU>
#include <array>
#include <cmath>
#include <string>

#include "core/problem.hpp"

namespace clm {

struct AndrewsSqueezer {
  static constexpr const char* kName = "andrews_squeezer";
  static constexpr const char* kDescription =
      "Andrews' squeezing mechanism (Hairer-Wanner II VII.7; Bari test set 'andrews'): 7 bodies, 6 loop "
      "constraints, drive torque and spring, no gravity";
  static constexpr int kDof = 7;
  static constexpr int kConstraints = 6;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr const char* kCoordinateNames[] = {"beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon"};
  static constexpr const char* kCoordinateUnits[] = {"rad", "rad", "rad", "rad", "rad", "rad", "rad"};

  // The test set's data (andrews.f), SI units.
  double m1 = .04325, m2 = .00365, m3 = .02373, m4 = .00706, m5 = .07050, m6 = .00706, m7 = .05498;
  double xa = -.06934, ya = -.00227, xb = -0.03635, yb = .03273, xc = .014, yc = .072;
  double c0 = 4530;
  double i1 = 2.194e-6, i2 = 4.410e-7, i3 = 5.255e-6, i4 = 5.667e-7, i5 = 1.169e-5, i6 = 5.667e-7, i7 = 1.912e-5;
  double d = 28e-3, da = 115e-4, e = 2e-2, ea = 1421e-5, rr = 7e-3, ra = 92e-5, l0 = 7785e-5;
  double ss = 35e-3, sa = 1874e-5, sb = 1043e-5, sc = 18e-3, sd = 2e-2;
  double ta = 2308e-5, tb = 916e-5, u = 4e-2, ua = 1228e-5, ub = 449e-5;
  double zf = 2e-2, zt = 4e-2, fa = 1421e-5, mom = 33e-3;

  using S = AndrewsSqueezer;
  static constexpr std::array kParameters = {
      ParameterSpec<S>{"m1", &S::m1, "mass of body 1 [kg]"}, ParameterSpec<S>{"m2", &S::m2, "mass of body 2 [kg]"},
      ParameterSpec<S>{"m3", &S::m3, "mass of body 3 [kg]"}, ParameterSpec<S>{"m4", &S::m4, "mass of body 4 [kg]"},
      ParameterSpec<S>{"m5", &S::m5, "mass of body 5 [kg]"}, ParameterSpec<S>{"m6", &S::m6, "mass of body 6 [kg]"},
      ParameterSpec<S>{"m7", &S::m7, "mass of body 7 [kg]"},
      ParameterSpec<S>{"i1", &S::i1, "moment of inertia of body 1 [kg m^2]"},
      ParameterSpec<S>{"i2", &S::i2, "moment of inertia of body 2 [kg m^2]"},
      ParameterSpec<S>{"i3", &S::i3, "moment of inertia of body 3 [kg m^2]"},
      ParameterSpec<S>{"i4", &S::i4, "moment of inertia of body 4 [kg m^2]"},
      ParameterSpec<S>{"i5", &S::i5, "moment of inertia of body 5 [kg m^2]"},
      ParameterSpec<S>{"i6", &S::i6, "moment of inertia of body 6 [kg m^2]"},
      ParameterSpec<S>{"i7", &S::i7, "moment of inertia of body 7 [kg m^2]"},
      ParameterSpec<S>{"xa", &S::xa, "fixed point A, x [m]"}, ParameterSpec<S>{"ya", &S::ya, "fixed point A, y [m]"},
      ParameterSpec<S>{"xb", &S::xb, "fixed point B, x [m]"}, ParameterSpec<S>{"yb", &S::yb, "fixed point B, y [m]"},
      ParameterSpec<S>{"xc", &S::xc, "spring anchor C, x [m]"}, ParameterSpec<S>{"yc", &S::yc, "spring anchor C, y [m]"},
      ParameterSpec<S>{"c0", &S::c0, "spring stiffness [N/m]"}, ParameterSpec<S>{"l0", &S::l0, "spring rest length [m]"},
      ParameterSpec<S>{"mom", &S::mom, "drive torque on beta [N m]"},
      ParameterSpec<S>{"d", &S::d, "geometry d [m]"}, ParameterSpec<S>{"da", &S::da, "geometry da [m]"},
      ParameterSpec<S>{"e", &S::e, "geometry e [m]"}, ParameterSpec<S>{"ea", &S::ea, "geometry ea [m]"},
      ParameterSpec<S>{"rr", &S::rr, "geometry rr [m]"}, ParameterSpec<S>{"ra", &S::ra, "geometry ra [m]"},
      ParameterSpec<S>{"ss", &S::ss, "geometry ss [m]"}, ParameterSpec<S>{"sa", &S::sa, "geometry sa [m]"},
      ParameterSpec<S>{"sb", &S::sb, "geometry sb [m]"}, ParameterSpec<S>{"sc", &S::sc, "geometry sc [m]"},
      ParameterSpec<S>{"sd", &S::sd, "geometry sd [m]"}, ParameterSpec<S>{"ta", &S::ta, "geometry ta [m]"},
      ParameterSpec<S>{"tb", &S::tb, "geometry tb [m]"}, ParameterSpec<S>{"u", &S::u, "geometry u [m]"},
      ParameterSpec<S>{"ua", &S::ua, "geometry ua [m]"}, ParameterSpec<S>{"ub", &S::ub, "geometry ub [m]"},
      ParameterSpec<S>{"zf", &S::zf, "geometry zf [m]"}, ParameterSpec<S>{"zt", &S::zt, "geometry zt [m]"},
      ParameterSpec<S>{"fa", &S::fa, "geometry fa [m]"},
  };

  // The test set's consistent initial positions (andrews.f; qd0 = 0).
  static constexpr std::array<double, 7> kInitialPositions = {
      -0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449, 0.222668390165885884674473185609,
      0.487364979543842550225598953530, -0.222668390165885884674473185609, 1.23054744454982119249735015568};
  // The test set's PSIDE solution at t = 0.03 (andrews.f, andsoln): positions, velocities, and the multipliers
  // in the test set's sign convention (the suite's lambda is their negative).
  static constexpr double kReferenceTime = 0.03;
  static constexpr std::array<double, 7> kReferenceQ = {0.1581077119629904e+2, -0.1575637105984298e+2,
                                                        0.4082224013073101e-1, -0.5347301163226948e+0,
                                                        0.5244099658805304e+0, 0.5347301163226948e+0,
                                                        0.1048080741042263e+1};
  static constexpr std::array<double, 7> kReferenceQd = {0.1139920302151208e+4, -0.1424379294994111e+4,
                                                         0.1103291221937134e+2, 0.1929337464421385e+2,
                                                         0.5735699284790808e+0, -0.1929337464421385e+2,
                                                         0.3231791658026955e+0};
  static constexpr std::array<double, 6> kReferenceTestSetLambda = {0.1991753333731910e+3, -0.2975531228015052e+2,
                                                                    0.2306654119098399e+2, 0.3145271365475927e+2,
                                                                    0.2264249232082739e+2, 0.1161740700019673e+2};
  // The same in the suite's convention (docs/design.md section 1), for the published-reference hook
  // (core/published_reference.hpp).
  static constexpr std::array<double, 6> kReferenceLambda = [] {
    std::array<double, 6> l{};
    for (size_t i = 0; i < l.size(); ++i) l[i] = -kReferenceTestSetLambda[i];
    return l;
  }();
  static constexpr const char* kReferenceSource = "Bari-testset";
  static constexpr const char* kReferenceDescription = "the test set's PSIDE solution at rtol = atol = 1e-14 (andrews.f, andsoln)";

  int dof() const { return 7; }
  int constraints() const { return 6; }

  void validate() const {
    for (const auto& p : kParameters) {
      const double v = this->*(p.member);
      if (!std::isfinite(v)) throw InputError("andrews_squeezer: parameter " + std::string(p.name) + " must be finite");
    }
    for (const auto& p : kParameters) {
      const std::string_view n = p.name;
      const bool positive = n.front() == 'm' && n != "mom";  // masses
      const bool nonnegative = n.front() == 'i' || n == "c0";
      const double v = this->*(p.member);
      if (positive && !(v > 0)) throw InputError("andrews_squeezer: parameter " + std::string(n) + " must be > 0");
      if (nonnegative && !(v >= 0)) throw InputError("andrews_squeezer: parameter " + std::string(n) + " must be >= 0");
    }
    VecN<double, 7> q;
    if (!assemble(q))
      throw InputError("andrews_squeezer: the mechanism does not assemble near the test set's configuration for "
                       "these parameters (Newton on the 6 loop constraints with beta fixed did not converge)");
  }

  template <class T>
  void mass_matrix(const VecN<T, 7>& q, MatN<T, 7, 7>& M) const {
    using std::cos;
    using std::sin;
    M.setConstant(T(0.0));
    const T coth = cos(q[1]), siph = sin(q[3]), siom = sin(q[5]);
    M(0, 0) = m1 * ra * ra + m2 * (rr * rr - 2.0 * da * rr * coth + da * da) + i1 + i2;
    M(1, 0) = m2 * (da * da - da * rr * coth) + i2;
    M(1, 1) = T(m2 * da * da + i2);
    M(2, 2) = T(m3 * (sa * sa + sb * sb) + i3);
    M(3, 3) = T(m4 * (e - ea) * (e - ea) + i4);
    M(4, 3) = m4 * ((e - ea) * (e - ea) + zt * (e - ea) * siph) + i4;
    M(4, 4) = m4 * (zt * zt + 2.0 * zt * (e - ea) * siph + (e - ea) * (e - ea)) + m5 * (ta * ta + tb * tb) + i4 + i5;
    M(5, 5) = T(m6 * (zf - fa) * (zf - fa) + i6);
    M(6, 5) = m6 * ((zf - fa) * (zf - fa) - u * (zf - fa) * siom) + i6;
    M(6, 6) = m6 * ((zf - fa) * (zf - fa) - 2.0 * u * (zf - fa) * siom + u * u) + m7 * (ua * ua + ub * ub) + i6 + i7;
    M(0, 1) = M(1, 0);
    M(3, 4) = M(4, 3);
    M(5, 6) = M(6, 5);
  }

  template <class T>
  T potential(const VecN<T, 7>& q) const {
    using std::cos;
    using std::sin;
    using std::sqrt;
    const T cg = cos(q[2]), sg = sin(q[2]);
    const T dx = sd * cg + sc * sg + xb - xc, dy = sd * sg - sc * cg + yb - yc;
    const T stretch = sqrt(dx * dx + dy * dy) - l0;
    return 0.5 * c0 * stretch * stretch - mom * q[0];
  }

  template <class T>
  void constraint(const VecN<T, 7>& q, VecN<T, 6>& h) const {
    using std::cos;
    using std::sin;
    const T cobe = cos(q[0]), sibe = sin(q[0]), cobeth = cos(q[0] + q[1]), sibeth = sin(q[0] + q[1]);
    const T crank_x = rr * cobe - d * cobeth, crank_y = rr * sibe - d * sibeth;
    h[0] = crank_x - ss * sin(q[2]) - xb;
    h[1] = crank_y + ss * cos(q[2]) - yb;
    h[2] = crank_x - e * sin(q[3] + q[4]) - zt * cos(q[4]) - xa;
    h[3] = crank_y + e * cos(q[3] + q[4]) - zt * sin(q[4]) - ya;
    h[4] = crank_x - zf * cos(q[5] + q[6]) - u * sin(q[6]) - xa;
    h[5] = crank_y - zf * sin(q[5] + q[6]) + u * cos(q[6]) - ya;
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    VecN<double, 7> q;
    if (!assemble(q)) throw InputError("andrews_squeezer: the mechanism does not assemble for these parameters");
    q0 = q;
    qd0.setZero(7);
  }

  // The test set's initial positions, the six dependent angles corrected by Newton on h = 0 with beta fixed
  // (Jacobian by one Jet pass); true when |h|_inf <= 1e-15 within 30 iterations. With the default parameters
  // the published values already satisfy h to ~1e-17 and are returned unchanged to the last bits.
  bool assemble(VecN<double, 7>& q) const {
    for (int i = 0; i < 7; ++i) q[i] = kInitialPositions[i];
    using J = ceres::Jet<double, 7>;
    for (int it = 0; it <= 30; ++it) {
      VecN<J, 7> qj;
      for (int i = 0; i < 7; ++i) qj[i] = J(q[i], i);
      VecN<J, 6> h;
      constraint<J>(qj, h);
      Eigen::Matrix<double, 6, 1> r;
      Eigen::Matrix<double, 6, 6> A;
      for (int k = 0; k < 6; ++k) {
        r[k] = h[k].a;
        for (int j = 0; j < 6; ++j) A(k, j) = h[k].v[j + 1];
      }
      if (!r.allFinite()) return false;
      if (r.lpNorm<Eigen::Infinity>() <= 1e-15) return true;
      if (it == 30) return false;
      Eigen::PartialPivLU<Eigen::Matrix<double, 6, 6>> lu(A);
      const Eigen::Matrix<double, 6, 1> dq = lu.solve(r);
      if (!dq.allFinite()) return false;
      for (int j = 0; j < 6; ++j) q[j + 1] -= dq[j];
    }
    return false;
  }
};

}  // namespace clm
