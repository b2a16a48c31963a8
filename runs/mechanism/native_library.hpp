// A mechanism file's native evaluation as loaded code (issue 40): its terms derived on the expression graph
// (mechanism_files/native_terms.hpp), printed as C (mechanism_files/native_source.hpp), compiled by the system's C
// compiler into a shared object and loaded with dlopen.
//
// The cache is content-addressed: the object's name is the SHA-256 of the generated source, the compiler (its
// resolved path, size and modification time) and the flags, in a cache directory (CLMBENCH_CACHE_DIR, else
// $XDG_CACHE_HOME/clmbench/native, else $HOME/.cache/clmbench/native, else /tmp/clmbench-native-UID). A second run,
// a sweep, another process pays only the derivation and a dlopen; within a process each file (by its SHA-256) is
// derived once. The object is written under a name unique to the writer and renamed into place (atomic), so
// concurrent sweeps share the cache safely. The compiler is CLMBENCH_CC, else cc.
#pragma once

#include <memory>
#include <string>

#include "mechanism_files/mechanism_file.hpp"

namespace clm {

struct NativeFunctions {
  using Function = void (*)(const double* x, double* out, double* scratch);
  Function mass = nullptr, dynamics = nullptr, force = nullptr, constraints = nullptr, energy = nullptr;
  int scratch = 0;                // doubles of scratch every function needs (clm_native_scratch)
  int hoisted = 0;                // parameter-only values after the parameters in x (clm_native_hoisted)
  void (*parameters)(double* x) = nullptr;  // writes them (clm_native_parameters)
  std::shared_ptr<void> library;  // the dlopen handle (closed with the last user)
  std::string object;             // the shared object's path
  double build_seconds = 0;       // derivation, source and (when not cached) compilation, this process
  bool compiled = false;          // compiled now (false: found in the cache)
};

struct NativeLoad {
  std::shared_ptr<const NativeFunctions> functions;  // nullptr when it cannot be had
  std::string why_not;                               // then one line saying why (no compiler, a compile error)
};

// The native evaluation of `file` (at any parameter values: they are arguments). Never throws for a missing or
// failing compiler: that is why_not. Thread-safe. Compiling costs about 4 s per MB of generated C on the machine it
// was measured on (closed_chain: n = 32 0.9 MB 3.9 s, n = 64 3.8 MB 12.7 s, n = 128 15.7 MB 61 s, n = 256 65 MB
// 281 s and 4.6 GB); without compile_any_size a source above kAutoCompileBytes that is not in the cache is not
// compiled (why_not says so and what it would cost), so that `auto` does not spend minutes where the tape runs at
// once. A compile of more than 1 MB says so on stderr while it works.
inline constexpr std::size_t kAutoCompileBytes = 4u << 20;
NativeLoad load_native_evaluation(const MechanismFile& file, bool compile_any_size = true);

}  // namespace clm
