// Minimum-norm multipliers for redundant constraints: the paths kkt and schur take when the constraint Jacobian
// A (m rows) has rank r < m at the initial configuration and the constraints are consistent (Bricard's
// mechanism, a constraint written twice). Full-rank runs never come here (formulations/saddle_point.hpp).
// Two solvers of the same problem: schur's MinimumNormMultipliers (below) and kkt's MinimumNormSaddlePoint
// (the symmetric eigen-decomposition of the whole KKT matrix, further down); tests/redundant_constraints_test.cpp checks they agree.
//
// schur's: with M = L L^T and B = L^-1 A^T (n x m), S = A M^-1 A^T = B^T B is positive semi-definite of rank r, and
//
//   M qdd = f + A^T lambda,  A qdd = gamma   <=>   S lambda = b := gamma - A M^-1 f,  qdd = M^-1 (f + A^T lambda).
//
// Every solution lambda gives the same force A^T lambda and the same qdd (null S = null A^T); the suite
// reports the one of least Euclidean norm, lambda = S^+ b (for a constraint written twice, each copy carries
// half the single constraint's multiplier). With the SVD B = U diag(s) V^T: lambda = V diag(1/s_i^2) V^T b over
// the s_i above the suite's rank threshold.
//
// Why the SVD of B and not Eigen's CompleteOrthogonalDecomposition of S or a regularized solve with iterative
// refinement: (1) the rank is decided on B, whose singular values scale like A's, with the suite's one rank
// tolerance (core/formulation.hpp: kRankTolerance, rank_threshold); on S they would be squared, and the 1e-10
// tolerance of A becomes 1e-20 on S, below S's rounding (eps |S| ~ 1e-16 |S|), so no threshold on S can be
// consistent with it; (2) Eigen's COD::solve copies its right-hand side and applies Householder sequences
// through temporaries (heap allocation per call) and a regularized solve needs a refinement loop whose
// result depends on the regularization; JacobiSVD sized in the constructor computes without touching the
// heap, and m is small (tens of rows), so its O(m^3) costs what the (n+m) KKT LU costs.
//
// Rank along the run: the rank r found at q0 (numerical_rank of A) is the mechanism's, n - r its mobility.
// Every evaluation re-detects the rank of B with that same threshold and keeps min(r, rank found) singular
// values: a configuration where A loses a further rank (a singular position) gets the minimum-norm solution
// of the rank found there; a rank above r is not taken, because off the constraint manifold (drift |h| ~ 1e-9
// after a long run) the singular value that is exactly 0 on it grows like the drift and may cross the
// threshold, and 1/s^2 of it would turn drift into huge multipliers. A genuine rise of the rank (constraints
// that were not redundant, or contradict each other) shows up instead as b leaving the range kept: its
// part outside, |b_perp|, is measured at every evaluation, and above kConsistencyTolerance (|b| + s_max^2
// |lambda|) solve() throws NumericalFailure naming the inconsistency.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Eigenvalues>

#include "core/formulation.hpp"

namespace clm {

// Relative size of the part of b outside the range of S above which the acceleration-level constraints are
// called inconsistent. Measured: along 10 s of Bricard under dopri5 at rtol 1e-10 (drift |h| up to 3e-9),
// at most 2.9e-11 for both solvers (tests/redundant_constraints_test.cpp); a doubled pendulum whose copies
// disagree (lengths 1 and 1.2) under Baumgarte beta = 5 gives a residual of order 1. The drift of a loose
// run lifts it: kkt + dopri5 on Bricard reached 1.1e-6 .. 1.7e-6 within 0.5 s at rtol 1e-4 .. 1e-7, which a
// tolerance of 1e-6 called inconsistent (docs/findings.md); at 1e-4 rtol 1e-5 .. 1e-7 run the 10 s, and at
// rtol 1e-4 (drift ~1e-2) the residual reaches 1.5e-4 and the run ends "failed" naming it.
inline constexpr double kConsistencyTolerance = 1e-4;

// What kkt and schur call on their redundant path.
class RedundantConstraintSolver {
 public:
  virtual ~RedundantConstraintSolver() = default;
  // qdd and lambda for M, A from `terms`, f = F - c (+ ...), gamma the right-hand side of A qdd = gamma.
  // `who` names the formulation in errors. Throws NumericalFailure when the system is inconsistent (or the
  // factorization impossible). No heap allocation.
  virtual void solve(const ModelTerms& terms, const Vec& f, const Vec& gamma, const std::string& who, Vec& qdd,
                     Vec& lambda) = 0;
  int last_rank() const { return rank_; }            // rank found at the last solve()
  double last_residual() const { return residual_; }  // relative part of the right-hand side outside the range kept

 protected:
  int rank_ = 0;
  double residual_ = 0;
};

// schur's: the Schur form above.
class MinimumNormMultipliers final : public RedundantConstraintSolver {
 public:
  // n coordinates, m constraint rows, r = rank of A at q0 (the most singular values ever kept).
  MinimumNormMultipliers(int n, int m, int r);

  // Also throws when M is not positive definite. last_residual(): |b_perp| / (|b| + s_max^2 |lambda|).
  // With set_truncation(ratio > 0) (the singular-position solve of kkt and schur, formulations/
  // acceleration_formulation.hpp): singular values of B at or below ratio s_max are dropped as well, and the part
  // of b outside the range kept is not an inconsistency (near a singular position it is the force the
  // truncation leaves out), only recorded in last_residual().
  void set_truncation(double ratio) { truncation_ = ratio; }
  void solve(const ModelTerms& terms, const Vec& f, const Vec& gamma, const std::string& who, Vec& qdd,
             Vec& lambda) override;

 private:
  int n_, m_, max_rank_;
  double truncation_ = 0;
  Eigen::LLT<Mat> llt_M_;
  Mat B_;                        // L^-1 A^T, then reused
  Mat Y_;                        // M^-1 A^T
  Eigen::JacobiSVD<Mat> svd_;    // of B, V only
  Vec free_, b_, c_;
};

// kkt's: the minimum-norm solution of the whole symmetric saddle-point system
//   K z = [M A^T; A 0] [qdd; -lambda] = [f; gamma]
// by the spectral decomposition of the symmetric K ((n+m) x (n+m)): its singular values are the magnitudes of
// its eigenvalues, so keeping at most n + r of the largest |eigenvalues| (the same rank rules as above, on K) is
// the SVD's pseudo-inverse. (Eigen's SelfAdjointEigenSolver, tridiagonal QR, instead of the JacobiSVD of K it
// replaced: measured 48 x 48 on Bricard, see tests/redundant_constraints_test.cpp.) null K = {0} x null A^T when M is positive definite on null A, so qdd is unique and the least-norm z
// has the least-norm lambda: the same multipliers as schur's, computed without forming M^-1 or S, and
// without needing M positive definite (only on null A, as kkt's LU path). Independent of schur's path,
// so kkt = schur on a redundant problem is a check, not an identity. Costs a symmetric eigen-decomposition of
// n + m rows.
class MinimumNormSaddlePoint final : public RedundantConstraintSolver {
 public:
  MinimumNormSaddlePoint(int n, int m, int r);
  // last_residual(): |rhs_perp| / (|rhs| + s_max |z|).
  void solve(const ModelTerms& terms, const Vec& f, const Vec& gamma, const std::string& who, Vec& qdd,
             Vec& lambda) override;

 private:
  int n_, m_, max_rank_;
  Mat K_;
  Eigen::SelfAdjointEigenSolver<Mat> eig_;  // of the tridiagonal form of K: |eigenvalues| = K's singular values
  Mat Q_, V_;                                // K = Q T Q^T, eigenvectors V = Q W
  Vec hcoeffs_, diag_, subdiag_, work_;
  std::vector<int> order_;                   // eigenvalues by decreasing magnitude
  Vec rhs_, c_, z_;
};

// One line, the same for both paths.
[[noreturn]] void throw_inconsistent(const std::string& who, int rank, int rows, double residual);

}  // namespace clm
