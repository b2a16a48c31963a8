// Closed planar chain: n uniform bars (mass m, length L) in absolute angles q = (theta_1, ..., theta_n),
// the first bar pinned at the origin, the tip of the last pinned at the ground point (gx, gy): m = 2
// holonomic constraints, n - 2 degrees of freedom. The size-scaling problem (n set at run time).
//
// Joint j (0-based) is p_j = L sum_{k<=j} e(theta_k); the centre of bar j is
// c_j = L (sum_{k<j} e(theta_k) + 1/2 e(theta_j)), so with a_jk = 1 (k < j), 1/2 (k = j), 0 (k > j)
//   T = m/2 sum_j |c_j'|^2 + I/2 sum_j theta_j'^2,   |c_j'|^2 = L^2 sum_{k,l} a_jk a_jl cos(theta_k - theta_l) thd_k thd_l,
//   M_kl = m L^2 mu_kl cos(theta_k - theta_l),  mu_kl = sum_j a_jk a_jl = n - max(k,l) - 1/2 (k != l, 0-based),
//   M_kk = m L^2 (n - k - 3/4) + I = m L^2 (n - k - 2/3)   with I = m L^2 / 12,
//   V = m g sum_j y(c_j) = m g L sum_k (n - k - 1/2) sin(theta_k),
//   h = L sum_k e(theta_k) - (gx, gy).
// Differentiating T (M_kl depends only on theta_k - theta_l) gives the known planar-chain bias
//   c_k = m L^2 sum_l mu_kl sin(theta_k - theta_l) thd_l^2 + m g L (n - k - 1/2) cos(theta_k),
// which analytic_terms() evaluates in O(n^2) with 2n trigonometric calls; tests check it against autodiff.
#pragma once

#include <vector>

#include <algorithm>

#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "core/problem.hpp"
#include "problems/point_spec.hpp"

namespace clm {

struct ClosedChain {
  static constexpr const char* kName = "closed_chain";
  static constexpr const char* kDescription =
      "n uniform bars in absolute angles, root pinned at the origin, tip pinned at (gx, gy); size-scaling problem";
  static constexpr int kDof = Eigen::Dynamic;
  static constexpr int kConstraints = 2;
  static constexpr ConstraintKind kConstraintKind = ConstraintKind::kHolonomic;
  static constexpr int kMaxBars = 1000;

  double n = 8;
  double m = 1.0;
  double L = 0.25;
  double g = 9.81;
  // Anchor at 0.7 n L to the right of the root: a chain sagging under gravity.
  double gx = 1.4;
  double gy = 0.0;
  static constexpr std::array kParameters = {
      ParameterSpec<ClosedChain>{"n", &ClosedChain::n, "number of bars (integer, 2 .. 1000)"},
      ParameterSpec<ClosedChain>{"m", &ClosedChain::m, "mass of one bar [kg]"},
      ParameterSpec<ClosedChain>{"L", &ClosedChain::L, "length of one bar [m]"},
      ParameterSpec<ClosedChain>{"g", &ClosedChain::g, "gravity [m/s^2], along -y"},
      ParameterSpec<ClosedChain>{"gx", &ClosedChain::gx, "x of the ground point the tip is pinned to [m]"},
      ParameterSpec<ClosedChain>{"gy", &ClosedChain::gy, "y of the ground point the tip is pinned to [m]"},
  };

  // Runtime size; a stand-in of 2 for an invalid n, which validate() refuses before anything is sized by it.
  // Points of interest (problems/point_spec.hpp): the root, then the ends of bars (every joint up to 16 bars,
  // else 16 evenly spaced, the pinned tip last), in chain order, so that an animation draws the chain.
  const std::vector<PointSpec>& points() const {
    if (points_.empty()) {
      const int bars = dof(), shown = std::min(bars, 16);
      points_.push_back({"root", "m"});
      for (int i = 1; i <= shown; ++i) {
        const int k = static_cast<int>(std::lround(1.0 + (bars - 1.0) * (i - 1.0) / std::max(shown - 1, 1)));
        if (!picks_.empty() && k == picks_.back()) continue;
        picks_.push_back(k);
        points_.push_back({"joint_" + std::to_string(k), "m"});
      }
    }
    return points_;
  }
  void point_positions(const Vec& q, Vec& out) const {  // after points(); no allocation
    out[0] = out[1] = 0;
    double x = 0, y = 0;
    std::size_t next = 0;
    Eigen::Index at = 2;
    for (int j = 0; j < q.size() && next < picks_.size(); ++j) {
      x += L * std::cos(q[j]);
      y += L * std::sin(q[j]);
      if (picks_[next] == j + 1) {
        out[at++] = x;
        out[at++] = y;
        ++next;
      }
    }
  }
  int dof() const { return valid_count() ? static_cast<int>(n) : 2; }
  // Names and units of q (HDF5 column names; tools/plot.py labels): the absolute bar angles.
  std::vector<std::string> coordinate_names() const {
    std::vector<std::string> names;
    for (int i = 1; i <= dof(); ++i) names.push_back("theta_" + std::to_string(i));
    return names;
  }
  std::vector<std::string> coordinate_units() const { return std::vector<std::string>(dof(), "rad"); }
  int constraints() const { return 2; }
  bool valid_count() const { return n >= 2 && n <= kMaxBars && n == std::floor(n); }
  void validate() const {
    if (!valid_count())
      throw InputError("closed_chain: parameter n must be an integer in [2, " + std::to_string(kMaxBars) + "]");
    if (!(m > 0) || !std::isfinite(m)) throw InputError("closed_chain: parameter m must be > 0");
    if (!(L > 0) || !std::isfinite(L)) throw InputError("closed_chain: parameter L must be > 0");
    if (!std::isfinite(g)) throw InputError("closed_chain: parameter g must be finite");
    if (!std::isfinite(gx)) throw InputError("closed_chain: parameter gx must be finite");
    if (!std::isfinite(gy)) throw InputError("closed_chain: parameter gy must be finite");
    // Strictly inside the reach n L (at |anchor| = n L the chain is straight and A loses rank).
    if (!(std::hypot(gx, gy) < (1 - 1e-9) * n * L))
      throw InputError("closed_chain: anchor (gx, gy) is unreachable: |(gx, gy)| = " +
                       std::to_string(std::hypot(gx, gy)) + " must be < n L = " + std::to_string(n * L));
  }

  template <class T>
  void mass_matrix(const VecN<T, Eigen::Dynamic>& q, MatN<T, Eigen::Dynamic, Eigen::Dynamic>& M) const {
    using std::cos;
    const int N = dof();
    const double mL2 = m * L * L;
    for (int k = 0; k < N; ++k) {
      M(k, k) = T(mL2 * (N - k - 2.0 / 3.0));
      for (int l = k + 1; l < N; ++l) {
        M(k, l) = (mL2 * (N - l - 0.5)) * cos(q[k] - q[l]);
        M(l, k) = M(k, l);
      }
    }
  }
  template <class T>
  T potential(const VecN<T, Eigen::Dynamic>& q) const {
    using std::sin;
    const int N = dof();
    T V(0.0);
    for (int k = 0; k < N; ++k) V += (m * g * L * (N - k - 0.5)) * sin(q[k]);
    return V;
  }
  template <class T>
  void constraint(const VecN<T, Eigen::Dynamic>& q, VecN<T, 2>& h) const {
    using std::cos;
    using std::sin;
    T x(-gx), y(-gy);
    for (int k = 0; k < dof(); ++k) {
      x += L * cos(q[k]);
      y += L * sin(q[k]);
    }
    h[0] = x;
    h[1] = y;
  }

  // M and c in O(n^2) with 2n trigonometric calls and no heap allocation (M and c are sized by the
  // caller). The sines and cosines are parked in the outputs themselves: cos(theta_l) on the diagonal of
  // M and sin(theta_l) in c; the strictly lower triangle holds m L^2 mu_kl sin(theta_k - theta_l) until
  // c is summed, then receives the mirror of the upper triangle.
  // h = sum_j L e(theta_j) - (gx, gy), A = L (-sin theta_j; cos theta_j), Adot qd = -L sum_j e(theta_j) thetad_j^2.
  // Measured: autodiff's chunked Jet<8> passes cost ~8 trig calls per bar (16 us at n = 64); this, 2.
  void analytic_constraint_terms(const Vec& q, const Vec& qd, Mat& A, Vec& Adot_qd, Vec& h) const {
    const int N = dof();
    double hx = -gx, hy = -gy, ax = 0, ay = 0;
    for (int j = 0; j < N; ++j) {
      const double cj = std::cos(q[j]), sj = std::sin(q[j]), w2 = qd[j] * qd[j];
      A(0, j) = -L * sj;
      A(1, j) = L * cj;
      hx += L * cj;
      hy += L * sj;
      ax -= L * cj * w2;
      ay -= L * sj * w2;
    }
    h[0] = hx;
    h[1] = hy;
    Adot_qd[0] = ax;
    Adot_qd[1] = ay;
  }

  void analytic_terms(const Vec& q, const Vec& qd, Mat& M, Vec& c) const {
    const int N = dof();
    M.resize(N, N);  // no-op when already sized (the hot path)
    c.resize(N);
    const double mL2 = m * L * L;
    for (int l = 0; l < N; ++l) {
      M(l, l) = std::cos(q[l]);
      c[l] = std::sin(q[l]);
    }
    for (int l = 1; l < N; ++l) {
      const double coefficient = mL2 * (N - l - 0.5), cl = M(l, l), sl = c[l];
      for (int k = 0; k < l; ++k) {
        const double ck = M(k, k), sk = c[k];
        M(k, l) = coefficient * (ck * cl + sk * sl);  // C_kl cos(theta_k - theta_l)
        M(l, k) = coefficient * (sk * cl - ck * sl);  // C_kl sin(theta_k - theta_l)
      }
    }
    for (int k = 0; k < N; ++k) {
      double acc = m * g * L * (N - k - 0.5) * M(k, k);  // dV/dtheta_k
      for (int l = k + 1; l < N; ++l) acc += M(l, k) * qd[l] * qd[l];
      for (int l = 0; l < k; ++l) acc -= M(k, l) * qd[l] * qd[l];  // sin(theta_k - theta_l) = -sin(theta_l - theta_k)
      c[k] = acc;
    }
    for (int k = 0; k < N; ++k) {
      M(k, k) = mL2 * (N - k - 2.0 / 3.0);
      for (int l = k + 1; l < N; ++l) M(l, k) = M(k, l);
    }
  }

  // Polygon inscribed in a circular arc from the root to the anchor: consecutive bars turn by delta, and
  //   |sum_k e(theta_k)| L = L sin(n delta/2) / sin(delta/2) = d = |(gx, gy)|
  // (the Dirichlet kernel, decreasing from n at delta = 0 to 0 at delta = 2 pi/n) fixes delta by bisection.
  // The arc bulges downward. The angles are then perturbed (so the start is not a symmetric special case)
  // and projected back onto h = 0 by minimal-norm Gauss-Newton; the velocity is a smooth angular-rate
  // profile with its component along the rows of A removed (nonzero for n >= 3; n = 2 is rigid).
  void default_initial(Vec& q0, Vec& qd0) const {
    const int N = dof();
    q0.resize(N);
    qd0.resize(N);
    const double d = std::hypot(gx, gy);
    const double psi = d > 0 ? std::atan2(gy, gx) : 0.0;
    double lo = 0, hi = 2 * std::numbers::pi / N;
    auto reach = [&](double delta) {
      return delta == 0 ? N * L : L * std::sin(N * delta / 2) / std::sin(delta / 2);
    };
    for (int it = 0; it < 200 && hi - lo > 1e-16; ++it) {
      const double mid = 0.5 * (lo + hi);
      (reach(mid) > d ? lo : hi) = mid;
    }
    const double delta = 0.5 * (lo + hi);
    // Rotating clockwise from the chord direction puts the bulge on the side e(psi - pi/2); pick the side
    // whose bulge points down.
    const double side = std::cos(psi) >= 0 ? 1.0 : -1.0;
    for (int k = 0; k < N; ++k) {
      const double arc = psi - side * ((N - 1) / 2.0 - k) * delta;
      q0[k] = arc + 0.05 * std::sin(2 * std::numbers::pi * (k + 0.5) / N) * std::min(1.0, delta * N);
    }
    project_angles(q0);

    for (int k = 0; k < N; ++k) qd0[k] = std::sin(std::numbers::pi * (k + 1) / (N + 1)) + 0.3 * std::cos(0.7 * k);
    remove_constraint_component(q0, qd0);
  }

 private:
  // A = L [-sin theta_k ; cos theta_k] (2 x n): Gauss-Newton q -= A^T (A A^T)^{-1} h, 2 x 2 solves only.
  // Stops at |h| <= 1e-15 n L or when rounding stalls the decrease below 1e-11 n L.
  void project_angles(Vec& q) const {
    double previous = std::numeric_limits<double>::infinity();
    for (int it = 0; it < 100; ++it) {
      double hx = -gx, hy = -gy, a11 = 0, a12 = 0, a22 = 0;
      for (int k = 0; k < q.size(); ++k) {
        const double s = std::sin(q[k]), c = std::cos(q[k]);
        hx += L * c;
        hy += L * s;
        a11 += L * L * s * s;
        a12 += -L * L * s * c;
        a22 += L * L * c * c;
      }
      const double residual = std::hypot(hx, hy), scale = std::max(1.0, n * L);
      if (residual <= 1e-15 * scale || (residual <= 1e-11 * scale && residual > 0.5 * previous)) return;
      previous = residual;
      const double det = a11 * a22 - a12 * a12;
      if (!(std::abs(det) > 0)) throw InputError("closed_chain: default configuration is singular (straight chain)");
      const double zx = (a22 * hx - a12 * hy) / det, zy = (a11 * hy - a12 * hx) / det;
      for (int k = 0; k < q.size(); ++k) q[k] -= L * (-std::sin(q[k]) * zx + std::cos(q[k]) * zy);
    }
    throw InputError("closed_chain: default configuration did not converge onto the anchor (gx, gy)");
  }
  void remove_constraint_component(const Vec& q, Vec& qd) const {
    for (int pass = 0; pass < 2; ++pass) {  // a second pass cleans up rounding
      double r1 = 0, r2 = 0, a11 = 0, a12 = 0, a22 = 0;
      for (int k = 0; k < q.size(); ++k) {
        const double s = std::sin(q[k]), c = std::cos(q[k]);
        r1 += -L * s * qd[k];
        r2 += L * c * qd[k];
        a11 += L * L * s * s;
        a12 += -L * L * s * c;
        a22 += L * L * c * c;
      }
      const double det = a11 * a22 - a12 * a12;
      const double zx = (a22 * r1 - a12 * r2) / det, zy = (a11 * r2 - a12 * r1) / det;
      for (int k = 0; k < q.size(); ++k) qd[k] -= L * (-std::sin(q[k]) * zx + std::cos(q[k]) * zy);
    }
  }

 public:
  // points()'s, made once (public: the struct stays an aggregate of its parameters).
  mutable std::vector<PointSpec> points_;
  mutable std::vector<int> picks_;         // the bars whose ends they are (1-based)
};

}  // namespace clm
