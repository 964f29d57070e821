#!/usr/bin/env bash
# Writes an empty stand-in library for each library LIBTORCH_CPU names as needed but whose
# symbols nothing loaded with it uses, and prints their paths, one per line
# (cmake/CsanUnusedTorchLibraries.cmake links them into csan's programs).
#   find-unused-torch-libraries.sh LIBTORCH_CPU CXX OUT_DIR
# Debian's libtorch_cpu.so.1.13 was linked without --as-needed: it names OpenCV, FFmpeg,
# LevelDB, LMDB, ZeroMQ and more (for Caffe2 operators that build left out), which pull in
# Qt, GDAL and ~220 further libraries; loading and relocating them costs every LibTorch
# process ~75 MiB of resident memory and ~0.13 s before main(). A program that names a
# stand-in with the same soname gets the stand-in instead (the loader reuses an object already
# loaded under that soname). The check is the dynamic loader's own: with the stand-ins in
# place, `ldd -r` must resolve every symbol and symbol version of LibTorch's whole dependency
# tree. Starting from every library LibTorch names, the libraries defining a symbol that is
# then missing (or a version a stand-in lacks) are taken back, until nothing is missing.
set -euo pipefail
torch_cpu=${1:?usage: find-unused-torch-libraries.sh LIBTORCH_CPU CXX OUT_DIR}
cxx=${2:?usage: find-unused-torch-libraries.sh LIBTORCH_CPU CXX OUT_DIR}
out=${3:?usage: find-unused-torch-libraries.sh LIBTORCH_CPU CXX OUT_DIR}
for tool in readelf ldd nm; do command -v $tool >/dev/null || exit 0; done

# The C and C++ runtimes, OpenMP, BLAS/LAPACK (two sonames of one OpenBLAS: either alone
# looks unused) and LibTorch's own libraries are never replaced.
keep='^(libc|libm|libdl|librt|libpthread|ld-linux.*|libstdc\+\+|libgcc_s|libgomp|libblas|liblapack|libc10.*|libtorch.*)\.so'
declare -A real=()  # soname -> the library the loader finds for it
while read -r soname arrow path _; do
  [ "$arrow" = "=>" ] && [ -f "$path" ] && real[$soname]=$path
done < <(ldd "$torch_cpu")
candidates=()
for soname in $(readelf -d "$torch_cpu" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  [[ $soname =~ $keep ]] || [ -z "${real[$soname]:-}" ] || candidates+=("$soname")
done
[ ${#candidates[@]} -gt 0 ] || exit 0

missing() {  # the loader's complaints with the stand-ins of $out in place (empty: none)
  LD_LIBRARY_PATH="$out${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd -r "$torch_cpu" 2>&1 |
    grep -E "undefined symbol|=> not found|version .* not found|no version information" || true
}
rm -rf "$out" && mkdir -p "$out"
if [ -n "$(missing)" ]; then rm -rf "$out"; exit 0; fi  # LibTorch does not resolve here as it is
for round in $(seq 1 ${#candidates[@]}); do
  rm -f "$out"/*
  for soname in "${candidates[@]}"; do
    "$cxx" -shared -nostdlib -o "$out/$soname" -Wl,-soname,"$soname" -x c++ /dev/null
  done
  report=$(missing)
  [ -n "$report" ] || break
  symbols=$(sed -n 's/^undefined symbol: \([^ ,	]*\).*/\1/p' <<<"$report" | sort -u)
  kept=()
  for soname in "${candidates[@]}"; do
    needed=0
    # A stand-in without the symbol versions a library asks of it.
    grep -qF "$out/$soname:" <<<"$report" && needed=1
    if [ $needed = 0 ] && [ -n "$symbols" ] && [ -n "$(nm -D --defined-only "${real[$soname]}" |
      awk '{sub(/@.*/, "", $3); print $3}' | sort -u | comm -12 - <(echo "$symbols"))" ]; then
      needed=1
    fi
    [ $needed = 1 ] || kept+=("$soname")
  done
  if [ ${#kept[@]} -eq ${#candidates[@]} ] || [ ${#kept[@]} -eq 0 ]; then rm -rf "$out"; exit 0; fi
  candidates=("${kept[@]}")
done
[ -z "$(missing)" ] || { rm -rf "$out"; exit 0; }
for soname in "${candidates[@]}"; do echo "$out/$soname"; done
