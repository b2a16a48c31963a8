#include "studies/sweep_runner.hpp"

#include "runs/reference_cache.hpp"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <exception>
#include <limits>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <set>
#include <thread>

#include "core/input_changed.hpp"
#include "core/types.hpp"
#include "runs/results_writer.hpp"
#include "studies/process_group.hpp"
#include "io/config_identity.hpp"
#include "io/output_lock.hpp"
#include "io/results_merge.hpp"
#include "io/signal_cleanup.hpp"
#include "runs/runner.hpp"
#include "runs/thread_cpu_time.hpp"
#include "core/value_parsing.hpp"
#include "studies/sweep_schedule.hpp"

namespace clm {

namespace fs = std::filesystem;

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// At most this many runs in one part: its root attribute run_configs (a reference per run) stays small,
// as HDF5 keeps attributes in the object header.
constexpr size_t kMaxRunsPerPart = 256;

// The part writer's share of a run, timed apart from the run: begin (the run's group and datasets) and
// finish (its data and attributes). sample() only buffers, except for a long run's full chunks, and is
// not timed (a clock read per sample would cost more than the buffering).
class TimedObserver : public RunObserver {
 public:
  explicit TimedObserver(RunObserver& inner) : inner_(inner) {}
  void begin(const RunRecord& header) override { timed([&] { inner_.begin(header); }); }
  void sample(double t, const Observation& obs, const SampleErrors& errors) override { inner_.sample(t, obs, errors); }
  void finish(const RunRecord& record) override { timed([&] { inner_.finish(record); }); }
  double wall = 0, cpu = 0;

 private:
  template <class F>
  void timed(F&& f) {
    const double w0 = now_seconds(), c0 = thread_cpu_seconds();
    struct Add {  // also when f throws
      TimedObserver& o;
      double w0, c0;
      ~Add() {
        o.wall += now_seconds() - w0;
        o.cpu += thread_cpu_seconds() - c0;
      }
    } add{*this, w0, c0};
    f();
  }
  RunObserver& inner_;
};

// A part file (io/part_file.hpp) is named after the first run it holds: OUT.parts/<run_id>.part.
constexpr const char* kPartSuffix = ".part";
bool is_part_name(const std::string& name) {
  const std::string suffix = kPartSuffix;
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string part_path(const SweepPlan& plan, const PlannedRun& run) {
  return (fs::path(parts_directory(plan.out)) / (run.spec.run_id + kPartSuffix)).string();
}

// Which selected runs have a complete part from the same configuration. Without --resume any part is an
// error (never silently mixed into a new sweep); with --resume a part of another configuration, or a file
// that is no part of this grid, is an error naming it (the user decides: remove it, or restore the config).
std::vector<bool> scan_parts(const SweepPlan& plan, const std::vector<size_t>& selection, bool resume,
                             bool remove_stale, std::ostream& err) {
  const std::string dir = parts_directory(plan.out);
  std::vector<bool> done(selection.size(), false);
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (!fs::exists(status)) {
    // A sweep that finished removed its parts; --resume then computes everything again, which the user
    // may not expect (they resumed to be sure it had finished): say so, once.
    if (resume && remove_stale)
      err << "clmbench: warning: sweep: --resume found no parts directory " << dir
          << (fs::exists(plan.out, ec) ? " (" + plan.out + " exists, and is replaced)" : std::string())
          << ": every run is computed\n";
    return done;
  }
  if (!fs::is_directory(status))
    throw OutputError("'" + dir + "' (where a sweep into " + plan.out + " keeps its part files) is not a directory");
  std::map<std::string, size_t> position;  // run id -> position in the selection
  for (size_t j = 0; j < selection.size(); ++j) position[plan.runs[selection[j]].spec.run_id] = j;
  size_t parts = 0, stale = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // A temporary of a writer that was killed: its run is not done. Removed here, once, when its process
    // no longer exists (by rank 0 alone: no part is written before every rank has scanned).
    if (const auto at = name.find(std::string(kPartSuffix) + ".tmp-"); at != std::string::npos) {
      const std::string digits = name.substr(at + std::string(kPartSuffix).size() + 5);
      const bool numeric = !digits.empty() && digits.size() <= 9 &&
                           std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (remove_stale && numeric && ::kill(static_cast<pid_t>(std::stol(digits)), 0) != 0 && errno == ESRCH) {
        std::error_code rm;
        stale += fs::remove(entry.path(), rm);
      }
      continue;
    }
    ++parts;
    if (!resume) continue;
    // A part is named after the first of its runs (OUT.parts/<run_id>.part) and holds the runs listed in
    // its trailer, each with the configuration it was computed from.
    const std::string stem = is_part_name(name) ? name.substr(0, name.size() - std::string(kPartSuffix).size()) : "";
    // An HDF5 part of a clmbench before issue 25 (OUT.parts/<run_id>.h5): its runs are not read, say so.
    if (stem.empty() && name.size() > 3 && name.compare(name.size() - 3, 3, ".h5") == 0 && position.count(name.substr(0, name.size() - 3)))
      throw InputError("'" + entry.path().string() + "' is a part file of an older clmbench (HDF5 parts; parts are " +
                       "OUT.parts/<run_id>.part now): remove " + dir + " to compute its runs again");
    if (!position.count(stem))
      throw InputError("'" + entry.path().string() + "' is no part of this sweep (no planned run has that id): " + dir +
                       " holds parts of a different sweep into " + plan.out + "; remove it, or choose another --out");
    const auto stored = stored_part_runs(entry.path().string());
    if (!stored)
      throw InputError("part file '" + entry.path().string() + "' is not a complete part file of this sweep" +
                       "; remove it and --resume again");
    for (const PartRun& part_run : *stored) {
      const auto it = position.find(part_run.run_id);
      if (it == position.end())
        throw InputError("part file '" + entry.path().string() + "' holds run " + part_run.run_id +
                         ", which this sweep does not plan: " + dir + " holds parts of a different sweep into " +
                         plan.out + "; remove it, or choose another --out");
      const PlannedRun& run = plan.runs[selection[it->second]];
      const std::string a = comparable_config(part_run.config), b = comparable_config(part_config(plan, run.spec));
      if (a != b)
        throw InputError("part file '" + entry.path().string() + "' was computed with a different configuration (" +
                         "it has " + first_difference(a, b, "the sweep now plans") + "); remove it (or " + dir + ") to recompute, or restore the config and the input files it names");
      done[it->second] = true;
    }
  }
  if (ec) throw OutputError("cannot list '" + dir + "': " + ec.message());
  if (stale)
    err << "clmbench: note: removed " << stale << " temporary file" << (stale == 1 ? "" : "s") << " of killed runs from "
        << dir << "\n";
  if (!resume && parts > 0)
    throw InputError("'" + dir + "' holds " + std::to_string(parts) + " part file" + (parts == 1 ? "" : "s") +
                     " of an interrupted sweep into " + plan.out +
                     "; pass --resume to continue it, or remove the directory to start over");
  return done;
}

}  // namespace

std::string parts_directory(const std::string& out) { return out + ".parts"; }

void validate_runs(const SweepPlan& plan, const std::vector<size_t>& selection, std::ostream& err) {
  // Warnings are summarized over the grid: "run.rtol = 1e-3 has no effect: ..." for each rk4 run of a
  // tolerance axis would be one line per value, so they are grouped by key and reason, counting the runs
  // and the distinct values.
  struct Group {
    std::string key, why;
    size_t runs = 0;
    std::vector<std::string> values;
  };
  std::vector<Group> groups;  // in order of first appearance
  for (size_t k : selection) {
    const RunSpec& spec = plan.runs[k].spec;
    std::ostringstream log;  // per-run notes (projection distances) are in each run's attributes
    try {
      const PreparedRun prepared = prepare_run(spec, log, true);
      if (spec.reference.compute) check_reference(prepared);  // bad [reference] settings: before any run
      for (const auto& w : prepared.warnings) {
        const size_t eq = w.find(" = "), why = w.find(" has no effect");
        Group g;
        std::string value;
        if (eq != std::string::npos && why != std::string::npos && eq < why) {
          g.key = w.substr(0, eq);
          value = w.substr(eq + 3, why - eq - 3);
          g.why = w.substr(why);
        } else {
          g.why = w;
        }
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const Group& x) { return x.key == g.key && x.why == g.why; });
        if (it == groups.end()) it = groups.insert(groups.end(), g);
        ++it->runs;
        if (!value.empty() && std::find(it->values.begin(), it->values.end(), value) == it->values.end())
          it->values.push_back(value);
      }
    } catch (const InputError& e) {
      throw InputError("[sweep] run " + spec.run_id + " (" + spec.sweep_point + "): " + e.what());
    }
  }
  for (const auto& g : groups) {
    err << "clmbench: warning: sweep: ";
    if (g.key.empty()) {
      err << g.why;
    } else {
      err << g.key << (g.values.size() == 1 ? " = " + g.values.front() : "") << g.why;
      if (g.values.size() > 1) err << " (" << g.values.size() << " values)";
    }
    err << " (" << g.runs << " of " << selection.size() << " runs)\n";
  }
}

SweepReport run_sweep(const SweepPlan& plan, const std::vector<size_t>& selection, const SweepOptions& options,
                      ProcessGroup& group, std::ostream& out, std::ostream& err) {
  const double start = now_seconds();
  SweepReport report;
  report.selected = selection.size();
  const std::string dir = parts_directory(plan.out);

  // Every process checks the same directory before any of them writes into it, then they agree. Rank 0
  // holds OUT's lock from before the parts are scanned until the merge is done: one sweep per output.
  std::vector<bool> done;
  std::optional<OutputLock> lock;
  {
    std::exception_ptr mine;
    try {
      check_output_path(plan.out, {plan.source});
      if (group.rank() == 0) lock.emplace(plan.out);
      done = scan_parts(plan, selection, options.resume, group.rank() == 0, err);
      if (group.rank() == 0) {
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec) throw OutputError("cannot create the parts directory '" + dir + "': " + ec.message());
      }
    } catch (...) {
      mine = std::current_exception();
    }
    const int first = group.first_failure(static_cast<bool>(mine));
    if (first == group.rank()) std::rethrow_exception(mine);
    if (first >= 0) throw PeerFailure("process " + std::to_string(first) + " of the sweep failed");
  }
  for (bool d : done) report.resumed += d;
  // Ctrl-C (or a scheduler's SIGTERM) ends the process in its signal handler (io/signal_cleanup.hpp):
  // it says there what is kept and how to go on.
  struct SignalMessage {
    explicit SignalMessage(const std::string& line) { set_signal_message(line); }
    ~SignalMessage() { set_signal_message(""); }
  };
  std::optional<SignalMessage> on_signal;
  if (group.rank() == 0)
    on_signal.emplace("clmbench: interrupted; the runs finished so far are kept in " + dir +
                      ": run the same sweep again with --resume to continue");

  // Every run not done, prepared once (serial planning, on every rank alike): its reference, if it is measured
  // against a reference run, and its estimated cost.
  struct Planned {
    size_t run;       // index in plan.runs
    std::string key;  // reference key; "" for runs measured against a closed form or nothing
    std::optional<RunSpec> reference;
    double cost = 0;
  };
  std::vector<Planned> open;
  for (size_t j = 0; j < selection.size(); ++j) {
    if (done[j]) continue;
    const RunSpec& spec = plan.runs[selection[j]].spec;
    std::ostringstream quiet;
    const PreparedRun p = prepare_run(spec, quiet, /*warn_unused=*/false);
    Planned x{selection[j], "", std::nullopt,
              estimated_run_cost(spec.t_end, spec.dt, spec.rtol, p.integrator->adaptive(), p.model->n(), p.model->m())};
    if (spec.reference.compute && !has_closed_form_reference(p)) {
      x.reference = reference_spec(p);
      x.key = reference_key(*x.reference);
    }
    open.push_back(std::move(x));
  }
  // This process's share, in grid order. One process: every open run. Several (MPI): the runs that share a
  // reference go to one process together (else each would compute the reference again), and the groups are
  // dealt out longest first to the least loaded process (ties: the lowest rank), the same on every rank.
  std::vector<size_t> todo_positions;  // into `open`
  if (group.size() == 1) {
    for (size_t j = 0; j < open.size(); ++j) todo_positions.push_back(j);
  } else {
    std::map<std::string, size_t> group_of;  // reference key -> group
    std::vector<std::vector<size_t>> groups;
    std::vector<double> group_cost;
    for (size_t j = 0; j < open.size(); ++j) {
      size_t g = groups.size();
      if (!open[j].key.empty()) g = group_of.emplace(open[j].key, groups.size()).first->second;
      if (g == groups.size()) {
        groups.emplace_back();
        group_cost.push_back(0);
      }
      groups[g].push_back(j);
      group_cost[g] += open[j].cost;
    }
    std::vector<size_t> order(groups.size());
    for (size_t g = 0; g < order.size(); ++g) order[g] = g;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return group_cost[a] > group_cost[b]; });
    std::vector<double> load(static_cast<size_t>(group.size()), 0.0);
    for (size_t g : order) {
      const size_t rank = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
      load[rank] += group_cost[g];
      if (static_cast<int>(rank) == group.rank()) todo_positions.insert(todo_positions.end(), groups[g].begin(), groups[g].end());
    }
    std::sort(todo_positions.begin(), todo_positions.end());
  }
  std::vector<size_t> todo;
  for (size_t j : todo_positions) todo.push_back(open[j].run);
  if (group.rank() == 0 && report.resumed > 0)
    out << "sweep: " << report.resumed << " of " << selection.size() << " runs already complete in " << dir
        << " (resumed)\n";

  ProgressLine progress(err, group.rank() == 0 ? options.progress : ProgressMode::kNever,
                        group.size() > 1 ? "sweep (" + group.description() + ")" : std::string("sweep"));
  // The line's counts (with `mutex` held, or after the workers). Under MPI rank 0 shows its own share, and
  // says so: it does not see the other ranks' runs as they finish ("runs 240/480" at 100 % read as half done).
  auto progress_text = [&] {
    std::string d;
    if (group.size() > 1) {
      d = "this rank's runs " + std::to_string(report.computed) + "/" + std::to_string(todo.size()) + " (of " +
          std::to_string(selection.size()) + " in the sweep" +
          (report.resumed ? ", " + std::to_string(report.resumed) + " resumed" : std::string()) + ")";
    } else {
      d = "runs " + std::to_string(report.resumed + report.computed) + "/" + std::to_string(selection.size());
    }
    if (report.failures) d += ", " + std::to_string(report.failures) + " failed";
    return d;
  };
  // One reference per (problem, parameters, initial data, grid, [reference] settings), computed once by
  // whichever worker asks first and shared (thread-safe); every rank computes its own, deterministically.
  // Each is released after the last of this process's runs that needs it, so a sweep over parameters or
  // initial data holds the references of the keys in progress, not one per grid point.
  ReferenceCache references;
  std::map<std::string, long> reference_uses;  // reference key -> this process's runs still to finish
  std::vector<std::string> reference_keys(todo.size());  // "" for runs measured against a closed form
  // The reference runs, each a task of its own (studies/sweep_schedule.hpp), in the order runs first need them;
  // the runs' estimated costs for the longest-first order.
  std::vector<RunSpec> reference_specs;
  std::map<std::string, long> reference_number;
  std::vector<long> reference_of(todo.size(), -1);
  std::vector<double> cost(todo.size(), 0.0);
  for (size_t k = 0; k < todo.size(); ++k) {
    const Planned& x = open[todo_positions[k]];
    cost[k] = x.cost;
    if (x.key.empty()) continue;
    reference_keys[k] = x.key;
    ++reference_uses[x.key];
    const auto [it, added] = reference_number.emplace(x.key, static_cast<long>(reference_specs.size()));
    if (added) reference_specs.push_back(*x.reference);
    reference_of[k] = it->second;
  }
  SweepSchedule schedule(cost, reference_of, reference_specs.size());
  report.task_cost = cost;
  report.task_reference = reference_of;
  report.task_run_seconds.assign(todo.size(), 0.0);  // each element written by the one worker of its task
  report.task_reference_seconds.assign(reference_specs.size(), 0.0);
  report.planning_seconds = now_seconds() - start;
  std::mutex mutex;  // out, progress, report
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  const Hdf5LockTotals lock_before = hdf5_lock_totals();
  auto worker = [&] {
    // This worker's open part file: the runs it finished since its last commit, committed together (one
    // file, one fsync) once the part is commit_interval_s old, so a short run does not pay a file of its
    // own: a kill loses at most that much finished work, which --resume computes again.
    std::unique_ptr<PartWriter> part;
    std::vector<std::string> part_configs;
    double part_opened = 0;
    auto commit_part = [&] {
      if (!part) return;
      const double c0 = now_seconds(), cpu0 = thread_cpu_seconds();
      part->commit({options.command_line, plan.sweep_config, plan.sweep_config}, part_configs);
      part.reset();
      part_configs.clear();
      std::lock_guard<std::mutex> lock(mutex);
      ++report.parts;
      report.commit_seconds += now_seconds() - c0;
      report.commit_cpu_seconds += thread_cpu_seconds() - cpu0;
    };
    size_t k = todo.size();
    double waited = 0;  // blocked in the schedule: only runs waiting for references other workers compute
    struct AddWait {  // also when the worker fails
      double& waited;
      std::mutex& mutex;
      SweepReport& report;
      ~AddWait() {
        std::lock_guard<std::mutex> lock(mutex);
        report.wait_seconds += waited;
      }
    } add_wait{waited, mutex, report};
    try {
      while (!stop && !interrupt_requested()) {  // cooperative Ctrl-C (the Python package): no new run
        k = todo.size();
        const std::optional<SweepTask> task = schedule.next(&waited);
        if (!task) break;
        if (task->kind == SweepTask::Kind::kReference) {
          const double r0 = now_seconds(), rc0 = thread_cpu_seconds();
          references.get(reference_specs[task->index]);  // kept in the cache for the runs that need it
          schedule.reference_done(task->index);
          const double seconds = now_seconds() - r0;
          report.task_reference_seconds[task->index] = seconds;
          std::lock_guard<std::mutex> lock(mutex);
          ++report.references;
          report.reference_seconds += seconds;
          report.reference_cpu_seconds += thread_cpu_seconds() - rc0;
          continue;
        }
        k = task->index;
        const PlannedRun& run = plan.runs[todo[k]];
        const double t0 = now_seconds(), cpu0 = thread_cpu_seconds();
        std::ostringstream log;
        PreparedRun prepared = prepare_run(run.spec, log, /*warn_unused=*/false);
        const double t1 = now_seconds(), cpu1 = thread_cpu_seconds();
        if (!part) {
          part = std::make_unique<PartWriter>(part_path(plan, run));
          part_opened = t1;
        }
        const double t2 = now_seconds(), cpu2 = thread_cpu_seconds();
        std::shared_ptr<const ReferenceTrajectory> reference;
        if (prepared.spec.reference.compute) reference = references.get(prepared);
        TimedObserver writing(part->run_observer());
        const RunRecord record = execute_run(prepared, &writing, /*keep_samples=*/false, nullptr, reference.get());
        if (!reference_keys[k].empty()) {
          reference.reset();
          std::lock_guard<std::mutex> lock(mutex);
          if (--reference_uses[reference_keys[k]] == 0) references.release(reference_spec(prepared));
        }
        prepared.formulation.reset();
        part_configs.push_back(part_config(plan, run.spec));
        const double t3 = now_seconds(), cpu3 = thread_cpu_seconds();
        // The chunks a long run wrote while it integrated are output, not computing; the finish's are in `writing`.
        const OutputTimes output = part->take_output_times();
        {
          std::lock_guard<std::mutex> lock(mutex);
          ++report.computed;
          if (record.status != "ok") ++report.failures;
          report.run_seconds += (t1 - t0) + (t3 - t2) - writing.wall - output.chunk_wall;
          report.run_cpu_seconds += (cpu1 - cpu0) + (cpu3 - cpu2) - writing.cpu - output.chunk_cpu;
          report.commit_seconds += (t2 - t1) + writing.wall + output.chunk_wall;
          report.commit_cpu_seconds += (cpu2 - cpu1) + writing.cpu + output.chunk_cpu;
          report.compress_cpu_seconds += output.pack_cpu;
          if (options.print_runs) {
            out << "run " << record.spec.run_id << ": " << record.status;
            if (!record.message.empty()) out << " (" << record.message << ")";
            out << ", " << record.samples() << " samples, " << record.stats.steps << " steps, "
                << format_number(record.wall_time_s) << " s" << std::endl;
          }
          progress.update(static_cast<double>(report.computed) / static_cast<double>(todo.size()), progress_text);
        }
        if (now_seconds() - part_opened >= options.commit_interval_s || part_configs.size() >= kMaxRunsPerPart)
          commit_part();
        report.task_run_seconds[k] = now_seconds() - t0;
      }
      // The last part, also when another worker failed: its runs are complete and a --resume keeps them.
      commit_part();
    } catch (const InputChanged& e) {
      // A file edited while the sweep ran: this worker's finished runs are kept with the others'.
      std::string committed;
      try {
        commit_part();
      } catch (const std::exception& c) {
        committed = " (this worker's last runs could not be kept: " + std::string(c.what()) + ")";
      }
      std::lock_guard<std::mutex> lock(mutex);
      const std::string id = k < todo.size() ? "run " + plan.runs[todo[k]].spec.run_id : std::string("a reference run");
      if (!error)
        error = std::make_exception_ptr(InputChangedDuringSweep(
            id + ": " + e.file + " changed while the sweep ran (sha256 " + e.found + ", " + e.recorded +
            " when it started); the runs finished so far are kept in " + dir + committed + ": restore the file and run "
            "the same sweep again with --resume to continue, or run the sweep of the new contents into another "
            "output"));
      stop = true;
      schedule.stop();
    } catch (const InputError& e) {
      // Every run was checked before the split: bad input found now is a bug, and must end an MPI job
      // (the command aborts on anything but an InputError, which it takes for the agreed kind).
      std::lock_guard<std::mutex> lock(mutex);
      const std::string id = k < todo.size() ? "run " + plan.runs[todo[k]].spec.run_id : std::string("a reference run");
      if (!error) error = std::make_exception_ptr(std::logic_error(id + ": " + e.what()));
      stop = true;
      schedule.stop();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
      stop = true;
      schedule.stop();
    }
  };
  // Rank 0 merges the committed parts into OUT's temporary file while the jobs compute (IncrementalMerge,
  // issue 25): the merge is then no serial step after the last run, only its remainder is. Parts appear in
  // the directory complete (renamed into place), from this process and from the other ranks alike.
  std::optional<IncrementalMerge> merge;
  std::set<std::string> merged_parts;
  std::atomic<double> tail_start{std::numeric_limits<double>::infinity()};  // when the merge's tail began
  double merge_busy = 0, merge_busy_cpu = 0;  // the merger thread's time in add(), while the jobs compute
  auto merge_new_parts = [&](bool merger_thread) {
    std::vector<std::string> parts;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (is_part_name(name) && !merged_parts.count(entry.path().string()))
        parts.push_back(entry.path().string());
    }
    if (ec) throw OutputError("cannot list '" + dir + "': " + ec.message());
    std::sort(parts.begin(), parts.end());
    for (const auto& part : parts) {
      const double w0 = now_seconds(), c0 = thread_cpu_seconds();
      merge->add(part);
      merged_parts.insert(part);
      if (!merger_thread) continue;  // the main thread's share, after the runs, is the merge's tail
      // Only what the merger did before the tail began (a part merged across it is counted once, in the tail).
      const double w1 = now_seconds(), c1 = thread_cpu_seconds(), before = std::min(w1, tail_start.load()) - w0;
      if (before <= 0) continue;
      merge_busy += before;
      merge_busy_cpu += (c1 - c0) * before / std::max(w1 - w0, 1e-12);
    }
  };
  std::atomic<bool> merging_done{false};
  std::exception_ptr merge_error;
  std::thread merger;
  if (group.rank() == 0 && !selection.empty()) {
    merge.emplace(plan.out, options.command_line, /*caller_holds_lock=*/true);
    merger = std::thread([&] {
      try {
        while (!merging_done.load()) {
          merge_new_parts(true);
          for (int i = 0; i < 10 && !merging_done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      } catch (...) {
        // OUT cannot be written (a damaged part, a full disk): the jobs stop after the runs they are computing,
        // whose parts are kept with the others; the error is reported once they have, and --resume merges
        // the parts and computes the rest. Other ranks finish their share.
        merge_error = std::current_exception();
        std::lock_guard<std::mutex> lock(mutex);
        stop = true;
        schedule.stop();
      }
    });
  }
  struct JoinMerger {  // on every way out, errors included
    std::atomic<bool>& done;
    std::thread& thread;
    ~JoinMerger() {
      done = true;
      if (thread.joinable()) thread.join();
    }
  } join_merger{merging_done, merger};
  const int threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(options.jobs, 1)), std::max<size_t>(todo.size(), 1)));
  report.threads = todo.empty() ? 0 : threads;
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  progress.finish(todo.empty() ? 1.0 : static_cast<double>(report.computed) / static_cast<double>(todo.size()),
                  progress_text());
  // Cooperative Ctrl-C (only the Python package turns it on): before any error, which may be the runs' own
  // Interrupted.
  if (interrupt_requested())
    throw Interrupted("interrupted; the runs finished so far are kept in " + dir +
                      ": the same sweep with resume=True continues");
  if (error) std::rethrow_exception(error);

  // Every part exists once every process is here; rank 0 joins them.
  group.barrier();
  if (group.rank() == 0) {
    const double m0 = now_seconds();
    tail_start = m0;
    const double merge_cpu0 = thread_cpu_seconds();
    if (selection.empty()) {
      // A shard without runs (more shards than runs): a complete results file with no runs.
      WriterOptions under_our_lock;  // rank 0 holds OUT's lock (a second writer of it in one process is refused)
      under_our_lock.lock_output = false;
      ResultsWriter empty(plan.out, {plan.source}, under_our_lock);
      empty.commit({options.command_line, plan.sweep_config, plan.sweep_config});
    } else {
      try {
        // The parts of every process (resumed ones too) the merger has not taken yet: a part holds several
        // runs, and the merge puts them in grid order whatever the files. The parts were checked against the
        // plan when scanned, or written by this sweep: fewer runs than planned is a part lost on the way (a
        // file system the ranks do not share), and OUT is not written.
        merging_done = true;
        if (merger.joinable()) merger.join();
        if (merge_error) std::rethrow_exception(merge_error);
        merge_new_parts(false);
        if (merged_parts.empty()) throw OutputError("no part file in " + dir);
        const MergeReport merged = merge->finish(selection.size());
        report.statuses = merged.statuses;
        report.outside_conditions = merged.outside_conditions;
        report.first_outside = merged.first_outside;
      } catch (const OutputError& e) {
        throw OutputError(std::string(e.what()) + "; every run finished is kept in " + dir +
                          ": fix the cause and run the sweep again with --resume to merge them (and compute any "
                          "run not finished)");
      }
    }
    // The merger's work while the jobs computed, and the remainder after them (the serial part).
    report.merge_tail_seconds = now_seconds() - m0;  // one clock read for both: the tail is part of the merge
    report.merge_seconds = merge_busy + report.merge_tail_seconds;
    report.merge_cpu_seconds = merge_busy_cpu + (thread_cpu_seconds() - merge_cpu0);
    report.merged = true;
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (ec) err << "clmbench: warning: cannot remove the parts directory '" << dir << "': " << ec.message() << "\n";
  }
  // The merge included: rank 0 holds the lock for all of it while the other ranks wait at the end.
  const Hdf5LockTotals lock_after = hdf5_lock_totals();
  report.lock_wait_seconds = 1e-9 * static_cast<double>(lock_after.wait_ns - lock_before.wait_ns);
  report.lock_held_seconds = 1e-9 * static_cast<double>(lock_after.held_ns - lock_before.held_ns);
  report.wall_seconds = now_seconds() - start;
  return report;
}

}  // namespace clm
