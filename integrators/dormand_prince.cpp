#include "integrators/dormand_prince.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "integrators/embedded_pair.hpp"

namespace clm {

namespace {

// Hairer, Norsett & Wanner, Solving ODEs I, Table II.5.2 (coefficients as in their code DOPRI5).
constexpr double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
constexpr double a21 = 1.0 / 5;
constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561, a54 = -212.0 / 729;
constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176,
                 a65 = -5103.0 / 18656;
// Row 7 is the 5th-order weight vector b (FSAL: stage 7 is f at the new point).
constexpr double a71 = 35.0 / 384, a73 = 500.0 / 1113, a74 = 125.0 / 192, a75 = -2187.0 / 6784, a76 = 11.0 / 84;
// e = b - b_hat, the difference of the 5th- and 4th-order weights: the local error estimate.
constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200, e6 = 22.0 / 525,
                 e7 = -1.0 / 40;
// Continuous extension of order 4 (DOPRI5's CONTD5 coefficients d1..d7; d2 = 0).
constexpr double d1 = -12715105075.0 / 11282082432, d3 = 87487479700.0 / 32700410799,
                 d4 = -10690763975.0 / 1880347072, d5 = 701980252875.0 / 199316789632,
                 d6 = -1453857185.0 / 822651844, d7 = 69997945.0 / 29380423;

// Step-size controller constants of DOPRI5: PI control with beta = 0.04 (Hairer & Wanner, Solving ODEs II,
// IV.2, and the DOPRI5 defaults), safety factor 0.9, new step between 0.2 and 10 times the old one.
constexpr double kBeta = 0.04;
constexpr double kExpo1 = 0.2 - kBeta * 0.75;  // 1/5 minus the PI share
constexpr double kSafety = 0.9;
constexpr double kFacMin = 0.2, kFacMax = 10.0;

}  // namespace

void DormandPrince5::do_initialize(const IntegratorSettings& s) {
  rtol_ = s.rtol;
  atol_ = s.atol;
  dt_max_ = s.dt_max > 0 ? s.dt_max : std::numeric_limits<double>::infinity();
  fixed_step_ = s.fixed_step;
  const long n = y_.size();
  for (Vec* v : {&k2_, &k3_, &k4_, &k5_, &k6_, &k7_, &y_stage_, &y_new_, &est_, &r1_, &r2_, &r3_, &r4_, &r5_})
    v->setZero(n);
  t_prev_ = t_;
  err_ = 0;
  err_old_ = 1e-4;
  last_rejected_ = false;
  stiff_steps_ = non_stiff_ = 0;
  r1_ = y_;  // before the first step the "interpolant" is the constant initial state
  // Hairer's HINIT (integrators/embedded_pair.hpp, shared with dop853 and the Verner pairs) for order 5.
  h_ = fixed_step_ ? s.dt
                   : (s.dt > 0 ? std::min(s.dt, dt_max_)
                               : hairer_initial_step(t_, y_, f_, rtol_, atol_, dt_max_, 5, y_stage_, k2_,
                                                     [this](double t, const Vec& y, Vec& dy) { eval_rhs(t, y, dy); }));
  h_prev_ = 0;
}

bool DormandPrince5::do_step(double h) {
  const Vec& k1 = f_;
  y_stage_ = y_ + (h * a21) * k1;
  sys_->rhs(t_ + c2 * h, y_stage_, k2_);
  y_stage_ = y_ + h * (a31 * k1 + a32 * k2_);
  sys_->rhs(t_ + c3 * h, y_stage_, k3_);
  y_stage_ = y_ + h * (a41 * k1 + a42 * k2_ + a43 * k3_);
  sys_->rhs(t_ + c4 * h, y_stage_, k4_);
  y_stage_ = y_ + h * (a51 * k1 + a52 * k2_ + a53 * k3_ + a54 * k4_);
  sys_->rhs(t_ + c5 * h, y_stage_, k5_);
  y_stage_ = y_ + h * (a61 * k1 + a62 * k2_ + a63 * k3_ + a64 * k4_ + a65 * k5_);
  const double t_new = step_end();
  sys_->rhs(t_new, y_stage_, k6_);
  y_new_ = y_ + h * (a71 * k1 + a73 * k3_ + a74 * k4_ + a75 * k5_ + a76 * k6_);
  sys_->rhs(t_new, y_new_, k7_);
  stats_.rhs_evals += 6;

  double h_next = h_;
  if (!fixed_step_) {
    // Scaled RMS norm of the embedded error estimate, sc_i = atol + rtol max(|y0_i|, |y1_i|).
    const long n = y_.size();
    for (long i = 0; i < n; ++i)
      est_[i] = h * (e1 * k1[i] + e3 * k3_[i] + e4 * k4_[i] + e5 * k5_[i] + e6 * k6_[i] + e7 * k7_[i]);
    err_ = weighted_rms_norm(est_, y_, y_new_, rtol_, atol_);
    if (!(err_ <= 1.0)) {  // rejected (a NaN error is a rejection too)
      last_rejected_ = true;
      const double fac11 = std::pow(err_, kExpo1);
      h_ = std::isfinite(fac11) ? h / std::min(1.0 / kFacMin, fac11 / kSafety) : h * kFacMin;
      return false;
    }
    // PI controller (DOPRI5): fac = err^expo1 / err_old^beta, limited to [1/10, 1/0.2] after the safety.
    const double fac11 = std::pow(err_, kExpo1);
    double fac = fac11 / std::pow(err_old_, kBeta);
    fac = std::clamp(fac / kSafety, 1.0 / kFacMax, 1.0 / kFacMin);
    h_next = h / fac;
    if (last_rejected_) h_next = std::min(h_next, h);  // no growth right after a rejection
    last_rejected_ = false;
    err_old_ = std::max(err_, 1e-4);
    // Hairer's stiffness test (DOPRI5): h |lambda| ~ h |f(y1) - f(y_stage6)| / |y1 - y_stage6|, both
    // evaluated at t + h. Above 3.25 (the edge of the stability region) on 15 consecutive steps, the step
    // is limited by stability, not accuracy. It only observes: the numbers do not change.
    if (stats_.stiffness_detected_at < 0) {
      const double den = (y_new_ - y_stage_).squaredNorm();
      const double h_lambda = den > 0 ? h * std::sqrt((k7_ - k6_).squaredNorm() / den) : 0.0;
      if (h_lambda > 3.25) {
        non_stiff_ = 0;
        if (++stiff_steps_ == 15) stats_.stiffness_detected_at = t_;
      } else if (++non_stiff_ == 6) {
        stiff_steps_ = 0;
      }
    }
    h_next = std::min(h_next, dt_max_);
  }

  // Dense output coefficients (DOPRI5): y(t_prev + theta h) =
  //   r1 + theta (r2 + (1 - theta) (r3 + theta (r4 + (1 - theta) r5))).
  r1_ = y_;
  r2_ = y_new_ - y_;
  r3_ = h * k1 - r2_;
  r4_ = r2_ - h * k7_ - r3_;
  r5_ = h * (d1 * k1 + d3 * k3_ + d4 * k4_ + d5 * k5_ + d6 * k6_ + d7 * k7_);

  y_.swap(y_new_);
  f_.swap(k7_);  // FSAL
  t_prev_ = t_;
  h_prev_ = h;
  h_ = h_next;
  return true;
}

void DormandPrince5::interpolate(double t, Vec& y) const {
  if (h_prev_ == 0) {
    y = y_;
    return;
  }
  const double theta = (t - t_prev_) / h_prev_, theta1 = 1.0 - theta;
  y = r1_ + theta * (r2_ + theta1 * (r3_ + theta * (r4_ + theta1 * r5_)));
}

}  // namespace clm
