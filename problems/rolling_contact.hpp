// The planar contact kinematics several problems share: a blade or wheel axle that cannot move sideways, and
// a wheel rolling without slipping. One expression per relation, templated over the scalar type like the
// problems that call them.
#pragma once

#include <cmath>

namespace clm {

// n(theta) = (-sin theta, cos theta), the direction across a blade (or wheel axle) of heading theta, which its
// contact point cannot move along: into out(0), out(1) (a row of A, or a column of a frame).
template <class T, class Out>
void blade_normal(const T& theta, Out&& out) {
  using std::cos;
  using std::sin;
  out(0) = -sin(theta);
  out(1) = cos(theta);
}

// e(theta) = (cos theta, sin theta), the direction along a blade of heading theta (the motion it allows):
// into out(0), out(1).
template <class T, class Out>
void blade_direction(const T& theta, Out&& out) {
  using std::cos;
  using std::sin;
  out(0) = cos(theta);
  out(1) = sin(theta);
}

// A wheel of radius R rolling without slipping, contact point (q_0, q_1), heading `heading`, rotation angle
// q_wheel: (xd, yd) = R (cos heading, sin heading) qd_wheel, the two rows
//   A = [1 0 .. -R cos(heading) ..; 0 1 .. -R sin(heading) ..]   (column `wheel`; zero elsewhere).
template <class T, class Matrix>
void rolling_wheel_rows(const T& heading, double R, int wheel, Matrix& A) {
  using std::cos;
  using std::sin;
  A.setZero();
  A(0, 0) = T(1.0);
  A(1, 1) = T(1.0);
  A(0, wheel) = -R * cos(heading);
  A(1, wheel) = -R * sin(heading);
}

// The signed chord travelled at speed v in time t while the heading turns at a constant rate by 2 half:
// v t sinc(half), the form that stays accurate as the rate goes to 0 and is exact at 0 (the closed-form
// circles of the rolling wheel).
inline double turning_chord(double v, double t, double half) {
  return v * t * (half == 0 ? 1.0 : std::sin(half) / half);
}

}  // namespace clm
