#!/usr/bin/env bash
# The GPU check, run on a machine with CUDA and a Python torch 2.x but none of csan's other
# libraries and no network (the lent GPU machine):
#   tools/gpu/fetch-debs.sh             here, once: .gpu/debs/ gets the Debian packages
#   cp -r DATA .gpu/m30k                here: a csan-preprocess output (Multi30k, joined 8k)
#   tools/gpu/check.sh .gpu/m30k [OUT]  there (the device tool with carry [".gpu"])
# CSAN_GPU_STEPS="tests train decode speed resume debug export" picks the checks after the
# build; CSAN_GPU_SMALL_UPDATES sets the Transformer's updates (default 1500), CSAN_GPU_SUBSET
# the decoded split (default valid), CSAN_GPU_BATCH its batch size (default 128),
# CSAN_GPU_CHECKPOINT a model to decode instead of the one trained here, CSAN_GPU_DECODE_ON
# "gpu" to skip the CPU decodes, CSAN_GPU_TARGETS what to build; export writes the trained model's weights (no optimizer
# state) as OUT/model.pt.part-* pieces under the device tool's 16 MiB per file.
# It unpacks the .deb files into .gpu/prefix (never into /), builds csan against python3's
# LibTorch, then trains and decodes on the GPU: Transformer in fp16 to a usable model,
# CCN base and Transformer base tokens/s per precision, and decoding sentences/s and BLEU
# in fp32, fp16, bf16 (GPU) and int8 (CPU), and the unit tests that need a GPU. Everything
# is logged to OUT (default: build-gpu/check).
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=${1:?usage: tools/gpu/check.sh DATA [OUT]}
out=${2:-$root/build-gpu/check}
mkdir -p "$out"
start=$(date +%s)
step() { echo "== [$(($(date +%s) - start)) s] $*"; }
# CSAN_GPU_STEPS picks what runs after the build (default: all of them).
steps=" ${CSAN_GPU_STEPS:-tests train decode speed resume} "
wants() { [[ $steps == *" $1 "* ]]; }

step "machine"
nvidia-smi -L || true
python3 - <<'PY' || true
import torch
print("torch", torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
      "cxx11_abi", torch._C._GLIBCXX_USE_CXX11_ABI)
PY
g++ --version | head -1; cmake --version | head -1; (ldd --version | head -1) || true

source "$root/tools/gpu/build-env.sh"
targets=${CSAN_GPU_TARGETS:-csan-train csan-generate csan-preprocess csan-score test_training test_generation average-checkpoints safetensors_probe}
# Test binaries that failed to build do not stop the executables' checks.
# shellcheck disable=SC2086
gpu_build $targets || [ -x "$bin/csan-generate" ] || { tail -20 "$out/build.log"; exit 1; }

# The progress lines' tokens/s (wps), the last training loss and the valid loss.
summarize() { grep -E '"(train|valid)"|wps|loss|BLEU|sentences/s|error' "$1" | tail -${2:-4}; }

wants tests && step "unit tests on the GPU"
wants tests && for t in training generation; do
  [ -x "$build/tests/test_$t" ] || { echo "test_$t did not build"; continue; }
  timeout 120 "$build/tests/test_$t" --gtest_filter='Gpu*:ComputeDevice*:OptimizerState*:Precision*:InferencePrecision*' \
    >"$out/test_$t.log" 2>&1; echo "test_$t exit $?"
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|error' "$out/test_$t.log" | head -20
done

# Python's safetensors package is on this machine (not in Debian): csan's files against it.
if wants tests && [ -x "$build/tests/safetensors_probe" ]; then
  rc=0
  CSAN_SAFETENSORS_PROBE=$build/tests/safetensors_probe timeout 120 python3 \
    "$root/tests/interop/safetensors_interop_test.py" --library >"$out/safetensors_library.log" 2>&1 || rc=$?
  echo "interop.safetensors_library exit $rc (77: skipped)"
  tail -3 "$out/safetensors_library.log"
fi

small_updates=${CSAN_GPU_SMALL_UPDATES:-1500}
if wants train; then
  step "Transformer (multi30k-small) fp16 on the GPU, $small_updates updates"
  timeout $((small_updates / 10 + 120)) "$bin/csan-train" "$root/recipes/multi30k-small.yaml" --data "$data" --save-dir "$out/small-fp16" \
    --precision fp16 --max-update $small_updates --log-interval 250 >"$out/small-fp16.log" 2>&1; echo "exit $?"
  tail -3 "$out/small-fp16.log"
fi
ckpt=${CSAN_GPU_CHECKPOINT:-$out/small-fp16/checkpoint_best.pt}

# Summaries go to --results-path files (written before the process ends).
subset=${CSAN_GPU_SUBSET:-valid}
decode() {  # NAME ARGS...
  local name=$1; shift
  timeout ${CSAN_GPU_DECODE_TIMEOUT:-90} "$bin/csan-generate" --data "$data" --gen-subset $subset --path "$ckpt" --beam 5 --batch-size ${CSAN_GPU_BATCH:-128} \
    --results-path "$out/generate-$name" "$@" >"$out/generate-$name.log" 2>&1; echo "$name: exit $?"
  grep -E 'Translated|BLEU' "$out/generate-$name/generate-$subset.txt" 2>/dev/null; grep -v '^$' "$out/generate-$name.log" | tail -2
}
if wants decode; then
  step "decode $subset, beam 5: fp32, fp16, bf16 on the GPU; int8 and fp32 on the CPU ($(nproc) cores)"
  for p in fp32 fp16 bf16; do decode gpu-$p --precision $p; done
  [ "${CSAN_GPU_DECODE_ON:-}" = gpu ] || for p in int8 fp32; do decode cpu-$p --cpu --precision $p; done
fi
if wants debug; then
  step "backtraces of crashes at exit"
  gdb=$(command -v cuda-gdb || command -v gdb)
  timeout 120 "$gdb" -q -batch -ex run -ex bt -ex 'info sharedlibrary' --args "$bin/csan-generate" --cpu --data "$data" \
    --gen-subset valid --path "$ckpt" --beam 1 --batch-size 128 --results-path "$out/debug-generate" \
    >"$out/debug-generate.log" 2>&1
  grep -E -A30 'SIG|signal' "$out/debug-generate.log" | head -60
  timeout 120 "$gdb" -q -batch -ex run -ex bt --args "$build/tests/test_training" --gtest_filter='Gpu.ACheckpoint*' \
    >"$out/debug-test.log" 2>&1
  grep -E -A30 'SIG|signal|OK \]|FAILED' "$out/debug-test.log" | head -50
fi

wants speed && for run in ccn_base:fp16 ccn_base:amp ccn_base:fp32 transformer_base_prenorm:fp16 transformer_base_prenorm:fp32; do
  arch=${run%:*} p=${run#*:}
  step "$arch $p: 120 updates of 6,528 tokens (tokens/s)"
  timeout 90 "$bin/csan-train" "$root/recipes/ccn-base.yaml" --arch $arch --data "$data" --precision $p \
      --distributed-world-size 1 --max-update 120 --log-interval 40 --save-dir "$out/$arch-$p" \
      --set task.eval_bleu=false --set checkpoint.best_checkpoint_metric=loss --set checkpoint.no_save=true \
      >"$out/$arch-$p.log" 2>&1; echo "exit $?"
  grep -E 'wps|error' "$out/$arch-$p.log" | tail -2
done

wants resume && step "resume on the GPU: 2 epochs then 1 more vs 3 epochs (fp32, multi30k-small): same valid loss?"
wants resume && for run in straight split; do
  dir=$out/resume-$run
  if [ $run = split ]; then
    "$bin/csan-train" "$root/recipes/multi30k-small.yaml" --data "$data" --save-dir "$dir" --max-epoch 2 >/dev/null 2>&1
  fi
  timeout 60 "$bin/csan-train" "$root/recipes/multi30k-small.yaml" --data "$data" --save-dir "$dir" --max-epoch 3 \
    >"$out/resume-$run.log" 2>&1; echo "exit $?"
  grep -E 'valid' "$out/resume-$run.log" | tail -1
done
if wants export; then
  step "export the trained model's weights in pieces"
  "$build/tools/average-checkpoints" --inputs "$ckpt" --output "$out/model.pt" && (cd "$out" && split -b 15M model.pt model.pt.part- && ls -la model.pt*)
fi
step "done"
