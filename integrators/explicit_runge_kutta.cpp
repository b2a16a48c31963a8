#include "integrators/explicit_runge_kutta.hpp"

#include <cmath>


namespace clm {

ButcherTableau euler_tableau() { return {"euler", 1, {{}}, {1.0}, {0.0}}; }

ButcherTableau rk4_tableau() {
  return {"rk4", 4, {{}, {0.5}, {0.0, 0.5}, {0.0, 0.0, 1.0}}, {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6}, {0.0, 0.5, 0.5, 1.0}};
}

void ExplicitRungeKutta::do_initialize(const IntegratorSettings& s) {
  h_ = s.dt;
  const long n = y_.size();
  k_.assign(tab_.b.size(), Vec::Zero(n));
  tmp_.resize(n);
  prev_.keep(t_, y_, f_);
}

bool ExplicitRungeKutta::do_step(double h) {
  const size_t s = tab_.b.size();
  k_[0] = f_;
  for (size_t i = 1; i < s; ++i) {
    tmp_ = y_;
    for (size_t j = 0; j < i; ++j)
      if (tab_.a[i][j] != 0.0) tmp_.noalias() += (h * tab_.a[i][j]) * k_[j];
    eval_rhs(t_ + tab_.c[i] * h, tmp_, k_[i]);
  }
  prev_.keep(t_, y_, f_);
  for (size_t i = 0; i < s; ++i) y_.noalias() += (h * tab_.b[i]) * k_[i];
  eval_rhs(step_end(), y_, f_);
  return true;
}

}  // namespace clm
