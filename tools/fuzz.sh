#!/usr/bin/env bash
# Fuzzes one parser with libFuzzer under AddressSanitizer + UndefinedBehaviorSanitizer.
#   tools/fuzz.sh TARGET SECONDS     build (clang, build-fuzz/) and fuzz TARGET for SECONDS
#   tools/fuzz.sh list               the targets (tests/fuzz/targets.txt)
# Needs clang and libFuzzer: tools/install-deps.sh --fuzz. Inputs that grew coverage go to
# build-fuzz/corpus/TARGET; a crash, leak or sanitizer report stops the run with exit 1
# and leaves its input in build-fuzz/artifacts/TARGET/. Copy that input to
# tests/fuzz/corpus/TARGET/ once fixed: the normal test run (test_fuzz_replay) replays it.
source "$(dirname "$0")/script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${CSAN_FUZZ_BUILD_DIR:-$root/build-fuzz}
targets_file=$root/tests/fuzz/targets.txt

usage() {
  echo "usage: tools/fuzz.sh TARGET SECONDS | list" >&2
  echo "targets: $(grep -E '^[a-z_]+$' "$targets_file" | tr '\n' ' ')" >&2
  exit 2
}
[ $# -ge 1 ] || usage
if [ "$1" = list ]; then
  grep -E '^[a-z_]+$' "$targets_file"
  exit 0
fi
[ $# -eq 2 ] || usage
target=$1
seconds=$2
grep -qxF "$target" "$targets_file" || { echo "fuzz.sh: unknown target '$target'" >&2; usage; }
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: SECONDS must be a positive number, got '$seconds'" >&2; exit 2; }

cxx=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$cxx" ]; then
  echo "fuzz.sh: clang is not installed; run tools/install-deps.sh --fuzz" >&2
  exit 1
fi
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$root/tests/fuzz" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
  "${launcher[@]}" >/dev/null
cmake --build "$build" --target "fuzz_$target" -j "$(nproc)"

corpus=$build/corpus/$target
artifacts=$build/artifacts/$target
mkdir -p "$corpus" "$artifacts"
seeds=$root/tests/fuzz/corpus/$target
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Leaks inside the uninstrumented system libraries (LibTorch's archive reader) are theirs.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tools/sanitize/lsan.supp:print_suppressions=0}
extra=()
# LibTorch's unpickler reserves what a string's 32-bit length field says before it reads
# the bytes (found by this target: a crafted archive behind a valid checksum asks for up
# to 4 GiB, then fails as truncated). It is a reservation that ends in an error, not a
# crash; the limit lets the fuzzer go on past it.
if [ "$target" = checkpoint ]; then extra+=(-malloc_limit_mb=4200); fi
# New coverage is written to the first folder; the stored inputs are read as seeds.
exec "$build/fuzz_$target" "${extra[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 -max_len=8192 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$seeds"
