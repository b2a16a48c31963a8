#include "runs/mechanism/native_model.hpp"

#include <utility>

namespace clm {

namespace {

// The inputs x = q, qd, t, parameters and one output buffer, sized once; the tape model's own workspace for what
// the native code does not evaluate.
struct NativeWorkspace final : ModelWorkspace {
  std::unique_ptr<ModelWorkspace> tape;
  std::vector<double> x, out, scratch;
};

}  // namespace

NativeMechanismModel::NativeMechanismModel(std::shared_ptr<const Model> tape,
                                           std::shared_ptr<const NativeFunctions> native,
                                           std::vector<double> parameters)
    : tape_(std::move(tape)), native_(std::move(native)), parameters_(std::move(parameters)) {
  n_ = tape_->n();
  m_ = tape_->m();
  mh_ = tape_->position_rows();
  time_dependent_ = tape_->time_dependent();
}

std::unique_ptr<ModelWorkspace> NativeMechanismModel::make_workspace() const {
  auto ws = std::make_unique<NativeWorkspace>();
  ws->tape = tape_->make_workspace();
  ws->x.assign(2 * n_ + 1 + parameters_.size() + native_->hoisted, 0.0);
  ws->scratch.assign(std::max(native_->scratch, 1), 0.0);
  std::copy(parameters_.begin(), parameters_.end(), ws->x.begin() + 2 * n_ + 1);
  native_->parameters(ws->x.data());  // the parameter-only values, once per workspace
  // The largest group's outputs: M, c, F, or A, bias, h, b.
  ws->out.assign(std::max<size_t>({static_cast<size_t>(n_) * n_ + 2 * n_,
                                   static_cast<size_t>(m_) * n_ + 2 * m_ + mh_, 4}),
                 0.0);
  return ws;
}

void NativeMechanismModel::evaluate(double t, const Vec& q, const Vec& qd, unsigned what, ModelWorkspace& base,
                                    ModelTerms& out) const {
  auto& ws = static_cast<NativeWorkspace&>(base);
  const int n = n_, m = m_, mh = mh_;
  double* x = ws.x.data();
  for (int i = 0; i < n; ++i) {
    x[i] = q[i];
    x[n + i] = qd[i];
  }
  x[2 * n] = t;
  double* o = ws.out.data();
  double* sc = ws.scratch.data();
  auto copy_matrix = [&](const double* from, int rows, Mat& to) {
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < n; ++j) to(i, j) = from[i * n + j];
  };

  const bool want_M = what & (kMassMatrix | kEnergy | kMomentum);  // as AutoDiffModel: the energy reads M
  if (what & kBias) {
    native_->dynamics(x, o, sc);
    copy_matrix(o, n, out.M);
    for (int i = 0; i < n; ++i) out.c[i] = o[n * n + i];
    if (what & kForce)
      for (int i = 0; i < n; ++i) out.F[i] = o[n * n + n + i];
  } else {
    if (want_M) {
      native_->mass(x, o, sc);
      copy_matrix(o, n, out.M);
    }
    if (what & kForce) {
      native_->force(x, o, sc);
      for (int i = 0; i < n; ++i) out.F[i] = o[i];
    }
  }
  if (m > 0 && (what & (kConstraintJacobian | kConstraintBias | kConstraintValue | kConstraintRate))) {
    native_->constraints(x, o, sc);
    if (what & kConstraintJacobian) copy_matrix(o, m, out.A);
    if (what & kConstraintBias)
      for (int r = 0; r < m; ++r) out.Adot_qd[r] = o[m * n + r];
    if (what & kConstraintValue)
      for (int r = 0; r < mh; ++r) out.h[r] = o[m * n + m + r];
    if (time_dependent_ && (what & kConstraintRate))
      for (int r = 0; r < m; ++r) out.b[r] = o[m * n + m + mh + r];
  }
  if (what & kEnergy) {
    native_->energy(x, o, sc);
    out.kinetic = o[0];
    out.potential = o[1];
    out.gyroscopic = o[2];
    out.potential_rate = o[3];
  }
  // The rest from the tape (vakonomic's curvature, the variational integrators' dL/dq and momenta).
  const unsigned rest = what & (kConstraintCurvature | kLagrangianGradient | kMomentum);
  if (rest) tape_->evaluate(t, q, qd, rest, *ws.tape, out);
}

void NativeMechanismModel::dynamics_derivatives(const Vec& q, const Vec& qd, ModelWorkspace& ws,
                                                DynamicsDerivatives& out) const {
  tape_->dynamics_derivatives(q, qd, *static_cast<NativeWorkspace&>(ws).tape, out);
}

void NativeMechanismModel::generalized_force_derivatives(double t, const Vec& q, const Vec& qd, ModelWorkspace& ws,
                                                         Mat& dF_dq, Mat& dF_dqd) const {
  tape_->generalized_force_derivatives(t, q, qd, *static_cast<NativeWorkspace&>(ws).tape, dF_dq, dF_dqd);
}

void NativeMechanismModel::curvature_force_derivative(const Vec& q, const Vec& qd, const Vec& mu,
                                                      ModelWorkspace& ws, Mat& out) const {
  tape_->curvature_force_derivative(q, qd, mu, *static_cast<NativeWorkspace&>(ws).tape, out);
}

}  // namespace clm
