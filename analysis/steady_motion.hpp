// Linearization about steady motion (`clmbench analyze --speed`), for problems that declare a family of
// steady motions parametrized by a speed (core/problem.hpp style optional members):
//
//   static constexpr std::array kSteadyMotionCoordinates = {...};  // the k coordinates s whose motion is analysed
//   static constexpr std::array kSteadyMotionHeld = {...};         // velocities held at their steady value
//   void steady_motion(double speed, Vec& q, Vec& qd) const;       // the steady motion (consistent)
//   static constexpr const char* kOscillatoryCrossing, kRealCrossing;  // names of the two kinds of stability
//                                                                       // change ("weave", "capsize")
//   static constexpr const char* kSteadyMotionSpeedUnit = "m/s";      // (optional, printed)
//   static constexpr double kPublishedOscillatoryCrossingSpeed, kPublishedRealCrossingSpeed;  // (optional)
//   static constexpr const char* kPublishedCrossingSource;  // docs/references.md key of those speeds
//       published values of the two stability changes at the default parameters (the bicycle's weave and
//       capsize speeds): `analyze --speed` prints them beside the computed ones with the digits matched.
//
// The reduced equations: for z = (ds, dsd) in R^2k, q = q0 + ds on the coordinates s, the velocities of s are
// dsd, the held ones keep their steady values, and the remaining n - k - |held| = m velocities follow from the
// constraints A(q) qd = 0; the accelerations come from the full constrained equations
//   [M -A^T; A 0] [qdd; lambda] = [-c; -Adot qd]
// with c = Mdot qd - 1/2 d/dq(qd^T M qd) + dV/dq and Adot qd = d/dq(A qd) qd, and F(z) = (dsd, qdd_s). The
// Jacobian dF/dz at z = 0 is the linearized lean/steer system. Everything is forward-mode automatic
// differentiation of the problem's templated M(q), V(q), A(q) (core/tangent.hpp: F runs in
// Tangent<double, 2k>, and c and Adot qd are differentiated once more inside it), never a transcribed
// matrix. The reduction assumes what the steady motion's symmetry gives for the bicycle: the perturbations
// of the cyclic coordinates (x, y, yaw, wheel angles) and of the held speed do not enter the linearized s
// equations (tests/bicycle_test.cpp checks it by differentiating along them too).
// Problems with a generalized force or a gyroscopic term are not covered (none declares a steady motion).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/problem.hpp"
#include "core/tangent.hpp"
#include "core/types.hpp"

namespace clm {

template <class P>
concept HasSteadyMotion = requires(const P& p, double v, Vec& q, Vec& qd) {
  P::kSteadyMotionCoordinates;
  P::kSteadyMotionHeld;
  p.steady_motion(v, q, qd);
} && P::kConstraintKind == ConstraintKind::kPfaffian && P::kDof != Eigen::Dynamic &&
                          P::kConstraints != Eigen::Dynamic && !HasGeneralizedForce<P> && !HasGyroscopic<P>;

// The capability `clmbench analyze --speed` uses (attached at registration to problems with a steady motion).
class SteadyMotionLinearizer : public Capability {
 public:
  // Names of the reduced state z: the coordinates s, then their rates ("phi", "delta", "phid", "deltad").
  virtual std::vector<std::string> state_names() const = 0;
  // dF/dz at the steady motion of the given speed (2k x 2k).
  virtual Mat jacobian(double speed) const = 0;
  // qdd (all n coordinates) at the steady motion: zero when it is a solution of the nonlinear equations.
  virtual Vec steady_acceleration(double speed) const = 0;
  // Derivative of qdd_s at the steady motion along a perturbation of every coordinate and of every
  // velocity the reduction holds fixed (cyclic coordinates, held rates): k x (n + |held|); zero when the
  // reduction is exact to first order.
  virtual Mat neglected_coupling(double speed) const = 0;
  virtual std::string oscillatory_crossing_name() const = 0;
  virtual std::string real_crossing_name() const = 0;
  virtual std::string speed_unit() const = 0;
  // The published speed of the stability change named `name` (oscillatory or real crossing name), NaN when
  // none is published or the parameters are not the problem's defaults (the values belong to those).
  virtual double published_crossing_speed(const std::string& /*name*/) const { return std::nan(""); }
  virtual std::string published_crossing_source() const { return ""; }
};

namespace detail {

// Solves K x = b (square, size r) by Gaussian elimination with partial pivoting on the values; any scalar.
template <class S>
void solve_dense(std::vector<S>& K, std::vector<S>& b, int r) {
  for (int col = 0; col < r; ++col) {
    int piv = col;
    for (int i = col + 1; i < r; ++i)
      if (std::abs(value_of(K[i * r + col])) > std::abs(value_of(K[piv * r + col]))) piv = i;
    if (value_of(K[piv * r + col]) == 0.0) throw NumericalFailure("steady motion: singular constrained system");
    if (piv != col) {
      for (int j = 0; j < r; ++j) std::swap(K[piv * r + j], K[col * r + j]);
      std::swap(b[piv], b[col]);
    }
    for (int i = col + 1; i < r; ++i) {
      const S f = K[i * r + col] / K[col * r + col];
      for (int j = col; j < r; ++j) K[i * r + j] = K[i * r + j] - f * K[col * r + j];
      b[i] = b[i] - f * b[col];
    }
  }
  for (int i = r - 1; i >= 0; --i) {
    S acc = b[i];
    for (int j = i + 1; j < r; ++j) acc = acc - K[i * r + j] * b[j];
    b[i] = acc / K[i * r + i];
  }
}

// qdd of the constrained equations at (q, qd), every term by forward-mode AD of the problem in scalar S.
template <Problem P, class S>
void constrained_acceleration(const P& p, const VecN<S, P::kDof>& q, const VecN<S, P::kDof>& qd,
                              VecN<S, P::kDof>& qdd) {
  constexpr int n = P::kDof, m = P::kConstraints;
  using S1 = Tangent<S, 1>;
  using SN = Tangent<S, n>;
  VecN<S1, n> q1;
  VecN<SN, n> qn;
  for (int i = 0; i < n; ++i) {
    q1[i] = S1(q[i]);
    q1[i].d[0] = qd[i];
    qn[i] = SN::variable(q[i], i);
  }
  MatN<S1, n, n> M1;
  p.template mass_matrix<S1>(q1, M1);  // M and Mdot = dM/dq [qd]
  MatN<SN, n, n> Mn;
  p.template mass_matrix<SN>(qn, Mn);
  SN twice_t(S(0.0));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) twice_t += Mn(i, j) * SN(qd[i] * qd[j]);
  const SN V = p.template potential<SN>(qn);
  MatN<S1, m, n> A1;
  p.template pfaffian<S1>(q1, A1);  // A and Adot = dA/dq [qd]

  const int r = n + m;
  std::vector<S> K(static_cast<size_t>(r * r), S(0.0)), b(static_cast<size_t>(r), S(0.0));
  for (int i = 0; i < n; ++i) {
    S c = S(0.0);
    for (int j = 0; j < n; ++j) {
      K[i * r + j] = M1(i, j).v;
      c = c + M1(i, j).d[0] * qd[j];
    }
    c = c - 0.5 * twice_t.d[i] + V.d[i];
    b[i] = -c;
  }
  for (int a = 0; a < m; ++a) {
    S adot = S(0.0);
    for (int j = 0; j < n; ++j) {
      K[(n + a) * r + j] = A1(a, j).v;
      K[j * r + n + a] = -A1(a, j).v;
      adot = adot + A1(a, j).d[0] * qd[j];
    }
    b[n + a] = -adot;
  }
  solve_dense(K, b, r);
  for (int i = 0; i < n; ++i) qdd[i] = b[i];
}

// Velocities consistent with A(q) qd = 0 given the independent ones (qd[independent] set on entry).
template <Problem P, class S>
void complete_velocities(const P& p, const VecN<S, P::kDof>& q, const std::vector<int>& dependent,
                         VecN<S, P::kDof>& qd) {
  constexpr int n = P::kDof, m = P::kConstraints;
  MatN<S, m, n> A;
  p.template pfaffian<S>(q, A);
  std::vector<bool> is_dep(n, false);
  for (int i : dependent) is_dep[i] = true;
  std::vector<S> K(static_cast<size_t>(m * m), S(0.0)), b(static_cast<size_t>(m), S(0.0));
  for (int a = 0; a < m; ++a) {
    for (int k = 0; k < m; ++k) K[a * m + k] = A(a, dependent[k]);
    for (int j = 0; j < n; ++j)
      if (!is_dep[j]) b[a] = b[a] - A(a, j) * qd[j];
  }
  solve_dense(K, b, m);
  for (int k = 0; k < m; ++k) qd[dependent[k]] = b[k];
}

}  // namespace detail

template <Problem P>
  requires HasSteadyMotion<P>
class ProblemSteadyMotion final : public SteadyMotionLinearizer {
  static constexpr int n = P::kDof, m = P::kConstraints;
  static constexpr int k = static_cast<int>(P::kSteadyMotionCoordinates.size());

 public:
  explicit ProblemSteadyMotion(const P& p) : p_(p) {
    std::vector<bool> independent(n, false);
    for (int i : P::kSteadyMotionCoordinates) independent[i] = true;
    for (int i : P::kSteadyMotionHeld) independent[i] = true;
    for (int i = 0; i < n; ++i)
      if (!independent[i]) dependent_.push_back(i);
    if (static_cast<int>(dependent_.size()) != m)
      throw InputError(std::string(P::kName) + ": steady motion needs n - m independent velocities");
  }

  std::vector<std::string> state_names() const override {
    std::vector<std::string> names;
    std::vector<std::string> coords(n);
    for (int i = 0; i < n; ++i) coords[i] = "q" + std::to_string(i + 1);
    if constexpr (requires { P::kCoordinateNames; })
      for (int i = 0; i < n; ++i) coords[i] = P::kCoordinateNames[i];
    for (int i : P::kSteadyMotionCoordinates) names.push_back(coords[i]);
    for (int i : P::kSteadyMotionCoordinates) names.push_back(coords[i] + "d");
    return names;
  }

  Mat jacobian(double speed) const override {
    using S = Tangent<double, 2 * k>;
    VecN<S, n> q, qd, qdd;
    steady_state(speed, q, qd);
    for (int a = 0; a < k; ++a) {
      const int i = P::kSteadyMotionCoordinates[a];
      q[i] = S::variable(q[i].v, a);
      qd[i] = S::variable(qd[i].v, k + a);
    }
    detail::complete_velocities(p_, q, dependent_, qd);
    detail::constrained_acceleration(p_, q, qd, qdd);
    Mat J = Mat::Zero(2 * k, 2 * k);
    for (int a = 0; a < k; ++a) {
      const int i = P::kSteadyMotionCoordinates[a];
      for (int c = 0; c < 2 * k; ++c) {
        J(a, c) = qd[i].d[c];
        J(k + a, c) = qdd[i].d[c];
      }
    }
    return J;
  }

  Vec steady_acceleration(double speed) const override {
    VecN<double, n> q, qd, qdd;
    steady_state(speed, q, qd);
    detail::constrained_acceleration(p_, q, qd, qdd);
    return qdd;
  }

  Mat neglected_coupling(double speed) const override {
    constexpr int h = static_cast<int>(P::kSteadyMotionHeld.size());
    using S = Tangent<double, n + h>;
    VecN<S, n> q, qd, qdd;
    steady_state(speed, q, qd);
    std::vector<bool> shape(n, false);
    for (int i : P::kSteadyMotionCoordinates) shape[i] = true;
    for (int i = 0; i < n; ++i)
      if (!shape[i]) q[i] = S::variable(q[i].v, i);
    for (int a = 0; a < h; ++a) qd[P::kSteadyMotionHeld[a]] = S::variable(qd[P::kSteadyMotionHeld[a]].v, n + a);
    detail::complete_velocities(p_, q, dependent_, qd);
    detail::constrained_acceleration(p_, q, qd, qdd);
    Mat C = Mat::Zero(k, n + h);
    for (int a = 0; a < k; ++a)
      for (int c = 0; c < n + h; ++c)
        if (c >= n || !shape[c]) C(a, c) = qdd[P::kSteadyMotionCoordinates[a]].d[c];
    return C;
  }

  std::string oscillatory_crossing_name() const override {
    if constexpr (requires { P::kOscillatoryCrossing; }) return P::kOscillatoryCrossing;
    return "oscillatory";
  }
  std::string real_crossing_name() const override {
    if constexpr (requires { P::kRealCrossing; }) return P::kRealCrossing;
    return "real";
  }
  std::string speed_unit() const override {
    if constexpr (requires { P::kSteadyMotionSpeedUnit; }) return P::kSteadyMotionSpeedUnit;
    return "";
  }
  double published_crossing_speed(const std::string& name) const override {
    if constexpr (requires { P::kPublishedOscillatoryCrossingSpeed; P::kPublishedRealCrossingSpeed; }) {
      const P defaults{};
      for (const auto& spec : P::kParameters)
        if (p_.*(spec.member) != defaults.*(spec.member)) return std::nan("");
      if (name == oscillatory_crossing_name()) return P::kPublishedOscillatoryCrossingSpeed;
      if (name == real_crossing_name()) return P::kPublishedRealCrossingSpeed;
    }
    return std::nan("");
  }
  std::string published_crossing_source() const override {
    if constexpr (requires { P::kPublishedCrossingSource; }) return P::kPublishedCrossingSource;
    return "";
  }

 private:
  template <class S>
  void steady_state(double speed, VecN<S, n>& q, VecN<S, n>& qd) const {
    Vec q0, qd0;
    p_.steady_motion(speed, q0, qd0);
    for (int i = 0; i < n; ++i) {
      q[i] = S(q0[i]);
      qd[i] = S(qd0[i]);
    }
  }

  P p_;
  std::vector<int> dependent_;
};

template <Problem P>
void add_steady_motion(Model& model, const P& p) {
  if constexpr (HasSteadyMotion<P>) model.add_capability<SteadyMotionLinearizer>(std::make_shared<ProblemSteadyMotion<P>>(p));
}

}  // namespace clm
