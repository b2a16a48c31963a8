// The double-valued view of a problem that formulations work with (Pinocchio-style: the Model is
// immutable and shareable; every mutable buffer lives in a ModelWorkspace made once per run).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/types.hpp"

namespace clm {

class RestrictedLagrangian;  // core/restricted_lagrangian.hpp (fernandez_bloch)

// What evaluate() should compute; the hot path asks only for what it needs.
enum ModelTerm : unsigned {
  kMassMatrix = 1u << 0,      // M(q)
  kBias = 1u << 1,            // c(q, qd) = Mdot qd - 1/2 d/dq(qd^T M qd) + dV/dq   (seed's B + G)
  kForce = 1u << 2,           // F(t, q, qd)
  kConstraintJacobian = 1u << 3,  // A(q)
  kConstraintBias = 1u << 4,  // Adot qd = d/dq(A(q) qd) qd
  kConstraintValue = 1u << 5,  // h(q), holonomic problems only
  kEnergy = 1u << 6,          // T + V of the original Lagrangian
  // C = [Phi], the Lagrangian derivative of Phi = A(q) qd (seed 004, vakonomic model):
  // C_aj = sum_k (d_k A_aj - d_j A_ak) qd_k. Zero for holonomic constraints (second derivatives of h
  // commute). Not part of kDynamics/kAll: only vakonomic and added_mass ask for it.
  kConstraintCurvature = 1u << 7,
  kDynamics = kMassMatrix | kBias | kForce | kConstraintJacobian | kConstraintBias | kConstraintValue,
  kAll = kDynamics | kEnergy,
};

// Outputs of Model::evaluate, sized once by Model::make_terms().
struct ModelTerms {
  Mat M;
  Vec c;
  Vec F;
  Mat A;
  Vec Adot_qd;
  Vec h;  // empty for Pfaffian problems
  Mat C;  // m x n, [Phi] (kConstraintCurvature); sized on the first request, so make_terms() leaves it empty
  double kinetic = 0, potential = 0;
  double energy() const { return kinetic + potential; }
};

struct SubstitutedTerms;  // core/substitution.hpp (substituted)

// Per-run scratch space of a Model (autodiff buffers); opaque to callers.
struct ModelWorkspace {
  virtual ~ModelWorkspace() = default;
};

class Model {
 public:
  virtual ~Model() = default;

  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual int n() const = 0;  // coordinates
  virtual int m() const = 0;  // constraint rows
  virtual bool holonomic() const = 0;
  // Resolved parameter values, in declaration order.
  virtual std::vector<std::pair<std::string, double>> parameters() const = 0;

  virtual std::unique_ptr<ModelWorkspace> make_workspace() const = 0;
  ModelTerms make_terms() const;

  // The hot path: fills the requested terms. No heap allocation for fixed-size problems.
  virtual void evaluate(double t, const Vec& q, const Vec& qd, unsigned what, ModelWorkspace& ws,
                        ModelTerms& out) const = 0;

  // Natural null-space basis S(q) (A S = 0) and Sdot v = d/dt(S) v along qd = S v, when the problem has one.
  virtual bool has_velocity_basis() const { return false; }
  virtual void velocity_basis(const Vec& q, const Vec& v, ModelWorkspace& ws, Mat& S, Vec& Sdot_v) const;

  // The `substituted` formulation (seed 002's mistake; core/substitution.hpp): indices of the velocities the
  // problem eliminates (empty when it declares none), and M_c, c_c, S of L_c(q, v = qd_I) at (q, v).
  virtual std::vector<int> eliminated_velocities() const { return {}; }
  virtual void substituted_terms(const Vec& /*q*/, const Vec& /*v*/, SubstitutedTerms& /*out*/) const {
    throw InputError("substituted: problem " + name() + " declares no eliminated velocities");
  }

  virtual void default_initial(Vec& q0, Vec& qd0) const = 0;

  // The Fernandez-Bloch restricted Lagrangian L~ = L - Phi_a v^a (seed 003; core/restricted_lagrangian.hpp):
  // a fresh evaluator (it owns its buffers) or nullptr where the model cannot supply one.
  virtual std::shared_ptr<RestrictedLagrangian> make_restricted_lagrangian() const { return nullptr; }

  // Exact reference motion from consistent (q0, qd0) where the problem knows one; false otherwise.
  virtual bool closed_form(double /*t*/, const Vec& /*q0*/, const Vec& /*qd0*/, Vec& /*q*/, Vec& /*qd*/) const {
    return false;
  }
  // Exact multiplier lambda(q, qd) on the constraint manifold where known; false otherwise.
  virtual bool closed_form_multiplier(const Vec& /*q*/, const Vec& /*qd*/, Vec& /*lambda*/) const { return false; }
};

}  // namespace clm
