#!/usr/bin/env bash
# Configures a Release build into build/ with Ninja (once) and builds. Idempotent.
# Extra arguments go to `cmake --build` (e.g. --target clmbench).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${CLMBENCH_JOBS:-$(nproc 2>/dev/null || echo 2)}"
if [ ! -f build/build.ninja ]; then
  echo "build: configuring build/ (Release, Ninja)"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
echo "build: cmake --build build -j${jobs} $*"
cmake --build build -j"${jobs}" "$@"
