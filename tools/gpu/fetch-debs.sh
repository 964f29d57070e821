#!/usr/bin/env bash
# Downloads (does not install) the Debian packages csan builds against, besides LibTorch,
# into .gpu/debs/, for tools/gpu/check.sh on a GPU machine that cannot fetch anything:
# headers, CMake/pkg-config files and the shared libraries they point to. (.gpu/ is
# git-ignored; the device tool's `carry` takes it along.)
source "$(dirname "$0")/../script-help.sh"
help_if_asked "$0" "$@"
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$root/.gpu/debs"
cd "$root/.gpu/debs"
apt-get download libsentencepiece-dev libsentencepiece0 libyaml-cpp-dev libyaml-cpp0.7 \
  libboost-program-options-dev libboost-program-options1.74-dev libboost-program-options1.74.0 libboost1.74-dev \
  libgtest-dev nlohmann-json3-dev
