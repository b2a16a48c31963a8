// `clmbench info FILE.h5 [--run ID]`: the runs of a results file, one line each; with --run, every option
// of one run as recorded in its attributes (read back through the option table).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <functional>
#include <iostream>

#include "core/types.hpp"
#include "app/command.hpp"
#include "io/results_file.hpp"
#include "io/results_info.hpp"
#include "runs/recorded_options.hpp"

namespace clm {

namespace {

const char* kInfoHelp = R"(usage: clmbench info FILE.h5 [--run ID]

One line per run of a results file: id, problem, formulation, integrator, status, samples, max drift
(position, velocity), max relative energy error, error vs reference (closed-form q distance), wall time,
CPU time (integration), rhs evaluations, max errors in q, qd and lambda against the reference, scd and
mescd (Bari test set, at t_end) and what the reference was (closed_form, reference_run; "-": none).
NaN is shown as "-". With --run ID: every option of that run (section.key = value, as recorded in its
HDF5 attributes), its parameters, and its results (status, steps, CPU times, the reference, every error
figure).
)";

// The file is read in a child process: HDF5 1.10 itself can crash (SEGV in H5HG_read), hang or over-allocate
// on a damaged file (found by fuzz_results). The parent turns any of that into one line and exit code 2.
constexpr int kChildInput = 10, kChildOutput = 11, kChildInternal = 12, kChildTimeout = 13;
constexpr unsigned kReadSeconds = 30;

extern "C" void child_timed_out(int) { _exit(kChildTimeout); }

std::string read_isolated(const std::string& path, const std::function<std::string()>& read) {
  int fds[2];
  if (::pipe(fds) != 0) return read();
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return read();
  }
  if (pid == 0) {
    ::close(fds[0]);
    // The library's own crash report (or a sanitizer's, for a crash inside HDF5) is not the user's one line;
    // errors travel through the pipe. Crashes in our reading code are caught in-process by fuzz_results.
    if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) ::dup2(null, 2);
    std::signal(SIGALRM, child_timed_out);
    ::alarm(kReadSeconds);
    int code = 0;
    std::string text;
    try {
      text = read();
    } catch (const InputError& e) {
      code = kChildInput;
      text = e.what();
    } catch (const OutputError& e) {
      code = kChildOutput;
      text = e.what();
    } catch (const std::exception& e) {
      code = kChildInternal;
      text = e.what();
    }
    for (size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) _exit(kChildInternal);
      done += static_cast<size_t>(n);
    }
    _exit(code);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    switch (WEXITSTATUS(status)) {
      case 0: return text;
      case kChildInput: throw InputError(text);
      case kChildOutput: throw OutputError(text);
      case kChildTimeout:
        throw OutputError("reading '" + path + "' did not finish in " + std::to_string(kReadSeconds) +
                          " s (HDF5 is stuck on a damaged file?)");
      default: throw std::runtime_error(text.empty() ? "reader process failed" : text);
    }
  }
  throw OutputError("HDF5 crashed reading '" + path + "' (signal " +
                    std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0) + "): the file is damaged");
}

int info(const CommandInvocation& call) {
  po::options_description options("info options");
  options.add_options()("run", po::value<std::string>(), "print the options of run ID")("help,h", "this help");
  const po::variables_map vm = parse_command_line(call.args, options, "info", "file");
  if (vm.count("help")) {
    call.out << kInfoHelp;
    return kExitOk;
  }
  const auto files = strings_of(vm, "file");
  if (files.size() != 1) throw InputError("info takes exactly one results file (clmbench info FILE.h5)");
  const std::string path = files[0];
  if (vm.count("run")) {
    const std::string run = vm["run"].as<std::string>();
    call.out << read_isolated(path, [&] { return format_run_options(read_run_options(path, run)); });
  } else {
    call.out << read_isolated(path, [&] { return format_results_table(read_results_info(path)); });
  }
  return kExitOk;
}

}  // namespace

Command info_command() {
  return {"info",
          "one line per run of a results file: id, problem, formulation, integrator, status, samples,\n"
          "max drift (position, velocity), max relative energy error, error vs reference, wall and CPU\n"
          "time, rhs evaluations, errors against the reference, scd, mescd; --run ID: one run's options\n"
          "and results",
          [] { return std::string(kInfoHelp); }, info};
}

}  // namespace clm
