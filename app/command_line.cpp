#include <algorithm>
#include <cctype>
#include <map>

#include "core/types.hpp"
#include "app/command.hpp"
#include "core/value_parsing.hpp"

namespace clm {

const char* exit_codes_help() {
  return R"(exit codes:
  0  the results file was written; every run is recorded with its status ("ok", "diverged" or
     "failed") and message, also when it diverged or failed
  1  bad input (unknown name, key, section or parameter, malformed number, missing config file,
     wrong-length q0/qd0, refused formulation/problem pairing, inconsistent initial data under
     --strict-initial); nothing is run and no file is written
  2  I/O error (output path not writable, results file unreadable); no partial file is left behind
  3  internal error
)";
}

namespace {

// Boost takes "-0.1,0,0" after "--q0" for an option; glue such values to their flag ("--q0=-0.1,0,0").
// A value-taking flag followed by another flag lacks its value: said here, naming the flag.
std::vector<std::string> glue_negative_values(const std::vector<std::string>& args, const po::options_description& o) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) == 0 && a.find('=') == std::string::npos && i + 1 < args.size()) {
      const std::string& next = args[i + 1];
      const auto* desc = o.find_nothrow(a.substr(2), false);
      const bool looks_negative =
          next.size() > 1 && next[0] == '-' && (std::isdigit(static_cast<unsigned char>(next[1])) || next[1] == '.');
      if (desc && desc->semantic()->max_tokens() > 0 && looks_negative) {
        out.push_back(a + "=" + next);
        ++i;
        continue;
      }
      // "--t-end --out x.h5": Boost would take "--out" as the value of --t-end.
      if (desc && desc->semantic()->max_tokens() > 0 && next.rfind("--", 0) == 0)
        throw InputError("flag " + a + " lacks its value (the next argument is the flag " + echo_value(next) + ")");
    }
    out.push_back(a);
  }
  return out;
}

// Boost's error_with_option_name::what() fills its template's placeholders (%canonical_option%, %value%, ...)
// until none is left, so an argument that contains one ("--%canonical_option%") made it loop without end, the
// message growing (found after fuzz_config found the same in the config reader). The arguments' '%' are hidden
// from it while it formats and given back after. Its substitutions are protected: reached through a pointer to
// member formed in a derived class, which the language allows.
struct BoostErrorAccess : po::error_with_option_name {
  static std::map<std::string, std::string>& substitutions(po::error_with_option_name& e) {
    return e.*(&BoostErrorAccess::m_substitutions);
  }
};

std::string safe_what(po::error_with_option_name& e) {
  constexpr char kHidden = '\x1f';  // a control character no argument of a command line is expected to hold
  for (auto& [name, value] : BoostErrorAccess::substitutions(e)) std::replace(value.begin(), value.end(), '%', kHidden);
  std::string message = e.what();
  std::replace(message.begin(), message.end(), kHidden, '%');
  return message;
}

}  // namespace

po::variables_map parse_command_line(const std::vector<std::string>& raw_args, const po::options_description& options,
                                     const std::string& command, const char* positional_name) {
  po::options_description all;
  all.add(options);
  po::positional_options_description positional;
  if (positional_name) {
    all.add_options()(positional_name, po::value<std::vector<std::string>>(), "");
    positional.add(positional_name, -1);
  }
  po::variables_map vm;
  try {
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(glue_negative_values(raw_args, options))
                  .options(all)
                  .positional(positional)
                  .style(style)
                  .run(),
              vm);
    po::notify(vm);
  } catch (po::error_with_option_name& e) {
    throw InputError(safe_what(e) + " (see clmbench " + command + " --help)");
  } catch (const po::error& e) {  // the others have fixed texts
    throw InputError(std::string(e.what()) + " (see clmbench " + command + " --help)");
  }
  return vm;
}

std::optional<std::string> single_config(const po::variables_map& vm, const std::string& command) {
  if (!vm.count("config")) return std::nullopt;
  const auto& configs = vm["config"].as<std::vector<std::string>>();
  if (configs.size() > 1)
    throw InputError("more than one config file given ('" + configs[1] + "'); " + command + " takes one");
  return configs.front();
}

std::vector<std::string> strings_of(const po::variables_map& vm, const std::string& flag) {
  return vm.count(flag) ? vm[flag].as<std::vector<std::string>>() : std::vector<std::string>{};
}

std::pair<std::string, std::string> split_param(const std::string& p) { return split_param(p, "param", "m=2"); }

std::pair<std::string, std::string> split_param(const std::string& p, const std::string& flag,
                                                const std::string& example) {
  const auto eq = p.find('=');
  const std::string name = eq == std::string::npos ? std::string() : trim(p.substr(0, eq));
  if (name.empty())
    throw InputError("malformed --" + flag + " '" + echo_value(p) + "' (expected name=value, e.g. --" + flag + " " +
                     example + ")");
  return {name, p.substr(eq + 1)};
}

}  // namespace clm
