// The double-valued view of a problem that formulations work with (Pinocchio-style: the Model is
// immutable and shareable; every mutable buffer lives in a ModelWorkspace made once per run).
#pragma once

#include <memory>
#include <string>
#include <typeindex>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <Eigen/SparseCore>

#include "core/named_points.hpp"
#include "core/published_reference.hpp"
#include "core/types.hpp"

namespace clm {

// What evaluate() should compute; the hot path asks only for what it needs.
enum ModelTerm : unsigned {
  kMassMatrix = 1u << 0,      // M(q)
  kBias = 1u << 1,            // c(q, qd) = Mdot qd - 1/2 d/dq(qd^T M qd) + dV/dq   (seed's B + G)
                              //            + (Da - Da^T) qd for a gyroscopic term qd . a(q) in L
  kForce = 1u << 2,           // F(t, q, qd)
  kConstraintJacobian = 1u << 3,  // A(q)
  kConstraintBias = 1u << 4,  // Adot qd = d/dq(A(q) qd) qd; for time-dependent problems the whole bias of
                              // A qdd + bias = 0, time derivatives included (core/problem.hpp)
  kConstraintValue = 1u << 5,  // h(q, t) of the position rows (holonomic and mixed problems)
  kEnergy = 1u << 6,          // T + V of the original Lagrangian (and ModelTerms::gyroscopic = qd . a)
  // C = [Phi], the Lagrangian derivative of Phi = A(q) qd ([seed-004], vakonomic model):
  // C_aj = sum_k (d_k A_aj - d_j A_ak) qd_k. Zero for holonomic constraints (second derivatives of h
  // commute). Not part of kDynamics/kAll: only vakonomic and added_mass ask for it.
  kConstraintCurvature = 1u << 7,
  // The two partial derivatives of the Lagrangian L = 1/2 qd^T M(q) qd - V(q) (+ the gyroscopic term
  // qd . a(q) where a problem writes one) that the variational integrators need (rattle, verlet, dla,
  // nh_rattle: discrete Lagrangians, docs/design.md section 3). Not part of kDynamics/kAll.
  kLagrangianGradient = 1u << 8,  // dL/dq at (q, qd)
  kMomentum = 1u << 9,            // p = dL/dqd = M qd (+ a(q)); also fills M
  // b(q, t) of the velocity constraint A qd + b = 0 of a time-dependent problem (core/problem.hpp): dh/dt of a
  // rheonomic h(q, t), the affine term of A(q) qd + b(q, t) = 0. ModelTerms::b is empty (and this bit ignored)
  // for problems without explicit time dependence.
  kConstraintRate = 1u << 10,
  kDynamics = kMassMatrix | kBias | kForce | kConstraintJacobian | kConstraintBias | kConstraintValue | kConstraintRate,
  kAll = kDynamics | kEnergy,
};

// Outputs of Model::evaluate, sized once by Model::make_terms().
struct ModelTerms {
  Mat M;
  Vec c;
  Vec F;
  Mat A;
  Vec Adot_qd;
  Vec h;  // the position rows h(q, t), Model::position_rows() of them (empty for Pfaffian problems)
  Vec b;  // velocity constraint A qd + b = 0 (kConstraintRate); empty unless Model::time_dependent()
  Mat C;  // m x n, [Phi] (kConstraintCurvature); sized on the first request, so make_terms() leaves it empty
  Vec dL_dq;  // kLagrangianGradient
  Vec p;      // kMomentum
  double kinetic = 0, potential = 0;
  // qd . a(q), the part of L linear in qd (problems with a gyroscopic term; 0 otherwise), filled with kEnergy.
  // L = kinetic + gyroscopic - potential; it does no work, so it is not part of the energy.
  double gyroscopic = 0;
  // dV/dt at fixed q of a potential V(q, t) with explicit time dependence (kEnergy; 0 otherwise): the power the
  // explicit time dependence puts into the energy T + V (core/energy_balance.hpp).
  double potential_rate = 0;
  double energy() const { return kinetic + potential; }
};

using SparseMat = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

// The sparse form of the dynamics terms, for problems built from bodies and joints (core/problem.hpp,
// Model::has_sparse_terms): the same M, c, F, A, Adot qd and h as ModelTerms, with M block-diagonal (blocks
// of Model::sparse_block_size() coordinates, every block stored full) and A compressed column-major. Both
// patterns are fixed by Model::make_sparse_terms() (every entry a joint can touch is stored, zero or not),
// so Model::evaluate_sparse only overwrites values: no allocation, and a factorization's symbolic analysis
// done once per run stays valid. Time-independent holonomic problems only (b, C, energy are not here).
struct SparseModelTerms {
  SparseMat M;
  Vec c;
  Vec F;
  SparseMat A;
  Vec Adot_qd;
  Vec h;
};

// First derivatives of the dynamics terms with respect to the state (q, qd), for the Jacobians of
// formulations (IntegratorSettings::jacobian = "autodiff"): dM[l] = dM/dq_l (n x n), dA[l] = dA/dq_l (m x n),
// column l of dc_dq / dc_dqd = dc/dq_l / dc/dqd_l. dF_dq / dF_dqd (n x n, column l for q_l / qd_l): the
// generalized force's, sized only for a model that has one (has_generalized_force) and filled by
// Model::generalized_force_derivatives, apart, since F alone reads t.
// dbias_dq / dbias_dqd (m x n): the derivatives of the acceleration-level bias Adot qd (ModelTerms::Adot_qd),
// column l for q_l / qd_l; only the saddle-point formulations (kkt, schur) need them, so they are filled only
// when sized (make_derivatives(true)): penalty pays nothing for them. Sized once by Model::make_derivatives().
struct DynamicsDerivatives {
  std::vector<Mat> dM, dA;
  Mat dc_dq, dc_dqd;
  Mat dbias_dq, dbias_dqd;  // empty unless requested
  Mat dF_dq, dF_dqd;        // empty without a generalized force
};

// Per-run scratch space of a Model (autodiff buffers); opaque to callers.
struct ModelWorkspace {
  virtual ~ModelWorkspace() = default;
};

// A typed extension of a Model that only some formulations or commands use: the natural velocity basis
// (formulations/velocity_basis.hpp), the substitution of [seed-002] (formulations/substitution.hpp), the
// restricted Lagrangian with its transversal frame (formulations/restricted_lagrangian.hpp), the constraint
// analysis (analysis/constraint_analysis.hpp). Each interface derives from Capability and lives next to
// its user; the builders are templates over the Problem, instantiated where a problem is registered
// (runs/problem_capabilities.hpp). The Model stores them type-erased, keyed by the interface type,
// so the core Model does not grow a virtual method per formulation.
class Capability {
 public:
  virtual ~Capability() = default;
};

class Model {
 public:
  virtual ~Model() = default;

  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual int n() const = 0;  // coordinates
  virtual int m() const = 0;  // constraint rows
  // True when every row is a position row h(q, t) = 0 (m() > 0 or not: a problem without constraints says
  // true, as the zoo writes it). A mixed model (core/problem.hpp, kMixed) is neither holonomic nor Pfaffian:
  // ask position_rows() for what concerns the position rows.
  virtual bool holonomic() const = 0;
  // The number of position rows h(q, t) = 0, the first rows of A, b, the bias and lambda (ModelTerms::h has
  // this size): m() for a holonomic model, 0 for a Pfaffian one, 0 < m_h < m() for a mixed one.
  virtual int position_rows() const { return holonomic() ? m() : 0; }
  // The velocity rows A(q) qd + b = 0 that follow them: m() - position_rows().
  int velocity_rows() const { return m() - position_rows(); }
  // Both kinds of rows (docs/design.md section 1, "Mixed constraints").
  bool mixed() const { return position_rows() > 0 && position_rows() < m(); }
  // Whether the model has position rows to hold, project, stabilize and record drift of.
  bool has_position_rows() const { return position_rows() > 0; }
  // True when L has a term linear in qd, qd . a(q) (core/problem.hpp, gyroscopic): it is in c, dL/dq and p.
  virtual bool gyroscopic() const { return false; }
  // True when the constraints or the potential depend on t explicitly (rheonomic h(q, t), affine
  // A(q) qd + b(q, t) = 0, V(q, t); core/problem.hpp): ModelTerms::b is then sized m, the energy is not
  // conserved, and methods that have not been extended to it refuse the problem.
  virtual bool time_dependent() const { return false; }
  // True when the problem states generalized forces F(t, q, qd) (a zoo header's generalized_force, a mechanism
  // file's [forces]): their work, t-dependent or dissipative, enters the energy balance a run records
  // (core/energy_balance.hpp) in place of a conservation figure.
  virtual bool has_generalized_force() const { return false; }
  // True when the problem declares singular positions on its motion (core/problem.hpp, kSingularPositions).
  virtual bool has_singular_positions() const { return false; }
  // Indices into q of the actuated (shape) coordinates, ascending (core/problem.hpp, kActuatedCoordinates);
  // empty for a problem that declares none. A run's [shape] prescribes them (core/shape_schedule.hpp).
  virtual const std::vector<int>& actuated_coordinates() const {
    static const std::vector<int> none;
    return none;
  }
  // Resolved parameter values, in declaration order.
  virtual std::vector<std::pair<std::string, double>> parameters() const = 0;

  virtual std::unique_ptr<ModelWorkspace> make_workspace() const = 0;
  ModelTerms make_terms() const;

  // The hot path: fills the requested terms. No heap allocation for fixed-size problems.
  virtual void evaluate(double t, const Vec& q, const Vec& qd, unsigned what, ModelWorkspace& ws,
                        ModelTerms& out) const = 0;

  // The sparse path (problems built from bodies and joints, core/problem.hpp): evaluate_sparse fills the
  // requested terms of kDynamics (kMassMatrix, kBias, kForce, kConstraintJacobian, kConstraintBias,
  // kConstraintValue) in O(n), each joint differentiated over its few coordinates. No heap allocation.
  virtual bool has_sparse_terms() const { return false; }
  // The size of M's diagonal blocks in SparseModelTerms (coordinates per body); 0 without sparse terms.
  virtual int sparse_block_size() const { return 0; }
  virtual SparseModelTerms make_sparse_terms() const {
    throw InputError("problem " + name() + " is not built from bodies and joints: it has no sparse terms");
  }
  virtual void evaluate_sparse(double /*t*/, const Vec& /*q*/, const Vec& /*qd*/, unsigned /*what*/,
                               ModelWorkspace& /*ws*/, SparseModelTerms& /*out*/) const {
    throw InputError("problem " + name() + " is not built from bodies and joints: it has no sparse terms");
  }

  // Derivatives of M, c and A with respect to (q, qd) at (q, qd) by automatic differentiation, where the
  // model can supply them (templated problem functions, no explicit time dependence) together with those of its
  // generalized force, if it has one (a force templated over the scalar, core/problem.hpp); no heap allocation.
  virtual bool has_dynamics_derivatives() const { return false; }
  // Whether the mass matrix, c or the constraint terms come from hand-written code (a problem's analytic_terms /
  // analytic_constraint_terms) rather than automatic differentiation: such a right-hand side is cheap next to
  // the derivative passes of an exact Jacobian (jacobian = auto, formulations/acceleration_formulation.hpp).
  virtual bool uses_analytic_terms() const { return false; }
  virtual void dynamics_derivatives(const Vec& /*q*/, const Vec& /*qd*/, ModelWorkspace& /*ws*/,
                                    DynamicsDerivatives& /*out*/) const {
    throw InputError("problem " + name() + " provides no derivatives of its dynamics terms");
  }
  // dF/dq and dF/dqd (n x n, column l for q_l / qd_l) of the generalized force F(t, q, qd) at (t, q, qd), by
  // automatic differentiation; where has_dynamics_derivatives() and has_generalized_force() both hold. No heap
  // allocation.
  virtual void generalized_force_derivatives(double /*t*/, const Vec& /*q*/, const Vec& /*qd*/, ModelWorkspace& /*ws*/,
                                             Mat& /*dF_dq*/, Mat& /*dF_dqd*/) const {
    throw InputError("problem " + name() + " provides no derivatives of its generalized force");
  }
  // out(j, l) = d/dq_l (C(q, qd)^T mu)_j at fixed mu (n x n), C the constraint curvature of kConstraintCurvature,
  // C_aj = sum_k (d_k A_aj - d_j A_ak) qd_k (zero for holonomic problems): second derivatives of A, which the
  // added-mass Jacobian needs (its force is C^T lambda). Available where has_dynamics_derivatives() is;
  // no heap allocation.
  virtual void curvature_force_derivative(const Vec& /*q*/, const Vec& /*qd*/, const Vec& /*mu*/,
                                          ModelWorkspace& /*ws*/, Mat& /*out*/) const {
    throw InputError("problem " + name() + " provides no derivatives of its constraint curvature");
  }
  DynamicsDerivatives make_derivatives(bool constraint_bias = false) const {
    DynamicsDerivatives d;
    d.dM.assign(n(), Mat::Zero(n(), n()));
    d.dA.assign(n(), Mat::Zero(m(), n()));
    d.dc_dq = Mat::Zero(n(), n());
    d.dc_dqd = Mat::Zero(n(), n());
    if (constraint_bias) {
      d.dbias_dq = Mat::Zero(m(), n());
      d.dbias_dqd = Mat::Zero(m(), n());
    }
    if (has_generalized_force()) {
      d.dF_dq = Mat::Zero(n(), n());
      d.dF_dqd = Mat::Zero(n(), n());
    }
    return d;
  }

  virtual void default_initial(Vec& q0, Vec& qd0) const = 0;

  // Names of the constraint rows in order (position rows first), for lambda's columns and the plots: a mechanism
  // file's named rows (docs/mechanism-files.md); empty when the rows have no names.
  virtual std::vector<std::string> constraint_names() const { return {}; }
  // Names and units of the coordinates q ("x", "m"; velocities are in unit/s). Defaults: q1..qn, "-".
  virtual std::vector<std::string> coordinate_names() const;
  virtual std::vector<std::string> coordinate_units() const;

  // Exact reference motion from consistent (q0, qd0) where the problem knows one; false otherwise.
  virtual bool closed_form(double /*t*/, const Vec& /*q0*/, const Vec& /*qd0*/, Vec& /*q*/, Vec& /*qd*/) const {
    return false;
  }
  // The same motion at t given the position q_prev it had at t_prev (a quadrature then runs over [t_prev, t]
  // only); problems whose closed form costs O(1) need not supply it.
  virtual bool closed_form_from(double /*t_prev*/, const Vec& /*q_prev*/, double t, const Vec& q0, const Vec& qd0,
                                Vec& q, Vec& qd) const {
    return closed_form(t, q0, qd0, q, qd);
  }
  // Values a benchmark published for this problem (core/published_reference.hpp): only when the model's
  // parameters are the problem's defaults, for which they were computed; nullptr otherwise.
  virtual const PublishedReference* published_reference() const { return nullptr; }
  // Why a problem that has published values gives none to this model (a parameter differs from the one
  // they were computed for, even in its last digit); empty when it gives them or has none.
  virtual std::string published_reference_withheld() const { return {}; }
  // A benchmark's reference point (core/published_reference.hpp); nullptr when the problem names none.
  virtual const ReferencePoint* reference_point() const { return nullptr; }
  // Points a run records at every sample for the plots (core/named_points.hpp); nullptr when none are named.
  virtual const NamedPoints* named_points() const { return nullptr; }
  // Body-frame velocities a run records at every sample (core/named_points.hpp); nullptr when none are declared.
  virtual const BodyVelocities* body_velocities() const { return nullptr; }
  // Exact multiplier lambda(q, qd) on the constraint manifold where known; false otherwise.
  virtual bool closed_form_multiplier(const Vec& /*q*/, const Vec& /*qd*/, Vec& /*lambda*/) const { return false; }

  // ---- Capability lookup -------------------------------------------------------------------------------
  // The capability of interface type C, or nullptr when the problem has none (or was not registered with it).
  template <class C>
  const C* capability() const {
    for (const auto& [type, ptr] : capabilities_)
      if (type == std::type_index(typeid(C))) return static_cast<const C*>(ptr.get());
    return nullptr;
  }
  // Filled once when the problem is registered, before the Model is shared (a later call for the same C
  // replaces the earlier one).
  template <class C>
  void add_capability(std::shared_ptr<const C> c) {
    static_assert(std::is_base_of_v<Capability, C>);
    for (auto& [type, ptr] : capabilities_)
      if (type == std::type_index(typeid(C))) {
        ptr = std::move(c);
        return;
      }
    capabilities_.emplace_back(std::type_index(typeid(C)), std::move(c));
  }

 private:
  std::vector<std::pair<std::type_index, std::shared_ptr<const Capability>>> capabilities_;
};

}  // namespace clm
