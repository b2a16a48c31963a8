// The per-run numbers of /summary and `clmbench info`, accumulated sample by sample so that a run's
// summary needs no stored trajectory (memory does not grow with the number of samples).
#pragma once

#include <string>

#include "core/formulation.hpp"
#include "core/model.hpp"

namespace clm {

// NaN where a quantity does not apply.
struct RunSummary {
  double final_drift_position = 0, max_drift_position = 0;  // NaN for Pfaffian problems
  double final_drift_velocity = 0, max_drift_velocity = 0;
  double max_rel_energy_error = 0;  // max_k |E_k - E_0| / max(|E_0|, eps)
  double q_error_vs_reference = 0;  // max_k |q_k - q_ref(t_k)| (Model::closed_form); NaN when none
  // The headline column, a distance from the true motion: the q error where the problem has a closed-form
  // motion, NaN ("-") otherwise. Never a multiplier residual: that can be 0 for a run that is badly wrong.
  double error_vs_reference = 0;
  std::string reference = "none";  // "q" | "none": what error_vs_reference compares
  // Multiplier consistency (not an error against the true motion): max_k |lambda_k - lambda_cf(q_k, qd_k)| /
  // max_k |lambda_cf|, the closed-form multiplier evaluated at the computed state; kkt satisfies it by
  // construction, penalty's estimate -N A qd does not. NaN where the problem has no closed-form multiplier.
  double lambda_consistency = 0;
};

class RunSummaryAccumulator {
 public:
  // vakonomic_on_nonholonomic: the run follows the vakonomic motion of nonholonomic constraints, so the
  // problem's (nonholonomic) closed forms are not its reference.
  RunSummaryAccumulator(const Model& model, const Vec& q0, const Vec& qd0, bool vakonomic_on_nonholonomic);
  void add(double t, const Observation& obs);
  RunSummary finish() const;

 private:
  const Model& model_;
  Vec q0_, qd0_, q_ref_, qd_ref_, q_next_, qd_next_, lambda_ref_;
  double t_ref_ = 0;  // the time q_ref_, qd_ref_ belong to
  bool holonomic_;
  long samples_ = 0;
  double max_dp_ = 0, last_dp_ = 0, max_dv_ = 0, last_dv_ = 0;
  double energy0_ = 0, max_rel_energy_ = 0;
  bool q_reference_ = false, lambda_reference_ = false;
  double q_err_ = 0, lambda_err_ = 0, lambda_scale_ = 0;
};

}  // namespace clm
