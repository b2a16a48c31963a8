// What the SUNDIALS-backed integrators (cvode, ida) share in their C callbacks and error reporting. The
// solvers cannot unwind a C++ exception: a callback keeps it (a singular matrix: NumericalFailure) and tells
// the solver the failure is unrecoverable, and the step rethrows it once the solver has returned. The
// solvers' own error messages go into the run's failure message, not to stderr.
#pragma once

#include <nvector/nvector_serial.h>

#include <cstdlib>
#include <exception>
#include <string>

#include "core/types.hpp"

namespace clm {

// The part of a solver's user data the shared callbacks use.
struct SundialsCallbackState {
  std::exception_ptr error;  // an exception from the system or model, rethrown after the solver returns
  std::string message;       // the solver's last error message

  // Rethrows (and clears) the exception a callback kept, if any.
  void rethrow_error() {
    if (error) {
      const std::exception_ptr e = error;
      error = nullptr;
      std::rethrow_exception(e);
    }
  }
};

// The body of a callback whose user data is an S (derived from SundialsCallbackState): body(s), then 0; or,
// when it throws, the exception kept in s.error and -1 (unrecoverable) for the solver.
template <class S, class Body>
int guarded_callback(void* user, Body&& body) {
  auto* s = static_cast<S*>(user);
  try {
    body(*s);
    return 0;
  } catch (...) {
    s->error = std::current_exception();
    return -1;
  }
}

// The solvers' error handler (CVErrHandlerFn, IDAErrHandlerFn): the message goes into S::message.
template <class S>
void keep_error_message(int, const char*, const char* function, char* msg, void* user) {
  auto* s = static_cast<S*>(user);
  s->message = std::string(function) + ": " + msg;
}

// The name of a solver's return flag ("<solver> flag <n>" when it has none); SUNDIALS 6 returns it in a
// malloc'ed string (CVodeGetReturnFlagName, IDAGetReturnFlagName).
inline std::string sundials_flag_name(char* (*get_name)(long int), const char* solver, int flag) {
  char* name = get_name(flag);
  std::string s = name ? name : std::string(solver) + " flag " + std::to_string(flag);
  std::free(name);
  return s;
}

// A serial N_Vector over data's storage (not copied: data must outlive it and keep its size).
inline N_Vector wrap_serial(Vec& data, SUNContext ctx) {
  return N_VMake_Serial(static_cast<sunindextype>(data.size()), data.data(), ctx);
}

}  // namespace clm
