// Mechanism files (mechanism_files/, docs/mechanism-files.md): the cost of reading and compiling a file (TOML,
// expressions, symbolic derivatives, tapes) against its size, on a planar chain of n point-mass pendulums in
// absolute angles, generated here (n = 10 is the yardstick: under 1 ms).
#include <benchmark/benchmark.h>

#include <sstream>
#include <string>

#include "mechanism_files/mechanism_file.hpp"

namespace {

std::string chain_file(int n) {
  std::ostringstream s;
  s << "name = \"chain\"\ncoordinates = [";
  for (int i = 1; i <= n; ++i) s << (i > 1 ? ", " : "") << "\"th" << i << "\"";
  s << "]\n[parameters]\nm = 1.0\nl = 0.5\ng = 9.81\n[let]\n";
  for (int i = 1; i <= n; ++i) {
    s << "xd" << i << " = \"" << (i > 1 ? "xd" + std::to_string(i - 1) + " + " : "") << "l*cos(th" << i << ")*der(th" << i << ")\"\n";
    s << "yd" << i << " = \"" << (i > 1 ? "yd" + std::to_string(i - 1) + " + " : "") << "l*sin(th" << i << ")*der(th" << i << ")\"\n";
    s << "y" << i << " = \"" << (i > 1 ? "y" + std::to_string(i - 1) + " - " : "-") << "l*cos(th" << i << ")\"\n";
  }
  s << "[energy]\nT = \"m/2*(";
  for (int i = 1; i <= n; ++i) s << (i > 1 ? " + " : "") << "xd" << i << "^2 + yd" << i << "^2";
  s << ")\"\nV = \"m*g*(";
  for (int i = 1; i <= n; ++i) s << (i > 1 ? " + " : "") << "y" << i;
  s << ")\"\n[initial]\nq = [";
  for (int i = 1; i <= n; ++i) s << (i > 1 ? ", " : "") << 0.1 * i;
  s << "]\n";
  return s.str();
}

void BM_ReadAndCompile(benchmark::State& state) {
  const std::string text = chain_file(int(state.range(0)));
  int nodes = 0;
  for (auto _ : state) {
    const clm::MechanismFile f = clm::parse_mechanism_text(text, "chain.toml");
    const auto c = clm::compile_mechanism(f);
    nodes = c->graph_nodes;
    benchmark::DoNotOptimize(c.get());
  }
  state.counters["graph_nodes"] = nodes;
}
BENCHMARK(BM_ReadAndCompile)->Arg(2)->Arg(5)->Arg(10)->Arg(20)->Unit(benchmark::kMicrosecond);

}  // namespace
