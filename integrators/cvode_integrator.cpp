#include "integrators/cvode_integrator.hpp"

#include "integrators/finite_difference_jacobian.hpp"
#include "integrators/sundials_glue.hpp"

#include <cvode/cvode.h>
#include <cvode/cvode_proj.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include <cmath>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>

namespace clm {

struct CvodeIntegrator::Sundials : SundialsCallbackState {
  SUNContext ctx = nullptr;
  void* mem = nullptr;
  N_Vector y = nullptr;     // wraps Sundials::y_data
  N_Vector dky = nullptr;   // wraps dky_data (interpolation)
  SUNMatrix A = nullptr;
  SUNLinearSolver ls = nullptr;
  SUNNonlinearSolver nls = nullptr;
  Vec y_data, dky_data;
  Vec y_in, dy_out;         // the OdeSystem's Vec arguments in the callbacks
  Mat J;                    // df/dy for the BDF Newton iterations
  Vec f_in, y_work, f_work;  // finite-difference Jacobian buffers
  Vec y_proj, err_proj;      // projection inside CVODE's step (CVodeSetProjFn)
  bool autodiff = false;     // jacobian = autodiff: the system's own Jacobian
  const char* jacobian_used = "none";  // CvodeIntegrator::jacobian_used
  long jacobian_rhs_evals = 0;
  OdeSystem* sys = nullptr;
  double last_t = 0;         // time of the last step (CVODE's tcur)

  ~Sundials() { release(); }
  void release() {
    if (mem) CVodeFree(&mem);
    if (nls) SUNNonlinSolFree(nls);
    if (ls) SUNLinSolFree(ls);
    if (A) SUNMatDestroy(A);
    if (y) N_VDestroy(y);
    if (dky) N_VDestroy(dky);
    if (ctx) SUNContext_Free(&ctx);
    mem = nullptr, nls = nullptr, ls = nullptr, A = nullptr, y = nullptr, dky = nullptr, ctx = nullptr;
  }
};

namespace {

using Sundials = CvodeIntegrator::Sundials;

// f(t, y) for CVODE: copies into the system's Vec arguments (no allocation); an exception is kept for do_step
// (integrators/sundials_glue.hpp).
int rhs_callback(double t, N_Vector y, N_Vector ydot, void* user) {
  return guarded_callback<Sundials>(user, [&](Sundials& s) {
    const Eigen::Index n = s.y_in.size();
    s.y_in = Eigen::Map<const Vec>(N_VGetArrayPointer(y), n);
    s.sys->rhs(t, s.y_in, s.dy_out);
    Eigen::Map<Vec>(N_VGetArrayPointer(ydot), n) = s.dy_out;
  });
}

// J = df/dy: the system's own (jacobian = autodiff) or the suite's forward differences (the same as
// radau5's). Not CVODE's internal difference quotient, which allocates a vector per Jacobian. SUNDIALS'
// dense matrix is column-major like Eigen's.
int jacobian_callback(double t, N_Vector y, N_Vector fy, SUNMatrix J, void* user, N_Vector, N_Vector, N_Vector) {
  return guarded_callback<Sundials>(user, [&](Sundials& s) {
    const Eigen::Index n = s.y_in.size();
    s.y_in = Eigen::Map<const Vec>(N_VGetArrayPointer(y), n);
    if (s.autodiff) {
      s.sys->jacobian(t, s.y_in, s.J);
    } else {
      s.f_in = Eigen::Map<const Vec>(N_VGetArrayPointer(fy), n);
      s.jacobian_rhs_evals += finite_difference_jacobian(*s.sys, t, s.y_in, s.f_in, s.y_work, s.f_work, s.J);
    }
    Eigen::Map<Mat>(SUNDenseMatrix_Data(J), n, n) = s.J;
  });
}

// The system's projection inside CVODE's step (CVodeSetProjFn): CVODE passes its corrected solution and
// wants the correction to the projected one, and its local error estimate projected onto the tangent space
// (so that the error test measures only what the projection keeps). CVODE's epsProj (the tolerance of an
// inexact projection) is not needed: Gauss-Newton runs to round-off (formulations/coordinate_projection.hpp).
int projection_callback(double t, N_Vector ycur, N_Vector corr, double, N_Vector err, void* user) {
  return guarded_callback<Sundials>(user, [&](Sundials& s) {
    const Eigen::Index n = s.y_proj.size();
    const Eigen::Map<const Vec> y(N_VGetArrayPointer(ycur), n);
    s.y_proj = y;
    if (err) s.err_proj = Eigen::Map<const Vec>(N_VGetArrayPointer(err), n);
    s.sys->project_in_step(t, s.y_proj, err ? &s.err_proj : nullptr);
    Eigen::Map<Vec>(N_VGetArrayPointer(corr), n) = s.y_proj - y;
    if (err) Eigen::Map<Vec>(N_VGetArrayPointer(err), n) = s.err_proj;
  });
}

std::string flag_name(int flag) { return sundials_flag_name(CVodeGetReturnFlagName, "CVODE", flag); }

void check(int flag, const char* call) {
  if (flag < 0)
    throw NumericalFailure(std::string("cvode: ") + call + " failed with " + flag_name(flag));
}

}  // namespace

CvodeIntegrator::CvodeIntegrator() : s_(std::make_unique<Sundials>()) {}
CvodeIntegrator::~CvodeIntegrator() = default;

std::string CvodeIntegrator::jacobian_used() const { return s_->jacobian_used; }

std::string CvodeIntegrator::refuses(const IntegratorSettings& settings) const {
  if (settings.fixed_step) return "cvode has no fixed-step mode (fixed_step = true): CVODE chooses its own steps";
  if (settings.cvode_method != "bdf" && settings.cvode_method != "adams")
    return "cvode_method must be bdf or adams (got '" + settings.cvode_method + "')";
  return {};
}

void CvodeIntegrator::do_initialize(const IntegratorSettings& settings) {
  const bool bdf = settings.cvode_method == "bdf";
  if (bdf && settings.jacobian == "autodiff" && !sys_->has_jacobian())
    throw InputError("cvode: jacobian = autodiff, but the system provides no Jacobian (use finite_difference)");

  Sundials& s = *s_;
  s.release();
  s.jacobian_used = "none";  // adams: fixed-point iteration, no Jacobian
  s.sys = sys_;
  s.error = nullptr;
  s.message.clear();
  const auto n = static_cast<sunindextype>(y_.size());
  s.y_data = y_;
  s.dky_data.resize(y_.size());
  s.y_in.resize(y_.size());
  s.dy_out.resize(y_.size());
  if (SUNContext_Create(nullptr, &s.ctx) != 0) throw NumericalFailure("cvode: SUNContext_Create failed");
  s.y = wrap_serial(s.y_data, s.ctx);
  s.dky = wrap_serial(s.dky_data, s.ctx);
  s.mem = CVodeCreate(bdf ? CV_BDF : CV_ADAMS, s.ctx);
  if (!s.y || !s.dky || !s.mem) throw NumericalFailure("cvode: could not allocate its memory");
  check(CVodeSetErrHandlerFn(s.mem, keep_error_message<Sundials>, &s), "CVodeSetErrHandlerFn");
  check(CVodeInit(s.mem, rhs_callback, t_, s.y), "CVodeInit");
  check(CVodeSetUserData(s.mem, &s), "CVodeSetUserData");
  check(CVodeSStolerances(s.mem, settings.rtol, settings.atol), "CVodeSStolerances");
  if (settings.dt > 0) check(CVodeSetInitStep(s.mem, settings.dt), "CVodeSetInitStep");
  if (settings.dt_max > 0) check(CVodeSetMaxStep(s.mem, settings.dt_max), "CVodeSetMaxStep");
  if (bdf) {
    s.A = SUNDenseMatrix(n, n, s.ctx);
    s.ls = SUNLinSol_Dense(s.y, s.A, s.ctx);
    if (!s.A || !s.ls) throw NumericalFailure("cvode: could not allocate the dense linear solver");
    check(CVodeSetLinearSolver(s.mem, s.ls, s.A), "CVodeSetLinearSolver");
    // "auto": the system's own Jacobian where it was measured cheaper (OdeSystem::own_jacobian_is_cheaper).
    s.autodiff = settings.jacobian == "autodiff" ||
                 (settings.jacobian == "auto" && sys_->has_jacobian() && sys_->own_jacobian_is_cheaper());
    s.jacobian_used = s.autodiff ? "exact" : "finite_difference";
    s.jacobian_rhs_evals = 0;
    s.J.resize(y_.size(), y_.size());
    s.f_in.resize(y_.size());
    s.y_work.resize(y_.size());
    s.f_work.resize(y_.size());
    check(CVodeSetJacFn(s.mem, jacobian_callback), "CVodeSetJacFn");
    // The system's projection (if any) inside CVODE's step, which keeps its history (CVODE supports it
    // for BDF only; Adams stays with after_step and re-initialization).
    if (sys_->has_projection()) {
      s.y_proj.resize(y_.size());
      s.err_proj.resize(y_.size());
      check(CVodeSetProjFn(s.mem, projection_callback), "CVodeSetProjFn");
      sys_->set_projection_in_step(true);
    }
  } else {
    s.nls = SUNNonlinSol_FixedPoint(s.y, 0, s.ctx);
    if (!s.nls) throw NumericalFailure("cvode: could not allocate the fixed-point solver");
    check(CVodeSetNonlinearSolver(s.mem, s.nls), "CVodeSetNonlinearSolver");
  }
  s.last_t = t_;
  resets_ = 0;
  // The base steps to the caller's limit; CVODE decides where each of its steps ends.
  h_ = std::numeric_limits<double>::infinity();
}

bool CvodeIntegrator::do_step(double) {
  Sundials& s = *s_;
  check(CVodeSetStopTime(s.mem, step_end()), "CVodeSetStopTime");
  double t_reached = t_;
  const int flag = CVode(s.mem, step_end(), s.y, &t_reached, CV_ONE_STEP);
  update_statistics();
  s.rethrow_error();
  if (flag < 0) {
    throw NumericalFailure(std::string("cvode: CVode failed with ") + flag_name(flag) +
                           (s.message.empty() ? "" : " (" + s.message + ")"));
  }
  s.last_t = t_reached;
  y_ = s.y_data;
  // f_ is kept current as the base requires: CVODE's interpolant's derivative at the step end (its
  // Nordsieck array's first column), which costs no rhs evaluation.
  check(CVodeGetDky(s.mem, t_reached, 1, s.dky), "CVodeGetDky");
  f_ = s.dky_data;
  if (t_reached < step_end()) end_step_early(t_reached);
  h_ = std::numeric_limits<double>::infinity();
  return true;
}

void CvodeIntegrator::interpolate(double t, Vec& y) const {
  Sundials& s = *s_;
  const int flag = CVodeGetDky(s.mem, std::min(t, s.last_t), 0, s.dky);
  if (flag < 0) throw NumericalFailure(std::string("cvode: CVodeGetDky failed with ") + flag_name(flag));
  y = s.dky_data;
}

void CvodeIntegrator::do_reset_state() {
  Sundials& s = *s_;
  ++resets_;
  s.y_data = y_;
  check(CVodeReInit(s.mem, t_, s.y), "CVodeReInit");
}

void CvodeIntegrator::update_statistics() {
  Sundials& s = *s_;
  long nfe = 0, nfe_ls = 0, njac = 0, nni = 0, netf = 0, nncf = 0;
  CVodeGetNumRhsEvals(s.mem, &nfe);
  CVodeGetNumErrTestFails(s.mem, &netf);
  CVodeGetNumNonlinSolvIters(s.mem, &nni);
  CVodeGetNumNonlinSolvConvFails(s.mem, &nncf);
  if (s.ls) {
    CVodeGetNumLinRhsEvals(s.mem, &nfe_ls);
    CVodeGetNumJacEvals(s.mem, &njac);
  }
  // Plus the base's own evaluations: f(t0, y0) in initialize and one per reset_state.
  stats_.rhs_evals = 1 + resets_ + nfe + nfe_ls + s.jacobian_rhs_evals;
  stats_.jacobian_evals = njac;
  stats_.newton_iterations = nni;
  stats_.rejected_steps = netf + nncf;
}

}  // namespace clm
