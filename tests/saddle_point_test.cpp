// The fixed-size saddle-point kernels (formulations/saddle_point.hpp) against Eigen's dynamic-size
// PartialPivLU: bit-identical solutions (the shipped experiments depend on it), sizes 1 .. 12.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/formulation.hpp"
#include "formulations/saddle_point.hpp"

using namespace clm;

namespace {
bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
}
}  // namespace

TEST(SaddlePoint, FixedSizeKernelsAreBitIdenticalToEigen) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::bernoulli_distribution zero(0.2);
  for (int n = 1; n <= kMaxFixedSaddleSize + 2; ++n) {
    for (int trial = 0; trial < 200; ++trial) {
      Mat K(n, n);
      Vec b(n);
      for (int j = 0; j < n; ++j) {
        b[j] = zero(rng) ? 0.0 : u(rng);
        for (int i = 0; i < n; ++i) K(i, j) = zero(rng) ? 0.0 : u(rng) * std::pow(10.0, 3 * u(rng));
      }
      if (trial % 50 == 0 && n > 1) K.col(n - 1) = K.col(0);  // singular
      Eigen::PartialPivLU<Mat> lu(K);
      const Vec expect = lu.solve(b);
      SquareLuSolver s(n);
      s.matrix() = K;
      Vec x = b;
      s.solve_in_place(x);
      EXPECT_TRUE(same_bits(x, expect) || (!x.allFinite() && !expect.allFinite())) << "n = " << n << " trial " << trial;
      EXPECT_TRUE(same_bits(s.matrix().reshaped(), K.reshaped()));  // the matrix is left as filled
    }
  }
}

TEST(SaddlePoint, SolvesTheKktSystemWithCompliance) {
  const int n = 3, m = 2;
  ModelTerms t;
  t.M = Mat::Identity(n, n) * 2.0;
  t.A = Mat::Random(m, n);
  t.Adot_qd = Vec::Random(m);
  t.h = Vec::Random(m);
  const Vec f = Vec::Random(n), qd = Vec::Random(n);
  SaddlePointWorkspace ws(n, m);
  Vec x(n), mu(m);
  ConstraintStabilization stab{0.5, 2.0};
  ASSERT_TRUE(solve_saddle_point(t, f, qd, 0.25, stab, ws, x, mu));
  EXPECT_LT((t.M * x - t.A.transpose() * mu - f).norm(), 1e-13);
  const Vec g = -t.Adot_qd - 2 * 0.5 * t.A * qd - 4.0 * t.h;
  EXPECT_LT((t.A * x + 0.25 * mu - g).norm(), 1e-13);
}

TEST(SaddlePoint, FixedSizeCholeskyIsBitIdenticalToEigen) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int n = 1; n <= kMaxFixedCholeskySize + 2; ++n) {
    for (int trial = 0; trial < 300; ++trial) {
      Mat B(n, n);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) B(i, j) = u(rng) * std::pow(10.0, 2 * u(rng));
      Mat K = B * B.transpose();
      if (trial % 3 == 0) K.diagonal().array() += 1e-3;
      if (trial % 50 == 1) K(n - 1, n - 1) = -1;  // not positive definite
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < j; ++i) K(i, j) = u(rng);  // the upper triangle is not read
      Vec b(n);
      for (int i = 0; i < n; ++i) b[i] = trial % 7 == 0 && i % 2 ? 0.0 : u(rng);
      Eigen::LLT<Mat> llt(K);
      CholeskySolver s(n);
      const bool ok = s.compute(K);
      ASSERT_EQ(ok, llt.info() == Eigen::Success) << "n = " << n << " trial " << trial;
      if (!ok) continue;
      EXPECT_EQ(s.pivot_ratio(), pivot_ratio(llt.matrixLLT().diagonal().cwiseAbs2()));
      Vec expect = b;
      llt.solveInPlace(expect);
      Vec x = b;
      s.solve_in_place(x);
      EXPECT_TRUE(same_bits(x, expect)) << "n = " << n << " trial " << trial << "\n" << (x - expect).transpose();
    }
  }
}
