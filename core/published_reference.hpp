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

#include <functional>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace clm {

struct PublishedReference {
  std::string source;       // docs/references.md key
  std::string description;  // "PSIDE, rtol = atol = 1e-14"
  double t = 0;
  Vec q, qd, lambda;  // lambda empty when none was published
};

// A multibody benchmark's reference point (the IFToMM library's P1 of A01, P3 of A04, B0 of A02
// [IFToMM-library]). The library measures a solution's accuracy on this point's trajectory, against its limits
// (1e-1 and, for high accuracy, 1e-3, in the units of q), so a run with a reference (closed form or reference
// run) reports the largest distance of the point from it (/summary reference_point_error_max). A problem names
// it with static members, either as coordinates of q that are its position:
//   static constexpr const char* kReferencePointName = "P1";
//   static constexpr std::array kReferencePointCoordinates = {0, 1};   indices into q
// or as a function of q (a point on a body in body coordinates, A02's B0):
//   static constexpr const char* kReferencePointName = "B0";
//   static constexpr std::array<const char*, 2> kReferencePointComponents = {"x", "y"};
//   static constexpr const char* kReferencePointUnit = "m";
//   void reference_point_position(const Vec& q, Vec& p) const;   p sized to the components; no allocation
struct ReferencePoint {
  std::string name;
  std::vector<int> coordinates;         // the coordinate form; empty for the function form
  std::vector<std::string> components;  // the function form's component names
  std::string unit;                     // the function form's unit
  std::function<void(const Vec& q, Vec& p)> position;  // the function form
  int size() const { return position ? int(components.size()) : int(coordinates.size()); }
  // p (sized size()) := the point at q.
  void evaluate(const Vec& q, Vec& p) const {
    if (position) {
      position(q, p);
    } else {
      for (int k = 0; k < int(coordinates.size()); ++k) p[k] = q[coordinates[k]];
    }
  }
};

}  // namespace clm
