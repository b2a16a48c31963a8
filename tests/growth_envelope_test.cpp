// The growth exponent of an error envelope (runs/growth_envelope.hpp) on errors whose growth is known
// by construction, and on integrators whose long-time energy behaviour is textbook.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "runs/growth_envelope.hpp"

using namespace clm;

namespace {

// e(t) sampled every dt up to t_end.
template <class F>
double exponent_of(F e, double dt, double t_end) {
  GrowthEnvelope g;
  for (long k = 0; k * dt <= t_end; ++k) g.add(k * dt, e(k * dt));
  return g.exponent();
}

}  // namespace

TEST(GrowthEnvelope, ExponentsOfKnownGrowth) {
  // Bounded, oscillating: the running max reaches 1 within the first period and stays: exactly 0.
  EXPECT_NEAR(exponent_of([](double t) { return std::abs(std::sin(t)); }, 0.1, 1e4), 0.0, 1e-6);  // measured 1.1e-7: samples creep closer to the peak
  // An oscillation under a growing envelope: the envelope's power, not the oscillation's.
  EXPECT_NEAR(exponent_of([](double t) { return t * std::abs(std::sin(3 * t)); }, 0.05, 1e4), 1.0, 2e-3);  // measured 1.0000
  EXPECT_NEAR(exponent_of([](double t) { return std::sqrt(t); }, 0.1, 1e4), 0.5, 1e-12);
  EXPECT_NEAR(exponent_of([](double t) { return 1e-14 * t * t; }, 1.0, 1e5), 2.0, 1e-12);
}

TEST(GrowthEnvelope, RandomWalkIsAboutOneHalf) {
  // |sum of N(0, 1) steps|: its running max grows like sqrt(t). One path's exponent scatters widely (0.28 to
  // 0.74 over seeds 1..12 at 1e6 steps), so the test takes the mean over 12 paths.
  double sum = 0;
  for (int seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> step(0, 1);
    GrowthEnvelope g;
    double x = 0;
    for (long k = 1; k <= 200000; ++k) {
      x += step(rng);
      g.add(double(k), std::abs(x));
    }
    sum += g.exponent();
  }
  EXPECT_NEAR(sum / 12, 0.5, 0.1);  // measured 0.499; the mean's scatter is about 0.04
}

TEST(GrowthEnvelope, NaNWhenItCannotBeMeasured) {
  EXPECT_TRUE(std::isnan(exponent_of([](double t) { return t; }, 0.1, 5.0)));  // under two decades after t = 0.1
  EXPECT_TRUE(std::isnan(exponent_of([](double) { return 0.0; }, 0.1, 1e4)));  // exactly zero: nothing grows
  GrowthEnvelope g;
  EXPECT_TRUE(std::isnan(g.exponent()));  // no samples
  g.add(1, 1);
  g.add(1000, std::nan(""));  // the run broke down
  g.add(2000, 1);
  EXPECT_TRUE(std::isnan(g.exponent()));
}
