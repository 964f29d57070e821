#!/usr/bin/env bash
# Configures (Release) and builds csan into ${CSAN_BUILD_DIR:-build} with all cores.
# Extra arguments go to cmake's configure step (e.g. -DCMAKE_PREFIX_PATH=...).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/tools/script-help.sh"
case ${1:-} in -h | --help) script_help "$0"; exit 0 ;; esac
build=${CSAN_BUILD_DIR:-$root/build}
# A new build folder gets Ninja where installed: unlike CMake's Makefiles, it starts compiling a
# target's files while the libraries it links are still being built, so on few cores neither
# core waits for the last file of each library. An existing folder keeps its generator.
generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${generator[@]+"${generator[@]}"} "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
