// clmbench: the command-line front end (docs/design.md section 4). One row per command in the table below;
// each command lives in app/<name>_command.cpp.
// Exit codes: 0 the results file was written (every run recorded, whatever its status), 1 bad input,
// 2 I/O error, 3 internal error, 4 a check of `clmbench check` failed. Every error is exactly one line on stderr:
// "clmbench: error: ...".
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "core/types.hpp"
#include "core/version.hpp"
#include "app/command.hpp"
#include "io/results_file.hpp"
#include "core/value_parsing.hpp"

using namespace clm;

namespace {

// The command table: name, summary, help and handler come from each command's file.
const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      list_command(),
      run_command(),
      sweep_command(),
      merge_command(),
      kozlov_command(),
      info_command(),
      analyze_command(),
      mechanism_command(),
      check_command(),
      options_command(),
  };
  return table;
}

std::string command_names() {
  std::string s;
  const auto& table = commands();
  for (size_t i = 0; i < table.size(); ++i)
    s += (i == 0 ? "" : i + 1 == table.size() ? " or " : ", ") + table[i].name;
  return s;
}

// The first line of each command's help is its usage.
std::string usage() {
  std::string s = "usage:\n";
  for (const auto& c : commands()) {
    std::istringstream help(c.help());
    for (std::string line; std::getline(help, line);) {
      if (line.rfind("usage:", 0) == 0) line = line.substr(6);
      if (line.find_first_not_of(' ') == std::string::npos) continue;  // "usage:" on a line of its own
      if (line.find("clmbench") == std::string::npos) break;
      s += "  " + line.substr(line.find("clmbench")) + "\n";
    }
  }
  return s + "  clmbench --help | clmbench COMMAND --help | clmbench --version\n";
}

std::string full_help() {
  std::ostringstream s;
  s << "clmbench " << kVersion << " (" << kGitCommit
    << "): which formulation of the constrained equations of motion, with which integrator, is most accurate,\n"
       "drifts least and runs fastest. Results land in HDF5 (h5py, MATLAB, Julia read them directly).\n\n"
    << usage() << "\ncommands:\n";
  for (const auto& c : commands()) {
    std::string summary = c.summary, indented;
    for (char ch : summary) indented += ch == '\n' ? std::string("\n") + std::string(9, ' ') : std::string(1, ch);
    s << "  " << c.name << std::string(c.name.size() < 7 ? 7 - c.name.size() : 1, ' ') << indented << "\n";
  }
  for (const auto& c : commands()) {
    if (c.name == "list" || c.name == "info" || c.name == "options") continue;
    s << "\n" << c.name << ": clmbench " << c.name << " --help\n" << c.help();
  }
  return s.str();
}

std::string join_command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    const bool quote = a.empty() || a.find_first_of(" \t\"'\\$") != std::string::npos;
    if (quote) {
      std::string q = "'";
      for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
      a = q + "'";
    }
    out += (i ? " " : "") + a;
  }
  return out;
}

int fail(const std::string& message, int code) {
  // One line, whatever the message holds (values are echoed through echo_value; this is the backstop).
  std::string line;
  for (char c : message) line += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  if (line.size() > 2000) line = line.substr(0, 2000) + "...";
  std::cerr << "clmbench: error: " << line << std::endl;
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  // Past a file-size limit (ulimit -f) a write fails with EFBIG and the writer reports it, instead of the
  // process being killed with its temporary file left behind.
  std::signal(SIGXFSZ, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty()) throw InputError("no command given (expected " + command_names() + "; see clmbench --help)");
    const std::string name = args.front();
    if (name == "--help" || name == "-h" || name == "help") {
      std::cout << full_help();
      return kExitOk;
    }
    if (name == "--version") {
      std::cout << "clmbench " << kVersion << " (" << kGitCommit << ")\n";
      return kExitOk;
    }
    for (const auto& c : commands()) {
      if (c.name != name) continue;
      return c.run({std::vector<std::string>(args.begin() + 1, args.end()), join_command_line(argc, argv), std::cout,
                    std::cerr});
    }
    throw InputError("unknown command '" + echo_value(name) + "' (expected " + command_names() + "; see clmbench --help)");
  } catch (const InputError& e) {
    return fail(e.what(), kExitInput);
  } catch (const OutputError& e) {
    // The temporary file is gone (the writer's destructor ran). Leave without the static destructors:
    // HDF5's library teardown (H5close from the C++ API's finalizer) crashes on a file whose close failed
    // (HDF5 1.10, a full disk), turning exit code 2 into a segmentation fault.
    fail(e.what(), kExitOutput);
    std::cout.flush();
    std::_Exit(kExitOutput);
  } catch (const std::exception& e) {
    return fail(std::string("internal error: ") + e.what(), kExitInternal);
  }
}
