// A closed-form vakonomic motion as a Model capability (core/model.hpp), for the Kozlov Theorem 2 study
// (studies/kozlov_study.cpp): where the problem has one and it applies to the study's initial data, the
// limit family and the reference run are also compared with it (issue 13 item 5). Today: the vakonomic
// skate on the flat plane, problems/vakonomic_skate.hpp (skate_incline with g = 0 and lambda(0) = 0).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "problems/vakonomic_skate.hpp"

namespace clm {

class VakonomicClosedForm : public Capability {
 public:
  // What it is, for the study's output ("vakonomic skate, g = 0, lambda(0) = 0").
  virtual std::string description() const = 0;
  // The motion at t from consistent (q0, qd0) with lambda(0) = lambda0 (empty: zeros); false when the
  // closed form does not apply to these parameters or data.
  virtual bool motion(double t, const Vec& q0, const Vec& qd0, const std::vector<double>& lambda0, Vec& q, Vec& qd,
                      Vec& lambda) const = 0;
};

class VakonomicSkateClosedForm final : public VakonomicClosedForm {
 public:
  explicit VakonomicSkateClosedForm(const SkateIncline& p) : p_(p) {}
  std::string description() const override { return "vakonomic skate closed form (g = 0, lambda(0) = 0)"; }
  bool motion(double t, const Vec& q0, const Vec& qd0, const std::vector<double>& lambda0, Vec& q, Vec& qd,
              Vec& lambda) const override {
    double l = 0;
    if (!vakonomic_skate_closed_form(p_, t, q0, qd0, lambda0.empty() ? 0.0 : lambda0[0], q, qd, l)) return false;
    lambda.resize(1);
    lambda[0] = l;
    return true;
  }

 private:
  SkateIncline p_;
};

// Registration (runs/problem_capabilities.hpp): only the problems that have one.
template <Problem P>
void add_vakonomic_closed_form(Model&, const P&) {}
inline void add_vakonomic_closed_form(Model& model, const SkateIncline& p) {
  model.add_capability<VakonomicClosedForm>(std::make_shared<VakonomicSkateClosedForm>(p));
}

}  // namespace clm
