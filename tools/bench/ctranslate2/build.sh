#!/usr/bin/env bash
# Builds CTranslate2 (the reference engine for CPU decoding) from its public source for
# tools/bench/ctranslate2/run.sh, with Intel MKL from Debian's non-free archive, the way its
# x86_64 wheels are built (WITH_MKL, GNU OpenMP). Never a dependency of csan: it goes into a
# git-ignored folder and only this benchmark uses it.
#   CT2_SRC=DIR tools/bench/ctranslate2/build.sh [PREFIX]
# CT2_SRC: a CTranslate2 checkout (OpenNMT/CTranslate2) with its third_party/spdlog and
# third_party/cpu_features submodules filled in at the commits the checkout records (machines
# without GitHub: `git archive` of each into place). PREFIX defaults to build-ct2/ at the
# repository root (ignored by git). MKL: as root,
#   add the "non-free" component to the Debian sources, then
#   echo 'libmkl-rt libmkl-rt/use-as-default-blas-lapack boolean false' | debconf-set-selections
#   apt-get install -y --no-install-recommends libmkl-dev python3-pybind11
# (the debconf line keeps MKL out of the BLAS alternatives: csan keeps OpenBLAS).
# ONEDNN_SRC=DIR (optional): oneDNN's source at the version CTranslate2's wheels build (v3.1.1,
# python/tools/prepare_build_environment_linux.sh; Debian has only 2.6, whose API CTranslate2
# no longer compiles against), e.g. `git archive v3.1.1` of oneapi-src/oneDNN. It is built
# static with the wheels' options into PREFIX/onednn and CTranslate2 gets WITH_DNNL, as its
# wheels: then on a CPU that is not Intel's CTranslate2 runs its GEMMs with oneDNN (its
# default there) unless CT2_USE_MKL=1 (run.sh's CT2_BACKEND chooses).
# Afterwards run.sh finds the library and the Python package by PREFIX.
source "$(dirname "$0")/../../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
src=${CT2_SRC:?"CT2_SRC=DIR (a CTranslate2 source tree) is needed; see --help"}
prefix=$(realpath -m "${1:-$root/build-ct2}")
[ -f "$src/CMakeLists.txt" ] && [ -f "$src/python/setup.py" ] ||
  { echo "build.sh: $src: not a CTranslate2 source tree (no CMakeLists.txt / python/setup.py)" >&2; exit 2; }
for sub in spdlog cpu_features; do
  [ -f "$src/third_party/$sub/CMakeLists.txt" ] ||
    { echo "build.sh: $src/third_party/$sub: empty; fill in the submodule (see --help)" >&2; exit 2; }
done
[ -e /usr/lib/x86_64-linux-gnu/libmkl_core.a ] ||
  { echo "build.sh: libmkl_core.a missing: install Debian's libmkl-dev (see --help)" >&2; exit 2; }
# CTranslate2's CMake expects MKLROOT/include/mkl.h and MKLROOT/lib/intel64/libmkl_*.a.
mkl=$prefix/mklroot
mkdir -p "$mkl/lib"
ln -sfn /usr/include/mkl "$mkl/include"
ln -sfn /usr/lib/x86_64-linux-gnu "$mkl/lib/intel64"
dnnl=()
if [ -n "${ONEDNN_SRC:-}" ]; then
  [ -f "$ONEDNN_SRC/include/oneapi/dnnl/dnnl.h" ] ||
    { echo "build.sh: ONEDNN_SRC=$ONEDNN_SRC: not a oneDNN source tree (no include/oneapi/dnnl/dnnl.h)" >&2; exit 2; }
  # CTranslate2's CMake looks in INTEL_ROOT/oneapi/dnnl/latest/cpu_gomp/{include,lib}.
  onednn=$prefix/intel/oneapi/dnnl/latest/cpu_gomp
  cmake -S "$ONEDNN_SRC" -B "$prefix/onednn-build" -DCMAKE_BUILD_TYPE=Release -DONEDNN_LIBRARY_TYPE=STATIC \
    -DONEDNN_BUILD_EXAMPLES=OFF -DONEDNN_BUILD_TESTS=OFF -DONEDNN_ENABLE_WORKLOAD=INFERENCE \
    -DONEDNN_ENABLE_PRIMITIVE="CONVOLUTION;REORDER" -DONEDNN_BUILD_GRAPH=OFF -DCMAKE_INSTALL_PREFIX="$onednn"
  cmake --build "$prefix/onednn-build" --parallel "${JOBS:-2}" --target install
  dnnl=(-DWITH_DNNL=ON -DINTEL_ROOT="$prefix/intel")
fi
MKLROOT=$mkl cmake -S "$src" -B "$prefix/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-msse4.1 \
  -DBUILD_CLI=OFF -DWITH_MKL=ON ${dnnl[@]+"${dnnl[@]}"} -DOPENMP_RUNTIME=COMP -DCMAKE_INSTALL_PREFIX="$prefix"
cmake --build "$prefix/build" --parallel "${JOBS:-2}" --target install
# The Python package is built in place in the source tree, as CTranslate2's own docs do.
(cd "$src/python" && CTRANSLATE2_ROOT=$prefix /usr/bin/python3 setup.py build_ext --inplace > "$prefix/python-build.log")
ln -sfn "$(realpath "$src")" "$prefix/src"
LD_LIBRARY_PATH=$prefix/lib PYTHONPATH=$prefix/src/python /usr/bin/python3 -c \
  "import ctranslate2; print('CTranslate2', ctranslate2.__version__, 'CPU compute types', sorted(ctranslate2.get_supported_compute_types('cpu')))"
