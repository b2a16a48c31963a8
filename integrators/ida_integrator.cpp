#include "integrators/ida_integrator.hpp"

#include "integrators/mechanical_system.hpp"
#include "integrators/sundials_glue.hpp"

#include <ida/ida.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <limits>
#include <string>

namespace clm {

struct IdaIntegrator::Sundials : SundialsCallbackState {
  SUNContext ctx = nullptr;
  void* mem = nullptr;
  N_Vector yy = nullptr, yp = nullptr;  // wrap yy_data, yp_data: Y and Y'
  N_Vector dky = nullptr;               // wraps dky_data (interpolation)
  N_Vector id = nullptr;                // wraps id_data: 1 differential (q, v), 0 algebraic (lambda, mu)
  N_Vector atol = nullptr;              // wraps atol_data
  N_Vector ewt = nullptr;               // wraps ewt_data: IDA's error weights for the Jacobian's increments
  SUNMatrix J = nullptr;
  SUNLinearSolver ls = nullptr;
  Vec yy_data, yp_data, dky_data, id_data, atol_data, ewt_data;
  Vec lambda_sample;  // multipliers_at: lambda at a sample inside the last step

  // The residual's model view and buffers, sized once.
  std::shared_ptr<const Model> model;
  std::unique_ptr<ModelWorkspace> ws;
  ModelTerms terms;
  int n = 0, m = 0;
  // The rows GGL holds at position level: every row of a holonomic problem, the position rows of a mixed one
  // (Model::position_rows), none of a Pfaffian one; mu has one entry per such row.
  int mh = 0;
  int size = 0;                // 2n + m + mh
  bool initializing = false;   // IDACalcIC is running: the constraint rows are differentiated once
  Vec q, v;                    // the Model's Vec arguments
  Vec r_base, r_work, y_work, yp_work;  // Jacobian by differences
  Mat Jd;                      // the iteration matrix, copied into SUNDIALS' column-major dense matrix

  long residual_evals = 0;     // every residual evaluation (IDA's, the Jacobian's, IDACalcIC's)
  long jacobian_evals = 0;
  long ic_newton_iterations = 0;  // IDACalcIC's, before IDAReInit resets IDA's counters
  long ic_failures = 0;
  double last_t = 0;           // time of the last step (IDA's tcur)

  ~Sundials() { release(); }
  void release() {
    if (mem) IDAFree(&mem);
    if (ls) SUNLinSolFree(ls);
    if (J) SUNMatDestroy(J);
    for (N_Vector* v : {&yy, &yp, &dky, &id, &atol, &ewt})
      if (*v) N_VDestroy(*v), *v = nullptr;
    if (ctx) SUNContext_Free(&ctx);
    mem = nullptr, ls = nullptr, J = nullptr, ctx = nullptr;
  }

  // F(t, Y, Y') into r; see the header for the equations. No heap allocation.
  void residual(double t, const double* y, const double* yd, double* r) {
    q = Eigen::Map<const Vec>(y, n);
    v = Eigen::Map<const Vec>(y + n, n);
    unsigned what = kMassMatrix | kBias | kForce | kConstraintJacobian;
    if (mh > 0 && !initializing) what |= kConstraintValue;
    if (initializing) what |= kConstraintBias;
    model->evaluate(t, q, v, what, *ws, terms);
    const Eigen::Map<const Vec> qd(yd, n), vd(yd + n, n), lambda(y + 2 * n, m);
    Eigen::Map<Vec> r_q(r, n), r_v(r + n, n), r_g(r + 2 * n, m);
    r_q = qd - v;
    r_v.noalias() = terms.M * vd;
    r_v += terms.c - terms.F;
    r_v.noalias() -= terms.A.transpose() * lambda;
    if (initializing) {
      r_g.noalias() = terms.A * vd;  // d/dt (A v) = A v' + Adot v
      r_g += terms.Adot_qd;
    } else {
      r_g.noalias() = terms.A * v;
    }
    if (mh > 0) {
      const Eigen::Map<const Vec> mu(y + 2 * n + m, mh);
      Eigen::Map<Vec> r_h(r + 2 * n + m, mh);
      const auto A_h = terms.A.topRows(mh);  // the position rows' dh/dq (all of A for a holonomic problem)
      r_q.noalias() += A_h.transpose() * mu;
      if (initializing) {
        r_h.noalias() = A_h * qd;  // d/dt h(q) = A_h q'
      } else {
        r_h = terms.h;
      }
    }
    ++residual_evals;
  }
};

namespace {

using Sundials = IdaIntegrator::Sundials;

std::string flag_name(int flag) { return sundials_flag_name(IDAGetReturnFlagName, "IDA", flag); }

// What the codes a run can end with mean (IDA's guide, "IDASolve" and "IDACalcIC" return values).
const char* flag_meaning(int flag) {
  switch (flag) {
    case IDA_TOO_MUCH_WORK: return "too many internal steps";
    case IDA_TOO_MUCH_ACC: return "the tolerances are too small for the machine precision";
    case IDA_ERR_FAIL: return "the local error test failed repeatedly or with |h| = hmin";
    case IDA_CONV_FAIL: return "the Newton iteration failed to converge repeatedly or with |h| = hmin";
    case IDA_LSETUP_FAIL: return "the linear solver's setup failed (singular iteration matrix)";
    case IDA_LSOLVE_FAIL: return "the linear solver's solve failed";
    case IDA_RES_FAIL: return "the residual function failed unrecoverably";
    case IDA_REP_RES_ERR: return "repeated recoverable residual errors";
    case IDA_FIRST_RES_FAIL: return "the first residual evaluation of IDACalcIC failed";
    case IDA_LINESEARCH_FAIL: return "IDACalcIC's line search failed";
    case IDA_NO_RECOVERY: return "IDACalcIC could not recover from a residual or linear solver failure";
    case IDA_BAD_EWT: return "an error weight became zero or negative";
    case IDA_ILL_INPUT: return "an input to IDA was illegal";
    default: return "";
  }
}

[[noreturn]] void fail(const char* call, int flag, const std::string& message) {
  std::string text = std::string("ida: ") + call + " failed with " + flag_name(flag);
  if (const char* meaning = flag_meaning(flag); *meaning) text += std::string(" (") + meaning + ")";
  if (!message.empty()) text += ": " + message;
  throw NumericalFailure(text);
}

void check(int flag, const char* call, const Sundials& s) {
  if (flag < 0) fail(call, flag, s.message);
}

// F(t, Y, Y') for IDA; a model exception is kept for do_step (integrators/sundials_glue.hpp).
int residual_callback(double t, N_Vector yy, N_Vector yp, N_Vector rr, void* user) {
  return guarded_callback<Sundials>(user, [&](Sundials& s) {
    s.residual(t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), N_VGetArrayPointer(rr));
  });
}

// The iteration matrix dF/dY + cj dF/dY' by forward differences, one residual per column, with the
// increments of IDA's own dense difference quotient (idaLsDenseDQJac): Y_j and Y'_j move together by
// (inc, cj inc), inc = max(sqrt(eps) max(|Y_j|, |h Y'_j|), 1 / ewt_j) with the sign of h Y'_j.
int jacobian_callback(double t, double cj, N_Vector yy, N_Vector yp, N_Vector rr, SUNMatrix J, void* user, N_Vector,
                      N_Vector, N_Vector) {
  return guarded_callback<Sundials>(user, [&](Sundials& s) {
    const int N = s.size;
    double h = 0;
    IDAGetCurrentStep(s.mem, &h);
    IDAGetErrWeights(s.mem, s.ewt);
    const double srur = std::sqrt(std::numeric_limits<double>::epsilon());
    s.y_work = Eigen::Map<const Vec>(N_VGetArrayPointer(yy), N);
    s.yp_work = Eigen::Map<const Vec>(N_VGetArrayPointer(yp), N);
    s.r_base = Eigen::Map<const Vec>(N_VGetArrayPointer(rr), N);
    for (int j = 0; j < N; ++j) {
      const double yj = s.y_work[j], ypj = s.yp_work[j];
      double inc = std::max(srur * std::max(std::abs(yj), std::abs(h * ypj)), 1.0 / s.ewt_data[j]);
      if (h * ypj < 0) inc = -inc;
      inc = (yj + inc) - yj;  // the increment represented in floating point
      s.y_work[j] = yj + inc;
      s.yp_work[j] = ypj + cj * inc;
      s.residual(t, s.y_work.data(), s.yp_work.data(), s.r_work.data());
      s.Jd.col(j) = (s.r_work - s.r_base) / inc;
      s.y_work[j] = yj;
      s.yp_work[j] = ypj;
    }
    Eigen::Map<Mat>(SUNDenseMatrix_Data(J), N, N) = s.Jd;
    ++s.jacobian_evals;
  });
}

}  // namespace

IdaIntegrator::IdaIntegrator() : s_(std::make_unique<Sundials>()) {}
IdaIntegrator::~IdaIntegrator() = default;

std::string IdaIntegrator::refuses(const IntegratorSettings& settings) const {
  if (settings.fixed_step) return "ida has no fixed-step mode (fixed_step = true): IDA chooses its own steps";
  return {};
}

std::string IdaIntegrator::refuses_formulation(const Formulation& f) const {
  if (std::string why = kkt_only_refusal(name(), f); !why.empty()) return why;
  if (std::string why = time_dependence_refusal(name(), f.model()); !why.empty()) return why;
  if (f.options().baumgarte_alpha != 0 || f.options().baumgarte_beta != 0)
    return "integrator ida solves the constraints themselves (GGL index-2 DAE); kkt's Baumgarte gains belong to "
           "kkt's ODE and do not apply (set baumgarte_alpha = baumgarte_beta = 0)";
  return {};
}

void IdaIntegrator::do_initialize(const IntegratorSettings& settings) {
  const Formulation& f = mechanical_system(name(), *sys_);
  if (const std::string why = refuses_formulation(f); !why.empty()) throw InputError(why);

  Sundials& s = *s_;
  s.release();
  s.model = f.model_ptr();
  s.ws = s.model->make_workspace();
  s.terms = s.model->make_terms();
  s.n = s.model->n();
  s.m = s.model->m();
  s.mh = s.model->position_rows();
  const int n = s.n, m = s.m;
  const int N = s.size = 2 * n + m + s.mh;
  s.q.resize(n);
  s.v.resize(n);
  for (Vec* w : {&s.r_base, &s.r_work, &s.y_work, &s.yp_work, &s.dky_data, &s.ewt_data}) w->resize(N);
  s.Jd.resize(N, N);
  s.error = nullptr;
  s.message.clear();
  s.residual_evals = s.jacobian_evals = s.ic_newton_iterations = s.ic_failures = 0;
  lambda_.setZero(m);
  s.lambda_sample.setZero(m);

  // Guesses for IDACalcIC: (q0, v0) from the driver; q' = v0, v' = 0, lambda = mu = 0.
  s.yy_data = Vec::Zero(N);
  s.yy_data.head(2 * n) = y_;
  s.yp_data = Vec::Zero(N);
  s.yp_data.head(n) = y_.tail(n);
  s.id_data = Vec::Zero(N);
  s.id_data.head(2 * n).setOnes();
  // Absolute tolerances: the run's atol for (q, v). The algebraic variables are outside the error test but
  // inside the Newton convergence test, and Newton cannot resolve them below the round-off of h(q) and A v
  // amplified by 1/h (index 2): with atol there (1e-12), four_bar at rtol 1e-10 failed with repeated
  // convergence failures down to h = 4e-12, and IDACalcIC failed at rtol 1e-12. atol = max(atol, rtol)
  // for lambda and mu: measured the fewest steps of 1, 1e2 and 1e4 x rtol (four_bar, rtol 1e-10, 2 s:
  // 2381, 2535, 5068 steps; slider_crank 1590, 1712, 2858), all within 1e-7 of dopri5.
  s.atol_data = Vec::Constant(N, settings.atol);
  s.atol_data.tail(N - 2 * n).setConstant(std::max(settings.atol, settings.rtol));

  if (SUNContext_Create(nullptr, &s.ctx) != 0) throw NumericalFailure("ida: SUNContext_Create failed");
  s.yy = wrap_serial(s.yy_data, s.ctx);
  s.yp = wrap_serial(s.yp_data, s.ctx);
  s.dky = wrap_serial(s.dky_data, s.ctx);
  s.id = wrap_serial(s.id_data, s.ctx);
  s.atol = wrap_serial(s.atol_data, s.ctx);
  s.ewt = wrap_serial(s.ewt_data, s.ctx);
  s.mem = IDACreate(s.ctx);
  if (!s.yy || !s.yp || !s.dky || !s.id || !s.atol || !s.ewt || !s.mem)
    throw NumericalFailure("ida: could not allocate its memory");
  check(IDASetErrHandlerFn(s.mem, keep_error_message<Sundials>, &s), "IDASetErrHandlerFn", s);
  check(IDAInit(s.mem, residual_callback, t_, s.yy, s.yp), "IDAInit", s);
  check(IDASetUserData(s.mem, &s), "IDASetUserData", s);
  check(IDASVtolerances(s.mem, settings.rtol, s.atol), "IDASVtolerances", s);
  check(IDASetId(s.mem, s.id), "IDASetId", s);
  s.J = SUNDenseMatrix(N, N, s.ctx);
  s.ls = SUNLinSol_Dense(s.yy, s.J, s.ctx);
  if (!s.J || !s.ls) throw NumericalFailure("ida: could not allocate the dense linear solver");
  check(IDASetLinearSolver(s.mem, s.ls, s.J), "IDASetLinearSolver", s);
  check(IDASetJacFn(s.mem, jacobian_callback), "IDASetJacFn", s);

  // Consistent initial data with the differentiated constraint rows (header), then the index-2 system
  // from that data: IDAReInit starts IDA afresh at t0 (and resets its counters; IDACalcIC's are kept).
  s.initializing = true;
  const double tout1 = t_ + (settings.dt > 0 ? settings.dt : 1e-3);
  const int ic = IDACalcIC(s.mem, IDA_YA_YDP_INIT, tout1);
  s.initializing = false;
  s.rethrow_error();
  if (ic < 0) fail("IDACalcIC", ic, s.message);
  check(IDAGetConsistentIC(s.mem, s.yy, s.yp), "IDAGetConsistentIC", s);
  IDAGetNumNonlinSolvIters(s.mem, &s.ic_newton_iterations);
  check(IDAReInit(s.mem, t_, s.yy, s.yp), "IDAReInit", s);
  // lambda and mu are index-2 variables: outside the local error test.
  check(IDASetSuppressAlg(s.mem, SUNTRUE), "IDASetSuppressAlg", s);
  if (settings.dt > 0) check(IDASetInitStep(s.mem, settings.dt), "IDASetInitStep", s);
  if (settings.dt_max > 0) check(IDASetMaxStep(s.mem, settings.dt_max), "IDASetMaxStep", s);
  // The suite's dt_min (IntegratorSettings): a step below it ends the run (IDA_ERR_FAIL / IDA_CONV_FAIL).
  if (settings.dt_min > 0) check(IDASetMinStep(s.mem, settings.dt_min), "IDASetMinStep", s);
  lambda_ = s.yy_data.segment(2 * n, m);
  s.last_t = t_;
  update_statistics();
  // The base steps to the caller's limit; IDA decides where each of its steps ends.
  h_ = std::numeric_limits<double>::infinity();
}

bool IdaIntegrator::do_step(double) {
  Sundials& s = *s_;
  check(IDASetStopTime(s.mem, step_end()), "IDASetStopTime", s);
  double t_reached = t_;
  const int flag = IDASolve(s.mem, step_end(), &t_reached, s.yy, s.yp, IDA_ONE_STEP);
  update_statistics();
  s.rethrow_error();
  if (flag < 0) fail("IDASolve", flag, s.message);
  s.last_t = t_reached;
  const int n = s.n;
  y_ = s.yy_data.head(2 * n);
  f_ = s.yp_data.head(2 * n);  // (q', v') of the DAE at the step end: no extra evaluation
  lambda_ = s.yy_data.segment(2 * n, s.m);
  if (t_reached < step_end()) end_step_early(t_reached);
  h_ = std::numeric_limits<double>::infinity();
  return true;
}

void IdaIntegrator::interpolate(double t, Vec& y) const {
  Sundials& s = *s_;
  const int flag = IDAGetDky(s.mem, std::min(t, s.last_t), 0, s.dky);
  if (flag < 0) fail("IDAGetDky", flag, s.message);
  y = s.dky_data.head(2 * s.n);
}

const Vec* IdaIntegrator::multipliers_at(double t) const {
  Sundials& s = *s_;
  if (!s.mem || !(t < s.last_t)) return &lambda_;
  const int flag = IDAGetDky(s.mem, t, 0, s.dky);
  if (flag < 0) fail("IDAGetDky", flag, s.message);
  s.lambda_sample = s.dky_data.segment(2 * s.n, s.m);
  return &s.lambda_sample;
}

void IdaIntegrator::update_statistics() {
  Sundials& s = *s_;
  long nst = 0, nni = 0, netf = 0, nncf = 0;
  IDAGetNumSteps(s.mem, &nst);
  IDAGetNumNonlinSolvIters(s.mem, &nni);
  IDAGetNumErrTestFails(s.mem, &netf);
  IDAGetNumNonlinSolvConvFails(s.mem, &nncf);
  // Plus the base's own evaluation of kkt's f(t0, y0) in initialize.
  stats_.rhs_evals = 1 + s.residual_evals;
  stats_.jacobian_evals = s.jacobian_evals;
  stats_.newton_iterations = s.ic_newton_iterations + nni;
  stats_.rejected_steps = netf + nncf;
}

}  // namespace clm
