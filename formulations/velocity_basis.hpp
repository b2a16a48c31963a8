// The natural null-space basis capability (used by the nullspace formulation): S(q) with A S = 0 and
// Sdot v = d/dt(S) v along qd = S v, from a problem's optional templated member
//   template <class T> void velocity_basis(const VecN<T,kDof>& q, MatN<T,kDof,Dynamic>& S) const;
// (core/problem.hpp, HasVelocityBasis), differentiated along qd by one Jet<1> pass.
//
// Reached through Model::capability<VelocityBasis>() (null when the problem has none); attached when the
// problem is registered (runs/problem_capabilities.hpp, add_velocity_basis below).
#pragma once

#include <ceres/jet.h>

#include <memory>

#include "core/model.hpp"
#include "core/problem.hpp"

namespace clm {

class VelocityBasis : public Capability {
 public:
  // Per-run buffers of evaluate() (one per formulation; evaluate() does not touch the heap).
  struct Workspace {
    virtual ~Workspace() = default;
  };
  virtual std::unique_ptr<Workspace> make_workspace() const = 0;
  // S (n x (n - m)) and Sdot_v (n) at (q, v).
  virtual void evaluate(const Vec& q, const Vec& v, Workspace& ws, Mat& S, Vec& Sdot_v) const = 0;
};

template <Problem P>
class ProblemVelocityBasis final : public VelocityBasis {
 public:
  static constexpr int N = P::kDof;
  using Jet1 = ceres::Jet<double, 1>;

  explicit ProblemVelocityBasis(const P& p) : p_(p), n_(p_.dof()), m_(p_.constraints()) {}

  struct Buffers : Workspace {
    VecN<double, N> q, qd;
    VecN<Jet1, N> q1;
    MatN<double, N, Eigen::Dynamic> S;
    MatN<Jet1, N, Eigen::Dynamic> S1;
  };

  std::unique_ptr<Workspace> make_workspace() const override {
    auto ws = std::make_unique<Buffers>();
    ws->q.resize(n_);
    ws->qd.resize(n_);
    ws->q1.resize(n_);
    ws->S.resize(n_, n_ - m_);
    ws->S1.resize(n_, n_ - m_);
    return ws;
  }

  void evaluate(const Vec& q, const Vec& v, Workspace& base, Mat& S, Vec& Sdot_v) const override {
    auto& ws = static_cast<Buffers&>(base);
    ws.q = q;
    p_.template velocity_basis<double>(ws.q, ws.S);
    ws.qd.noalias() = ws.S * v;
    for (int i = 0; i < n_; ++i) {
      ws.q1[i] = Jet1(q[i]);
      ws.q1[i].v[0] = ws.qd[i];
    }
    p_.template velocity_basis<Jet1>(ws.q1, ws.S1);
    const int k = n_ - m_;
    for (int i = 0; i < n_; ++i) {
      double acc = 0;
      for (int j = 0; j < k; ++j) {
        S(i, j) = ws.S1(i, j).a;
        acc += ws.S1(i, j).v[0] * v[j];
      }
      Sdot_v[i] = acc;
    }
  }

 private:
  P p_;
  int n_, m_;
};

// Registration: attaches the capability when P has a velocity basis (a mechanism file: when it writes one).
template <Problem P>
void add_velocity_basis(Model& model, const P& p) {
  if constexpr (HasVelocityBasis<P>)
    if (provides_velocity_basis(p)) model.add_capability<VelocityBasis>(std::make_shared<ProblemVelocityBasis<P>>(p));
}

}  // namespace clm
