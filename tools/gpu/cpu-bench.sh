#!/usr/bin/env bash
# The CPU measurements of the fast-CPU issue (bf16 and int8 decoding, bf16 training
# against PyTorch's own autocast) on the lent GPU machine's host CPU, which has the
# AVX512-BF16 / AMX / VNNI the 2-core AVX2 EPYC here lacks; against the PyTorch that comes
# with that machine (python3's torch, the LibTorch csan is built against there). Here:
#   tools/gpu/fetch-debs.sh; .gpu/m30k (the 8k joint Multi30k data-bin, test2016 included),
#   .gpu/model.pt (a multi30k-small model), .gpu/shortlist.txt (tools/build-shortlist on it)
# there (the device tool, carry [".gpu/debs", ".gpu/m30k", ".gpu/model.pt", ".gpu/shortlist.txt"]):
#   tools/gpu/cpu-bench.sh [OUT]
# Everything on 2 pinned cores with OMP_NUM_THREADS=2, as the issue measures; each step's
# output in OUT (default build-gpu/cpu-bench). CSAN_BENCH_STEPS picks steps (default: all):
#   gemm        bench-gemm fp32 and bf16 (the bf16 peak a training step is measured against)
#   train       bench-train --precision fp32,bf16, small and transformer_base
#   vs-pytorch  train-vs-pytorch.sh --precision fp32|bf16 small|base
#   generate    bench-generate --precision fp32,bf16,int8 with and without the shortlist
#   gen-pytorch generate-vs-pytorch.sh --precision fp32|bf16|int8
#   profile     where a step's time goes, by op (tools/bench/trace-summary of --profile traces):
#               decoding in fp32, bf16 and int8, a bf16 training update, small and base
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build-gpu/cpu-bench}
mkdir -p "$out"
start=$(date +%s)
step() { echo "== [$(($(date +%s) - start)) s] $*"; }
steps=" ${CSAN_BENCH_STEPS:-gemm train vs-pytorch generate gen-pytorch profile} "
wants() { [[ $steps == *" $1 "* ]]; }

step "machine"
grep -m1 'model name' /proc/cpuinfo
grep -o -w -E 'avx512_bf16|amx_bf16|amx_int8|avx512_vnni|avx512f' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
source "$root/tools/gpu/build-env.sh"
if [ ! -x "$build/tools/bench/bench-train" ] || [ ! -x "$build/tools/bench/bench-generate" ]; then
  gpu_build bench-train bench-generate bench-gemm || { tail -20 "$out/build.log"; exit 1; }
fi
export CSAN_PYTHON=$(command -v python3) OMP_NUM_THREADS=2
# The first two CPUs this process may use.
pin=(taskset -c "$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0))[:2])))')")
data=$root/.gpu/m30k model=$root/.gpu/model.pt shortlist=$root/.gpu/shortlist.txt
rel_build=${build#"$root"/}
langs=(--source-lang en --target-lang de)
run_step() {  # NAME COMMAND...: output to OUT/NAME.log, its last lines shown
  local name=$1; shift
  step "$name: $*"
  timeout "${CSAN_BENCH_TIMEOUT:-300}" "${pin[@]}" "$@" > "$out/$name.log" 2>&1; echo "exit $?"
  tail -n "${CSAN_BENCH_TAIL:-6}" "$out/$name.log"
}
wants gemm && run_step gemm "$build/tools/bench/bench-gemm" --dtypes fp32,bf16 --seconds 2
if wants train; then
  run_step train-small "$build/tools/bench/bench-train" --data "$data" "${langs[@]}" \
    --recipe "$root/recipes/bench-small.yaml" --precision fp32,bf16
  run_step train-base "$build/tools/bench/bench-train" --data "$data" "${langs[@]}" \
    --recipe "$root/recipes/transformer-base.yaml" --precision fp32,bf16 --warmup 2 --updates 10
fi
if wants vs-pytorch; then
  for config in small base; do
    for p in fp32 bf16; do
      run_step "vs-pytorch-$config-$p" "$root/tools/bench/train-vs-pytorch.sh" --precision $p $config "$data" 1 "$rel_build"
    done
  done
fi
if wants generate; then
  run_step generate "$build/tools/bench/bench-generate" --path "$model" --data "$data" \
    --precision fp32,bf16,int8 --shortlist "$shortlist" --repeats 2
fi
if wants gen-pytorch; then
  for p in fp32 bf16 int8; do
    run_step "gen-pytorch-$p" "$root/tools/bench/generate-vs-pytorch.sh" --precision $p "$model" "$data" 1 "$rel_build"
  done
fi
if wants profile; then
  # The traces are large (tens of MB); only their summaries stay in OUT.
  profile_step() {  # NAME TRACE COMMAND...
    local name=$1 trace=$2; shift 2
    run_step "$name" "$@" --profile "$trace"
    python3 "$root/tools/bench/trace-summary" "$trace" --top 25 > "$out/$name.summary.txt" 2>&1
    head -n 5 "$out/$name.summary.txt"
    rm -f "$trace"
  }
  for p in fp32 bf16 int8; do
    profile_step "profile-generate-$p" "$out/trace.json" "$build/tools/bench/bench-generate" --path "$model" \
      --data "$data" --precision $p --repeats 1
  done
  profile_step profile-train-small-bf16 "$out/trace.json" "$build/tools/bench/bench-train" --data "$data" \
    "${langs[@]}" --recipe "$root/recipes/bench-small.yaml" --precision bf16 --warmup 2 --updates 2
  profile_step profile-train-base-bf16 "$out/trace.json" "$build/tools/bench/bench-train" --data "$data" \
    "${langs[@]}" --recipe "$root/recipes/transformer-base.yaml" --precision bf16 --warmup 1 --updates 1
fi
step "done"
