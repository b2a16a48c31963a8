// The Models of mechanism files (mechanism_files/tape_problem.hpp): one AutoDiffModel per instantiation of
// TapeProblem, with every capability the Problem supports, as the registry builds zoo problems. The twelve
// instantiations are compiled in three translation units (holonomic, Pfaffian, mixed) of four each.
#pragma once

#include <memory>

#include "core/model.hpp"
#include "mechanism_files/mechanism_file.hpp"
#include "runs/mechanism/native_library.hpp"

namespace clm {

// native: the file's native evaluation (runs/mechanism/native_model.hpp), nullptr for the tape alone.
// use_analytic: M and c by reverse mode where the file's TapeProblem offers it (has_analytic_terms), as a zoo
// problem's hand-written terms (false: AutoDiffModel's Jet passes over the tapes, e.g. for tests and benchmarks).
std::shared_ptr<const Model> make_holonomic_tape_model(std::shared_ptr<const CompiledMechanism> mechanism,
                                                       bool use_analytic = true,
                                                       std::shared_ptr<const NativeFunctions> native = nullptr);
std::shared_ptr<const Model> make_pfaffian_tape_model(std::shared_ptr<const CompiledMechanism> mechanism,
                                                      bool use_analytic = true,
                                                      std::shared_ptr<const NativeFunctions> native = nullptr);
std::shared_ptr<const Model> make_mixed_tape_model(std::shared_ptr<const CompiledMechanism> mechanism,
                                                   bool use_analytic = true,
                                                   std::shared_ptr<const NativeFunctions> native = nullptr);

}  // namespace clm
