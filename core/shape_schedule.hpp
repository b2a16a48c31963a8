// Prescribed shape: the actuated coordinates q_a(t) of an under-actuated mechanism given as functions of time
// (issue 13; [seed-000, eq. 2.13-2.16]). A run's [shape] section names, per actuated coordinate of the problem,
// a ShapeFunction; the formulations that prescribe the shape (prescribed_shape, kinematic) read the values,
// rates and accelerations from the ShapeSchedule in FormulationOptions::shape (docs/design.md section 1).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace clm {

// One prescribed actuated coordinate q_a(t) (issue 13 items 1-2): a sum of terms from a fixed set, or samples.
// Values, rates and accelerations are exact for the expressions (closed forms of each term) and those of the
// interpolating spline for samples; evaluation does no heap allocation (it runs inside a formulation's rhs).
class ShapeFunction {
 public:
  // Grammar: a sum of terms joined by + or -, spaces ignored: a constant `c`; a power `c*t^k` (integer k 1..9;
  // `c*t` for k = 1, `t` alone); `A*sin(w*t + p)`, `A*cos(w*t + p)` (A*, + p optional: `sin(2*t)`);
  // or `file:PATH` (two columns t, value, whitespace or comma separated; a C2 cubic spline; a run that leaves
  // the file's time range is an error), optionally `file:PATH@sha256:HEX`, the contents it must have (a
  // regular file of at most 64 MiB, |t|, |value| <= 1e150). Throws InputError with one line naming the bad text.
  static ShapeFunction parse(const std::string& text);
  double value(double t) const;
  double rate(double t) const;          // d/dt
  double acceleration(double t) const;  // d2/dt2
  const std::string& text() const;      // as given
  // What a resolved configuration records: the text, or for samples "file:PATH@sha256:HEX", the contents
  // the result was computed from (issue 21). Parsed again, it refuses a file whose contents changed since.
  std::string recorded_text() const;
  const std::string& file() const { return file_; }      // samples: the path; else empty
  const std::string& sha256() const { return sha256_; }  // samples: of the file's bytes; else empty
  const std::vector<double>& sample_times() const { return knots_; }    // samples; else empty
  const std::vector<double>& sample_values() const { return values_; }  // samples; else empty

  // The time range the function is defined on: (-inf, inf) for an expression, the file's first and last
  // sample time for samples. value/rate/acceleration outside it throw NumericalFailure (the run ends
  // "failed"); the runner refuses a run whose [0, t_end] is not inside it before it starts.
  double t_min() const { return t_min_; }
  double t_max() const { return t_max_; }

 private:
  // A*sin(w t + p) or A*cos(w t + p).
  struct Harmonic {
    double amplitude = 1, frequency = 1, phase = 0;
    bool cosine = false;
  };
  // derivative order 0, 1, 2 of the expression, or of the spline.
  double evaluate(double t, int order) const;
  double spline(double t, int order) const;

  std::string text_;
  double polynomial_[10] = {};  // coefficient of t^k, k = 0..9 (the constant is k = 0)
  int degree_ = 0;
  std::vector<Harmonic> harmonics_;
  // Samples (file:PATH): knots t_i, values y_i and the spline's second derivatives y''_i (not-a-knot ends,
  // so the interpolation error is O(h^4) up to the ends, not the O(h^2) of a natural spline's).
  std::vector<double> knots_, values_, second_;
  std::string file_, sha256_;
  double t_min_ = -INFINITY, t_max_ = INFINITY;
};

struct ShapeSchedule {
  std::vector<int> coordinates;          // indices into q of the prescribed (actuated) coordinates, ascending
  std::vector<ShapeFunction> functions;  // one per coordinate
  bool empty() const { return coordinates.empty(); }
  // qa, qda, qdda must be sized coordinates.size() by the caller: no allocation.
  void evaluate(double t, Vec& qa, Vec& qda, Vec& qdda) const;
};

}  // namespace clm
