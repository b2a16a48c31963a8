// The servo-direction capability (used by the servo formulation): the covector fields B(q) (m x n) along
// which a problem's constraints may be realized by control forces B^T lambda instead of the ideal reaction
// A^T lambda (Beghin's servo constraints [Beghin-1922], [seed-004, "Servo constraints"]). A problem offers
// named fields through two optional members:
//   static constexpr std::array<const char*, K> kServoDirections = {"control_torque", ...};
//   template <class T> void servo_direction(const VecN<T,kDof>& q, MatN<T,kConstraints,kDof>& B, int which) const;
// `which` indexes kServoDirections. B enters the equations undifferentiated (M qdd + c = F + B^T lambda,
// A qdd + Adot qd = 0), so the rhs uses the double instance; the exact Jacobian (jacobian = autodiff) needs
// dB/dq, one dual-number pass (ceres::Jet<double, 1>) per coordinate through the same template. The field "constraint" (B = A, the ideal reaction) needs no member: every
// problem with constraints has it, so servo runs on every Pfaffian or holonomic problem.
//
// Reached through Model::capability<ServoDirections>() (null when the problem offers no field of its own);
// attached when the problem is registered (runs/problem_capabilities.hpp, add_servo_directions).
#pragma once

#include <ceres/jet.h>

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
  // dB/dq_l of field `which` into dB[l], l = 0..n-1 (each m x n, sized by the caller). No heap allocation.
  virtual void derivative(int which, const Vec& q, Workspace& ws, std::vector<Mat>& dB) const = 0;
};

template <Problem P>
class ProblemServoDirections final : public ServoDirections {
 public:
  static constexpr int N = P::kDof;
  static constexpr int C = P::kConstraints;

  explicit ProblemServoDirections(const P& p) : p_(p), n_(p_.dof()), m_(p_.constraints()) {}

  using Dual = ceres::Jet<double, 1>;
  struct Buffers : Workspace {
    VecN<double, N> q;
    MatN<double, C, N> B;
    VecN<Dual, N> qj;
    MatN<Dual, C, N> Bj;
  };

  std::vector<std::string> names() const override {
    return std::vector<std::string>(P::kServoDirections.begin(), P::kServoDirections.end());
  }
  std::unique_ptr<Workspace> make_workspace() const override {
    auto ws = std::make_unique<Buffers>();
    ws->q.resize(n_);
    ws->B.resize(m_, n_);
    ws->qj.resize(n_);
    ws->Bj.resize(m_, n_);
    return ws;
  }
  void evaluate(int which, const Vec& q, Workspace& base, Mat& B) const override {
    auto& ws = static_cast<Buffers&>(base);
    ws.q = q;
    p_.template servo_direction<double>(ws.q, ws.B, which);
    B = ws.B;
  }
  void derivative(int which, const Vec& q, Workspace& base, std::vector<Mat>& dB) const override {
    auto& ws = static_cast<Buffers&>(base);
    for (int l = 0; l < n_; ++l) {
      for (int i = 0; i < n_; ++i) ws.qj[i] = Dual(q[i]);  // value only (Jet(a, k) would seed e_k)
      ws.qj[l].v[0] = 1.0;
      p_.template servo_direction<Dual>(ws.qj, ws.Bj, which);
      for (int r = 0; r < m_; ++r)
        for (int c = 0; c < n_; ++c) dB[l](r, c) = ws.Bj(r, c).v[0];
    }
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
