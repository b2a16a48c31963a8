#include "integrators/explicit_runge_kutta.hpp"

#include <cmath>

#include "integrators/hermite.hpp"

namespace clm {

ButcherTableau euler_tableau() { return {"euler", 1, {{}}, {1.0}, {0.0}}; }

ButcherTableau rk4_tableau() {
  return {"rk4", 4, {{}, {0.5}, {0.0, 0.5}, {0.0, 0.0, 1.0}}, {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6}, {0.0, 0.5, 0.5, 1.0}};
}

void ExplicitRungeKutta::initialize(OdeSystem& sys, double t0, const Vec& y0, const IntegratorSettings& s) {
  sys_ = &sys;
  stats_ = {};  // statistics are per run
  h_ = s.dt;
  const int n = sys.dimension();
  k_.assign(tab_.b.size(), Vec::Zero(n));
  tmp_.resize(n);
  f_.resize(n);
  y_prev_.resize(n);
  f_prev_.resize(n);
  reset_state(y0);
  t_ = t_prev_ = t0;
}

void ExplicitRungeKutta::reset_state(const Vec& y) {
  y_ = y;
  sys_->rhs(t_, y_, f_);
  ++stats_.rhs_evals;
}

bool ExplicitRungeKutta::step(double t_limit) {
  double h = h_;
  // Land exactly on t_limit rather than leave a sliver step behind.
  if (t_ + h >= t_limit - 1e-9 * h) h = t_limit - t_;
  const size_t s = tab_.b.size();
  k_[0] = f_;
  for (size_t i = 1; i < s; ++i) {
    tmp_ = y_;
    for (size_t j = 0; j < i; ++j)
      if (tab_.a[i][j] != 0.0) tmp_.noalias() += (h * tab_.a[i][j]) * k_[j];
    sys_->rhs(t_ + tab_.c[i] * h, tmp_, k_[i]);
    ++stats_.rhs_evals;
  }
  y_prev_ = y_;
  f_prev_ = f_;
  t_prev_ = t_;
  for (size_t i = 0; i < s; ++i) y_.noalias() += (h * tab_.b[i]) * k_[i];
  t_ = (h == t_limit - t_prev_) ? t_limit : t_prev_ + h;
  sys_->rhs(t_, y_, f_);
  ++stats_.rhs_evals;
  ++stats_.steps;
  return true;
}

void ExplicitRungeKutta::interpolate(double t, Vec& y) const {
  hermite_interpolate(t_prev_, y_prev_, f_prev_, t_, y_, f_, t, y);
}

}  // namespace clm
