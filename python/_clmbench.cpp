// _clmbench: the extension module under the Python package clmbench (python/clmbench, docs/python.md). One call
// per invocation (run_config: a whole configuration, as `clmbench run` runs it), the GIL released while the runs
// integrate, the samples handed to numpy as views of the C++ record (no copy), and the results file written
// exactly as `clmbench run` writes it (save). The keys come from the one option table (options()): the Python
// layer maps keyword arguments onto (section, key) and never keeps a list of its own.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "app/command.hpp"
#include "core/formulation.hpp"
#include "core/problem_registry.hpp"
#include "core/types.hpp"
#include "core/value_parsing.hpp"
#include "io/results_file.hpp"
#include "io/signal_cleanup.hpp"
#include "mechanism_files/mechanism_file.hpp"
#include "runs/mechanism/file_model.hpp"
#include "runs/progress_line.hpp"
#include "runs/reference_cache.hpp"
#include "runs/results_writer.hpp"
#include "runs/run_config.hpp"
#include "runs/run_options.hpp"
#include "runs/runner.hpp"

namespace {

// The memory the kernel says a process can still take (MemAvailable of /proc/meminfo), in bytes; 0 when unknown.
double available_memory_bytes() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return 0;
  char line[256];
  double kb = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}

}  // namespace


namespace py = pybind11;

namespace {

using namespace clm;

// What one run_config call produced: the records with their samples, and what a results file records of the
// invocation (the resolved configuration, the call, the config file read).
struct Invocation {
  std::vector<std::shared_ptr<const RunRecord>> records;
  RunConfig config;  // resolved; its `out` is set to the file a save writes (to_config_text records it)
  std::string command_line;
  std::vector<std::string> inputs;
};

struct Run {
  std::shared_ptr<const Invocation> invocation;
  std::size_t index = 0;
  const RunRecord& record() const { return *invocation->records[index]; }
};

// Ctrl-C while the GIL is released: io/signal_cleanup.hpp's cooperative interruption for the call (the runner
// polls it at every sample, a sweep between runs; files are removed or kept as on a signal), and
// KeyboardInterrupt once the call has unwound.
struct CooperativeInterrupt {
  CooperativeInterrupt() { set_cooperative_interrupt(true); }
  ~CooperativeInterrupt() { set_cooperative_interrupt(false); }
};
[[noreturn]] void raise_keyboard_interrupt(const std::string& why) {
  PyErr_SetString(PyExc_KeyboardInterrupt, why.c_str());
  throw py::error_already_set();
}

// Resolves the configuration (a config file and its --set edits, and keys by section as the command line's flags
// give them) and runs every run of it, keeping the samples.
std::shared_ptr<const Invocation> run_config(const std::optional<std::string>& config, const std::vector<std::string>& sets,
                                             const std::map<std::string, std::map<std::string, std::string>>& keys,
                                             const std::string& progress, const std::string& command_line) {
  ConfigLayer flags;
  for (const auto& [section, entries] : keys)
    for (const auto& [key, value] : entries) flags[section][key] = {value, "clmbench.run(" + key + "=...)"};
  if (!config && !flags.count("run"))
    throw InputError("clmbench.run needs a config file or problem, formulation and integrator");
  if (!config && !sets.empty()) throw InputError("set= edits a config file, but none was given");
  auto out = std::make_shared<Invocation>();
  out->command_line = command_line;
  if (config) out->inputs.push_back(*config);
  const ProgressMode mode = progress_mode(progress);
  std::string interrupted;
  {
    CooperativeInterrupt cooperative;
    py::gil_scoped_release release;
    // The output path is never used: nothing is written unless the caller saves.
    const RunConfig resolved = load_run_config(config, sets, flags, std::string("clmbench-python.h5"));
    out->config = resolved;
    std::vector<PreparedRun> prepared;
    for (const RunSpec& spec : resolved.runs) {
      prepared.push_back(prepare_run(spec, std::cerr));
      if (spec.reference.compute) check_reference(prepared.back());
    }
    // Python keeps every run's samples in memory (the command streams them to its file): refused before anything
    // runs when they would not fit (issue 43: "unexpected error: std::bad_alloc" after the run had computed).
    double bytes = 0;
    for (const PreparedRun& run : prepared) bytes += run.sample_bytes;
    if (const double available = available_memory_bytes(); available > 0 && bytes > 0.8 * available) {
      char text[200];
      std::snprintf(text, sizeof text, "about %.3g GB, more than the %.3g GB this machine has available", bytes / 1e9,
                    available / 1e9);
      throw InputError("clmbench.run: the samples of " + std::string(prepared.size() == 1 ? "the run" : "its runs") +
                       " would take " + text + " in memory (raise output_every or shorten t_end, or write them to a "
                       "file with `clmbench run`, which streams them)");
    }
    ReferenceCache references;
    for (PreparedRun& run : prepared) {
      try {  // the reference run is a run too: Ctrl-C stops it as well
        std::shared_ptr<const ReferenceTrajectory> reference;
        if (run.spec.reference.compute) {
          ProgressLine line(std::cerr, mode, "reference of run " + run.spec.run_id);
          reference = references.get(run, &line);
        }
        ProgressLine line(std::cerr, mode, "run " + run.spec.run_id);
        out->records.push_back(std::make_shared<const RunRecord>(
            execute_run(run, nullptr, /*keep_samples=*/true, &line, reference.get())));
      } catch (const std::bad_alloc&) {  // output_every = 0 (a sample per step) has no estimate
        throw InputError("clmbench.run: run " + run.spec.run_id + " ran out of memory keeping its samples (output_every = " +
                         format_number(run.spec.output_every) + "; raise it, or write them with `clmbench run`)");
      } catch (const Interrupted& e) {
        interrupted = std::string("run ") + run.spec.run_id + ": " + e.what();
        break;
      }
      // prepare_run printed the run's first warnings (its options without effect); the run's own come after them.
      const auto& warnings = out->records.back()->warnings;
      for (size_t i = run.warnings.size(); i < warnings.size(); ++i)
        std::cerr << "clmbench: warning: run " << run.spec.run_id << ": " << warnings[i] << "\n";
      run.formulation.reset();
    }
    // A Ctrl-C after the last sample is not lost (the flag is cleared when the call ends).
    if (interrupted.empty() && interrupt_requested()) interrupted = "interrupted";
  }
  if (!interrupted.empty()) raise_keyboard_interrupt(interrupted);
  return out;
}

// The results file of `runs` (all from one invocation), written as `clmbench run` writes it.
void save(const std::vector<Run>& runs, const std::string& path) {
  if (runs.empty()) throw InputError("save: no runs to write");
  const Invocation& inv = *runs.front().invocation;
  for (const Run& r : runs)
    if (r.invocation.get() != &inv) throw InputError("save: the runs come from different clmbench.run calls");
  py::gil_scoped_release release;
  check_output_path(path, inv.inputs);
  RunConfig config = inv.config;
  config.out = path;
  ResultsWriter writer(path, inv.inputs);
  for (const Run& r : runs) writer.write_run(r.record());
  writer.commit({inv.command_line, to_config_text(config), ""});
}

// A view of a record's samples as a numpy array (rows: samples), owned by the Run object that holds the record.
// Read-only: the record is also what save() writes.
py::array samples(const Run& run, const std::vector<double>& data, std::size_t columns, py::handle owner) {
  const std::size_t k = run.record().samples();
  py::array a = columns == 0
                    ? py::array_t<double>({k}, {sizeof(double)}, data.data(), owner)
                    : py::array_t<double>({k, columns}, {columns * sizeof(double), sizeof(double)}, data.data(), owner);
  a.attr("setflags")(py::arg("write") = false);
  return a;
}

// A command of the program (app/command.hpp), in process: its output captured, its progress and warnings on
// stderr as the command prints them, its errors raised (ValueError, OSError). sweep, kozlov and analyze go
// through here: one code path with the command line's.
std::pair<int, std::string> command(const std::string& name, const std::vector<std::string>& args,
                                    const std::string& command_line) {
  for (Command (*make)() : {&sweep_command, &kozlov_command, &analyze_command, &mechanism_command, &merge_command,
                            &info_command}) {
    const Command c = make();
    if (c.name != name) continue;
    std::ostringstream out;
    int code = 0;
    std::string interrupted;
    {
      CooperativeInterrupt cooperative;
      py::gil_scoped_release release;
      try {
        code = c.run({args, command_line, out, std::cerr});
      } catch (const Interrupted& e) {
        interrupted = std::string("clmbench ") + name + ": " + e.what();
      }
      if (interrupted.empty() && interrupt_requested()) interrupted = "clmbench " + name + ": interrupted";
    }
    if (!interrupted.empty()) raise_keyboard_interrupt(interrupted);
    return {code, out.str()};
  }
  throw InputError("no command '" + name + "' in the Python package");
}

py::object number_or_none(double v) { return std::isnan(v) ? py::none() : py::object(py::float_(v)); }

}  // namespace

PYBIND11_MODULE(_clmbench, m) {
  m.doc() = "clmbench's extension module (use the package clmbench: docs/python.md)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const OutputError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const Interrupted& e) {  // a backstop: the calls above raise it with where it stopped
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    }
  });

  // The option table: (section, key, type, default, unit, description, attribute), one row per key.
  m.def("options", [] {
    py::list rows;
    for (const auto& o : run_options())
      rows.append(py::make_tuple(o.section, o.key, o.type == OptionType::kBool ? "bool" : "text", o.default_text(), o.unit,
                                 o.description, o.attribute));
    return rows;
  });

  py::class_<Invocation, std::shared_ptr<Invocation>>(m, "Invocation")
      .def_property_readonly("config_text", [](const Invocation& i) { return to_config_text(i.config); });

  py::class_<Run>(m, "Run")
      .def_property_readonly("run_id", [](const Run& r) { return r.record().spec.run_id; })
      .def_property_readonly("problem", [](const Run& r) { return r.record().spec.problem; })
      .def_property_readonly("formulation", [](const Run& r) { return r.record().spec.formulation; })
      .def_property_readonly("integrator", [](const Run& r) { return r.record().spec.integrator; })
      .def_property_readonly("status", [](const Run& r) { return r.record().status; })
      .def_property_readonly("message", [](const Run& r) { return r.record().message; })
      .def_property_readonly("coordinate_names", [](const Run& r) { return r.record().coordinate_names; })
      .def_property_readonly("coordinate_units", [](const Run& r) { return r.record().coordinate_units; })
      // lam's columns: the constraint rows' names (position rows first) or lambda1 .. lambdam.
      .def_property_readonly("lambda_columns", [](const Run& r) { return r.record().lambda_columns(); })
      .def_property_readonly("params", [](const Run& r) {
        py::dict d;
        for (const auto& [name, value] : r.record().parameters) d[py::str(name)] = value;
        return d;
      })
      .def_property_readonly("t", [](py::object self) {
        const Run& r = self.cast<const Run&>();
        return samples(r, r.record().t, 0, self);
      })
      .def_property_readonly("q", [](py::object self) {
        const Run& r = self.cast<const Run&>();
        return samples(r, r.record().q, r.record().n, self);
      })
      .def_property_readonly("qd", [](py::object self) {
        const Run& r = self.cast<const Run&>();
        return samples(r, r.record().qd, r.record().n, self);
      })
      .def_property_readonly("lam", [](py::object self) {
        const Run& r = self.cast<const Run&>();
        return samples(r, r.record().lambda, r.record().m, self);
      })
      .def_property_readonly("energy", [](py::object self) {
        const Run& r = self.cast<const Run&>();
        return samples(r, r.record().energy, 0, self);
      })
      .def_property_readonly("drift_velocity", [](py::object self) {
        const Run& r = self.cast<const Run&>();
        return samples(r, r.record().drift_velocity, 0, self);
      })
      .def_property_readonly("drift_position", [](py::object self) -> py::object {
        const Run& r = self.cast<const Run&>();
        if (!r.record().records_position_drift()) return py::none();  // Pfaffian problems record no |h|
        return samples(r, r.record().drift_position, 0, self);
      })
      // The error against the reference at every sample (K x 3: |q - q_ref|, |qd - qd_ref|, |lambda - lambda_ref|),
      // the file's /runs/<id>/error_vs_reference; None when the run has no reference compared at every sample.
      .def_property_readonly("error_vs_reference", [](py::object self) -> py::object {
        const Run& r = self.cast<const Run&>();
        if (!r.record().records_reference_error) return py::none();
        return samples(r, r.record().reference_error, 3, self);
      })
      // The named points' positions (K x columns NAME.x, NAME.y[, NAME.z]; point_columns names them), the file's
      // /runs/<id>/points; None for a mechanism that declares none.
      .def_property_readonly("points", [](py::object self) -> py::object {
        const Run& r = self.cast<const Run&>();
        if (r.record().point_columns.empty()) return py::none();
        return samples(r, r.record().points, static_cast<int>(r.record().point_columns.size()), self);
      })
      .def_property_readonly("point_columns", [](const Run& r) { return r.record().point_columns; })
      // The body velocities (K x body_velocity_columns), the file's /runs/<id>/body_velocities; None for a
      // mechanism that declares none.
      .def_property_readonly("body_velocities", [](py::object self) -> py::object {
        const Run& r = self.cast<const Run&>();
        if (r.record().body_velocity_columns.empty()) return py::none();
        return samples(r, r.record().body_velocities, static_cast<int>(r.record().body_velocity_columns.size()), self);
      })
      .def_property_readonly("body_velocity_columns", [](const Run& r) { return r.record().body_velocity_columns; })
      // The /summary row a results file holds for the run: every column by name ("-" figures are None).
      .def_property_readonly("summary", [](const Run& r) {
        py::dict d;
        for (const SummaryColumn& c : summary_of(r.record())) {
          std::visit(
              [&](const auto& v) {
                using V = typename std::decay_t<decltype(v)>::value_type;
                if constexpr (std::is_same_v<V, double>) d[py::str(c.name)] = number_or_none(v.front());
                else d[py::str(c.name)] = v.front();
              },
              c.values);
        }
        return d;
      })
      // The attributes the results file gives the run's group (run_attributes: one list with the writer).
      .def_property_readonly("attrs", [](const Run& r) {
        py::dict d;
        for (const auto& [name, value] : run_attributes(r.record()))
          std::visit([&, &name = name](const auto& v) { d[py::str(name)] = v; }, value);
        return d;
      })
      .def_property_readonly("invocation", [](const Run& r) { return r.invocation; });

  m.def(
      "run_config",
      [](const std::optional<std::string>& config, const std::vector<std::string>& sets,
         const std::map<std::string, std::map<std::string, std::string>>& keys, const std::string& progress,
         const std::string& command_line) {
        const auto inv = run_config(config, sets, keys, progress, command_line);
        std::vector<Run> runs;
        for (std::size_t i = 0; i < inv->records.size(); ++i) runs.push_back({inv, i});
        return runs;
      },
      py::arg("config"), py::arg("sets"), py::arg("keys"), py::arg("progress"), py::arg("command_line"));
  // clmbench.terms (issue 42): the model's terms at one state, evaluated as a run evaluates them (a mechanism file
  // natively where a run would be), and, for a formulation whose state is (q, qd), its qdd and lambda there.
  m.def(
      "terms",
      [](const std::string& problem, const std::map<std::string, double>& params, const std::vector<double>& q,
         const std::vector<double>& qd, double t, const std::optional<std::string>& formulation) {
        std::shared_ptr<const Model> model;
        {
          py::gil_scoped_release release;
          model = is_mechanism_file(problem) ? make_file_model(problem, params, "auto").model : make_model(problem, params);
        }
        const int n = model->n(), m = model->m();
        if (static_cast<int>(q.size()) != n || static_cast<int>(qd.size()) != n)
          throw InputError("clmbench.terms: problem " + model->name() + " has " + std::to_string(n) + " coordinates; q has " +
                           std::to_string(q.size()) + " entries and qd " + std::to_string(qd.size()));
        const Vec qv = Eigen::Map<const Vec>(q.data(), n), qdv = Eigen::Map<const Vec>(qd.data(), n);
        auto ws = model->make_workspace();
        ModelTerms terms = model->make_terms();
        unsigned what = kMassMatrix | kBias | kForce | kEnergy;
        if (m > 0)
          what |= kConstraintJacobian | kConstraintBias | (model->has_position_rows() ? kConstraintValue : 0u) |
                  (model->time_dependent() ? kConstraintRate : 0u);
        model->evaluate(t, qv, qdv, what, *ws, terms);
        auto array = [](const Mat& x) {  // row-major numpy copy
          py::array_t<double> a({x.rows(), x.cols()});
          auto r = a.mutable_unchecked<2>();
          for (Eigen::Index i = 0; i < x.rows(); ++i)
            for (Eigen::Index j = 0; j < x.cols(); ++j) r(i, j) = x(i, j);
          return a;
        };
        auto vector = [](const Vec& x) { return py::array_t<double>(x.size(), x.data()); };
        py::dict d;
        d["M"] = array(terms.M);
        d["c"] = vector(terms.c);
        d["F"] = vector(terms.F);
        d["A"] = array(m > 0 ? terms.A : Mat(0, n));
        d["Adot_qd"] = vector(m > 0 ? terms.Adot_qd : Vec(0));
        d["h"] = vector(terms.h.size() ? terms.h : Vec(0));
        d["b"] = vector(terms.b.size() ? terms.b : Vec::Zero(m));
        d["T"] = terms.kinetic;
        d["V"] = terms.potential;
        d["energy"] = terms.energy();
        if (formulation) {
          auto f = formulation_registry().get(*formulation).make(model, FormulationOptions{});
          if (!f->state_starts_with_q_qd())
            throw InputError("clmbench.terms: formulation " + *formulation + " integrates other velocity coordinates; "
                             "qdd and lambda come from those whose state is (q, qd): kkt, schur, penalty, added_mass, "
                             "vakonomic, fernandez_bloch");
          Vec y(f->dimension()), dy(f->dimension());
          y.setZero();
          y.head(n) = qv;
          y.segment(n, n) = qdv;
          f->rhs(t, y, dy);
          Observation obs;
          f->observe(t, y, obs);
          d["qdd"] = vector(Vec(dy.segment(n, n)));
          d["lambda"] = vector(obs.lambda);
        }
        return d;
      },
      py::arg("problem"), py::arg("params"), py::arg("q"), py::arg("qd"), py::arg("t"), py::arg("formulation"));
  m.def("save", &save, py::arg("runs"), py::arg("path"));
  m.def("command", &command, py::arg("name"), py::arg("args"), py::arg("command_line"));
}
