// A registered model with external generalized forces F_j(t) added on some of its coordinates, each read from a
// shape function (core/shape_schedule.hpp; in the round-trip tests of issue 13 the spline through the actuator
// forces that prescribed_shape recorded): everything else is the inner model's. Lets kkt be driven by the
// forces that held a prescribed shape, so that the two formulations can be compared on the same motion.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/model.hpp"
#include "core/shape_schedule.hpp"

namespace clm::testing {

class ForcedModel final : public Model {
 public:
  ForcedModel(std::shared_ptr<const Model> inner, std::vector<int> coordinates, std::vector<ShapeFunction> forces)
      : inner_(std::move(inner)), coordinates_(std::move(coordinates)), forces_(std::move(forces)) {}
  std::string name() const override { return inner_->name(); }
  std::string description() const override { return inner_->description(); }
  int n() const override { return inner_->n(); }
  int m() const override { return inner_->m(); }
  bool holonomic() const override { return inner_->holonomic(); }
  std::vector<std::pair<std::string, double>> parameters() const override { return inner_->parameters(); }
  std::unique_ptr<ModelWorkspace> make_workspace() const override { return inner_->make_workspace(); }
  void evaluate(double t, const Vec& q, const Vec& qd, unsigned what, ModelWorkspace& ws,
                ModelTerms& out) const override {
    inner_->evaluate(t, q, qd, what, ws, out);
    if (what & kForce)
      for (size_t j = 0; j < coordinates_.size(); ++j) out.F[coordinates_[j]] += forces_[j].value(t);
  }
  void default_initial(Vec& q0, Vec& qd0) const override { inner_->default_initial(q0, qd0); }

 private:
  std::shared_ptr<const Model> inner_;
  std::vector<int> coordinates_;
  std::vector<ShapeFunction> forces_;
};

}  // namespace clm::testing
