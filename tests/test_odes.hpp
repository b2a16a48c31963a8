// Small OdeSystems with closed-form solutions for the integrator and driver tests.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/autodiff_ode.hpp"
#include "core/ode.hpp"

namespace clm::testing {

// Hopf normal form: y1' = -w y2 + y1 (1 - r^2), y2' = w y1 + y2 (1 - r^2). In polar coordinates
// r' = r (1 - r^2), phi' = w, so r(t) = 1 / sqrt(1 + (1/r0^2 - 1) e^{-2t}), phi = phi0 + w t: a smooth
// nonlinear oscillator spiralling onto the unit circle.
class HopfOscillator final : public OdeSystem {
 public:
  HopfOscillator(double w, double r0, double phi0) : w_(w), r0_(r0), phi0_(phi0) {}
  int dimension() const override { return 2; }
  void rhs(double, const Vec& y, Vec& dy) override {
    const double g = 1.0 - (y[0] * y[0] + y[1] * y[1]);
    dy[0] = -w_ * y[1] + y[0] * g;
    dy[1] = w_ * y[0] + y[1] * g;
  }
  Vec exact(double t) const {
    const double r = 1.0 / std::sqrt(1.0 + (1.0 / (r0_ * r0_) - 1.0) * std::exp(-2.0 * t));
    Vec y(2);
    y << r * std::cos(phi0_ + w_ * t), r * std::sin(phi0_ + w_ * t);
    return y;
  }
  Vec initial() const { return exact(0.0); }

 private:
  double w_, r0_, phi0_;
};

// Fast relaxation onto a slow forcing: y' = k (cos t - y). The initial layer e^{-k t} is a sharp transient,
// and for k large the explicit method's stability bound then limits the step (rejections).
// y = A cos t + B sin t + (y0 - A) e^{-k t}, A = k^2 / (k^2 + 1), B = k / (k^2 + 1).
class Relaxation final : public OdeSystem {
 public:
  Relaxation(double k, double y0) : k_(k), y0_(y0) {}
  int dimension() const override { return 1; }
  void rhs(double t, const Vec& y, Vec& dy) override { dy[0] = k_ * (std::cos(t) - y[0]); }
  double exact(double t) const {
    const double a = k_ * k_ / (k_ * k_ + 1), b = k_ / (k_ * k_ + 1);
    return a * std::cos(t) + b * std::sin(t) + (y0_ - a) * std::exp(-k_ * t);
  }

 private:
  double k_, y0_;
};

// Switching fronts: y' = -lambda (y - phi(t)) + phi'(t) with phi = tanh(a sin(pi t)), so that
// y = phi(t) + y0 e^{-lambda t}. Flat stretches (the step grows) alternate with fronts of width
// 1 / (a pi) at t = 1, 2, 3, ... that an adaptive method can only find by rejecting steps.
class SwitchingFronts final : public OdeSystem {
 public:
  SwitchingFronts(double a, double lambda, double y0) : a_(a), lambda_(lambda), y0_(y0) {}
  int dimension() const override { return 1; }
  void rhs(double t, const Vec& y, Vec& dy) override {
    const double phi = std::tanh(a_ * std::sin(M_PI * t));
    const double dphi = a_ * M_PI * std::cos(M_PI * t) * (1.0 - phi * phi);
    dy[0] = -lambda_ * (y[0] - phi) + dphi;
  }
  double exact(double t) const { return std::tanh(a_ * std::sin(M_PI * t)) + y0_ * std::exp(-lambda_ * t); }

 private:
  double a_, lambda_, y0_;
};

// y' = y^2: y = y0 / (1 - y0 t), blows up at t = 1 / y0.
class Quadratic final : public OdeSystem {
 public:
  int dimension() const override { return 1; }
  void rhs(double, const Vec& y, Vec& dy) override { dy[0] = y[0] * y[0]; }
};

// Kozlov's Theorem 1 system for the Chaplygin sleigh (see PenaltySleigh in tests/stiff_integrator_test.cpp),
// with its rhs written once for a generic scalar (core/autodiff_ode.hpp), so that its Jacobian comes from
// ceres::Jet in one evaluation (IntegratorSettings::jacobian = "autodiff"); with doubles it is the same
// arithmetic as PenaltySleigh::rhs. Shared by the stiff-integrator tests and bench/bench_integrators.cpp;
// the defaults are the parameters both use (m 1.7, Ic 0.35, b 0.45, N = 1e6).
class PenaltySleighAutoDiff final : public AutoDiffOdeSystem<PenaltySleighAutoDiff, 6> {
 public:
  explicit PenaltySleighAutoDiff(double m = 1.7, double Ic = 0.35, double b = 0.45, double N = 1e6)
      : m_(m), Ic_(Ic), b_(b), N_(N) {}
  template <class T>
  void evaluate(double, const Eigen::Matrix<T, 6, 1>& y, Eigen::Matrix<T, 6, 1>& dy) const {
    using std::cos;
    using std::sin;
    const T s = sin(y[2]), c = cos(y[2]);
    const T aqd = -s * y[3] + c * y[4] - b_ * y[5];
    dy[0] = y[3];
    dy[1] = y[4];
    dy[2] = y[5];
    dy[3] = -N_ * (-s) * aqd / m_;
    dy[4] = -N_ * c * aqd / m_;
    dy[5] = -N_ * (-b_) * aqd / Ic_;
  }

 private:
  double m_, Ic_, b_, N_;
};

// The initial data of the penalty-sleigh runs (the stiff-integrator tests, bench/bench_integrators.cpp; the
// kozlov_friction setup): q0 = (0.2, -0.1, 0.4) on the constraint, qd = u e1 + b w e2 + (0, 0, w) with
// u = 0.9, w = -1.3, for blade offset b.
inline void penalty_sleigh_initial(double b, Vec& q0, Vec& qd0) {
  const double th0 = 0.4, u0 = 0.9, w0 = -1.3;
  q0.resize(3);
  qd0.resize(3);
  q0 << 0.2, -0.1, th0;
  qd0 << u0 * std::cos(th0) - b * w0 * std::sin(th0), u0 * std::sin(th0) + b * w0 * std::cos(th0), w0;
}

}  // namespace clm::testing
