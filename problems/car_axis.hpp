// The car axis problem of the Bari test set [Bari-testset] (problem "caraxis", caraxis.f; Rentrop, Roche and
// Steinebach 1989): a very simplified car axle travelling on a bumpy road. The axle, a rigid bar of length L,
// carries the left wheel at (xl, yl) and the right wheel at (xr, yr); each end is held by a spring of unit
// stiffness and rest length L0, the left one to the origin, the right one to the point (xb, yb) that follows
// the road, yb(t) = r sin(w t), xb(t) = sqrt(L^2 - yb^2). The left spring stays orthogonal to the line
// from the origin to the moving point (xb, yb). Masses m = M eps^2 / 2 at each end, gravity g along -y.
//   q = (xl, yl, xr, yr), n = 4;
//   T = m/2 |qd|^2,
//   V(q, t) = 1/2 (Ll - L0)^2 + 1/2 (Lr - L0)^2 + m g (yl + yr),
//       Ll = |(xl, yl)|, Lr = |(xr - xb(t), yr - yb(t))|: the right spring's anchor moves (time-dependent V);
//   h(q, t) = (xb(t) xl + yb(t) yl,  (xl - xr)^2 + (yl - yr)^2 - L^2): the first constraint moves with the road
//       (rheonomic, core/problem.hpp).
// The stiffness comes from the small masses (eps = 1e-2: m = 5e-4 against unit springs). The test set writes
// the index-3 DAE K qdd = f(t, q) + G^T lambda, K = M eps^2/2 I, G = dh/dq (caraxis.f, f(5..8)): the same
// sign as the suite's M qdd + c = F + A^T lambda (docs/design.md section 1), so the suite's multipliers are the
// test set's y(9), y(10) as they stand (tests/car_axis_test.cpp checks its force vector against the autodiff
// terms). Initial data: the test set's consistent values (0, L/2, L, L/2), qd = (-r w/2, 0, -r w/2, 0) (the
// test set's for L = 1, r w = 1; consistent for every admissible parameter set, as the test checks).
// Reference: the test set's solution at t = 3 (caraxis.f, carsoln).
#pragma once

#include <array>
#include <cmath>
#include <string>

#include "core/problem.hpp"

namespace clm {

struct CarAxis {
  static constexpr const char* kName = "car_axis";
  static constexpr const char* kDescription =
      "Bari test set 'caraxis': axle of length L on two springs, the right anchor and one constraint moving with "
      "the road yb = r sin(w t); stiff (eps = 1e-2)";
  static constexpr int kDof = 4;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr const char* kCoordinateNames[] = {"xl", "yl", "xr", "yr"};
  static constexpr const char* kCoordinateUnits[] = {"-", "-", "-", "-"};

  // The test set's data (caraxis.f), in its scaled units.
  double eps = 1e-2, M = 10, L = 1, L0 = 0.5, r = 0.1, w = 10, g = 1;
  using S = CarAxis;
  static constexpr std::array kParameters = {
      ParameterSpec<S>{"eps", &S::eps, "stiffness parameter: end masses M eps^2 / 2 against unit springs"},
      ParameterSpec<S>{"M", &S::M, "mass scale"},
      ParameterSpec<S>{"L", &S::L, "axle length"},
      ParameterSpec<S>{"L0", &S::L0, "spring rest length"},
      ParameterSpec<S>{"r", &S::r, "road amplitude: yb = r sin(w t)"},
      ParameterSpec<S>{"w", &S::w, "road angular frequency"},
      ParameterSpec<S>{"g", &S::g, "gravity along -y"},
  };

  // The test set's solution at t = 3 (caraxis.f, carsoln): y(1..4) = q, y(5..8) = qd, y(9..10) = lambda, the
  // suite's sign convention being the test set's (header comment).
  static constexpr double kReferenceTime = 3.0;
  static constexpr std::array<double, 4> kReferenceQ = {0.4934557842755629e-01, 0.4969894602303324e+00,
                                                        0.1041742524885400e+01, 0.3739110272652214e+00};
  static constexpr std::array<double, 4> kReferenceQd = {-0.7705836840321485e-01, 0.7446866596327776e-02,
                                                         0.1755681574942899e-01, 0.7703410437794031e+00};
  static constexpr std::array<double, 2> kReferenceLambda = {-0.4736886750784630e-02, -0.1104680411345730e-02};
  static constexpr const char* kReferenceSource = "Bari-testset";
  static constexpr const char* kReferenceDescription = "the test set's reference solution at t = 3 (caraxis.f, carsoln)";

  int dof() const { return 4; }
  int constraints() const { return 2; }
  void validate() const {
    for (const auto& p : kParameters)
      if (!std::isfinite(this->*(p.member)))
        throw InputError("car_axis: parameter " + std::string(p.name) + " must be finite");
    if (!(eps > 0)) throw InputError("car_axis: parameter eps must be > 0");
    if (!(M > 0)) throw InputError("car_axis: parameter M must be > 0");
    if (!(L > 0)) throw InputError("car_axis: parameter L must be > 0");
    if (!(L0 >= 0)) throw InputError("car_axis: parameter L0 must be >= 0");
    // xb = sqrt(L^2 - yb^2) must stay real and away from 0 (the first constraint's normal (xb, yb) then has
    // length L throughout).
    if (!(std::abs(r) < L)) throw InputError("car_axis: parameter r must satisfy |r| < L (xb = sqrt(L^2 - yb^2))");
  }

  double mass() const { return M * eps * eps / 2; }

  template <class T>
  void mass_matrix(const VecN<T, 4>&, MatN<T, 4, 4>& K) const {
    K.setConstant(T(0.0));
    for (int i = 0; i < 4; ++i) K(i, i) = T(mass());
  }

  // The moving road point (xb, yb) at t.
  template <class T>
  void road(const T& t, T& xb, T& yb) const {
    using std::sin;
    using std::sqrt;
    yb = r * sin(w * t);
    xb = sqrt(L * L - yb * yb);
  }

  template <class T>
  T potential(const VecN<T, 4>& q, const T& t) const {
    using std::sqrt;
    T xb, yb;
    road(t, xb, yb);
    const T Ll = sqrt(q[0] * q[0] + q[1] * q[1]);
    const T Lr = sqrt((q[2] - xb) * (q[2] - xb) + (q[3] - yb) * (q[3] - yb));
    return 0.5 * (Ll - L0) * (Ll - L0) + 0.5 * (Lr - L0) * (Lr - L0) + mass() * g * (q[1] + q[3]);
  }

  template <class T>
  void constraint(const VecN<T, 4>& q, const T& t, VecN<T, 2>& h) const {
    T xb, yb;
    road(t, xb, yb);
    h[0] = xb * q[0] + yb * q[1];
    h[1] = (q[0] - q[2]) * (q[0] - q[2]) + (q[1] - q[3]) * (q[1] - q[3]) - T(L * L);
  }

  void default_initial(Vec& q0, Vec& qd0) const {
    q0 << 0.0, L / 2, L, L / 2;
    qd0 << -r * w / 2, 0.0, -r * w / 2, 0.0;
  }
};

}  // namespace clm
