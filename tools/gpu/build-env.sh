# Builds csan on the lent GPU machine (sourced by tools/gpu/check.sh and experiments.sh, not
# run): that machine has CUDA and a Python torch 2.x but none of csan's other libraries and
# no network, so the Debian packages of .gpu/debs (tools/gpu/fetch-debs.sh, here) are
# unpacked into .gpu/prefix (never into /) and csan is built against python3's LibTorch.
# Expects root, out and step (a logging function); sets build, prefix and bin, and exports
# LD_LIBRARY_PATH for the built executables.
#   gpu_build TARGET...   unpack, configure, build (logs in out/configure.log, out/build.log)
build=${CSAN_GPU_BUILD_DIR:-$root/build-gpu}
prefix=$root/.gpu/prefix
bin=$build/cli

gpu_build() {
  step "unpack .gpu/debs into $prefix"
  rm -rf "$prefix" && mkdir -p "$prefix"
  local deb
  for deb in "$root"/.gpu/debs/*.deb; do dpkg -x "$deb" "$prefix" || return 1; done

  # SentencePiece with its own protobuf (hidden): this machine has no system protobuf, and
  # python3's LibTorch keeps its own inside libtorch_cpu.so; built with LibTorch's C++ ABI.
  step "SentencePiece into $root/.gpu/deps"
  local abi
  abi=$(python3 -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))') || return 1
  CSAN_DEPS_DIR=$root/.gpu/deps CXXFLAGS="-D_GLIBCXX_USE_CXX11_ABI=$abi" \
    "$root/tools/build-sentencepiece.sh" --builtin-protobuf || return 1

  step "configure"
  local torch_prefix cuda generator=()
  torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  for cuda in /usr/local/cuda /usr/local/cuda-*; do
    if [ -x "$cuda/bin/nvcc" ]; then export PATH=$cuda/bin:$PATH CUDAToolkit_ROOT=$cuda; break; fi
  done
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$torch_prefix;$prefix/usr" -DCSAN_DEPS_DIR="$root/.gpu/deps" ${CSAN_GPU_CMAKE_ARGS:-} \
    >"$out/configure.log" 2>&1 || { tail -40 "$out/configure.log"; return 1; }
  grep -i -E 'warning|cuda|torch' "$out/configure.log" | head -20

  step "build $*"
  local status
  # shellcheck disable=SC2068
  cmake --build "$build" --parallel "$(nproc)" --target $@ -- \
    $([ ${#generator[@]} -gt 0 ] && echo -k 0) >"$out/build.log" 2>&1
  status=$?
  grep -E 'error|Error' "$out/build.log" | head -60
  return $status
}

export LD_LIBRARY_PATH=$prefix/usr/lib/x86_64-linux-gnu:$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null)/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
