// A mechanism file's Model with native evaluation (issue 40): the hot-path terms (M, c, F, A, the constraint bias,
// h, b, the energy) from the compiled code of runs/mechanism/native_library.hpp, everything else (the derivatives an
// exact Jacobian takes, dL/dq, momenta, the curvature of vakonomic and added_mass, the closed form, points, the
// capabilities) from the file's tape model, which it wraps. The two agree to round-off
// (tests/native_evaluation_test.cpp); the tape stays the reference.
#pragma once

#include <memory>
#include <vector>

#include "core/model.hpp"
#include "runs/mechanism/native_library.hpp"

namespace clm {

class NativeMechanismModel final : public Model {
 public:
  // parameters: the values in the file's order (CompiledMechanism::parameters), the native code's trailing inputs.
  NativeMechanismModel(std::shared_ptr<const Model> tape, std::shared_ptr<const NativeFunctions> native,
                       std::vector<double> parameters);

  const Model& tape() const { return *tape_; }

  std::string name() const override { return tape_->name(); }
  std::string description() const override { return tape_->description(); }
  int n() const override { return n_; }
  int m() const override { return m_; }
  bool holonomic() const override { return tape_->holonomic(); }
  int position_rows() const override { return mh_; }
  bool gyroscopic() const override { return tape_->gyroscopic(); }
  bool time_dependent() const override { return time_dependent_; }
  bool has_generalized_force() const override { return tape_->has_generalized_force(); }
  bool has_singular_positions() const override { return tape_->has_singular_positions(); }
  const std::vector<int>& actuated_coordinates() const override { return tape_->actuated_coordinates(); }
  std::vector<std::pair<std::string, double>> parameters() const override { return tape_->parameters(); }

  std::unique_ptr<ModelWorkspace> make_workspace() const override;
  void evaluate(double t, const Vec& q, const Vec& qd, unsigned what, ModelWorkspace& ws,
                ModelTerms& out) const override;

  bool has_dynamics_derivatives() const override { return tape_->has_dynamics_derivatives(); }
  bool uses_analytic_terms() const override { return tape_->uses_analytic_terms(); }
  void dynamics_derivatives(const Vec& q, const Vec& qd, ModelWorkspace& ws, DynamicsDerivatives& out) const override;
  void curvature_force_derivative(const Vec& q, const Vec& qd, const Vec& mu, ModelWorkspace& ws,
                                  Mat& out) const override;
  void generalized_force_derivatives(double t, const Vec& q, const Vec& qd, ModelWorkspace& ws, Mat& dF_dq,
                                     Mat& dF_dqd) const override;

  void default_initial(Vec& q0, Vec& qd0) const override { tape_->default_initial(q0, qd0); }
  std::vector<std::string> constraint_names() const override { return tape_->constraint_names(); }
  std::vector<std::string> coordinate_names() const override { return tape_->coordinate_names(); }
  std::vector<std::string> coordinate_units() const override { return tape_->coordinate_units(); }
  bool closed_form(double t, const Vec& q0, const Vec& qd0, Vec& q, Vec& qd) const override {
    return tape_->closed_form(t, q0, qd0, q, qd);
  }
  bool closed_form_from(double t_prev, const Vec& q_prev, double t, const Vec& q0, const Vec& qd0, Vec& q,
                        Vec& qd) const override {
    return tape_->closed_form_from(t_prev, q_prev, t, q0, qd0, q, qd);
  }
  const PublishedReference* published_reference() const override { return tape_->published_reference(); }
  std::string published_reference_withheld() const override { return tape_->published_reference_withheld(); }
  const ReferencePoint* reference_point() const override { return tape_->reference_point(); }
  const NamedPoints* named_points() const override { return tape_->named_points(); }
  const BodyVelocities* body_velocities() const override { return tape_->body_velocities(); }
  bool closed_form_multiplier(const Vec& q, const Vec& qd, Vec& lambda) const override {
    return tape_->closed_form_multiplier(q, qd, lambda);
  }

 private:
  std::shared_ptr<const Model> tape_;
  std::shared_ptr<const NativeFunctions> native_;
  std::vector<double> parameters_;
  int n_ = 0, m_ = 0, mh_ = 0;
  bool time_dependent_ = false;
};

}  // namespace clm
