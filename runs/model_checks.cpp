#include "runs/model_checks.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>

#include "analysis/finite_difference_terms.hpp"
#include "core/value_parsing.hpp"
#include "formulations/velocity_basis.hpp"

namespace clm {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string sci(double v) {
  if (v == 0) return "0";
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

std::string tol_text(double tol) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "(tol %.0e)", tol);
  return buf;
}

double max_abs(const Mat& a) { return a.size() == 0 ? 0.0 : a.cwiseAbs().maxCoeff(); }
double max_abs(const Vec& a) { return a.size() == 0 ? 0.0 : a.cwiseAbs().maxCoeff(); }

// The largest difference over the checked states relative to the largest term (or reference, or the parts a
// reference is the difference of): one scale for all states, so that a term that vanishes at one state is not
// divided by its own zero.
struct Discrepancy {
  double diff = 0, scale = 0;
  bool finite = true;
  template <class A, class B>
  void add(const A& value, const B& reference, double extra_scale = 0) {
    if (!value.allFinite() || !reference.allFinite()) finite = false;
    if (value.size() == 0) return;
    diff = std::max(diff, (value - reference).cwiseAbs().maxCoeff());
    scale = std::max({scale, value.cwiseAbs().maxCoeff(), reference.cwiseAbs().maxCoeff(), extra_scale});
  }
  void add(double value, double reference, double extra_scale = 0) {
    add(Vec::Constant(1, value), Vec::Constant(1, reference), extra_scale);
  }
  double relative() const {
    if (!finite) return kNaN;
    return scale > 0 ? diff / scale : diff;
  }
};

unsigned constraint_terms(const Model& model) {
  if (model.m() == 0) return 0u;
  return kConstraintJacobian | kConstraintBias | (model.has_position_rows() ? kConstraintValue : 0u) |
         (model.time_dependent() ? kConstraintRate : 0u);
}

std::string state_count(const std::vector<CheckState>& states) {
  return std::to_string(states.size()) + (states.size() == 1 ? " state" : " states");
}

// The directions of the derivative checks: the coordinate axes up to 16 coordinates (every column of a
// Jacobian), beyond 4 random directions (the Jacobian times d: a wrong column shows in any of them, and the
// cost does not grow with n).
constexpr int kAxesUpTo = 16, kRandomDirections = 4;
unsigned seed_of(const std::vector<CheckState>& states) { return states.empty() ? 0u : states.front().seed; }

std::vector<Vec> check_directions(int n, unsigned seed) {
  std::vector<Vec> dirs;
  if (n <= kAxesUpTo) {
    for (int j = 0; j < n; ++j) dirs.push_back(Vec::Unit(n, j));
    return dirs;
  }
  std::mt19937 rng(seed + 1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int k = 0; k < kRandomDirections; ++k) {
    Vec d(n);
    for (int j = 0; j < n; ++j) d[j] = u(rng);
    dirs.push_back(d / d.lpNorm<Eigen::Infinity>());
  }
  return dirs;
}

std::string where(const std::vector<CheckState>& states, int n) {
  return state_count(states) + (n <= kAxesUpTo ? " x " + std::to_string(n) + (n == 1 ? " axis" : " axes")
                                                : " x " + std::to_string(kRandomDirections) + " random directions");
}

std::string parameter_list(const std::map<std::string, double>& params) {
  std::string s;
  for (const auto& [k, v] : params) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    s += (s.empty() ? "" : ", ") + k + " = " + buf;
  }
  return s;
}

// A run stopped by the step budget of check_model (a stiff or fast problem) is judged over the part it ran.
bool stopped_by_budget(const RunRecord& run) {
  return run.status == "failed" && run.message.find("step limit (max_steps") != std::string::npos && run.t.size() > 1;
}

// "over t in [0, T]", or where the budget stopped the run, the part it ran.
std::string run_span(const RunRecord& run) {
  if (stopped_by_budget(run))
    return " over t in [0, " + format_number(run.t.back()) + "] (step budget " + std::to_string(run.spec.max_steps) +
           " reached)";
  return " over t in [0, " + format_number(run.spec.t_end) + "]";
}

}  // namespace

ModelCheck judged_check(const std::string& name, const std::string& measured, double value, double tolerance) {
  ModelCheck c;
  c.name = name;
  c.measured = measured;
  c.value = value;
  c.tolerance = tolerance;
  c.verdict = value <= tolerance ? ModelCheck::Verdict::kOk : ModelCheck::Verdict::kFail;  // NaN fails
  return c;
}

ModelCheck skipped_check(const std::string& name, const std::string& why) {
  ModelCheck c;
  c.name = name;
  c.measured = why;
  return c;
}

int ModelCheckReport::count(ModelCheck::Verdict v) const {
  return static_cast<int>(std::count_if(checks.begin(), checks.end(), [v](const ModelCheck& c) { return c.verdict == v; }));
}

ConstraintResidual constraint_residual(const Model& model, double t, const Vec& q, const Vec& qd) {
  ConstraintResidual r;
  if (model.m() == 0) return r;
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  model.evaluate(t, q, qd, constraint_terms(model) & ~kConstraintBias, *ws, terms);
  if (model.has_position_rows()) r.position = terms.h.norm();
  Vec v = terms.A * qd;
  if (terms.b.size() == v.size()) v += terms.b;
  r.velocity = v.norm();
  return r;
}

double MassMatrixSpectrum::condition() const {
  return min_eigenvalue > 0 ? max_eigenvalue / min_eigenvalue : std::numeric_limits<double>::infinity();
}

bool MassMatrixSpectrum::positive_definite() const { return min_eigenvalue > 0 && condition() <= kConditionLimit; }

MassMatrixSpectrum mass_matrix_spectrum(const Mat& M) {
  MassMatrixSpectrum s;
  const double scale = max_abs(M);
  s.asymmetry = scale > 0 ? max_abs(Mat(M - M.transpose())) / scale : 0.0;
  if (!M.allFinite()) {
    s.asymmetry = s.min_eigenvalue = s.max_eigenvalue = kNaN;
    return s;
  }
  Eigen::SelfAdjointEigenSolver<Mat> eig(Mat((M + M.transpose()) / 2), Eigen::EigenvaluesOnly);
  s.min_eigenvalue = eig.eigenvalues().minCoeff();
  s.max_eigenvalue = eig.eigenvalues().maxCoeff();
  return s;
}

std::vector<CheckState> check_states(const Model& model, const Vec& q0, const Vec& qd0, int count, unsigned seed) {
  std::vector<CheckState> states{{0.0, q0, qd0, seed}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  const unsigned what = kMassMatrix | kBias | kForce | kEnergy | constraint_terms(model);
  const double speed = std::max(1.0, max_abs(qd0));
  for (int k = 1; k <= count; ++k) {
    for (int attempt = 0; attempt < 10; ++attempt) {
      CheckState s{model.time_dependent() ? 0.3 * k : 0.0, q0, qd0, seed};
      for (int j = 0; j < model.n(); ++j) {
        s.q[j] += 0.2 * u(rng) * std::max(1.0, std::abs(q0[j]));
        s.qd[j] += u(rng) * speed;
      }
      try {
        model.evaluate(s.t, s.q, s.qd, what, *ws, terms);
      } catch (const std::exception&) {
        continue;
      }
      const bool finite = terms.M.allFinite() && terms.c.allFinite() && terms.F.allFinite() && terms.A.allFinite() &&
                          terms.Adot_qd.allFinite() && terms.h.allFinite() && terms.b.allFinite() &&
                          std::isfinite(terms.energy());
      if (!finite) continue;
      states.push_back(std::move(s));
      break;
    }
  }
  return states;
}

ModelCheck check_initial_state(const Model& model) {
  const std::string name = "initial state";
  Vec q0, qd0;
  model.default_initial(q0, qd0);
  if (q0.size() != model.n() || qd0.size() != model.n())
    return judged_check(name, "default_initial gives " + std::to_string(q0.size()) + " and " +
                                  std::to_string(qd0.size()) + " numbers for n = " + std::to_string(model.n()),
                        kNaN, kInitialStateTolerance);
  if (!q0.allFinite() || !qd0.allFinite()) return judged_check(name, "q0 or qd0 not finite", kNaN, kInitialStateTolerance);
  if (model.m() == 0) return skipped_check(name, "no constraints (m = 0): every state is consistent");
  const ConstraintResidual r = constraint_residual(model, 0.0, q0, qd0);
  std::string text = model.has_position_rows() ? "|h(q0)| = " + sci(r.position) + ", " : "";
  text += std::string(model.time_dependent() ? "|A(q0) qd0 + b|" : "|A(q0) qd0|") + " = " + sci(r.velocity);
  const double value = std::max(r.position, r.velocity);
  if (!(value <= kInitialStateTolerance)) text += "; runs project it onto the constraints";
  return judged_check(name, text, value, kInitialStateTolerance);
}

ModelCheck check_perturbed_initial_states(const ProblemEntry& entry, const Model& model, int sets, double spread,
                                          unsigned seed) {
  char pct[16];
  std::snprintf(pct, sizeof pct, "%g", 100 * spread);
  const std::string name = std::string("initial state, params +-") + pct + " %";
  if (model.m() == 0) return skipped_check(name, "no constraints (m = 0)");
  const auto base = model.parameters();
  if (base.empty()) return skipped_check(name, "the problem has no parameters");
  std::map<std::string, double> given(base.begin(), base.end());
  std::string refusal;
  auto admissible = [&](const std::map<std::string, double>& p, Vec& q0, Vec& qd0,
                        std::shared_ptr<const Model>& made) {
    try {
      made = entry.make(p, true);
      made->default_initial(q0, qd0);
      return true;
    } catch (const InputError& e) {
      if (refusal.empty()) refusal = e.what();
      return false;
    }
  };
  // Integer parameters (a number of bars or loops) refuse a fraction: an integral value is rounded when the
  // fraction is refused.
  auto integral = [](double v) { return v != 0 && v == std::round(v); };
  auto rounded = [&](std::map<std::string, double> p, const std::vector<std::string>& keys) {
    for (const auto& k : keys)
      if (integral(given[k])) p[k] = std::round(p[k]);
    return p;
  };
  // A parameter the problem admits at no other value within the spread (a file's min = max) is held.
  std::vector<std::string> free, held;
  for (const auto& [key, value] : base) {
    bool moves = false;
    for (double sign : {1.0, -1.0}) {
      std::map<std::string, double> p = given;
      p[key] = value != 0 ? value * (1 + sign * spread) : sign * spread;
      Vec q0, qd0;
      std::shared_ptr<const Model> made;
      moves = moves || admissible(p, q0, qd0, made) || (integral(value) && admissible(rounded(p, {key}), q0, qd0, made));
    }
    (moves ? free : held).push_back(key);
  }
  if (free.empty())
    return skipped_check(name, "no parameter admits another value within the spread (" + refusal + ")");
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  int accepted = 0, refused = 0;
  double worst = 0, worst_h = 0, worst_v = 0;
  std::map<std::string, double> worst_set;
  for (int k = 0; k < sets; ++k) {
    std::map<std::string, double> params = given;
    for (const auto& key : free) params[key] = given[key] != 0 ? given[key] * (1 + spread * u(rng)) : spread * u(rng);
    std::shared_ptr<const Model> perturbed;
    Vec q0, qd0;
    bool ok = admissible(params, q0, qd0, perturbed);
    if (!ok) {
      params = rounded(params, free);
      ok = admissible(params, q0, qd0, perturbed);
    }
    if (!ok) {
      ++refused;
      continue;
    }
    ++accepted;
    double value = kNaN;
    if (q0.size() == perturbed->n() && qd0.size() == perturbed->n() && q0.allFinite() && qd0.allFinite()) {
      const ConstraintResidual r = constraint_residual(*perturbed, 0.0, q0, qd0);
      value = std::max(r.position, r.velocity);
      worst_h = std::max(worst_h, r.position);
      worst_v = std::max(worst_v, r.velocity);
    }
    if (std::isnan(worst)) continue;
    if (!(value <= worst)) {  // a NaN sticks
      worst = value;
      worst_set.clear();
      for (const auto& key : free) worst_set[key] = params[key];
    }
  }
  if (accepted == 0)
    return skipped_check(name, "no admissible parameter set among " + std::to_string(sets) + " drawn (" + refusal + ")");
  std::string text = std::to_string(accepted) + " sets";
  if (refused) text += " (" + std::to_string(refused) + " refused)";
  text += ": max ";
  if (model.has_position_rows()) text += "|h(q0)| = " + sci(worst_h) + ", ";
  text += std::string(model.time_dependent() ? "|A qd0 + b|" : "|A qd0|") + " = " + sci(worst_v);
  if (!held.empty()) {
    std::string names;
    for (const auto& k : held) names += (names.empty() ? "" : ", ") + k;
    text += "; " + names + " held (no other value admitted)";
  }
  if (!(worst <= kInitialStateTolerance)) text += "; worst at " + parameter_list(worst_set);
  return judged_check(name, text, worst, kInitialStateTolerance);
}

ModelCheck check_mass_matrix(const Model& model, const std::vector<CheckState>& states) {
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  double asym = 0, cond = 0, min_eig = std::numeric_limits<double>::infinity();
  bool pd = true;
  for (const auto& s : states) {
    model.evaluate(s.t, s.q, s.qd, kMassMatrix, *ws, terms);
    const MassMatrixSpectrum m = mass_matrix_spectrum(terms.M);
    asym = std::isnan(m.asymmetry) ? kNaN : std::max(asym, m.asymmetry);
    pd = pd && m.positive_definite();
    cond = std::max(cond, m.condition());
    min_eig = std::min(min_eig, m.min_eigenvalue);
  }
  char c[32];
  std::snprintf(c, sizeof c, "%.3g", cond);
  std::string text = "max |M - M^T| / max |M| = " + sci(asym) + ", ";
  text += pd ? "positive definite, cond <= " + std::string(c)
             : "NOT positive definite (smallest eigenvalue " + sci(min_eig) + ", cond " + c + ")";
  text += ", at " + state_count(states);
  ModelCheck check = judged_check("mass matrix", text, asym, kSymmetryTolerance);
  if (!pd) check.verdict = ModelCheck::Verdict::kFail;
  return check;
}

ModelCheck check_constraint_jacobian(const Model& model, const std::vector<CheckState>& states) {
  const bool rate = model.time_dependent();
  const std::string name = rate ? "A, b vs FD of h" : "A vs FD of h";
  if (model.m() == 0) return skipped_check(name, "no constraints");
  if (!model.has_position_rows()) return skipped_check(name, "Pfaffian constraints: A is stated, not derived from h");
  FiniteDifferenceTerms fd(model);
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  Discrepancy dA, db;
  const std::vector<Vec> dirs = check_directions(model.n(), seed_of(states));
  const int mh = model.position_rows();  // the rows derived from h (a mixed model's velocity rows are stated)
  for (const auto& s : states) {
    model.evaluate(s.t, s.q, s.qd, kConstraintJacobian | kConstraintValue | (rate ? kConstraintRate : 0u), *ws, terms);
    const Mat A = terms.A.topRows(mh);
    const Vec b = rate ? Vec(terms.b.head(mh)) : Vec();
    for (const Vec& d : dirs) dA.add(Vec(A * d), fd.constraint_jacobian_along(s.t, s.q, d));
    if (rate) db.add(b, fd.constraint_rate(s.t, s.q));
  }
  std::string text = "A: max rel " + sci(dA.relative());
  double value = dA.relative();
  if (rate) {
    text += ", b = dh/dt: " + sci(db.relative());
    value = std::isnan(value) ? value : std::max(value, db.relative());
  }
  return judged_check(name, text + ", at " + where(states, model.n()),
                      value, kFiniteDifferenceTolerance);
}

ModelCheck check_constraint_bias(const Model& model, const std::vector<CheckState>& states) {
  const std::string name = model.time_dependent() ? "Adot qd (with b) vs FD" : "Adot qd vs FD";
  if (model.m() == 0) return skipped_check(name, "no constraints");
  FiniteDifferenceTerms fd(model);
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  Discrepancy d;
  for (const auto& s : states) {
    model.evaluate(s.t, s.q, s.qd, kConstraintBias, *ws, terms);
    const Vec bias = terms.Adot_qd;
    d.add(bias, fd.constraint_bias(s.t, s.q, s.qd));
  }
  return judged_check(name,
                      "max rel " + sci(d.relative()) + " against d/ds (A qd + b) along (qd, 1), at " +
                          state_count(states),
                      d.relative(), kFiniteDifferenceTolerance);
}

ModelCheck check_lagrangian_derivatives(const Model& model, const std::vector<CheckState>& states) {
  FiniteDifferenceTerms fd(model);
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  Discrepancy dq, dp;
  const std::vector<Vec> dirs = check_directions(model.n(), seed_of(states));
  for (const auto& s : states) {
    model.evaluate(s.t, s.q, s.qd, kLagrangianGradient | kMomentum, *ws, terms);
    const Vec g = terms.dL_dq, p = terms.p;
    for (const Vec& d : dirs) {
      dq.add(g.dot(d), fd.lagrangian_gradient_along(s.t, s.q, s.qd, d));
      dp.add(p.dot(d), fd.momentum_along(s.t, s.q, s.qd, d));
    }
  }
  const double value = std::isnan(dq.relative()) || std::isnan(dp.relative()) ? kNaN : std::max(dq.relative(), dp.relative());
  return judged_check("dL/dq, p vs FD of L",
                      "max rel dL/dq " + sci(dq.relative()) + ", p = dL/dqd " + sci(dp.relative()) + ", at " +
                          where(states, model.n()),
                      value, kFiniteDifferenceTolerance);
}

ModelCheck check_bias(const Model& model, const std::vector<CheckState>& states) {
  FiniteDifferenceTerms fd(model);
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  Discrepancy dc;
  const std::vector<Vec> dirs = check_directions(model.n(), seed_of(states));
  for (const auto& s : states) {
    model.evaluate(s.t, s.q, s.qd, kBias | kMomentum, *ws, terms);
    const Vec c = terms.c;
    // Floor: the size velocity-product terms have here, |p| |qd| / |q| (per unit of q), so that a c that vanishes
    // by an identity the expressions hold only to round-off (a rolling disk's body T, sin^2 + cos^2) is not judged
    // against differences of its own rounding (issue 41).
    const double velocity_terms =
        max_abs(terms.p) * std::max(1.0, max_abs(s.qd)) / std::max(1.0, max_abs(s.q));
    for (const Vec& d : dirs) {
      const FiniteDifferenceTerms::EulerLagrangeAlong el = fd.euler_lagrange_along(s.t, s.q, s.qd, d);
      dc.add(c.dot(d), el.c(), std::max({std::abs(el.dp_dt), std::abs(el.dL_dq), velocity_terms}));
    }
  }
  return judged_check("c vs FD of L",
                      "max rel " + sci(dc.relative()) + " against d/dt(dL/dqd) - dL/dq at qdd = 0, at " +
                          where(states, model.n()),
                      dc.relative(), kFiniteDifferenceTolerance);
}

ModelCheck check_dynamics_derivatives(const Model& model, const std::vector<CheckState>& states) {
  const std::string name = "derivatives vs FD";
  if (!model.has_dynamics_derivatives())
    return skipped_check(name, std::string("the model provides none (") +
                                   (model.time_dependent() ? "explicit time dependence"
                                                           : "a generalized force written for double only") +
                                   "): implicit integrators difference the right-hand side");
  if (model.n() > kDerivativeCoordinates)
    return skipped_check(name, "n = " + std::to_string(model.n()) + " > " + std::to_string(kDerivativeCoordinates) +
                                   ": the dense dM/dq alone has n^3 entries (seconds a state); checked up to " +
                                   std::to_string(kDerivativeCoordinates) + " coordinates");
  FiniteDifferenceTerms fd(model);
  auto ws = model.make_workspace();
  ModelTerms terms = model.make_terms();
  const int n = model.n();
  const bool bias = model.m() > 0;
  DynamicsDerivatives d = model.make_derivatives(bias);
  const bool forced = model.has_generalized_force();
  Discrepancy dM, dA, dc, dcv, db, dbv, dF, dFv;
  const std::vector<Vec> dirs = check_directions(n, seed_of(states));
  for (const auto& s : states) {
    model.dynamics_derivatives(s.q, s.qd, *ws, d);
    if (forced) model.generalized_force_derivatives(0.0, s.q, s.qd, *ws, d.dF_dq, d.dF_dqd);
    model.evaluate(0.0, s.q, s.qd, kMassMatrix | kBias | kForce | constraint_terms(model), *ws, terms);
    // Floors: a term's own size per unit of q (or qd), so that a derivative that vanishes next to its term
    // is not divided by its own rounding.
    const double L = std::max(1.0, max_abs(s.q)), V = std::max(1.0, max_abs(s.qd));
    for (const Vec& dir : dirs) {
      const auto in_q = fd.dynamics_derivative_along(s.q, s.qd, dir, true);
      const auto in_qd = fd.dynamics_derivative_along(s.q, s.qd, dir, false);
      Mat M_along = Mat::Zero(n, n), A_along = Mat::Zero(model.m(), n);
      for (int l = 0; l < n; ++l) {
        M_along += dir[l] * d.dM[l];
        if (bias) A_along += dir[l] * d.dA[l];
      }
      dM.add(M_along, in_q.M, max_abs(terms.M) / L);
      if (bias) dA.add(A_along, in_q.A, max_abs(terms.A) / L);
      // c's size, floored by that of its velocity products, |M| V^2 (see check_bias).
      const double c_scale = std::max(max_abs(terms.c), max_abs(terms.M) * V * V);
      dc.add(Vec(d.dc_dq * dir), in_q.c, c_scale / L);
      dcv.add(Vec(d.dc_dqd * dir), in_qd.c, c_scale / V);
      if (forced) {
        dF.add(Vec(d.dF_dq * dir), in_q.F, max_abs(terms.F) / L);
        dFv.add(Vec(d.dF_dqd * dir), in_qd.F, max_abs(terms.F) / V);
      }
      if (bias && d.dbias_dq.size()) {
        db.add(Vec(d.dbias_dq * dir), in_q.bias, max_abs(terms.Adot_qd) / L);
        dbv.add(Vec(d.dbias_dqd * dir), in_qd.bias, max_abs(terms.Adot_qd) / V);
      }
    }
  }
  double value = 0;
  for (const Discrepancy* x : {&dM, &dA, &dc, &dcv, &db, &dbv, &dF, &dFv})
    value = std::isnan(value) || std::isnan(x->relative()) ? kNaN : std::max(value, x->relative());
  std::string text = "dM/dq " + sci(dM.relative());
  if (bias) text += ", dA/dq " + sci(dA.relative());
  text += ", dc/dq " + sci(dc.relative()) + ", dc/dqd " + sci(dcv.relative());
  if (bias && d.dbias_dq.size()) text += ", dAdot_qd/dq " + sci(db.relative()) + ", /dqd " + sci(dbv.relative());
  if (forced) text += ", dF/dq " + sci(dF.relative()) + ", dF/dqd " + sci(dFv.relative());
  return judged_check(name, "max rel " + text, value, kFiniteDifferenceTolerance);
}

ModelCheck check_analytic_terms(const Model& model, const Model* autodiff, const std::vector<CheckState>& states) {
  const std::string name = "analytic vs autodiff";
  if (!model.uses_analytic_terms() || !autodiff)
    return skipped_check(name, "no hand-written terms: M, c and the constraint terms are by autodiff");
  auto wa = model.make_workspace();
  auto wb = autodiff->make_workspace();
  ModelTerms a = model.make_terms(), b = autodiff->make_terms();
  const unsigned what = kMassMatrix | kBias | constraint_terms(model);
  Discrepancy dM, dc, dA, dbias, dh;
  for (const auto& s : states) {
    model.evaluate(s.t, s.q, s.qd, what, *wa, a);
    autodiff->evaluate(s.t, s.q, s.qd, what, *wb, b);
    dM.add(a.M, b.M);
    dc.add(a.c, b.c);
    dA.add(a.A, b.A);
    dbias.add(a.Adot_qd, b.Adot_qd);
    dh.add(a.h, b.h);
  }
  double value = 0;
  for (const Discrepancy* x : {&dM, &dc, &dA, &dbias, &dh})
    value = std::isnan(value) || std::isnan(x->relative()) ? kNaN : std::max(value, x->relative());
  std::string text = "max rel M " + sci(dM.relative()) + ", c " + sci(dc.relative());
  if (model.m() > 0) text += ", A " + sci(dA.relative()) + ", Adot qd " + sci(dbias.relative());
  if (model.has_position_rows()) text += ", h " + sci(dh.relative());
  return judged_check(name, text, value, kAnalyticTolerance);
}

ModelCheck check_sparse_terms(const Model& model, const std::vector<CheckState>& states) {
  const std::string name = "sparse vs dense";
  if (!model.has_sparse_terms()) return skipped_check(name, "not built from bodies and joints (no sparse terms)");
  auto ws = model.make_workspace();
  auto sws = model.make_workspace();
  ModelTerms dense = model.make_terms();
  SparseModelTerms sparse = model.make_sparse_terms();
  Discrepancy dM, dc, dF, dA, dbias, dh;
  for (const auto& s : states) {
    model.evaluate(s.t, s.q, s.qd, kDynamics, *ws, dense);
    model.evaluate_sparse(s.t, s.q, s.qd, kDynamics, *sws, sparse);
    dM.add(Mat(sparse.M), dense.M);
    dc.add(sparse.c, dense.c);
    dF.add(sparse.F, dense.F);
    dA.add(Mat(sparse.A), dense.A);
    dbias.add(sparse.Adot_qd, dense.Adot_qd);
    dh.add(sparse.h, dense.h);
  }
  double value = 0;
  for (const Discrepancy* x : {&dM, &dc, &dF, &dA, &dbias, &dh})
    value = std::isnan(value) || std::isnan(x->relative()) ? kNaN : std::max(value, x->relative());
  return judged_check(name,
                      "max rel M " + sci(dM.relative()) + ", c " + sci(dc.relative()) + ", A " + sci(dA.relative()) +
                          ", Adot qd " + sci(dbias.relative()) + ", h " + sci(dh.relative()),
                      value, kSparseTolerance);
}

ModelCheck check_velocity_basis(const Model& model, const std::vector<CheckState>& states) {
  const std::string name = "velocity basis";
  const auto* basis = model.capability<VelocityBasis>();
  if (!basis) return skipped_check(name, "none stated (nullspace computes one)");
  const int n = model.n(), k = n - model.m();
  auto ws = model.make_workspace();
  auto bws = basis->make_workspace();
  ModelTerms terms = model.make_terms();
  Mat S(n, k), Sp(n, k), Sm(n, k);
  Vec Sdot_v(n), tmp(n);
  std::mt19937 rng(seed_of(states) + 2);
  std::uniform_real_distribution<double> u(-1, 1);
  double annihilated = 0, rank_ratio = std::numeric_limits<double>::infinity();
  Discrepancy dSdot;
  for (const auto& s : states) {
    Vec v(k);
    for (int j = 0; j < k; ++j) v[j] = u(rng);
    basis->evaluate(s.q, v, *bws, S, Sdot_v);
    const Mat S0 = S;
    const Vec Sdot0 = Sdot_v;
    model.evaluate(s.t, s.q, s.qd, kConstraintJacobian, *ws, terms);
    const double scale = max_abs(terms.A) * max_abs(S0);
    annihilated = std::max(annihilated, scale > 0 ? max_abs(Mat(terms.A * S0)) / scale : 0.0);
    if (k > 0) {
      Eigen::JacobiSVD<Mat> svd(S0);
      const Vec& sv = svd.singularValues();
      rank_ratio = std::min(rank_ratio, sv[0] > 0 ? sv[sv.size() - 1] / sv[0] : 0.0);
    }
    const Vec qd = S0 * v;
    const Vec fd = richardson_derivative(
        [&](double h) {
          basis->evaluate(s.q + h * qd, v, *bws, S, tmp);
          return Vec(S * v);
        },
        FiniteDifferenceTerms::motion_step(s.q, qd));
    dSdot.add(Sdot0, fd, max_abs(qd) / std::max(1.0, max_abs(s.q)));
  }
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2g", rank_ratio);
  std::string text = "|A S| / (|A| |S|) = " + sci(annihilated) + ", rank n - m = " + std::to_string(k) +
                     " (sigma ratio " + ratio + "), Sdot v vs FD " + sci(dSdot.relative()) + " " +
                     tol_text(kFiniteDifferenceTolerance);
  ModelCheck check = judged_check(name, text, annihilated, kBasisTolerance);
  if (!(dSdot.relative() <= kFiniteDifferenceTolerance) || !(rank_ratio > 1e-10)) check.verdict = ModelCheck::Verdict::kFail;
  return check;
}

ModelCheck check_closed_form(const Model& model, const RunRecord& run) {
  const std::string name = "closed form";
  Vec q(model.n()), qd(model.n());
  if (!model.closed_form(0.0, run.q0, run.qd0, q, qd)) return skipped_check(name, "no closed-form motion from this start");
  char how[64];
  std::snprintf(how, sizeof how, " (kkt + dopri5, rtol %.0e)", run.spec.rtol);
  if (run.status != "ok" && !stopped_by_budget(run))
    return judged_check(name, "the run " + run.status + " at t = " + format_number(run.t_reached) + ": " + run.message,
                        kNaN, kIntegrationTolerance);
  const RunSummary& s = run.summary;
  if (s.reference_source != "closed_form")
    return skipped_check(name, "the closed form does not cover this run" +
                                   (s.reference_note.empty() ? std::string() : ": " + s.reference_note));
  // Relative to the motion's size: max(1, max_k |q_k|) and max(1, max_k |qd_k|).
  const Eigen::Map<const Mat> qs(run.q.data(), run.n, static_cast<Eigen::Index>(run.t.size()));
  const Eigen::Map<const Mat> qds(run.qd.data(), run.n, static_cast<Eigen::Index>(run.t.size()));
  double q_scale = 1, qd_scale = 1;
  for (Eigen::Index k = 0; k < qs.cols(); ++k) {
    q_scale = std::max(q_scale, qs.col(k).norm());
    qd_scale = std::max(qd_scale, qds.col(k).norm());
  }
  const double value = std::max(s.q_error_max / q_scale, s.qd_error_max / qd_scale);
  std::string text = "max rel " + sci(value) + run_span(run) + ": |q - q_cf| = " + sci(s.q_error_max) +
                     ", |qd - qd_cf| = " + sci(s.qd_error_max);
  if (std::isfinite(s.lambda_error_max)) text += ", |lambda - lambda_cf| = " + sci(s.lambda_error_max);
  text += how;
  return judged_check(name, text, value, kIntegrationTolerance);
}

ModelCheck check_energy(const Model& model, const RunRecord& run, const std::vector<CheckState>& states) {
  const std::string name = "energy";
  const std::string over = run_span(run);
  if (!model.time_dependent()) {
    auto ws = model.make_workspace();
    ModelTerms terms = model.make_terms();
    double force = 0;
    for (const auto& s : states) {
      model.evaluate(s.t, s.q, s.qd, kForce, *ws, terms);
      force = std::max(force, max_abs(terms.F));
    }
    if (force > 0)
      return skipped_check(name, "not conserved: generalized forces do work (|F| up to " + sci(force) +
                                     "); runs keep an energy balance only with explicit time dependence");
  }
  if (run.status != "ok" && !stopped_by_budget(run))
    return judged_check(name, "the run " + run.status + " at t = " + format_number(run.t_reached) + ": " + run.message,
                        kNaN, kIntegrationTolerance);
  if (model.time_dependent()) {
    const double r = run.summary.max_energy_balance_residual;
    return judged_check(name,
                        "balance max |E - E0 - W| / scale = " + sci(r) + over +
                            " (time-dependent: W the work of moving constraints, dV/dt, F)",
                        r, kIntegrationTolerance);
  }
  // Relative to the largest |E| of the run (the summary's max_rel_energy_error divides by |E0|, which can vanish).
  double e_scale = 0, de = 0;
  for (double e : run.energy) {
    e_scale = std::max(e_scale, std::abs(e));
    de = std::max(de, std::abs(e - run.energy.front()));
  }
  const double value = e_scale > 0 ? de / e_scale : de;
  return judged_check(name,
                      "max |E - E0| / max |E| = " + sci(value) + over + " (conservative)",
                      value, kIntegrationTolerance);
}

ModelCheckReport check_model(const std::string& problem, const ModelCheckSettings& settings) {
  ModelCheckReport report;
  report.problem = problem;
  // Each check timed, and a check that throws (a NumericalFailure in a model's code) is that check's FAIL, not
  // the end of the others; bad input (InputError) is the command's.
  auto add = [&](const std::string& name, auto&& check) {
    const auto start = std::chrono::steady_clock::now();
    ModelCheck c;
    try {
      c = check();
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      c = judged_check(name, std::string("threw: ") + e.what(), kNaN, kNaN);
    }
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report.checks.push_back(std::move(c));
  };
  const ProblemEntry entry = find_problem(problem);
  const std::shared_ptr<const Model> model = entry.make(settings.overrides, true);
  const int n = model->n();
  for (const auto& [flag, values] : {std::pair{"--q0", &settings.q0}, std::pair{"--qd0", &settings.qd0}})
    if (*values && static_cast<int>((*values)->size()) != n)
      throw InputError(std::string(flag) + " has " + std::to_string((*values)->size()) + " numbers for the " +
                       std::to_string(n) + " coordinates of " + model->name());
  {
    std::string kind = model->m() == 0 ? "no constraints"
                       : model->holonomic() ? "holonomic"
                       : model->mixed() ? "mixed (" + std::to_string(model->position_rows()) + " position rows, " +
                                              std::to_string(model->velocity_rows()) + " velocity rows)"
                                        : "Pfaffian";
    if (model->time_dependent()) kind += ", time-dependent";
    if (model->gyroscopic()) kind += ", gyroscopic";
    std::string params;
    for (const auto& [k, v] : model->parameters()) params += (params.empty() ? "" : ", ") + k + " = " + format_number(v);
    report.notes.push_back(model->name() + ": n = " + std::to_string(n) + ", m = " + std::to_string(model->m()) + " (" +
                           kind + "); " + (params.empty() ? "no parameters" : params));
  }

  add("initial state", [&] { return check_initial_state(*model); });
  add("initial state, params", [&] {
    return check_perturbed_initial_states(entry, *model, settings.parameter_sets, settings.parameter_spread, settings.seed);
  });

  // The start of the term checks and of the run: the run's own (given data, or a default state off the
  // constraints, projected onto them).
  RunSpec spec;
  spec.run_id = "check";
  spec.problem = problem;
  spec.formulation = "kkt";
  spec.integrator = "dopri5";
  spec.t_end = settings.t_end;
  spec.rtol = 1e-12;
  spec.atol = 1e-14;
  spec.output_every = settings.t_end / 100;
  // Seconds, not minutes: a stiff or fast problem (andrews_squeezer: 3.4 million right-hand sides to t = 1) is
  // judged over the part of [0, t_end] the budget reaches.
  spec.max_steps = kRunStepBudget;
  // kkt stops at a singular position (core/formulation.hpp) unless the positions are projected back onto h = 0.
  if (model->has_singular_positions()) spec.options.projection = "both";
  spec.params = settings.overrides;
  spec.q0 = settings.q0;
  spec.qd0 = settings.qd0;
  std::ostringstream log;
  std::optional<PreparedRun> run;
  std::string refusal;
  try {
    run.emplace(prepare_run(spec, log, false));
  } catch (const InputError& e) {
    if (settings.q0 || settings.qd0) throw;  // given data that cannot be projected: bad input
    refusal = e.what();
  }
  Vec q0, qd0;
  model->default_initial(q0, qd0);
  std::string start = "default initial state";
  if (run) {
    q0 = run->q0;
    qd0 = run->qd0;
    if (run->initial_source != "default")
      start = run->initial_source + " initial state (projected: |dq| = " + sci(run->projection.position_distance) +
              ", |dqd| = " + sci(run->projection.velocity_distance) + ")";
  }
  const std::vector<CheckState> states = check_states(*model, q0, qd0, settings.random_states, settings.seed);
  report.notes.push_back("terms checked at the " + start + " and " + std::to_string(states.size() - 1) +
                         " random states near it" + (model->time_dependent() ? " (t = 0, 0.3, 0.6, ...)" : ""));

  add("mass matrix", [&] { return check_mass_matrix(*model, states); });
  add("A vs FD of h", [&] { return check_constraint_jacobian(*model, states); });
  add("Adot qd vs FD", [&] { return check_constraint_bias(*model, states); });
  add("dL/dq, p vs FD of L", [&] { return check_lagrangian_derivatives(*model, states); });
  add("c vs FD of L", [&] { return check_bias(*model, states); });
  add("derivatives vs FD", [&] { return check_dynamics_derivatives(*model, states); });
  add("analytic vs autodiff", [&] {
    std::shared_ptr<const Model> autodiff;
    if (model->uses_analytic_terms()) autodiff = entry.make(settings.overrides, false);
    return check_analytic_terms(*model, autodiff.get(), states);
  });
  add("sparse vs dense", [&] { return check_sparse_terms(*model, states); });
  add("velocity basis", [&] { return check_velocity_basis(*model, states); });

  if (!run) {
    add("closed form", [&] { return skipped_check("closed form", "no run: " + refusal); });
    add("energy", [&] { return skipped_check("energy", "no run: " + refusal); });
    return report;
  }
  std::optional<RunRecord> record;
  add("closed form", [&] {
    record.emplace(execute_run(*run, nullptr, true));
    return check_closed_form(*run->model, *record);
  });
  add("energy", [&] {
    return record ? check_energy(*run->model, *record, states) : skipped_check("energy", "no run (above)");
  });
  return report;
}

}  // namespace clm
