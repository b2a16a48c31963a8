// Fixed-step explicit Runge-Kutta methods given by their Butcher tableau (euler, rk4). The derivative at
// the end of a step is the first stage of the next one, so it is computed once and serves both the next
// step and the cubic Hermite interpolant used for off-grid samples.
#pragma once

#include <vector>

#include "core/integrator.hpp"
#include "integrators/hermite.hpp"

namespace clm {

struct ButcherTableau {
  std::string name;
  int order;
  std::vector<std::vector<double>> a;  // strictly lower triangular, row i has i entries
  std::vector<double> b, c;
};

class ExplicitRungeKutta final : public Integrator {
 public:
  explicit ExplicitRungeKutta(ButcherTableau tableau) : tab_(std::move(tableau)) {}

  std::string name() const override { return tab_.name; }
  int order() const override { return tab_.order; }
  bool adaptive() const override { return false; }

  void interpolate(double t, Vec& y) const override { prev_.interpolate(t_, y_, f_, t, y); }

 private:
  void do_initialize(const IntegratorSettings& s) override;
  bool do_step(double h) override;

  ButcherTableau tab_;
  StepStart prev_;  // the last step's start (dense output)
  Vec tmp_;
  std::vector<Vec> k_;
};

ButcherTableau euler_tableau();
ButcherTableau rk4_tableau();

}  // namespace clm
