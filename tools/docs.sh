#!/usr/bin/env bash
# Builds the documentation site from docs/ with Sphinx (MyST markdown, the furo theme) into build/docs-html, or
# the directory given. Every warning is an error (-W), a broken internal link included: a link to a page or a
# heading anchor that does not exist, a toctree entry, an autodoc target (docs/conf.py). Offline: nothing is
# fetched. Needs no build of clmbench (the Python API pages mock the compiled module).
#   ./tools/docs.sh [OUT_DIR]                    build the site (what the DocsSite test runs)
#   ./tools/docs.sh --execute-notebook [OUT_DIR] first execute docs/tutorials/notebook.ipynb in place with nbconvert
#                                                against the built package (build/python, build/clmbench), so the
#                                                site shows fresh outputs; then build
#   ./tools/docs.sh --check-generated [OUT_DIR]  also fail when docs/options.md or docs/reference/commands.md is
#                                                not what tools/gen_docs.sh writes from the built command
# Environment: CLMBENCH_BINARY (default build/clmbench), CLMBENCH_PYTHONPATH (default build/python).
set -euo pipefail
cd "$(dirname "$0")/.."
execute=0
check_generated=0
out=build/docs-html
for arg in "$@"; do
  case "$arg" in
    --execute-notebook) execute=1 ;;
    --check-generated) check_generated=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "docs.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
    *) out="$arg" ;;
  esac
done
python=/usr/bin/python3
if ! "$python" -c "import sphinx, myst_parser, furo, nbformat" 2>/dev/null; then
  echo "docs.sh: error: Sphinx, MyST, furo or nbformat missing: run ./tools/setup.sh" >&2
  exit 1
fi

if [ "$check_generated" -eq 1 ]; then
  ./tools/gen_docs.sh --check
fi

if [ "$execute" -eq 1 ]; then
  pythonpath="${CLMBENCH_PYTHONPATH:-$PWD/build/python}"
  if ! PYTHONPATH="$pythonpath" "$python" -c "import clmbench; clmbench.run" 2>/dev/null; then
    echo "docs.sh: error: the Python package is not built in $pythonpath (./tools/build.sh)" >&2
    exit 1
  fi
  echo "docs.sh: executing docs/tutorials/notebook.ipynb"
  PYTHONPATH="$pythonpath" CLMBENCH_SOURCE_DIR="$PWD" "$python" -m nbconvert --to notebook --execute --inplace \
    --ExecutePreprocessor.timeout=300 --ExecutePreprocessor.record_timing=False docs/tutorials/notebook.ipynb
fi

# A fresh environment each time (-E): a page changed or removed since the last build is never served stale.
"$python" -m sphinx -W --keep-going -E -q -b html -d "$out/.doctrees" docs "$out"
# MathJax for the formulas (the notebook's equations; docs/conf.py mathjax_path): the parts of Debian's
# libjs-mathjax that TeX input and CommonHTML output load, copied into the site so that it typesets offline.
mathjax=/usr/share/javascript/mathjax
if [ ! -f "$mathjax/MathJax.js" ]; then
  echo "docs.sh: error: MathJax missing ($mathjax, Debian's libjs-mathjax): run ./tools/setup.sh" >&2
  exit 1
fi
target="$out/_static/mathjax"
rm -rf "$target"
mkdir -p "$target/config" "$target/jax/output" "$target/fonts/HTML-CSS/TeX"
cp -L "$mathjax/MathJax.js" "$target/"
cp -L "$mathjax/config/TeX-AMS_CHTML.js" "$target/config/"
cp -rL "$mathjax/extensions" "$mathjax/localization" "$target/"
cp -rL "$mathjax/jax/input" "$mathjax/jax/element" "$target/jax/"
cp -rL "$mathjax/jax/output/CommonHTML" "$target/jax/output/"
cp -rL "$mathjax/fonts/HTML-CSS/TeX/woff" "$target/fonts/HTML-CSS/TeX/"
echo "docs.sh: built $out/index.html"
