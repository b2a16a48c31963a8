#!/usr/bin/env bash
# Installs every Debian package the build, the tests and the plots need, skipping those already
# installed. Non-interactive; run as root (or with sudo available).
set -euo pipefail

# clang, libclang-rt-14-dev and llvm-14 (llvm-symbolizer): the sanitizer build and the libFuzzer targets of
# tools/test.sh --sanitize. libopenmpi-dev and openmpi-bin: `mpirun -n K clmbench sweep` (CMake option
# CLMBENCH_WITH_MPI; everything builds and works without them). pybind11-dev, python3-pybind11, python3-dev and
# python3-pytest: the Python package (python/, docs/python.md) and its tests; python3-sympy: Mechanism.from_sympy.
# python3-pil: Pillow, the GIF writer of `tools/plot.py FILE.h5 --animate` (matplotlib.animation's PillowWriter).
# zlib1g-dev: a sweep's jobs deflate their chunks themselves, outside the HDF5 lock (issue 25). gcc (cc): the
# native evaluation of mechanism files compiles their generated C (issue 40; without it the tape runs them).
# python3-scipy: bench/sympy_dop853.py, the researcher's sympy -> C -> DOP853 script clmbench is compared with.
# python3-sphinx, python3-myst-parser, furo: the documentation site (tools/docs.sh, the DocsSite test; docs/conf.py);
# libjs-mathjax: its formulas typeset offline (tools/docs.sh copies MathJax into the site).
# python3-nbformat, python3-nbconvert, jupyter-nbconvert, python3-ipykernel: the tutorial notebook, read as a page by
# docs/_ext/notebook_page.py and executed by nbconvert in a python3 kernel (the DocsNotebook test).
packages=(cmake ninja-build g++ libeigen3-dev libceres-dev libhdf5-dev libboost-program-options-dev
          libbenchmark-dev libgtest-dev libsundials-dev zlib1g-dev libtomlplusplus-dev python3-h5py python3-matplotlib python3-numpy
          clang libclang-rt-14-dev llvm-14 libopenmpi-dev openmpi-bin
          pybind11-dev python3-pybind11 python3-dev python3-pytest python3-sympy python3-pil gcc python3-scipy
          python3-sphinx python3-myst-parser furo python3-nbformat python3-nbconvert jupyter-nbconvert python3-ipykernel
          libjs-mathjax)

missing=()
for p in "${packages[@]}"; do
  if dpkg -s "$p" >/dev/null 2>&1 && [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ]; then
    echo "setup: $p already installed"
  else
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
    echo "setup: error: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
echo "setup: apt-get update"
"${sudo[@]}" apt-get update -q
echo "setup: apt-get install ${missing[*]}"
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
