#!/usr/bin/env bash
# Downloads (does not install) the Debian packages csan builds against, besides LibTorch,
# into .gpu/debs/, for tools/gpu/check.sh on a GPU machine that cannot fetch anything:
# headers, CMake files and the shared libraries they point to; and SentencePiece's sources
# into .gpu/deps/downloads/, which tools/gpu/build-env.sh builds there. (.gpu/ is
# git-ignored; the device tool's `carry` takes it along.)
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/.gpu/debs"
cd "$root/.gpu/debs"
apt-get download libyaml-cpp-dev libyaml-cpp0.7 \
  libboost-program-options-dev libboost-program-options1.74-dev libboost-program-options1.74.0 libboost1.74-dev \
  libgtest-dev nlohmann-json3-dev
CSAN_DEPS_DIR=$root/.gpu/deps "$root/tools/build-sentencepiece.sh" --download-only
