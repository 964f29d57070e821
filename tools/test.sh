#!/usr/bin/env bash
# The test command: installs dependencies, builds (Release, all cores), runs ctest.
#   tools/test.sh              the normal suite (build/)
#   tools/test.sh --sanitize   the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer
#                              (build-sanitize/, RelWithDebInfo); any report fails its test
# Other arguments go to cmake's configure step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/tools/script-help.sh"
sanitize=0
args=()
for a in "$@"; do
  case $a in
    --sanitize) sanitize=1 ;;
    -h | --help) script_help "$0"; exit 0 ;;
    *) args+=("$a") ;;
  esac
done
"$root/tools/install-deps.sh" --browser  # csan-serve's page test runs in headless Chromium
if [ $sanitize = 1 ]; then
  export CSAN_BUILD_DIR=${CSAN_BUILD_DIR:-$root/build-sanitize}
  args+=(-DCSAN_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo)
  # LibTorch's own one-time allocations (its operator registry, thread pools) are never
  # freed by design: tools/sanitize/lsan.supp names them; everything else must be clean.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=0}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tools/sanitize/lsan.supp:print_suppressions=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
"$root/tools/build.sh" "${args[@]}"
build=${CSAN_BUILD_DIR:-$root/build}
cd "$build"
# The tests' scratch directories (TMPDIR) go in the build folder, emptied at the start of each
# run: a whole run leaves hundreds of MB, which in /tmp (RAM on Debian 13) piled up run after
# run. The last run's stay there to look at after a failure.
export TMPDIR=$build/test-tmp
rm -rf "$TMPDIR"
mkdir -p "$TMPDIR"
ctest --output-on-failure --parallel "$(nproc)" --timeout 900
