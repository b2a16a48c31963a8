#!/usr/bin/env bash
# Regenerates the generated parts of docs/ from the code (the option table): docs/options.md.
# tests/option_table_test.cpp fails when the committed file is out of date.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${CLMBENCH_BINARY:-build/clmbench}"
"$bin" options --markdown > docs/options.md.tmp
mv docs/options.md.tmp docs/options.md
echo "gen_docs: wrote docs/options.md"
