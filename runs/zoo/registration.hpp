// What each runs/zoo/<problem>.cpp expands: the problem's registry entry (core/problem_registry.hpp), its
// Model built with every capability the problem supports (runs/problem_capabilities.hpp). Instantiating
// those builders is most of the compile time of a problem, hence one translation unit per problem.
#pragma once

#include "core/problem_registry.hpp"
#include "runs/problem_capabilities.hpp"

namespace clm::zoo {

template <Problem P>
ProblemEntry entry() {
  return problem_entry<P>([](Model& model, const P& p) { add_capabilities(model, p); });
}

}  // namespace clm::zoo

// Defines clm::zoo::NAME(), the entry that runs/problem_registry.cpp registers for the line CLM_ZOO(NAME)
// of runs/zoo/zoo.def.
#define CLM_ZOO_ENTRY(NAME, TYPE) \
  namespace clm::zoo {            \
  ProblemEntry NAME() { return entry<TYPE>(); } \
  }
