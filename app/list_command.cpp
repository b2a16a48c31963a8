// `clmbench list [problems|formulations|integrators]`: the registries (app/catalog.hpp).
#include <iostream>

#include "core/types.hpp"
#include "app/catalog.hpp"
#include "app/command.hpp"

namespace clm {

namespace {

int list(const CommandInvocation& call) {
  if (call.args.size() > 1) throw InputError("list takes at most one of problems, formulations, integrators");
  if (!call.args.empty() && (call.args[0] == "--help" || call.args[0] == "-h")) {
    call.out << "usage: clmbench list [problems|formulations|integrators]\n";
    return kExitOk;
  }
  call.out << format_catalog(call.args.empty() ? "" : call.args[0]);
  return kExitOk;
}

}  // namespace

Command list_command() {
  return {"list", "registered problems (with parameters, defaults and meaning), formulations and integrators",
          [] { return std::string("usage: clmbench list [problems|formulations|integrators]\n"); }, list};
}

}  // namespace clm
