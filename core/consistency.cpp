#include "core/consistency.hpp"

#include <sstream>

namespace clm {

ProjectionReport project_onto_constraints(const Model& model, Vec& q, Vec& qd, double tol, int max_iterations) {
  ProjectionReport report;
  if (model.m() == 0) return report;
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  const Vec q_given = q, qd_given = qd;
  const Vec zero = Vec::Zero(model.n());

  auto factor = [&](const Mat& A) {
    Eigen::LDLT<Mat> ldlt(A * A.transpose());
    if (ldlt.info() != Eigen::Success || ldlt.vectorD().cwiseAbs().minCoeff() <= 1e-14 * ldlt.vectorD().cwiseAbs().maxCoeff()) {
      throw InputError("problem " + model.name() + ": constraint Jacobian is rank deficient at the initial configuration");
    }
    return ldlt;
  };

  if (model.holonomic()) {
    const double scale = std::max(1.0, q.norm());
    bool converged = false;
    for (int it = 0; it < max_iterations; ++it) {
      model.evaluate(0.0, q, zero, kConstraintJacobian | kConstraintValue, *ws, terms);
      if (terms.h.norm() <= tol * scale) {
        converged = true;
        break;
      }
      auto ldlt = factor(terms.A);
      q -= terms.A.transpose() * ldlt.solve(terms.h);
      report.iterations = it + 1;
    }
    if (!converged) {
      std::ostringstream msg;
      msg << "problem " << model.name() << ": initial q cannot be projected onto h(q) = 0 (|h| = " << terms.h.norm()
          << " after " << max_iterations << " Gauss-Newton iterations)";
      throw InputError(msg.str());
    }
  }
  model.evaluate(0.0, q, zero, kConstraintJacobian, *ws, terms);
  auto ldlt = factor(terms.A);
  qd -= terms.A.transpose() * ldlt.solve(terms.A * qd);
  report.position_distance = (q - q_given).norm();
  report.velocity_distance = (qd - qd_given).norm();
  return report;
}

}  // namespace clm
