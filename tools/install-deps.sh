#!/usr/bin/env bash
# Installs the Debian packages csan builds against, makes sure OpenBLAS is the active
# libblas.so.3 (LibTorch from Debian calls the system BLAS; the reference BLAS is an order
# of magnitude slower), then builds SentencePiece into .deps/ against the system protobuf
# (tools/build-sentencepiece.sh). Idempotent and quiet when everything is already present.
#   tools/install-deps.sh          what the build and the tests need
#   tools/install-deps.sh --fuzz   also clang and libFuzzer, for tools/fuzz.sh
#   tools/install-deps.sh --plots  also python3-matplotlib, for tools/plot-curves
#   tools/install-deps.sh --browser also Chromium, its driver and Selenium, for csan-serve's
#                                   web page test (tools/test.sh, and so CI, installs them)
# The default install leaves the optional tools out (no test or executable needs them).
set -euo pipefail
source "$(dirname "$0")/script-help.sh"

fuzz=0
plots=0
browser=0
for arg in "$@"; do
  case "$arg" in
    --fuzz) fuzz=1 ;;
    --plots) plots=1 ;;
    --browser) browser=1 ;;
    -h | --help) script_help "$0"; exit 0 ;;
    *) echo "install-deps: error: unknown option '$arg' (--fuzz, --plots, --browser, --help)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake pkg-config
  ninja-build  # tools/build.sh's generator: compiles a target while the libraries it links still build
  libtorch-dev
  libopenblas0-openmp
  libgloo-dev
  libprotobuf-dev protobuf-compiler curl  # tools/build-sentencepiece.sh
  libyaml-cpp-dev
  libboost-program-options-dev
  libgtest-dev
  libtcmalloc-minimal4  # csan-train / csan-generate allocate with it (docs/csan-train.md, "Memory")
  nlohmann-json3-dev   # safetensors headers (checkpoints); the tests read the JSON test vectors
  python3-torch python3-sentencepiece python3-numpy  # tests/interop: csan beside torch and sentencepiece
                                                     # in Python; safetensors files read by numpy
  # The Python package (python/): built with pybind11 against Debian's Python, installed
  # by pip without downloading a build backend, tested by pytest.
  python3-dev pybind11-dev python3-setuptools python3-pip python3-venv python3-pytest
  libcpp-httplib-dev  # csan-serve's HTTP server (and the tests' client)
)
if ((fuzz)); then
  # -fsanitize=fuzzer,address,undefined: clang with its sanitizer and libFuzzer runtimes.
  packages+=(clang-14 libclang-rt-14-dev libfuzzer-14-dev)
fi
if ((browser)); then
  # ServeCli.WebPageInHeadlessChromium drives the page in headless Chromium.
  packages+=(chromium chromium-driver python3-selenium)
fi
if ((plots)); then
  packages+=(python3-matplotlib)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# libtorch-dev pulls in a BLAS provider; the alternatives system may pick the reference one.
arch_triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
alt="libblas.so.3-${arch_triplet}"
openblas="/usr/lib/${arch_triplet}/openblas-openmp/libblas.so.3"
if [ -e "$openblas" ]; then
  current=$(readlink -f "/etc/alternatives/${alt}" 2>/dev/null || true)
  if [ "$current" != "$(readlink -f "$openblas")" ]; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo update-alternatives --quiet --set "$alt" "$openblas"
  fi
fi

active=$(readlink -f "/usr/lib/${arch_triplet}/libblas.so.3" 2>/dev/null || true)
case "$active" in
  *openblas*) ;;
  *)
    echo "install-deps: error: the active libblas.so.3 is '${active:-none}', not OpenBLAS;" \
         "LibTorch would run an order of magnitude slower. Fix: update-alternatives --set $alt $openblas" >&2
    exit 1 ;;
esac

"$(dirname "$0")/build-sentencepiece.sh"
