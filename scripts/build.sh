#!/usr/bin/env bash
# Configures (once) and builds Kiln into build/ with clang-22, lld-22 and ccache.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
source "$root/scripts/configure.sh"
if [ ! -f "$build/build.ninja" ]; then
  configure_kiln "$build" Release -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit "$@"
fi
ninja -C "$build" ${KILN_NINJA_TARGETS:-}
