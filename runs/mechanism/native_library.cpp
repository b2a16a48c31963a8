#include "runs/mechanism/native_library.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include "core/sha256.hpp"
#include "mechanism_files/native_source.hpp"
#include "mechanism_files/native_terms.hpp"

namespace clm {

namespace {

namespace fs = std::filesystem;

// -O2 without -ffast-math: IEEE arithmetic, so that the native terms equal the tape's to round-off (contraction into
// fused multiply-adds is the one reordering allowed). -fno-math-errno lets sqrt and friends inline.
constexpr const char* kFlags = "-O2 -fPIC -shared -fno-math-errno";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The compiler as a path: CLMBENCH_CC (a path or a name on PATH), else cc on PATH; empty when there is none.
std::string find_compiler(std::string& name) {
  name = env("CLMBENCH_CC");
  if (name.empty()) name = "cc";
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : std::string();
  std::stringstream path(env("PATH"));
  std::string dir;
  while (std::getline(path, dir, ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

fs::path cache_directory() {
  if (const std::string d = env("CLMBENCH_CACHE_DIR"); !d.empty()) return d;
  if (const std::string d = env("XDG_CACHE_HOME"); !d.empty()) return fs::path(d) / "clmbench" / "native";
  if (const std::string d = env("HOME"); !d.empty()) return fs::path(d) / ".cache" / "clmbench" / "native";
  return fs::temp_directory_path() / ("clmbench-native-" + std::to_string(::getuid()));
}

// What identifies the compiler for the cache key: its resolved path, size and modification time.
std::string compiler_identity(const std::string& compiler) {
  std::error_code ec;
  const fs::path real = fs::canonical(compiler, ec);
  struct stat st {};
  if (ec || ::stat(real.c_str(), &st) != 0) return compiler;
  return real.string() + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtime);
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) return line;
  return "no message";
}

// A name unique to this writer (process and call), for the temporaries renamed into place.
std::string unique_suffix() {
  static std::atomic<long> counter{0};
  return std::to_string(::getpid()) + "." + std::to_string(counter++);
}

NativeLoad load_object(const fs::path& object) {
  NativeLoad load;
  void* handle = ::dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    load.why_not = "cannot load " + object.string() + ": " + (e ? e : "dlopen failed");
    return load;
  }
  auto f = std::make_shared<NativeFunctions>();
  f->library = std::shared_ptr<void>(handle, [](void* h) { ::dlclose(h); });
  f->object = object.string();
  auto symbol = [&](const char* name) { return reinterpret_cast<NativeFunctions::Function>(::dlsym(handle, name)); };
  using Abi = int (*)();
  const auto abi = reinterpret_cast<Abi>(::dlsym(handle, "clm_native_abi"));
  const auto scratch = reinterpret_cast<Abi>(::dlsym(handle, "clm_native_scratch"));
  const auto hoisted = reinterpret_cast<Abi>(::dlsym(handle, "clm_native_hoisted"));
  f->parameters = reinterpret_cast<void (*)(double*)>(::dlsym(handle, "clm_native_parameters"));
  f->mass = symbol("clm_native_mass");
  f->dynamics = symbol("clm_native_dynamics");
  f->force = symbol("clm_native_force");
  f->constraints = symbol("clm_native_constraints");
  f->energy = symbol("clm_native_energy");
  const bool complete = scratch && hoisted && f->parameters && f->mass && f->dynamics && f->force && f->constraints &&
                        f->energy;
  if (!abi || abi() != kNativeAbi || !complete) {
    load.why_not = object.string() + " is not a native evaluation of this clmbench (ABI " +
                   std::to_string(kNativeAbi) + ")";
    return load;
  }
  f->scratch = scratch();
  f->hoisted = hoisted();
  load.functions = std::move(f);
  return load;
}

NativeLoad build(const MechanismFile& file, bool compile_any_size) {
  const auto start = std::chrono::steady_clock::now();
  NativeLoad load;
  std::string name;
  const std::string compiler = find_compiler(name);
  if (compiler.empty()) {
    load.why_not = "no C compiler (" + name + ") found for the native evaluation of " + file.path +
                   " (set CLMBENCH_CC to a compiler)";
    return load;
  }
  const NativeTermGraph terms = native_terms(symbolic_mechanism(file), static_cast<int>(file.parameters.size()));
  const std::string source = native_c_source(terms, file.path + "@sha256:" + file.sha256);
  const std::string key = sha256_hex(source + "\n" + compiler_identity(compiler) + "\n" + kFlags);
  const fs::path dir = cache_directory();
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path object = dir / (key + ".so");
  bool compiled = false;
  const double megabytes = static_cast<double>(source.size()) / (1 << 20);
  char size[96];
  std::snprintf(size, sizeof size, "%.1f MB of C, about %.0f s to compile once", megabytes, 4 * megabytes);
  if (!fs::exists(object) && !compile_any_size && source.size() > kAutoCompileBytes) {
    load.why_not = "the native evaluation of " + file.path + " is " + size +
                   " (run.mechanism_evaluation = native compiles it, cached for later runs)";
    return load;
  }
  if (!fs::exists(object)) {
    if (source.size() > (1u << 20))
      std::cerr << "clmbench: compiling the native evaluation of " << file.path << " (" << size
                << "; cached for later runs)" << std::endl;
    const std::string suffix = unique_suffix();
    const fs::path c_file = dir / (key + "." + suffix + ".c"), tmp = dir / (key + "." + suffix + ".so"),
                   log = dir / (key + "." + suffix + ".log");
    {
      std::ofstream out(c_file);
      out << source;
      out.close();  // a full disk shows at the close
      if (!out) {
        load.why_not = "cannot write the native source of " + file.path + " to " + c_file.string();
        return load;
      }
    }
    const std::string command = quoted(compiler) + " " + kFlags + " -o " + quoted(tmp.string()) + " " +
                                quoted(c_file.string()) + " -lm > " + quoted(log.string()) + " 2>&1";
    const int status = std::system(command.c_str());
    const int rc = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (rc != 0 || !fs::exists(tmp)) {
      load.why_not = file.path + ": the native evaluation did not compile (" + name + " exit " + std::to_string(rc) +
                     ": " + first_line(log) + ")";
      fs::remove(c_file, ec);
      fs::remove(tmp, ec);
      fs::remove(log, ec);
      return load;
    }
    fs::rename(tmp, object, ec);  // atomic: a concurrent writer's object is the same bytes
    if (ec && !fs::exists(object)) {
      load.why_not = "cannot place the native evaluation of " + file.path + " in " + dir.string() + ": " +
                     ec.message();
      for (const fs::path& p : {tmp, c_file, log}) fs::remove(p, ec);
      return load;
    }
    fs::rename(c_file, dir / (key + ".c"), ec);
    fs::remove(log, ec);
    compiled = true;
  }
  load = load_object(object);
  if (load.functions) {
    auto f = std::const_pointer_cast<NativeFunctions>(load.functions);
    f->compiled = compiled;
    f->build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return load;
}

}  // namespace

NativeLoad load_native_evaluation(const MechanismFile& file, bool compile_any_size) {
  static std::mutex mutex;
  static std::map<std::string, NativeLoad> loaded;  // by the file's identity: derived once per process
  const std::string identity =
      file.path + "@sha256:" + file.sha256 + "|" + env("CLMBENCH_CC") + (compile_any_size ? "|any" : "|auto");
  if (file.sha256.empty()) return build(file, compile_any_size);  // text without a file's hash (tests): not cached
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(identity); it != loaded.end()) return it->second;
  NativeLoad load = build(file, compile_any_size);
  loaded.emplace(identity, load);
  return load;
}

}  // namespace clm
