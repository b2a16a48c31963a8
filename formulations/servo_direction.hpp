// The servo-direction capability (used by the servo formulation): the covector fields B(q) (m x n) along
// which a problem's constraints may be realized by control forces B^T lambda instead of the ideal reaction
// A^T lambda (Beghin's servo constraints [Beghin-1922], [seed-004, "Servo constraints"]). A problem offers
// named fields through two optional members:
//   static constexpr std::array<const char*, K> kServoDirections = {"control_torque", ...};
//   template <class T> void servo_direction(const VecN<T,kDof>& q, MatN<T,kConstraints,kDof>& B, int which) const;
// `which` indexes kServoDirections. B enters the equations undifferentiated (M qdd + c = F + B^T lambda,
// A qdd + Adot qd = 0), so only the double instance is used; the template keeps the problem's physics in
// one scalar-generic form. The field "constraint" (B = A, the ideal reaction) needs no member: every
// problem with constraints has it, so servo runs on every Pfaffian or holonomic problem.
//
// Reached through Model::capability<ServoDirections>() (null when the problem offers no field of its own);
// attached when the problem is registered (runs/problem_capabilities.hpp, add_servo_directions).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/problem.hpp"

namespace clm {

// The name of the ideal-reaction field B = A, accepted for every problem.
inline constexpr const char* kServoConstraintDirection = "constraint";

template <class P>
concept HasServoDirections = requires(const P& p, const VecN<double, P::kDof>& q,
                                      MatN<double, P::kConstraints, P::kDof>& B) {
  P::kServoDirections;
  p.servo_direction(q, B, 0);
};

class ServoDirections : public Capability {
 public:
  struct Workspace {
    virtual ~Workspace() = default;
  };
  // The problem's fields, in the order of `which`.
  virtual std::vector<std::string> names() const = 0;
  virtual std::unique_ptr<Workspace> make_workspace() const = 0;
  // B(q) of field `which` into B (m x n, sized by the caller). No heap allocation.
  virtual void evaluate(int which, const Vec& q, Workspace& ws, Mat& B) const = 0;
};

template <Problem P>
class ProblemServoDirections final : public ServoDirections {
 public:
  static constexpr int N = P::kDof;
  static constexpr int C = P::kConstraints;

  explicit ProblemServoDirections(const P& p) : p_(p), n_(p_.dof()), m_(p_.constraints()) {}

  struct Buffers : Workspace {
    VecN<double, N> q;
    MatN<double, C, N> B;
  };

  std::vector<std::string> names() const override {
    return std::vector<std::string>(P::kServoDirections.begin(), P::kServoDirections.end());
  }
  std::unique_ptr<Workspace> make_workspace() const override {
    auto ws = std::make_unique<Buffers>();
    ws->q.resize(n_);
    ws->B.resize(m_, n_);
    return ws;
  }
  void evaluate(int which, const Vec& q, Workspace& base, Mat& B) const override {
    auto& ws = static_cast<Buffers&>(base);
    ws.q = q;
    p_.template servo_direction<double>(ws.q, ws.B, which);
    B = ws.B;
  }

 private:
  P p_;
  int n_, m_;
};

// Registration: attaches the capability when P offers servo directions.
template <Problem P>
void add_servo_directions(Model& model, const P& p) {
  if constexpr (HasServoDirections<P>)
    model.add_capability<ServoDirections>(std::make_shared<ProblemServoDirections<P>>(p));
}

}  // namespace clm
