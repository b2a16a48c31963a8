#include "integrators/radau5.hpp"
#include "integrators/newton_iteration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace clm {

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

// Radau IIA (s = 3) nodes and the constants of the RADAU5 code (Hairer & Wanner, Solving ODEs II, IV.8).
const double kSq6 = std::sqrt(6.0);
const double c1 = (4.0 - kSq6) / 10, c2 = (4.0 + kSq6) / 10;
const double c1m1 = c1 - 1, c2m1 = c2 - 1, c1mc2 = c1 - c2;
// Embedded error estimate: (gamma0 h f0 + e1 z1 + e2 z2 + e3 z3) scaled by 1/h (RADAU5's DD1..DD3).
const double dd1 = -(13 + 7 * kSq6) / 3, dd2 = (-13 + 7 * kSq6) / 3, dd3 = -1.0 / 3;
// Eigenvalues of A^-1: one real gamma = 1/u1 and the pair alpha +- i beta (RADAU5 computes them from cbrt 81).
const double kCbrt81 = std::cbrt(81.0), kCbrt9 = std::cbrt(9.0);
const double u1_raw = (6 + kCbrt81 - kCbrt9) / 30;
const double alph_raw = (12 - kCbrt81 + kCbrt9) / 60;
const double beta_raw = (kCbrt81 + kCbrt9) * std::sqrt(3.0) / 60;
const double cno = alph_raw * alph_raw + beta_raw * beta_raw;
const double u1 = 1 / u1_raw, alph = alph_raw / cno, beta = beta_raw / cno;
// T and T^-1 with T^-1 A^-1 T = diag(gamma, [alpha -beta; beta alpha]) (RADAU5; T32 = 1, T33 = 0).
constexpr double t11 = 9.1232394870892942792e-02, t12 = -0.14125529502095420843, t13 = -3.0029194105147424492e-02;
constexpr double t21 = 0.24171793270710701896, t22 = 0.20412935229379993199, t23 = 0.38294211275726193779;
constexpr double t31 = 0.96604818261509293619;
constexpr double ti11 = 4.3255798900631553510, ti12 = 0.33919925181580986954, ti13 = 0.54177053993587487119;
constexpr double ti21 = -4.1787185915519047273, ti22 = -0.32768282076106238708, ti23 = 0.47662355450055045196;
constexpr double ti31 = -0.50287263494578687595, ti32 = 2.5719269498556054292, ti33 = -0.59603920482822492497;

// RADAU5 defaults: at most 7 Newton iterations, safety 0.9, keep J while the Newton rate is <= 1e-3,
// keep the LUs while h_new / h is in [1, 1.2], step ratio in [1/8, 5].
constexpr int kNit = 7;
// Fixed-step mode: a Newton failure changes the step, which a step-halving study must not see, and the
// Newton tolerance there can be near round-off; so more iterations are allowed.
constexpr int kNitFixed = 12;
constexpr double kSafe = 0.9;
constexpr double kThet = 0.001;
constexpr double kQuot1 = 1.0, kQuot2 = 1.2;
constexpr double kFacl = 5.0, kFacr = 1.0 / 8;
// Not in RADAU5: after a Newton failure the step that did converge caps the proposals, and the cap grows by
// this factor per accepted step. Simplified Newton with J frozen at the step start contracts only for
// h ~< 1/sqrt(N |thetad|) on the penalty sleigh (the stiff direction A(q) turns during the step), so the
// error controller's proposals (up to 8x) fail again and again. Measured on the sleigh, N = 1e6, rtol 1e-8:
// 538 -> 106 rejected steps, 8406 -> 5771 rhs evaluations; Van der Pol unchanged.
constexpr double kCapGrowth = 1.2;

}  // namespace

void Radau5::do_initialize(const IntegratorSettings& s) {
  fixed_step_ = s.fixed_step;
  nit_ = fixed_step_ ? kNitFixed : kNit;
  if (fixed_step_) {
    rtol_ = s.rtol;
    atol_ = s.atol;
    fnewt_ = std::max(1e-2, 10 * kEps / rtol_);
  } else {
    // RADAU5's tolerance transformation (ITOL = 0): the error estimate is of an order-3 embedded method.
    rtol_ = 0.1 * std::pow(s.rtol, 2.0 / 3);
    atol_ = rtol_ * (s.atol / s.rtol);
    fnewt_ = std::max(10 * kEps / rtol_, std::min(0.03, std::sqrt(rtol_)));
  }
  dt_ = s.dt;
  dt_max_ = s.dt_max > 0 ? s.dt_max : std::numeric_limits<double>::infinity();
  const long n = y_.size();
  for (Vec* v : {&scal_, &z1_, &z2_, &z3_, &w1_, &w2_, &w3_, &k1_, &k2_, &k3_, &ystage_, &cont0_, &cont1_, &cont2_,
                 &cont3_, &err_v_, &err_f_, &err_rhs_})
    v->setZero(n);
  initialize_newton(s);
  e1_.setZero(n, n);
  e2_.setZero(n, n);
  c_rhs_.setZero(n);
  c_sol_.setZero(n);
  lu1_ = Eigen::PartialPivLU<Mat>(n);
  lu2_ = Eigen::PartialPivLU<Eigen::MatrixXcd>(n);
  h_ = fixed_step_ ? dt_ : std::min(dt_ > 0 ? dt_ : 1e-6, dt_max_);
  h_old_ = 0;
  first_ = true;
  reject_ = false;
  faccon_ = 1;
  theta_ = kThet;
  err_ = 0;
  h_acc_ = err_acc_ = 0;
  h_cap_ = std::numeric_limits<double>::infinity();
  newton_last_ = 0;
  cont0_ = y_;
}

void Radau5::decompose(double h) {
  fac1_ = u1 / h;
  alphn_ = alph / h;
  betan_ = beta / h;
  e1_ = -J_;
  e1_.diagonal().array() += fac1_;
  lu1_.compute(e1_);
  e2_.real() = -J_;
  e2_.imag().setZero();
  e2_.diagonal().array() += std::complex<double>(alphn_, betan_);
  lu2_.compute(e2_);
  h_lu_ = h;
}

void Radau5::solve_real(Vec& x) {
  err_rhs_ = x;  // PartialPivLU::solve must not alias its argument (the in-place permutation allocates)
  x = lu1_.solve(err_rhs_);
}

void Radau5::solve_complex(Vec& re, Vec& im) {
  c_rhs_.real() = re;
  c_rhs_.imag() = im;
  c_sol_ = lu2_.solve(c_rhs_);
  re = c_sol_.real();
  im = c_sol_.imag();
}

Radau5::Newton Radau5::solve_stages(double h) {
  const long n = y_.size();
  // Starting values: the last step's collocation polynomial extrapolated to the new nodes (RADAU5).
  if (first_) {
    z1_.setZero();
    z2_.setZero();
    z3_.setZero();
    w1_.setZero();
    w2_.setZero();
    w3_.setZero();
  } else {
    const double c3q = h / h_old_, c1q = c1 * c3q, c2q = c2 * c3q;
    for (long i = 0; i < n; ++i) {
      const double ak1 = cont1_[i], ak2 = cont2_[i], ak3 = cont3_[i];
      const double z1i = c1q * (ak1 + (c1q - c2m1) * (ak2 + (c1q - c1m1) * ak3));
      const double z2i = c2q * (ak1 + (c2q - c2m1) * (ak2 + (c2q - c1m1) * ak3));
      const double z3i = c3q * (ak1 + (c3q - c2m1) * (ak2 + (c3q - c1m1) * ak3));
      z1_[i] = z1i;
      z2_[i] = z2i;
      z3_[i] = z3i;
      w1_[i] = ti11 * z1i + ti12 * z2i + ti13 * z3i;
      w2_[i] = ti21 * z1i + ti22 * z2i + ti23 * z3i;
      w3_[i] = ti31 * z1i + ti32 * z2i + ti33 * z3i;
    }
  }
  faccon_ = std::pow(std::max(faccon_, kEps), 0.8);
  theta_ = kThet;
  double dynold = 0, thqold = 0;
  for (int newt = 0;;) {
    ystage_ = y_ + z1_;
    sys_->rhs(t_ + c1 * h, ystage_, k1_);
    ystage_ = y_ + z2_;
    sys_->rhs(t_ + c2 * h, ystage_, k2_);
    ystage_ = y_ + z3_;
    sys_->rhs(t_ + h, ystage_, k3_);
    stats_.rhs_evals += 3;
    // Right-hand sides of the transformed linear systems (IV.8, eq. 8.19; RADAU5's SLVRAD).
    for (long i = 0; i < n; ++i) {
      const double a1 = k1_[i], a2 = k2_[i], a3 = k3_[i];
      z1_[i] = ti11 * a1 + ti12 * a2 + ti13 * a3 - fac1_ * w1_[i];
      z2_[i] = ti21 * a1 + ti22 * a2 + ti23 * a3 - alphn_ * w2_[i] + betan_ * w3_[i];
      z3_[i] = ti31 * a1 + ti32 * a2 + ti33 * a3 - alphn_ * w3_[i] - betan_ * w2_[i];
    }
    solve_real(z1_);
    solve_complex(z2_, z3_);
    ++newt;
    ++stats_.newton_iterations;
    newton_last_ = newt;
    double sum = 0;
    for (long i = 0; i < n; ++i) {
      const double s = scal_[i];
      sum += (z1_[i] / s) * (z1_[i] / s) + (z2_[i] / s) * (z2_[i] / s) + (z3_[i] / s) * (z3_[i] / s);
    }
    const double dyno = std::sqrt(sum / (3.0 * std::max<long>(n, 1)));
    if (!std::isfinite(dyno)) {
      newton_fail_factor_ = 0.5;
      return Newton::kFailed;
    }
    // Rate of contraction; give up early when the remaining iterations cannot reach the tolerance.
    if (newt > 1 && newt < nit_) {
      const double thq = dyno / dynold;
      theta_ = newt == 2 ? thq : std::sqrt(thq * thqold);
      thqold = thq;
      if (theta_ < 0.99) {
        faccon_ = theta_ / (1 - theta_);
        const double dyth = faccon_ * dyno * std::pow(theta_, nit_ - 1 - newt) / fnewt_;
        if (dyth >= 1) {
          const double qnewt = std::clamp(dyth, 1e-4, 20.0);
          newton_fail_factor_ = 0.8 * std::pow(qnewt, -1.0 / (4 + nit_ - 1 - newt));
          return Newton::kFailed;
        }
      } else {
        newton_fail_factor_ = 0.5;
        return Newton::kFailed;
      }
    }
    dynold = std::max(dyno, kEps);
    w1_ += z1_;
    w2_ += z2_;
    w3_ += z3_;
    for (long i = 0; i < n; ++i) {
      const double f1 = w1_[i], f2 = w2_[i], f3 = w3_[i];
      z1_[i] = t11 * f1 + t12 * f2 + t13 * f3;
      z2_[i] = t21 * f1 + t22 * f2 + t23 * f3;
      z3_[i] = t31 * f1 + f2;
    }
    // At least two iterations, so that this step's contraction rate is measured. RADAU5 stops after one
    // when the previous steps' rate predicts convergence; on the penalty sleigh, where the rate changes by
    // orders of magnitude with h, that gave global errors of 400 rtol (4.4e-6 at rtol 1e-8; now 8e-8).
    if (faccon_ * dyno <= fnewt_ && newt >= 2) return Newton::kConverged;
    if (newt >= nit_) {
      newton_fail_factor_ = 0.5;
      return Newton::kFailed;
    }
  }
}

double Radau5::error_estimate(double h) {
  const long n = y_.size();
  const double hee1 = dd1 / h, hee2 = dd2 / h, hee3 = dd3 / h;
  for (long i = 0; i < n; ++i) {
    err_f_[i] = hee1 * z1_[i] + hee2 * z2_[i] + hee3 * z3_[i];
    err_v_[i] = err_f_[i] + f_[i];
  }
  solve_real(err_v_);  // the (I - h gamma0 J)^-1 filter (IV.8, eq. 8.22)
  // The scaled RMS norm with sc = atol + rtol |y0| (RADAU5), floored at 1e-10.
  auto scaled_norm = [&] { return std::max(weighted_rms_norm(err_v_, scal_), 1e-10); };
  double err = scaled_norm();
  if (err < 1 || !(first_ || reject_)) return err;
  // After a rejection (and on the first step) filter once more with f evaluated at y0 + err (IV.8, 8.23):
  // removes the spurious large estimates for very stiff components.
  ystage_ = y_ + err_v_;
  eval_rhs(t_, ystage_, k1_);
  err_v_ = k1_ + err_f_;
  solve_real(err_v_);
  return scaled_norm();
}

bool Radau5::do_step(double h) {
  const long n = y_.size();
  for (long i = 0; i < n; ++i) scal_[i] = atol_ + rtol_ * std::abs(y_[i]);
  if (!jac_valid_) update_jacobian();
  if (h != h_lu_) decompose(h);

  if (solve_stages(h) == Newton::kFailed) {
    // Unexpected rejection (RADAU5, label 78): smaller step, and a fresh Jacobian unless it already is.
    h_ = h * newton_fail_factor_;
    h_cap_ = h_;
    reject_ = true;
    if (!jac_fresh_) jac_valid_ = false;
    return false;
  }

  double h_new = h;
  if (!fixed_step_) {
    err_ = error_estimate(h);
    // Standard controller with a safety factor that shrinks when Newton needed many iterations.
    const double fac = std::min(kSafe, kSafe * (1 + 2 * nit_) / (newton_last_ + 2 * nit_));
    double quot = std::clamp(std::pow(err_, 0.25) / fac, kFacr, kFacl);
    h_new = h / quot;
    if (!(err_ < 1)) {
      h_ = first_ ? 0.1 * h : h_new;
      reject_ = true;
      if (!jac_fresh_) jac_valid_ = false;
      return false;
    }
    // Gustafsson's predictive controller (IV.8, eq. 8.25): the smaller of the two proposals.
    if (stats_.steps >= 1) {
      const double facgus =
          std::clamp((h_acc_ / h) * std::pow(err_ * err_ / err_acc_, 0.25) / kSafe, kFacr, kFacl);
      quot = std::max(quot, facgus);
      h_new = h / quot;
    }
    h_acc_ = h;
    err_acc_ = std::max(1e-2, err_);
  }

  // Accept: y1 = y0 + z3 (stiffly accurate), and the collocation polynomial for dense output (CONT).
  for (long i = 0; i < n; ++i) {
    const double z1i = z1_[i], z2i = z2_[i], z3i = z3_[i];
    y_[i] += z3i;
    cont1_[i] = (z2i - z3i) / c2m1;
    const double ak = (z1i - z2i) / c1mc2;
    const double acont3 = (ak - z1i / c1) / c2;
    cont2_[i] = (ak - cont1_[i]) / c1m1;
    cont3_[i] = cont2_[i] - acont3;
  }
  cont0_ = y_;
  h_old_ = h;
  first_ = false;
  eval_rhs(step_end(), y_, f_);
  jac_fresh_ = false;
  if (theta_ > kThet) jac_valid_ = false;  // Newton was slow: new Jacobian for the next step

  if (fixed_step_) {
    h_ = recovered_step(h_, dt_);  // recover from a halving
  } else {
    h_new = std::min({h_new, dt_max_, h_cap_});
    h_cap_ *= kCapGrowth;
    if (reject_) h_new = std::min(h_new, h);
    reject_ = false;
    const double qt = h_new / h;
    // Keep h (and the LUs) when the proposal is only slightly larger and Newton was fast.
    h_ = (theta_ <= kThet && qt >= kQuot1 && qt <= kQuot2) ? h : h_new;
  }
  return true;
}

void Radau5::interpolate(double t, Vec& y) const {
  if (h_old_ == 0) {
    y = y_;
    return;
  }
  const double s = (t - t_) / h_old_;  // in [-1, 0] on the last step
  y = cont0_ + s * (cont1_ + (s - c2m1) * (cont2_ + (s - c1m1) * cont3_));
}

}  // namespace clm
