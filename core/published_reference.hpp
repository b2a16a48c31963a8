// Values a benchmark's authors published for one of its problems: the state at one time t, computed by
// them at very tight tolerances for the problem's default parameters and initial state (the Bari test set's
// reference solutions [Bari-testset]). A run of that problem with those parameters and that initial state
// to t_end = t is measured against them (reference_source "published" in /summary, and `clmbench run`
// prints the published value, the computed one and the digits they share, component by component).
//
// A problem supplies them as static members, detected at compile time (core/problem.hpp):
//   static constexpr double kReferenceTime;                 the time of the values
//   static constexpr std::array<double, n> kReferenceQ, kReferenceQd;
//   static constexpr std::array<double, m> kReferenceLambda;  optional; in the suite's sign convention
//   static constexpr const char* kReferenceSource;          a key of docs/references.md, e.g. "Bari-testset"
//   static constexpr const char* kReferenceDescription;     how the values were computed
#pragma once

#include <string>

#include "core/types.hpp"

namespace clm {

struct PublishedReference {
  std::string source;       // docs/references.md key
  std::string description;  // "PSIDE, rtol = atol = 1e-14"
  double t = 0;
  Vec q, qd, lambda;  // lambda empty when none was published
};

}  // namespace clm
