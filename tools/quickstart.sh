#!/usr/bin/env bash
# The shipped quickstart end to end: setup, build clmbench, run experiments/quickstart.ini, plot, and print
# the summary table (max drift, max relative energy error, error against the closed form, wall time).
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup.sh
./tools/build.sh --target clmbench
# The Python package too (the README's `import clmbench` line right after this script): without it, build/python/
# holds an empty clmbench/ that imports as a namespace package with no `run`.
if grep -q "^CLMBENCH_PYTHON:BOOL=ON" build/CMakeCache.txt; then ./tools/build.sh --target _clmbench; fi
build/clmbench run experiments/quickstart.ini
tools/plot.py results/quickstart.h5
echo
build/clmbench info results/quickstart.h5
