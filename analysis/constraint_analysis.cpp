// Constraint analysis: rank, involutivity (Frobenius) and accessibility (iterated Lie brackets); see the
// header for the method, the accuracy of each step and the tolerances.
#include "analysis/constraint_analysis.hpp"


#include <Eigen/SVD>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace clm {

namespace {

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string word_name(const std::vector<int>& word) {
  // word (a, b, ..., y, z) is the left-normed bracket [Xa, [Xb, ... [Xy, Xz]]].
  if (word.size() == 1) return "X" + std::to_string(word[0] + 1);
  std::vector<int> rest(word.begin() + 1, word.end());
  return "[X" + std::to_string(word[0] + 1) + ", " + word_name(rest) + "]";
}

// Evaluates left-normed bracket fields of a DistributionFields.
class BracketEvaluator {
 public:
  BracketEvaluator(const DistributionFields& fields, double fd_step) : f_(fields), fd_step_(fd_step) {}

  // [X_a, W](q) = DW X_a - DX_a W, with W the field of word[1..]; exact (autodiff) for two-letter words,
  // 4th-order central differences of the shorter bracket otherwise.
  Vec field(const std::vector<int>& word, const Vec& q) const {
    Mat X;
    if (word.size() == 1) {
      f_.evaluate(q, X, nullptr);
      return X.col(word[0]);
    }
    std::vector<Mat> DX;
    f_.evaluate(q, X, &DX);
    const int a = word[0];
    if (word.size() == 2) {
      const int b = word[1];
      return DX[b] * X.col(a) - DX[a] * X.col(b);
    }
    const std::vector<int> rest(word.begin() + 1, word.end());
    const Vec W = field(rest, q);
    const int n = static_cast<int>(q.size());
    Mat DW(n, n);
    Vec qs = q;
    for (int l = 0; l < n; ++l) {
      const double h = fd_step_ * (1 + std::abs(q[l]));
      auto at = [&](double s) {
        qs[l] = q[l] + s * h;
        Vec v = field(rest, qs);
        qs[l] = q[l];
        return v;
      };
      DW.col(l) = (-at(2) + 8 * at(1) - 8 * at(-1) + at(-2)) / (12 * h);
    }
    return DW * X.col(a) - DX[a] * W;
  }

 private:
  const DistributionFields& f_;
  double fd_step_;
};

}  // namespace

int numerical_rank(const Mat& A, double rtol, std::vector<double>* singular_values) {
  if (singular_values) singular_values->clear();
  if (A.size() == 0) return 0;
  Eigen::JacobiSVD<Mat> svd(A);
  const Vec& s = svd.singularValues();
  if (singular_values) singular_values->assign(s.data(), s.data() + s.size());
  const double largest = s.size() ? s[0] : 0.0;
  if (!(largest > 0)) return 0;
  int rank = 0;
  for (int i = 0; i < s.size(); ++i)
    if (s[i] > rtol * largest) ++rank;
  return rank;
}

void analyse_holonomic(ConstraintAnalysis& out) {
  out.analysed = true;
  out.integrable = true;
  out.max_bracket_residual = 0;
  out.span_by_depth = {out.dof};
  out.accessible_dimension = out.dof;
  out.accessible_depth = 0;
  if (out.m == 0) {  // a problem without constraints (charged_particle) is declared holonomic with no rows
    out.basis = "none needed: no constraints, every velocity is admissible";
    out.verdict = "no constraints: every velocity is admissible, accessible dimension = n";
    return;
  }
  const std::string h = out.time_dependent ? "h(q, t)" : "h(q)";
  out.basis = "none needed: the configuration space is the manifold " + h + " = 0" +
              (out.time_dependent ? " (at each t)" : "");
  out.verdict = "holonomic by construction (" + h + " given): integrable, the motion stays on " + h +
                " = 0, accessible dimension = DOF";
}

// What the constraints are, for the report's first line: the kind a problem declares, and whether they (or the
// potential) depend on t, in which case A(q, t) is analysed at t = 0.
static std::string constraint_kind(const ConstraintAnalysis& a) {
  if (a.m == 0) return a.time_dependent ? "no constraints; V(q, t)" : "no constraints";
  if (a.holonomic) return a.time_dependent ? "holonomic h(q, t) = 0, analysed at t = 0" : "holonomic h(q) = 0";
  if (a.position_rows > 0)
    return "mixed: " + std::to_string(a.position_rows) + (a.position_rows == 1 ? " position row" : " position rows") +
           " h(q" + (a.time_dependent ? ", t" : "") + ") = 0 (rank " + std::to_string(a.position_rank) + "), " +
           std::to_string(a.m - a.position_rows) + (a.m - a.position_rows == 1 ? " velocity row" : " velocity rows") +
           " A(q) qd" + (a.time_dependent ? " + b" : "") + " = 0; the brackets are of ker [dh/dq; A]" +
           (a.time_dependent ? ", analysed at t = 0" : "");
  return a.time_dependent ? "Pfaffian A(q) qd + b = 0: the brackets are of ker A, analysed at t = 0"
                          : "Pfaffian A(q) qd = 0";
}

void analyse_distribution(const DistributionFields& fields, const Mat& A, ConstraintAnalysis& out) {
  const ConstraintAnalysisOptions& opt = out.options;
  out.basis = fields.description();
  if (out.rank < out.m) {
    out.analysed = false;
    out.verdict = "A(q) has rank " + std::to_string(out.rank) + " < m = " + std::to_string(out.m) +
                  " here (dependent constraint rows); the bracket analysis needs full row rank: choose another q";
    return;
  }
  out.analysed = true;
  const int n = out.n, k = fields.k();

  // Orthonormal basis of the row space of A: the directions outside D.
  Eigen::JacobiSVD<Mat> svd(A, Eigen::ComputeFullV);
  const Mat row_space = svd.matrixV().leftCols(out.rank);

  Mat X;
  std::vector<Mat> DX;
  fields.evaluate(out.q, X, &DX);

  // Involutivity: every depth-1 bracket in D (exact autodiff brackets).
  out.max_bracket_residual = 0;
  for (int i = 0; i < k; ++i) {
    for (int j = i + 1; j < k; ++j) {
      const Vec B = DX[j] * X.col(i) - DX[i] * X.col(j);
      const double scale = DX[j].norm() * X.col(i).norm() + DX[i].norm() * X.col(j).norm();
      const double r = (row_space.transpose() * B).norm() / std::max(B.norm(), std::max(1e-6 * scale, 1e-300));
      if (r > out.max_bracket_residual || out.worst_bracket.empty()) {
        out.max_bracket_residual = std::max(out.max_bracket_residual, r);
        out.worst_bracket = "[X" + std::to_string(i + 1) + ", X" + std::to_string(j + 1) + "]";
      }
    }
  }
  out.integrable = out.max_bracket_residual < opt.involutive_tol;

  // Accessibility: grow the span depth by depth.
  const BracketEvaluator brackets(fields, opt.fd_step);
  double longest = 0;
  for (int j = 0; j < k; ++j) longest = std::max(longest, X.col(j).norm());
  const double zero_field = 1e-9 * longest;
  Mat span(n, 0);  // accepted fields, unit-normalised
  auto try_add = [&](const Vec& v) {
    const double len = v.norm();
    if (!(len > zero_field) || !v.allFinite()) return false;
    Mat trial(n, span.cols() + 1);
    trial << span, v / len;
    if (numerical_rank(trial, opt.span_rtol) <= span.cols()) return false;
    span = trial;
    return true;
  };
  std::vector<std::vector<int>> frontier;  // words that added a direction at the previous depth
  for (int j = 0; j < k; ++j)
    if (try_add(X.col(j))) frontier.push_back({j});
  out.span_by_depth = {static_cast<int>(span.cols())};
  out.accessible_depth = 0;
  for (int depth = 1; depth <= opt.max_depth && span.cols() < n && !frontier.empty(); ++depth) {
    std::vector<std::vector<int>> next;
    for (const auto& w : frontier) {
      for (int a = 0; a < k; ++a) {
        if (w.size() == 1 && a >= w[0]) continue;  // [Xa, Xa] = 0, [Xa, Xb] = -[Xb, Xa]
        std::vector<int> word{a};
        word.insert(word.end(), w.begin(), w.end());
        if (try_add(brackets.field(word, out.q))) next.push_back(word);
        if (span.cols() == n) break;
      }
      if (span.cols() == n) break;
    }
    out.span_by_depth.push_back(static_cast<int>(span.cols()));
    if (!next.empty()) out.accessible_depth = depth;
    frontier = std::move(next);
  }
  out.accessible_dimension = static_cast<int>(span.cols());

  if (out.integrable) {
    out.verdict = "integrable: D = ker A is involutive (every bracket of its basis lies in D), so the Pfaffian "
                  "constraints are holonomic in disguise; the motion stays on a " +
                  std::to_string(out.accessible_dimension) + "-dimensional integral manifold";
  } else {
    out.verdict = "not integrable: " + out.worst_bracket + " leaves D = ker A, the constraints are nonholonomic" +
                  std::string(out.accessible_dimension == n
                                  ? "; iterated brackets reach every direction (accessible, Chow-Rashevskii)"
                                  : "; iterated brackets reach a " + std::to_string(out.accessible_dimension) +
                                        "-dimensional subspace only");
  }
}

void mixed_verdict(ConstraintAnalysis& out) {
  if (!out.analysed) return;
  const int manifold = out.n - out.position_rank;  // dim of h = 0 near q
  if (out.integrable) {
    out.verdict = "integrable on h = 0: the velocity rows are holonomic in disguise on the " + std::to_string(manifold) +
                  "-dimensional manifold of the position rows (every bracket of ker [dh/dq; A] lies in it); the "
                  "motion stays on a " + std::to_string(out.accessible_dimension) + "-dimensional integral manifold";
  } else {
    out.verdict = "not integrable on h = 0: " + out.worst_bracket + " leaves ker [dh/dq; A], the velocity rows are "
                  "nonholonomic on the " + std::to_string(manifold) + "-dimensional manifold of the position rows" +
                  std::string(out.accessible_dimension == manifold
                                  ? "; iterated brackets reach all of it (accessible, Chow-Rashevskii)"
                                  : "; iterated brackets reach a " + std::to_string(out.accessible_dimension) +
                                        "-dimensional part of it only");
  }
}

std::string kinematic_split_note(const Mat& A, const std::vector<int>& passive, const ConstraintAnalysis& out) {
  const int n_p = static_cast<int>(passive.size());
  if (out.m != n_p)
    return "not a kinematic system: m = " + std::to_string(out.m) + " constraints, n_p = " + std::to_string(n_p) +
           " passive coordinates (seed 000 eq. 2.14 needs m = n_p)";
  Mat W_p(out.m, n_p);
  for (int i = 0; i < n_p; ++i) W_p.col(i) = A.col(passive[i]);
  const int rank = numerical_rank(W_p, out.options.rank_rtol);
  if (rank < n_p)
    return "W_p (A's passive columns) has rank " + std::to_string(rank) + " < " + std::to_string(n_p) +
           " at this q (singular values above " + short_number(out.options.rank_rtol) +
           " x the largest count): the input vector fields are not defined here";
  return {};
}

void analyse_input_fields(const DistributionFields& fields, ConstraintAnalysis& out) {
  if (!out.analysed) return;
  std::vector<Mat> DX;
  fields.evaluate(out.q, out.input_fields, &DX);
  const int n = out.n, k = static_cast<int>(out.input_fields.cols());
  out.bracket_pairs.clear();
  for (int i = 0; i < k; ++i)
    for (int j = i + 1; j < k; ++j) out.bracket_pairs.emplace_back(i, j);
  out.brackets.resize(n, static_cast<Eigen::Index>(out.bracket_pairs.size()));
  for (size_t p = 0; p < out.bracket_pairs.size(); ++p) {
    const auto [i, j] = out.bracket_pairs[p];
    out.brackets.col(static_cast<Eigen::Index>(p)) = DX[j] * out.input_fields.col(i) - DX[i] * out.input_fields.col(j);
  }
  // Rank of {g_i, [g_i, g_j]}: unit-normalised columns, zero fields (below 1e-9 of the longest g) left out.
  double longest = 0;
  for (int j = 0; j < k; ++j) longest = std::max(longest, out.input_fields.col(j).norm());
  Mat all(n, 0);
  auto add = [&](const Vec& v) {
    if (!(v.norm() > 1e-9 * longest)) return;
    all.conservativeResize(n, all.cols() + 1);
    all.col(all.cols() - 1) = v / v.norm();
  };
  for (int j = 0; j < k; ++j) add(out.input_fields.col(j));
  for (Eigen::Index p = 0; p < out.brackets.cols(); ++p) add(out.brackets.col(p));
  out.controllability_rank_depth1 = numerical_rank(all, out.options.span_rtol);
  out.input_fields_analysed = true;
  out.basis = "input vector fields g_j = [-W_p^-1 W_a e_j; e_j] of the actuated coordinates (" + [&] {
    std::string s;
    for (int a : out.actuated) s += (s.empty() ? "" : ", ") + out.coordinate_names[a];
    return s;
  }() + ")";
}

std::string format_constraint_analysis(const ConstraintAnalysis& a) {
  std::ostringstream s;
  const auto& o = a.options;
  s << "problem            " << a.problem << " (" << constraint_kind(a) << ")\n";
  s << "q                  ";
  for (int i = 0; i < a.q.size(); ++i) s << (i ? ", " : "") << short_number(a.q[i]);
  s << (a.default_q ? "   (the default q0)" : "") << "\n";
  s << "n                  " << a.n << "\n";
  s << "m                  " << a.m;
  if (a.position_rows > 0 && a.position_rows < a.m)
    s << " = " << a.position_rows << " position + " << a.m - a.position_rows << " velocity rows (position rows first)";
  s << "\n";
  if (a.position_rows > 0 && a.position_rows < a.m)
    s << "rank dh/dq         " << a.position_rank << "   (the position rows: h = 0 is a manifold of dimension "
      << a.n - a.position_rank << ")\n";
  s << "rank A(q)          " << a.rank << (a.position_rows > 0 && a.position_rows < a.m ? " of all rows" : "")
    << "   (SVD; singular values above " << short_number(o.rank_rtol)
    << " x the largest count";
  if (!a.singular_values.empty()) {
    s << "; smallest " << short_number(a.singular_values.back()) << ", largest "
      << short_number(a.singular_values.front());
  }
  s << ")\n";
  s << "DOF                " << a.dof << " = n - rank\n";
  if (a.rank < a.m) {
    // Redundant (or, at a singular q, dependent) rows: Grubler's count n - m understates the mobility.
    s << "redundant rows     " << a.m - a.rank << "   (Grubler's count n - m = " << a.n - a.m
      << "; the mobility is n - rank = " << a.dof << ")\n";
  }
  s << "basis of D         " << a.basis << "\n";
  if (a.holonomic && a.m == 0) {
    s << "integrable         yes: no constraints\n";
    s << "accessible dim     " << a.accessible_dimension << " = n\n";
  } else if (a.holonomic) {
    s << "integrable         yes: holonomic by construction (" << (a.time_dependent ? "h(q, t)" : "h(q)") << " given)\n";
    s << "accessible dim     " << a.accessible_dimension << " = DOF (the constraint manifold)\n";
  } else if (!a.analysed) {
    s << "integrable         not analysed: " << a.verdict << "\n";
  } else {
    s << "integrable         " << (a.integrable ? "yes" : "no") << ": largest bracket residual "
      << short_number(a.max_bracket_residual) << " at " << a.worst_bracket << " (involutive below "
      << short_number(o.involutive_tol) << ")\n";
    s << "accessible dim     " << a.accessible_dimension
      << (a.position_rows > 0 ? " of n - rank dh/dq = " + std::to_string(a.n - a.position_rank) : " of n = " + std::to_string(a.n))
      << ", reached at bracket depth "
      << a.accessible_depth << " (span by depth:";
    for (size_t d = 0; d < a.span_by_depth.size(); ++d) s << (d ? ", " : " ") << a.span_by_depth[d];
    s << "; depth <= " << o.max_depth << ", span tolerance " << short_number(o.span_rtol) << ")\n";
  }
  if (!a.actuated.empty()) {
    auto name = [&](int i) { return i < static_cast<int>(a.coordinate_names.size()) ? a.coordinate_names[i] : "q" + std::to_string(i + 1); };
    auto vec = [&](const Vec& v) {
      std::string t;
      for (int i = 0; i < v.size(); ++i) t += (i ? ", " : "") + short_number(std::abs(v[i]) < 1e-14 * std::max(1.0, v.norm()) ? 0.0 : v[i]);
      return t;
    };
    std::string act;
    for (int i : a.actuated) act += (act.empty() ? "" : ", ") + name(i);
    s << "actuated           " << act << "\n";
    if (!a.input_fields_analysed) {
      s << "input fields       not computed: " << (a.input_fields_note.empty() ? a.verdict : a.input_fields_note) << "\n";
    } else {
      s << "input fields       qd = ";
      for (size_t j = 0; j < a.actuated.size(); ++j) s << (j ? " + " : "") << "g" << j + 1 << " " << name(a.actuated[j]) << "d";
      s << "   (g_j = [-W_p^-1 W_a e_j; e_j], components in q's order)\n";
      auto label = [](std::string l) { return "  " + l + std::string(std::max<int>(1, 17 - int(l.size())), ' '); };
      for (size_t j = 0; j < a.actuated.size(); ++j)
        s << label("g" + std::to_string(j + 1) + " (" + name(a.actuated[j]) + ")")
          << vec(a.input_fields.col(static_cast<Eigen::Index>(j))) << "\n";
      for (size_t p = 0; p < a.bracket_pairs.size(); ++p)
        s << label("[g" + std::to_string(a.bracket_pairs[p].first + 1) + ", g" +
                   std::to_string(a.bracket_pairs[p].second + 1) + "]")
          << vec(a.brackets.col(static_cast<Eigen::Index>(p))) << "   (Dg_j g_i - Dg_i g_j, autodiff)\n";
      s << "controllability    rank " << a.controllability_rank_depth1 << " of n = " << a.n
        << " with the g_i and their brackets [g_i, g_j]; " << a.accessible_dimension
        << " with iterated brackets to depth " << a.options.max_depth << ": "
        << (a.accessible_dimension == a.n ? "controllable (Chow-Rashevskii)"
                                          : "the brackets up to that depth do not span the tangent space here")
        << "\n";
    }
  }
  s << "verdict            " << a.verdict << "\n";
  return s.str();
}



}  // namespace clm
