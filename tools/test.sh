#!/usr/bin/env bash
# Setup + build + the whole test suite; exits with ctest's code.
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup.sh
./tools/build.sh
set +e
ctest --test-dir build --output-on-failure -j2
status=$?
set -e
exit $status
