#!/usr/bin/env bash
# Configures (Release) and builds csan into ${CSAN_BUILD_DIR:-build} with all cores.
# Extra arguments go to cmake's configure step (e.g. -DCMAKE_PREFIX_PATH=...).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/tools/script-help.sh"
case ${1:-} in -h | --help) script_help "$0"; exit 0 ;; esac
build=${CSAN_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" --parallel "$(nproc)"
