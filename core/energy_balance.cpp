#include "core/energy_balance.hpp"

#include <algorithm>
#include <cmath>

namespace clm {

namespace {

// 4-point Gauss-Lobatto on [0, 1]: interior nodes (5 -+ sqrt 5) / 10, weights 1/12, 5/12, 5/12, 1/12.
const double kInnerNode = 0.5 - 0.5 / std::sqrt(5.0);
constexpr double kEndWeight = 1.0 / 12.0, kInnerWeight = 5.0 / 12.0;

EnergyBalance::Work weighted_sum(const EnergyBalance::Work& a, double wa, const EnergyBalance::Work& b, double wb,
                                 const EnergyBalance::Work& c, double wc, const EnergyBalance::Work& d, double wd,
                                 double h) {
  auto sum = [&](double EnergyBalance::Work::*part) {
    return h * (wa * a.*part + wb * b.*part + wc * c.*part + wd * d.*part);
  };
  return {sum(&EnergyBalance::Work::constraints), sum(&EnergyBalance::Work::explicit_time),
          sum(&EnergyBalance::Work::forces)};
}

EnergyBalance::Work plus(const EnergyBalance::Work& a, const EnergyBalance::Work& b) {
  return {a.constraints + b.constraints, a.explicit_time + b.explicit_time, a.forces + b.forces};
}

}  // namespace

EnergyBalance::EnergyBalance(Formulation& formulation, const Integrator& integrator)
    : f_(formulation),
      integ_(integrator),
      ws_(formulation.model().make_workspace()),
      terms_(formulation.model().make_terms()),
      y_(Vec::Zero(formulation.dimension())),
      aqd_(Vec::Zero(formulation.model().m())),
      y1_(Vec::Zero(formulation.dimension())) {}

void EnergyBalance::power(double t, const Vec& y, Work& p) {
  f_.observe(t, y, obs_);
  // A method's own multipliers replace the formulation's (as in the runner's samples).
  const Vec* lambda = integ_.multipliers_at(t);
  if (!lambda || lambda->size() != obs_.lambda.size()) lambda = &obs_.lambda;
  f_.model().evaluate(t, obs_.q, obs_.qd, kForce | kConstraintJacobian | kEnergy, *ws_, terms_);
  aqd_.noalias() = terms_.A * obs_.qd;
  p.constraints = lambda->dot(aqd_);
  p.explicit_time = terms_.potential_rate;
  p.forces = obs_.qd.dot(terms_.F);
}

void EnergyBalance::start(double t0, const Vec& y0) {
  t0_ = t1_ = t0;
  w0_ = w1_ = Work{};
  y1_ = y0;
  power(t0, y0, p1_);
  p0_ = p1_;
}

EnergyBalance::Work EnergyBalance::integrate(double t0, double t1, const Work& p0, Work& p1) {
  const double h = t1 - t0;
  Work pa, pb;
  integ_.interpolate(t0 + kInnerNode * h, y_);
  power(t0 + kInnerNode * h, y_, pa);
  integ_.interpolate(t1 - kInnerNode * h, y_);
  power(t1 - kInnerNode * h, y_, pb);
  if (t1 == integ_.time()) {
    y_ = integ_.state();  // the step's end exactly
  } else {
    integ_.interpolate(t1, y_);
  }
  power(t1, y_, p1);
  return weighted_sum(p0, kEndWeight, pa, kInnerWeight, pb, kInnerWeight, p1, kEndWeight, h);
}

void EnergyBalance::step(double t0, double t1) {
  // The step starts where the last one ended unless after_step (projection, a re-partition) moved the state:
  // then the power at the start is that of the state the step actually started from.
  integ_.interpolate(t0, y_);
  if (t0 == t1_ && y_ == y1_) {
    p0_ = p1_;
  } else {
    power(t0, y_, p0_);
  }
  w0_ = w1_;
  t0_ = t0;
  t1_ = t1;
  w1_ = plus(w0_, integrate(t0, t1, p0_, p1_));
  // What the next step starts from after an unchanged after_step: the integrator's state at t1.
  y1_ = integ_.state();
}

EnergyBalance::Work EnergyBalance::at(double t) {
  // A grid time within round-off of the step's end is the end (core/simulate.hpp lands samples there).
  if (std::abs(t - t1_) <= 1e-12 * std::max(1.0, std::abs(t1_))) return w1_;
  if (t == t0_) return w0_;
  Work p_end;
  return plus(w0_, integrate(t0_, t, p0_, p_end));
}

}  // namespace clm
