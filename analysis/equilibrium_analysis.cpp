// Relative equilibria and their linear stability: analysis/equilibrium_analysis.hpp says what and why.
#include "analysis/equilibrium_analysis.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include "formulations/velocity_basis.hpp"

namespace clm {

namespace {

std::string num(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", x == 0 ? 0.0 : x);  // no "-0"
  return buf;
}

// names[l], or "q<l+1>" when the problem names fewer coordinates (std::string on both sides of + : GCC 12's
// -Wrestrict misfires on a literal + std::string&&).
std::string coordinate_name(const std::vector<std::string>& names, int l) {
  if (l < int(names.size())) return names[l];
  std::string s = "q";
  s += std::to_string(l + 1);
  return s;
}

std::string vec_text(const Vec& v) {
  std::string s;
  for (int i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += num(v[i]);
  }
  return s;
}

// vd = g(q, v) of eq. 2.18 with the problem's basis, and the pieces the Jacobian needs.
class ReducedEquation {
 public:
  explicit ReducedEquation(const Model& model) : model_(model), n_(model.n()), m_(model.m()) {
    basis_ = model.capability<VelocityBasis>();
    if (!basis_)
      throw InputError("analyze --equilibrium: problem " + model.name() +
                       " has no reduced velocities (no velocity_basis S(q) for [seed-000, eq. 2.17-2.18]): a "
                       "mechanism file states one in a [velocity_basis] section (docs/mechanism-files.md), a zoo "
                       "header by velocity_basis()");
    k_ = n_ - m_;
    basis_ws_ = basis_->make_workspace();
    ws_ = model.make_workspace();
    terms_ = model.make_terms();
    S_.resize(n_, k_);
    Sdot_v_.resize(n_);
  }
  int k() const { return k_; }

  // S(q) (into S_) and the least-squares v with S v = qd.
  Vec velocities(const Vec& q, const Vec& qd) {
    const Vec zero = Vec::Zero(k_);
    basis_->evaluate(q, zero, *basis_ws_, S_, Sdot_v_);
    return S_.colPivHouseholderQr().solve(qd);
  }
  const Mat& S() const { return S_; }

  // g(q, v); leaves S_, Sdot_v_, qd_ and terms_ (M, c, F) and the reduced mass matrix at (q, v).
  Vec g(const Vec& q, const Vec& v) {
    basis_->evaluate(q, v, *basis_ws_, S_, Sdot_v_);
    qd_ = S_ * v;
    model_.evaluate(0.0, q, qd_, kMassMatrix | kBias | kForce, *ws_, terms_);
    reduced_M_ = S_.transpose() * terms_.M * S_;
    llt_.compute(reduced_M_);
    if (llt_.info() != Eigen::Success)
      throw InputError("analyze --equilibrium: the reduced mass matrix S^T M S is not positive definite at q = " +
                       vec_text(q));
    return llt_.solve(S_.transpose() * (terms_.F - terms_.c - terms_.M * Sdot_v_));
  }
  const Mat& reduced_mass() const { return reduced_M_; }

  // dg/dv at (q, v) (see the header comment: autodiff dc/dqd, polarization of Sdot v).
  Mat jacobian(const Vec& q, const Vec& v) {
    // The verdict sets aside the energy's zero eigenvalue, which needs E conserved: no generalized force.
    if (model_.has_generalized_force())
      throw InputError("analyze --equilibrium: problem " + model_.name() +
                       " has a generalized force: the analysis is for conservative reduced dynamics (its verdict "
                       "sets aside the zero eigenvalue of the conserved energy)");
    if (!model_.has_dynamics_derivatives())
      throw InputError("analyze --equilibrium: problem " + model_.name() +
                       " depends on t explicitly, so its dynamics terms have no exact derivatives here");
    const double s = std::max(1.0, v.norm());
    Mat dQ(n_, k_);
    for (int j = 0; j < k_; ++j) {
      Vec vp = v, vm = v;
      vp[j] += s;
      vm[j] -= s;
      basis_->evaluate(q, vp, *basis_ws_, S_, Sdot_v_);
      const Vec Qp = Sdot_v_;
      basis_->evaluate(q, vm, *basis_ws_, S_, Sdot_v_);
      dQ.col(j) = (Qp - Sdot_v_) / (2 * s);
    }
    g(q, v);  // restores S_, terms_ and the factorization at (q, v)
    DynamicsDerivatives d = model_.make_derivatives();
    model_.dynamics_derivatives(q, qd_, *ws_, d);
    const Mat rhs = -(d.dc_dqd * S_) - terms_.M * dQ;
    return llt_.solve(S_.transpose() * rhs);
  }

 private:
  const Model& model_;
  int n_, m_, k_ = 0;
  const VelocityBasis* basis_ = nullptr;
  std::unique_ptr<VelocityBasis::Workspace> basis_ws_;
  std::unique_ptr<ModelWorkspace> ws_;
  ModelTerms terms_;
  Mat S_, reduced_M_;
  Vec Sdot_v_, qd_;
  Eigen::LLT<Mat> llt_;
};

}  // namespace

Vec reduced_acceleration(const Model& model, const Vec& q, const Vec& v) {
  ReducedEquation eq(model);
  return eq.g(q, v);
}

Mat reduced_jacobian(const Model& model, const Vec& q, const Vec& v) {
  ReducedEquation eq(model);
  return eq.jacobian(q, v);
}

EquilibriumAnalysis analyze_equilibrium(const Model& model, const Vec& q, const Vec& qd,
                                        const EquilibriumOptions& options) {
  const int n = model.n();
  const std::string who = "analyze --equilibrium: ";
  if (q.size() != n || qd.size() != n)
    throw InputError(who + "q0 and qd0 for " + model.name() + " need " + std::to_string(n) + " numbers each, got " +
                     std::to_string(q.size()) + " and " + std::to_string(qd.size()));
  if (!q.allFinite() || !qd.allFinite()) throw InputError(who + "q0 or qd0 has a non-finite entry");
  if (!(options.residual_tol > 0) || !(options.eigenvalue_tol > 0))
    throw InputError(who + "the tolerances must be > 0");
  ReducedEquation eq(model);
  EquilibriumAnalysis a;
  a.problem = model.name();
  a.coordinate_names = model.coordinate_names();
  a.options = options;
  a.q = q;
  a.v = eq.velocities(q, qd);
  a.qd = eq.S() * a.v;
  const double off = (a.qd - qd).norm();
  if (off > 1e-9 * std::max(1.0, qd.norm()))
    throw InputError(who + "qd0 violates the constraints of " + model.name() + ": |qd0 - S v| = " + num(off) +
                     " (the closest admissible qd0 is " + vec_text(a.qd) + ")");

  a.vd = eq.g(q, a.v);
  a.residual = a.vd.norm();
  const Mat reduced_M = eq.reduced_mass();
  a.jacobian = eq.jacobian(q, a.v);
  const double jnorm = a.jacobian.norm();

  // Which coordinates the reduced equations depend on: vd at v fixed and q_l moved by finite offsets (a
  // symmetry is global; a derivative at q alone would miss g cos(phi) at phi = 0).
  const double dependence_scale = std::max({1.0, jnorm * a.v.norm(), a.residual});
  for (int l = 0; l < n; ++l) {
    double dep = 0;
    for (double offset : kQOffsets) {
      Vec qs = q;
      qs[l] += offset * (1 + std::abs(q[l]));
      dep = std::max(dep, (eq.g(qs, a.v) - a.vd).norm());
    }
    a.max_q_dependence = std::max(a.max_q_dependence, dep);
    if (dep <= kQDependenceTol * dependence_scale) {
      a.group_coordinates.push_back(l);
    } else {
      const std::string name = coordinate_name(a.coordinate_names, l);
      throw InputError(who + "the reduced velocity equations of " + model.name() + " depend on " + name +
                       " (vd changes by " + num(dep) + " when " + name +
                       " moves): they are not reduced by a symmetry to v alone, so there is no relative equilibrium to analyse");
    }
  }
  if (a.residual > options.residual_tol)
    throw InputError(who + "(q0, qd0) is not a relative equilibrium of " + model.name() + ": |vd| = " +
                     num(a.residual) + " > " + num(options.residual_tol) + " (v = " + vec_text(a.v) +
                     ", vd = " + vec_text(a.vd) + ")");

  // Non-finite figures are an error, never a verdict (issue 21: at |u| >= 1e154, J overflowed, its eigenvalues
  // were NaN and the verdict read "marginal").
  if (!a.jacobian.allFinite() || !a.vd.allFinite())
    throw InputError(who + "the linearization of " + model.name() + " at v = " + vec_text(a.v) +
                     " is not finite (J or vd overflowed): no verdict; use velocities of physical size");
  Eigen::EigenSolver<Mat> es(a.jacobian, /*computeEigenvectors=*/false);
  for (int i = 0; i < es.eigenvalues().size(); ++i) a.eigenvalues.push_back(es.eigenvalues()[i]);
  if (es.info() != Eigen::Success ||
      std::any_of(a.eigenvalues.begin(), a.eigenvalues.end(), [](const auto& l) { return !std::isfinite(l.real()) || !std::isfinite(l.imag()); }))
    throw InputError(who + "the eigenvalues of J at v = " + vec_text(a.v) + " are not finite: no verdict");
  std::sort(a.eigenvalues.begin(), a.eigenvalues.end(), [](const auto& x, const auto& y) {
    return x.real() != y.real() ? x.real() > y.real() : x.imag() > y.imag();
  });
  a.tolerance = options.eigenvalue_tol * std::max(1.0, jnorm);

  // Energy: w = v^T (S^T M S) must be a left null vector of J when the energy is conserved.
  const Vec w = reduced_M * a.v;
  if (a.v.norm() > 0 && w.norm() > 0) {
    const double wj = (w.transpose() * a.jacobian).norm();
    a.energy_conserved = wj <= options.eigenvalue_tol * std::max(1.0, jnorm) * w.norm();
  }

  std::vector<std::complex<double>> rest = a.eigenvalues;
  if (a.energy_conserved) {
    auto smallest = std::min_element(rest.begin(), rest.end(),
                                     [](const auto& x, const auto& y) { return std::abs(x) < std::abs(y); });
    if (smallest != rest.end() && std::abs(*smallest) <= a.tolerance) {
      rest.erase(smallest);
      a.forced_zeros = 1;
    }
  }
  const bool any_growing =
      std::any_of(a.eigenvalues.begin(), a.eigenvalues.end(), [&](const auto& l) { return l.real() > a.tolerance; });
  const bool all_decaying =
      std::all_of(rest.begin(), rest.end(), [&](const auto& l) { return l.real() < -a.tolerance; });
  if (any_growing) {
    a.verdict = "unstable";
    a.reason = "an eigenvalue has a positive real part";
  } else if (all_decaying) {
    a.verdict = "stable";
    a.reason = a.forced_zeros ? "every eigenvalue but the energy's zero (along the family of equilibria) has a "
                                "negative real part: asymptotically stable modulo that family"
                              : "every eigenvalue has a negative real part";
  } else {
    a.verdict = "marginal";
    a.reason = std::string("an eigenvalue") + (a.forced_zeros ? " besides the energy's zero" : "") +
               " has a zero real part (to the tolerance): the linearization does not decide";
  }
  return a;
}

std::string format_equilibrium_analysis(const EquilibriumAnalysis& a) {
  std::ostringstream s;
  auto name = [&](int l) { return coordinate_name(a.coordinate_names, l); };
  s << "problem            " << a.problem << "\n";
  s << "q                  " << vec_text(a.q) << "\n";
  s << "qd                 " << vec_text(a.qd) << "\n";
  s << "v (qd = S(q) v)    " << vec_text(a.v) << "   (the problem's velocity_basis, [seed-000, eq. 2.17])\n";
  s << "vd                 " << vec_text(a.vd) << "   (|vd| = " << num(a.residual) << " <= "
    << num(a.options.residual_tol) << ": a relative equilibrium)\n";
  s << "group coordinates  ";
  for (size_t i = 0; i < a.group_coordinates.size(); ++i) s << (i ? ", " : "") << name(a.group_coordinates[i]);
  s << "   (vd does not change when they move: largest change " << num(a.max_q_dependence) << ")\n";
  s << "J = dvd/dv        ";
  for (int i = 0; i < a.jacobian.rows(); ++i) {
    s << (i ? "; " : " ");
    for (int j = 0; j < a.jacobian.cols(); ++j) s << (j ? ", " : "") << num(a.jacobian(i, j));
  }
  s << "   (autodiff dc/dqd, exact polarization of Sdot v)\n";
  s << "eigenvalues        ";
  for (size_t i = 0; i < a.eigenvalues.size(); ++i) {
    const auto& l = a.eigenvalues[i];
    s << (i ? ", " : "") << num(l.real());
    if (l.imag() != 0) s << (l.imag() > 0 ? " + " : " - ") << num(std::abs(l.imag())) << "i";
  }
  s << "\n";
  s << "energy             " << (a.energy_conserved ? "conserved: one zero eigenvalue set aside (the family of equilibria)"
                                                    : "no zero eigenvalue forced")
    << "; tolerance " << num(a.tolerance) << "\n";
  s << "reason             " << a.reason << "\n";
  s << "verdict            " << a.verdict << "\n";
  return s.str();
}

}  // namespace clm
