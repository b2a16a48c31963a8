// libFuzzer target: a mechanism file (mechanism_files/, docs/mechanism-files.md) on arbitrary bytes: the TOML
// reader, the expression parser, the symbolic derivatives and the tapes. Every input must end in a
// CompiledMechanism or an InputError (one line, naming the file); a compiled one must evaluate M, V, a and
// the constraint tape finite at its initial state, in double and in ceres::Jet, with the same values to
// round-off; then its export to a C++ header (the same derivation over symbolic parameters) must give a header or
// an InputError. Anything else (a crash, a hang, a non-finite value that passed the checks) is a finding.
#include <ceres/jet.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "mechanism_files/export_header.hpp"
#include "mechanism_files/mechanism_file.hpp"

namespace {

template <class T>
void run(const clm::Tape& tape, const clm::Vec& q, const clm::Vec& qd, std::vector<T>& regs, std::vector<T>& out) {
  const int n = static_cast<int>(q.size());
  regs.assign(std::max(tape.registers(), tape.inputs()), T(0.0));
  for (int i = 0; i < n; ++i) {
    regs[i] = T(q[i]);
    regs[n + i] = T(qd[i]);
  }
  tape.run(regs.data());
  out.resize(tape.outputs());
  for (int k = 0; k < tape.outputs(); ++k) out[k] = regs[tape.output_register(k)];
}

double value_of(double x) { return x; }
double value_of(const ceres::Jet<double, 2>& x) { return x.a; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const clm::MechanismFile file = clm::parse_mechanism_text(text, "fuzz.toml");
    const auto c = clm::compile_mechanism(file);
    const clm::Vec zero = clm::Vec::Zero(c->n);
    // The optional sections' tapes too (empty where the file has none): the closed form at t = 0 from the
    // initial state, the others at q0.
    // Both constraint tapes: a mixed file has position rows (constraint) and velocity rows (pfaffian, affine).
    for (const clm::Tape* tape : {&c->mass, &c->potential, &c->gyroscopic, &c->constraint, &c->pfaffian, &c->affine,
                                  &c->velocity_basis, &c->transversal_frame, &c->point_positions, &c->closed_form,
                                  &c->body_velocity_values}) {
      if (tape->outputs() == 0) continue;
      const clm::Vec& qd = tape == &c->closed_form || tape == &c->body_velocity_values ? c->qd0 : zero;
      std::vector<double> regs, out;
      std::vector<ceres::Jet<double, 2>> jregs, jout;
      run(*tape, c->q0, qd, regs, out);
      run(*tape, c->q0, qd, jregs, jout);
      for (std::size_t k = 0; k < out.size(); ++k) {
        if (!std::isfinite(out[k])) std::abort();                 // the compile checks promised finite values
        // The same code in another scalar: the same value to round-off (ceres::Jet divides as a * (1 / b), one
        // rounding more than double's a / b, so not to the bit).
        if (!(std::abs(value_of(jout[k]) - out[k]) <= 1e-10 * std::max(1.0, std::abs(out[k])))) std::abort();
      }
    }
    if (clm::export_header(file).find("struct ") == std::string::npos) std::abort();
  } catch (const clm::InputError& e) {
    const std::string m = e.what();
    if (m.find('\n') != std::string::npos || m.rfind("fuzz.toml", 0) != 0) std::abort();  // one line, naming the file
  }
  return 0;
}
