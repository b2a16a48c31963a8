// `clmbench sweep CONFIG.ini`: the runs of the [sweep] grid (studies/sweep_plan.hpp), K at a time, each
// into its own part file, merged into one results file (studies/sweep_runner.hpp); shardable
// (--shard i/n) and, under mpirun, spread over the ranks (studies/process_group.hpp).
#include <iostream>
#include <regex>
#include <sstream>

#include "core/types.hpp"
#include "app/command.hpp"
#include "io/results_file.hpp"
#include "studies/process_group.hpp"
#include "studies/sweep_plan.hpp"
#include "studies/sweep_runner.hpp"
#include "core/value_parsing.hpp"

namespace clm {

namespace {

const char* kSweepUsage = R"(usage:
  clmbench sweep CONFIG.ini [--jobs K] [--out FILE.h5] [--resume] [--shard i/n] [--dry-run]
                 [--set section.key=value ...] [--progress auto|always|never]
  mpirun -n K clmbench sweep CONFIG.ini [same flags]
)";

const char* kSweepDetails = R"(
The grid: the Cartesian product of the lists of the config's [sweep] section. A bare key is a [run] key,
any other section's key is section.key:
    [sweep]
    formulation = kkt schur nullspace
    rtol = 1e-4 1e-6 1e-8
    param.b = 0.1 0.3
    formulation.N = 1e2 1e4 1e6
Lists of an optional [sweep.zip] section vary together (one axis; they must have the same length):
    [sweep.zip]
    rtol = 1e-4 1e-6 1e-8
    atol = 1e-6 1e-8 1e-10
The axes follow the order of their keys in the file, the first varying slowest. Each value is applied as
the top config layer and checked exactly like a config value; every run is resolved and checked (names,
refusals, initial data) before the first one starts. A multi-run config ([run.NAME] sections) runs every
named run at every grid point (the sweep value overrides [run.NAME] too).

Run ids: the index in grid order, zero-padded, then NAME (multi-run configs) and key=value per axis, e.g.
07_formulation=schur_rtol=1e-6; a sorted listing is grid order. Each run records its resolved options as
attributes (like `run`) plus sweep_index and sweep_point ("formulation=schur rtol=1e-6").

Runs are independent: one that diverges or fails is recorded with its status and the sweep goes on
(exit code 0). Finished runs are committed to part files OUT.parts/<first run_id>.part (each job commits
the runs it finished about every 0.2 s, a longer run alone; renamed into place when complete). A part file
is no HDF5 file: it records the HDF5 writes of its runs, their chunks already compressed, so the jobs write
side by side without HDF5's lock (Debian's HDF5 is not thread-safe). One merger thread replays the parts
into OUT's temporary file while the jobs compute; after the last run the rest is merged, /summary written
in grid order, OUT renamed into place and OUT.parts removed. Reference runs are computed first, each once,
side by side; then the runs, longest first. The numbers in OUT do not depend on --jobs, the shards or the
MPI ranks. The merger's HDF5 writes (0.5-0.9 ms a run of ~120 objects) are what the jobs cannot share:
16 jobs are predicted 14-15x faster than one on runs of 10 ms and more, given many more runs than jobs
(docs/guide/sweeps.md). If OUT cannot be written meanwhile (a full disk, a damaged part), the jobs stop after
the runs in progress and the sweep exits 2 naming the cause; --resume merges the finished runs and computes
the rest.

--resume continues an interrupted sweep (Ctrl-C, kill -9, a node lost): runs in a committed part file,
computed from the same resolved configuration, are skipped, the rest computed, and OUT is the file
an uninterrupted sweep writes. A part computed from another configuration, or a file in OUT.parts that
no run of the grid names, is an error naming it (remove it to recompute). Without --resume, existing parts
are an error (never silently mixed into a new sweep). A sweep that finished removed its parts: --resume
then computes every run again, and says so in a warning.

--shard i/n runs every n-th run starting at index i (0 <= i < n) into its own complete results file (--out,
default OUT with .shard-i-of-n before .h5); `clmbench merge OUT.h5 SHARD.h5 ...` joins them.
Under mpirun the ranks split the shard's runs (the runs of one reference run on one rank, longest groups
first to the least loaded rank), all ranks write parts into the shared OUT.parts (a file system all ranks
see), and rank 0 merges and prints the summary.
MPI is initialized only when launched by mpirun.
)";

po::options_description sweep_flags() {
  po::options_description o("sweep options", 100, 50);
  o.add_options()
      ("jobs,j", po::value<std::string>()->default_value("1"), "K: runs carried out at once (threads; each run single-threaded)")
      ("out", po::value<std::string>(), "output HDF5 file, default [run] out, else results/<config name>.h5")
      ("resume", po::bool_switch(), "continue an interrupted sweep from its part files OUT.parts/")
      ("shard", po::value<std::string>(), "i/n: only every n-th run, starting at index i (0 <= i < n)")
      ("dry-run", po::bool_switch(), "check every run and print them (id and varying keys) and their number; run and write nothing")
      ("set", po::value<std::vector<std::string>>()->composing(),
       "section.key=value, repeatable: edit one key of the config file (e.g. --set sweep.dt='1e-2 1e-3')")
      ("progress", po::value<std::string>()->default_value("auto"),
       "auto | always | never: runs done / total, failures, elapsed, ETA on stderr; auto: a line redrawn on a "
       "terminal for sweeps over 2 s, otherwise a plain line every 30 s")
      ("help,h", "this help");
  return o;
}

std::string sweep_help() {
  std::ostringstream s;
  s << kSweepUsage << "\n" << sweep_flags() << kSweepDetails << "\n" << exit_codes_help();
  return s.str();
}

int parse_jobs(const std::string& text) {
  static const std::regex digits("[0-9]{1,6}");
  if (!std::regex_match(text, digits) || std::stol(text) < 1)
    throw InputError("--jobs must be a whole number of at least 1, got '" + echo_value(text) + "'");
  return static_cast<int>(std::stol(text));
}

std::pair<size_t, size_t> parse_shard(const std::string& text) {
  static const std::regex form("([0-9]{1,9})/([0-9]{1,9})");
  std::smatch m;
  if (!std::regex_match(text, m, form))
    throw InputError("--shard must be i/n (e.g. --shard 0/4: the first of 4 shards), got '" + echo_value(text) + "'");
  const size_t i = std::stoul(m[1]), n = std::stoul(m[2]);
  if (n == 0) throw InputError("--shard " + text + ": the number of shards must be at least 1");
  if (i >= n)
    throw InputError("--shard " + text + ": the shard index must be below the number of shards (0 .. " +
                     std::to_string(n - 1) + ")");
  return {i, n};
}

// "results/x.h5" -> "results/x.shard-1-of-4.h5"
std::string shard_output(const std::string& out, size_t i, size_t n) {
  const std::string tag = ".shard-" + std::to_string(i) + "-of-" + std::to_string(n);
  const auto slash = out.find_last_of('/');
  const auto dot = out.find_last_of('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) return out.substr(0, dot) + tag + out.substr(dot);
  return out + tag;
}

int sweep(const CommandInvocation& call) {
  const po::options_description flags = sweep_flags();
  const po::variables_map vm = parse_command_line(call.args, flags, "sweep", "config");
  if (vm.count("help")) {
    call.out << sweep_help();
    return kExitOk;
  }
  const std::optional<std::string> config_path = single_config(vm, "sweep");
  if (!config_path) throw InputError("sweep needs a config file with a [sweep] section (see clmbench sweep --help)");
  SweepOptions options;
  options.jobs = parse_jobs(vm["jobs"].as<std::string>());
  options.resume = vm["resume"].as<bool>();
  options.progress = progress_mode(vm["progress"].as<std::string>());
  options.command_line = call.command_line;
  const bool dry_run = vm["dry-run"].as<bool>();
  std::optional<std::pair<size_t, size_t>> shard;
  if (vm.count("shard")) shard = parse_shard(vm["shard"].as<std::string>());
  const std::optional<std::string> out_flag =
      vm.count("out") ? std::optional<std::string>(vm["out"].as<std::string>()) : std::nullopt;

  // MPI (when launched by mpirun) before anything can fail, so that every rank ends through the group.
  const std::unique_ptr<ProcessGroup> group = make_process_group();

  // Everything that can be wrong with the input is found here, by every process alike, before any run
  // starts; under MPI the lowest failing rank reports it and every rank ends.
  SweepPlan plan;
  std::vector<size_t> selection;
  std::exception_ptr failure;
  std::ostringstream quiet;
  try {
    ConfigLayer file = read_config_file(*config_path);
    for (const auto& s : strings_of(vm, "set")) apply_set(file, s);
    plan = plan_sweep(*config_path, file, out_flag);
    if (shard && !out_flag) plan.out = shard_output(plan.out, shard->first, shard->second);
    for (size_t k = 0; k < plan.runs.size(); ++k)
      if (!shard || k % shard->second == shard->first) selection.push_back(k);
    // A dry run validates too: it answers "would this sweep run?" (rattle on the sleigh passed the dry run
    // and was refused by the sweep; issue 21).
    validate_runs(plan, selection, group->rank() == 0 ? call.err : quiet);
  } catch (...) {
    failure = std::current_exception();
  }
  const int first_failure = group->first_failure(static_cast<bool>(failure));
  if (first_failure == group->rank()) std::rethrow_exception(failure);
  if (first_failure >= 0) return kExitInput;

  const bool speaker = group->rank() == 0;
  if (dry_run) {
    if (speaker) {
      call.out << "sweep of " << *config_path << ": " << plan.runs.size() << " run" << (plan.runs.size() == 1 ? "" : "s")
               << " (" << plan.shape << ")";
      if (shard) call.out << "; shard " << shard->first << "/" << shard->second << ": " << selection.size() << " of them";
      call.out << "\n";
      size_t width = 0;
      for (size_t k : selection) width = std::max(width, plan.runs[k].spec.run_id.size());
      for (size_t k : selection) {
        const RunSpec& s = plan.runs[k].spec;
        call.out << "  " << s.run_id << std::string(width + 2 - s.run_id.size(), ' ') << s.sweep_point << "\n";
      }
      call.out << "output: " << plan.out << " (dry run: nothing was run or written)\n";
    }
    return kExitOk;
  }

  SweepReport report;
  try {
    report = run_sweep(plan, selection, options, *group, call.out, call.err);
  } catch (const PeerFailure&) {
    return kExitInput;
  } catch (const InputError&) {
    throw;  // parts of another sweep (found before the split, agreed by every process) or a merge input
  } catch (const InputChangedDuringSweep& e) {
    // The input's fault (exit 1), found by one process after the split: under MPI it ends the whole job.
    if (group->size() > 1) {
      call.err << "clmbench: error: " << group->description() << ": " << e.what() << std::endl;
      group->abort(kExitInput);
    }
    throw InputError(e.what());
  } catch (const std::exception& e) {
    // After the split another process may be waiting for this one: end the whole job.
    if (group->size() > 1) {
      call.err << "clmbench: error: " << group->description() << ": " << e.what() << std::endl;
      group->abort(dynamic_cast<const OutputError*>(&e) ? kExitOutput : kExitInternal);
    }
    throw;
  }
  if (report.merged) {
    size_t total = 0;
    std::string statuses;
    for (const auto& [status, count] : report.statuses) {
      total += count;
      statuses += (statuses.empty() ? "" : ", ") + std::to_string(count) + " " + status;
    }
    call.out << "wrote " << plan.out << " (" << total << " run" << (total == 1 ? "" : "s");
    if (!statuses.empty()) call.out << ": " << statuses;
    call.out << "; computed " << report.computed << (group->size() > 1 ? " on rank 0" : "") << ", resumed "
             << report.resumed << ", " << options.jobs << " job" << (options.jobs == 1 ? "" : "s");
    if (group->size() > 1) call.out << " x " << group->size() << " ranks";
    // --jobs 64 on 3 runs starts 3 threads: say so, not only "64 jobs".
    if (report.threads > 0 && report.threads < options.jobs) {
      if (group->size() > 1) call.out << " (rank 0 used " << report.threads << ": one run each at most)";
      else call.out << " (" << report.threads << " used: one run each at most)";
    }
    call.out << ", " << ProgressLine::duration_text(report.wall_seconds) << ")\n";
    // Runs that followed other equations than their formulation's theorem or limit assumes (issue 24 item 2):
    // said once for the sweep, the run-by-run lines are in /summary's validity column.
    if (report.outside_conditions)
      call.err << "clmbench: warning: sweep: " << report.outside_conditions << " of " << total
               << " runs outside their formulation's validity conditions (/summary column validity), e.g.: "
               << report.first_outside << "\n";
  }
  return kExitOk;
}

}  // namespace

Command sweep_command() {
  return {"sweep",
          "the runs of a config's [sweep] grid (--jobs K at once, --shard i/n, mpirun), resumable, into one HDF5 file",
          sweep_help, sweep};
}

}  // namespace clm
