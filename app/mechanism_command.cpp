// clmbench mechanism check FILE: what a researcher wants to know about a mechanism file before running it
// (docs/mechanism-files.md): parsed and compiled, its sizes and kind, T quadratic, M at the initial state, the
// rank of A and the constraint residual of the initial state, and analyze's integrability verdict, one line each.
// clmbench mechanism export FILE [--format header|sympy|latex] [--out PATH]: the file as a C++ header for the zoo
// (mechanism_files/export_header.hpp), or its derived equations as sympy or LaTeX (mechanism_files/export_equations.hpp).
// A file with an error gives that error in one line (FILE:LINE:COLUMN) and exit 1, like every command.
#include <unistd.h>

#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/command.hpp"
#include "core/position_rows_off.hpp"
#include "app/problem_analysis.hpp"
#include "core/problem_registry.hpp"
#include "core/value_parsing.hpp"
#include "io/results_file.hpp"
#include "mechanism_files/export_equations.hpp"
#include "mechanism_files/export_header.hpp"
#include "mechanism_files/mechanism_file.hpp"
#include "runs/mechanism/file_model.hpp"
#include "runs/model_checks.hpp"

namespace clm {

namespace {

po::options_description mechanism_options() {
  po::options_description o("mechanism options", 100, 50);
  o.add_options()
      ("param", po::value<std::vector<std::string>>()->composing(), "name=value, repeatable: a parameter of the file")
      ("q0", po::value<std::string>(), "check: a,b,c: the configuration to check at (default: the file's initial q)")
      ("format", po::value<std::string>()->default_value("header"),
       "export: header (C++ for the zoo), sympy (a Python module of sympy objects) or latex (an align* environment)")
      ("out,o", po::value<std::string>(), "export: write the export to this path (default: standard output)")
      ("help,h", "this help");
  return o;
}

std::string mechanism_help() {
  std::ostringstream s;
  s << "usage: clmbench mechanism check FILE.toml [--param name=value ...] [--q0 a,b,...]\n"
       "       clmbench mechanism export FILE.toml [--format header|sympy|latex] [--out PATH]\n\n"
       "Reads and checks a mechanism file (docs/mechanism-files.md) and prints, one line each: its name, n, m and\n"
       "kind (holonomic / Pfaffian, time-dependent, forces, gyroscopic term), the size of its expression graph and\n"
       "tapes and the time to read and compile it, that T is quadratic in the velocities, the eigenvalues of the\n"
       "mass matrix at the initial state, the rank of A and the constraint residual of the initial state, and the\n"
       "integrability verdict of `clmbench analyze`. An error in the file is one line FILE:LINE:COLUMN (exit 1).\n"
       "It describes the file; `clmbench check --problem FILE.toml` runs the model contracts on it (terms against\n"
       "finite differences, the initial state for perturbed parameters, closed form and energy against a run).\n\n"
       "export writes the file as a C++ header satisfying the Problem concept (M = d2T/dqd2, V - T0, h or A and b,\n"
       "the forces and the initial state as templated code, the parameters as members with the file's min and max),\n"
       "so that a file mechanism joins the zoo with a registration line (docs/guide/extending.md); it equals the file's\n"
       "tapes to round-off (the tapes fold the parameter values into their constants, the header keeps them).\n"
       "--format sympy writes the derived equations as a Python module of sympy objects (T, V, M = d2T/dqd2, the\n"
       "gyroscopic a, F, h, A, b over symbolic parameters, and Lagrange's equations with multipliers;\n"
       "clmbench.Mechanism.equations() reads it); --format latex writes them as a LaTeX align* environment.\n\n"
       "Examples: clmbench mechanism check mechanisms/coin_on_incline.toml\n"
       "          clmbench mechanism export mechanisms/coin_on_incline.toml --out problems/coin_on_incline.hpp\n"
       "          clmbench mechanism export mechanisms/coin_on_incline.toml --format latex\n\n"
    << mechanism_options() << "\n"
    << exit_codes_help();
  return s.str();
}

std::string fmt(double v) {
  std::ostringstream s;
  s << std::setprecision(3) << v;
  return s.str();
}

// The header complete or not at all: written beside PATH and renamed over it.
void write_whole(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();  // the close's error too (a full disk may show only there)
    if (f.fail()) {
      const std::string why = std::strerror(errno);
      std::remove(tmp.c_str());
      throw OutputError("mechanism export: cannot write '" + echo_value(path) + "' (" + why + ")");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw OutputError("mechanism export: cannot write '" + echo_value(path) + "' (" + why + ")");
  }
}

int check(const CommandInvocation& call, const std::string& path, const po::variables_map& vm) {
  std::map<std::string, double> overrides;
  for (const auto& p : strings_of(vm, "param")) {
    const auto [name, value] = split_param(p);
    overrides[name] = parse_number(value, "--param " + name);
  }
  const auto start = std::chrono::steady_clock::now();
  const MechanismFile file = read_named_mechanism_file(path);
  const auto compiled = compile_mechanism(file, overrides);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const CompiledMechanism& c = *compiled;
  const auto model = make_model(path, overrides);
  Vec q, qd;
  model->default_initial(q, qd);
  if (vm.count("q0")) {
    const std::vector<double> values = parse_number_list(vm["q0"].as<std::string>(), "--q0");
    if (static_cast<int>(values.size()) != c.n)
      throw InputError("--q0 has " + std::to_string(values.size()) + " numbers for the " + std::to_string(c.n) +
                       " coordinates of " + c.name);
    for (int i = 0; i < c.n; ++i) q[i] = values[i];
  }
  auto& out = call.out;
  const int w = 22;
  auto line = [&](const std::string& key, const std::string& value) { out << std::left << std::setw(w) << key << value << "\n"; };
  line("file", file.path + " (sha256 " + file.sha256.substr(0, 12) + ")");
  line("mechanism", c.name + ": " + c.description);
  std::string coords;
  for (int i = 0; i < c.n; ++i) coords += (i ? ", " : "") + c.coordinates[i] + (c.units[i].empty() ? "" : " [" + c.units[i] + "]");
  line("coordinates", "n = " + std::to_string(c.n) + ": " + coords);
  auto rows = [](int k, const char* kind) { return std::to_string(k) + " " + kind + (k == 1 ? " row" : " rows"); };
  std::string kind = c.m == 0        ? "no constraints"
                     : c.holonomic   ? "holonomic h(q, t) = 0"
                     : c.position_rows > 0
                         ? "mixed: " + rows(c.position_rows, "position") + " h(q, t) = 0, then " +
                               rows(c.m - c.position_rows, "velocity") + " A(q) qd + b = 0"
                         : "Pfaffian A(q) qd + b = 0";
  if (c.time_dependent) kind += ", time-dependent";
  if (c.has_forces) kind += ", generalized forces";
  if (c.has_gyroscopic) kind += ", gyroscopic term dT/dqd at qd = 0";
  line("constraints", "m = " + std::to_string(c.m) + " (" + kind + ")");
  std::string params;
  for (const auto& [name, value] : c.parameters) params += (params.empty() ? "" : ", ") + name + " = " + format_number(value);
  line("parameters", params.empty() ? "none" : params);
  line("compiled", std::to_string(c.graph_nodes) + " graph nodes; tapes M " + std::to_string(c.mass.instructions()) +
                       ", V " + std::to_string(c.potential.instructions()) + ", constraints " +
                       std::to_string(c.constraint.instructions() + c.pfaffian.instructions()) +
                       " instructions; read and compiled in " + fmt(ms) + " ms");
  line("T quadratic in qd", "yes (checked: d2T/dqd2 does not change with the velocities)");
  if (c.n > kMeasuredCoordinates)  // issue 43: 2,000 coordinates took 61 s here without a word
    line("scale", "n = " + std::to_string(c.n) + " coordinates is beyond the " + std::to_string(kMeasuredCoordinates) +
                      " mechanism files are measured for (docs/mechanism-files.md, Limits: dense terms grow as n^2, "
                      "each step's solve as n^3)");
  auto ws = model->make_workspace();
  ModelTerms t = model->make_terms();
  model->evaluate(0.0, q, qd, kMassMatrix | kConstraintJacobian | kEnergy, *ws, t);
  std::vector<std::string> problems;  // what makes the check fail (exit 4)
  const MassMatrixSpectrum spectrum = mass_matrix_spectrum(t.M);
  line("mass matrix at q0", "symmetric positive definite, eigenvalues " + fmt(spectrum.min_eigenvalue) + " .. " +
                                fmt(spectrum.max_eigenvalue));
  if (c.m > 0) {
    Eigen::JacobiSVD<Mat> svd(t.A);
    const auto& s = svd.singularValues();
    int rank = 0;
    for (int i = 0; i < s.size(); ++i) rank += s[i] > 1e-9 * s[0];
    line("rank A(q0)", std::to_string(rank) + " of m = " + std::to_string(c.m) + " (singular values " +
                           fmt(s[s.size() - 1]) + " .. " + fmt(s[0]) + ")" +
                           (rank < c.m ? ": redundant rows (kkt, schur, nullspace, augmented_lagrangian accept them)" : ""));
    if (rank >= c.n && !c.time_dependent)
      problems.push_back("the constraints leave no degree of freedom: rank A(q0) = n = " + std::to_string(c.n) +
                         ", so nothing can move (remove a row, or add a coordinate)");
    const ConstraintResidual r = constraint_residual(*model, 0.0, q, qd);
    std::string residual = "|A qd0 + b| = " + fmt(r.velocity);
    if (c.position_rows > 0) residual = "|h(q0)| = " + fmt(r.position) + ", " + residual;
    const bool consistent = r.velocity <= kInitialStateTolerance && r.position <= kInitialStateTolerance;  // the runner's
    line("initial residual", residual + (consistent ? " (consistent)" : " (runs project the initial state onto the constraints)"));
    // A start off the position rows is a mistake in the file (a velocity is commonly given roughly and projected;
    // a position that violates h is not the configuration the file means): named row by row, and the check fails.
    if (!(r.position <= kInitialStateTolerance))
      for (const PositionRowOff& off : position_rows_off(*model, q, 0.0, kInitialStateTolerance))
        problems.push_back("q0 is off " + off.label() + ": h = " + fmt(off.h) +
                           " (give a q0 on h(q) = 0; runs would move it by Gauss-Newton)");
    const ConstraintAnalysis a = analyze_problem(path, overrides, q);
    line("integrability", a.verdict);
  }
  line("energy at q0", "T + V = " + fmt(t.energy()));
  // The optional sections (docs/mechanism-files.md): what the file adds, each checked at q0 by compile_mechanism.
  std::string sections;
  auto add = [&sections](const std::string& s) { sections += (sections.empty() ? "" : "; ") + s; };
  auto listed = [](const auto& items, const auto& name) {  // "a, b, c"
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + name(item);
    return out;
  };
  if (!c.actuated.empty()) add("actuated " + listed(c.actuated, [&](int i) { return c.coordinates[i]; }));
  if (c.velocity_basis.outputs() > 0) add("velocity basis (A S = 0 at q0)");
  if (c.transversal_frame.outputs() > 0) add("transversal frame (A X = I at q0)");
  if (c.closed_form.outputs() > 0) add("closed form");
  if (c.reference) add("published values at t = " + format_number(c.reference->t) + " [" + c.reference->source + "]");
  else if (!c.reference_withheld.empty()) add("published values withheld: " + c.reference_withheld);
  if (!c.points.empty())
    add("points " + listed(c.points, [](const CompiledMechanism::Point& p) { return p.name; }) + " (reference point " +
        c.points.front().name + ")");
  if (!c.body_velocities.empty())
    add("body velocities " + listed(c.body_velocities, [](const CompiledMechanism::BodyVelocity& v) { return v.name; }));
  line("optional sections", sections.empty() ? "none" : sections);
  for (const std::string& b : c.bodies) line("body", b);  // [bodies] and [[rolling]] (issue 41)
  line("units", c.unit_check);  // the dimensional analysis (issue 42)
  if (problems.empty()) {
    line("problems found", "none");
    return kExitOk;
  }
  for (const std::string& p : problems) line("problems found", p);
  return kExitCheckFailed;
}

int mechanism(const CommandInvocation& call) {
  const po::options_description options = mechanism_options();
  if (call.args.empty() || call.args[0] == "--help" || call.args[0] == "-h") {
    call.out << mechanism_help();
    return kExitOk;
  }
  const std::string action = call.args[0];
  if (action != "check" && action != "export")
    throw InputError("mechanism: unknown action '" + echo_value(action) +
                     "' (expected check or export; clmbench mechanism --help)");
  std::vector<std::string> rest(call.args.begin() + 1, call.args.end());
  const po::variables_map vm = parse_command_line(rest, options, "mechanism", "file");
  if (vm.count("help")) {
    call.out << mechanism_help();
    return kExitOk;
  }
  const auto files = strings_of(vm, "file");
  if (files.size() != 1) throw InputError("mechanism " + action + " takes one FILE.toml (clmbench mechanism --help)");
  if (!is_mechanism_file(files[0]))
    throw InputError("mechanism " + action + ": '" + echo_value(files[0]) +
                     "' is not a mechanism file (a path ending in .toml)");
  if (action == "export") {
    if (vm.count("param") || vm.count("q0"))
      throw InputError("mechanism export: --param and --q0 are check's (the header keeps every parameter)");
    const MechanismFile file = read_named_mechanism_file(files[0]);
    // Beyond the measured scale (issue 43: 2,000 coordinates wrote a 116 MB header without a word): said first,
    // since the derivation and the header grow as n^2.
    if (static_cast<int>(file.coordinates.size()) > kMeasuredCoordinates)
      call.err << "clmbench: note: n = " << file.coordinates.size() << " coordinates is beyond the "
               << kMeasuredCoordinates << " mechanism files are measured for: the derivation and the header grow as "
                  "n^2 (closed_chain(300): 8 MB)" << std::endl;
    const std::string format = vm["format"].as<std::string>();
    if (format != "header" && format != "sympy" && format != "latex")
      throw InputError("mechanism export: --format '" + echo_value(format) + "' is not one of header, sympy, latex");
    const std::string header = format == "sympy"   ? export_sympy(file)
                               : format == "latex" ? export_latex(file)
                                                   : export_header(file);
    if (!vm.count("out")) {
      call.out << header;
      return kExitOk;
    }
    write_whole(vm["out"].as<std::string>(), header);
    call.err << "wrote " << vm["out"].as<std::string>() << "\n";
    return kExitOk;
  }
  if (vm.count("out")) throw InputError("mechanism check: --out is export's");
  if (!vm["format"].defaulted()) throw InputError("mechanism check: --format is export's");
  return check(call, files[0], vm);
}

}  // namespace

Command mechanism_command() {
  return {"mechanism", "check a mechanism file (docs/mechanism-files.md): sizes, kind, M at q0, rank of A, initial\n"
                       "residual, integrability; or export it as a C++ header for the zoo; an error in the file is\n"
                       "one line FILE:LINE:COLUMN",
          mechanism_help, mechanism};
}

}  // namespace clm
