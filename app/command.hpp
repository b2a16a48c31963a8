// A command of the clmbench CLI: its row in the command table of app/main.cpp (name, one-line
// summary, usage, help, handler) and what every command shares: exit codes, the one-line error rule and
// the command-line parsing helper. Each command lives in its own <name>_command.cpp; adding one is that file
// plus one row of the table.
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace clm {

constexpr int kExitOk = 0, kExitInput = 1, kExitOutput = 2, kExitInternal = 3;
// `clmbench check` only: the command ran, and a check of the model failed (a verdict, not an error).
constexpr int kExitCheckFailed = 4;

// What a handler gets: the arguments after the command name and the whole command line (provenance).
struct CommandInvocation {
  std::vector<std::string> args;
  std::string command_line;
  std::ostream& out;
  std::ostream& err;
};

struct Command {
  std::string name;
  std::string summary;                // one or two lines for `clmbench --help`
  std::function<std::string()> help;  // `clmbench NAME --help` (starts with the usage lines)
  std::function<int(const CommandInvocation&)> run;  // returns the exit code; InputError / OutputError propagate
};

// One factory per command file.
Command list_command();
Command run_command();
Command info_command();
Command kozlov_command();
Command analyze_command();
Command options_command();
Command sweep_command();
Command merge_command();
Command mechanism_command();
Command check_command();

// The exit-code paragraph of the help texts.
const char* exit_codes_help();

namespace po = boost::program_options;

// Parses a command's flags with Boost: guessing of abbreviated flags off; "--q0 -0.1,0" glued to
// "--q0=-0.1,0" for every flag that takes a value; positional arguments (when `positional_name` is set)
// collected under that name. A malformed command line is an InputError naming the problem and pointing at
// `clmbench COMMAND --help`.
po::variables_map parse_command_line(const std::vector<std::string>& args, const po::options_description& options,
                                     const std::string& command, const char* positional_name = nullptr);

// The one positional CONFIG.ini of run / kozlov (nullopt when none; InputError when more than one).
std::optional<std::string> single_config(const po::variables_map& vm, const std::string& command);

// Repeated string flags (--set, --param) as a list, empty when absent.
std::vector<std::string> strings_of(const po::variables_map& vm, const std::string& flag);

// "--param name=value" -> (name, value text); InputError for a missing '=' or name.
std::pair<std::string, std::string> split_param(const std::string& assignment);
// The same for another name=value flag (--shape NAME=EXPR): `flag` and `example` name it in the error.
std::pair<std::string, std::string> split_param(const std::string& assignment, const std::string& flag,
                                                const std::string& example);

}  // namespace clm
