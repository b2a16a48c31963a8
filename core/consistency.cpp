#include "core/consistency.hpp"

#include <algorithm>

#include "core/formulation.hpp"
#include "core/position_rows_off.hpp"

#include <sstream>

namespace clm {

ProjectionReport project_onto_constraints(const Model& model, Vec& q, Vec& qd, double tol, int max_iterations,
                                          double t0, const std::vector<int>& held) {
  ProjectionReport report;
  if (model.m() == 0) return report;
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  const Vec q_given = q, qd_given = qd;
  const Vec zero = Vec::Zero(model.n());

  // The minimum-norm correction A^+ r: by A^T (A A^T)^-1 r (LDL^T) for independent rows, as it always was;
  // for redundant rows (A A^T singular; Bricard's mechanism, a constraint written twice) by a complete
  // orthogonal decomposition of A with the suite's rank tolerance (core/formulation.hpp). A constraint set
  // with no solution near q0 then shows as Gauss-Newton not converging (the error below).
  auto correction = [&](Mat A, const Vec& r) -> Vec {
    for (int j : held) A.col(j).setZero();  // held coordinates take no part of the correction
    Eigen::LDLT<Mat> ldlt(A * A.transpose());
    if (ldlt.info() == Eigen::Success &&
        ldlt.vectorD().cwiseAbs().minCoeff() > 1e-14 * ldlt.vectorD().cwiseAbs().maxCoeff())
      return A.transpose() * ldlt.solve(r);
    Eigen::CompleteOrthogonalDecomposition<Mat> cod(A.rows(), A.cols());
    cod.setThreshold(double(std::max(A.rows(), A.cols())) * kRankTolerance);
    cod.compute(A);
    if (cod.rank() == 0)
      throw InputError("problem " + model.name() + ": constraint Jacobian is zero at the initial configuration");
    return cod.solve(r);
  };

  // Positions onto h(q, t0) = 0 by the position rows (the first position_rows() rows of A: all of a holonomic
  // model's, those of a mixed model's), velocities onto every row.
  const int mh = model.position_rows();
  if (mh > 0) {
    const double scale = std::max(1.0, q.norm());
    bool converged = false;
    for (int it = 0; it < max_iterations; ++it) {
      model.evaluate(t0, q, zero, kConstraintJacobian | kConstraintValue, *ws, terms);
      if (terms.h.norm() <= tol * scale) {
        converged = true;
        break;
      }
      q -= correction(terms.A.topRows(mh), terms.h);
      report.iterations = it + 1;
    }
    if (!converged) {
      std::ostringstream msg;
      msg << "problem " << model.name() << ": initial q cannot be projected onto h(q) = 0 of its " << mh
          << " position row" << (mh == 1 ? "" : "s") << " (|h| = " << terms.h.norm()
          << " after " << max_iterations << " Gauss-Newton iterations)";
      // Which rows stay off (issue 43: "r - L" with "r - 2 L" failed here without naming them).
      const auto off = position_rows_off(model, q, t0, tol * scale);
      if (!off.empty()) {
        msg << "; still off: ";
        for (std::size_t k = 0; k < off.size() && k < 4; ++k)
          msg << (k ? ", " : "") << off[k].label() << " h = " << off[k].h;
        if (off.size() > 4) msg << " and " << off.size() - 4 << " more";
        msg << " (rows that cannot hold together, or a q0 far from where they meet)";
      }
      throw InputError(msg.str());
    }
  }
  model.evaluate(t0, q, zero, kConstraintJacobian | kConstraintRate, *ws, terms);
  qd -= correction(terms.A, terms.b.size() > 0 ? Vec(terms.A * qd + terms.b) : Vec(terms.A * qd));
  report.position_distance = (q - q_given).norm();
  report.velocity_distance = (qd - qd_given).norm();
  return report;
}

}  // namespace clm
