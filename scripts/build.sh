#!/usr/bin/env bash
# Configures (once) and builds Kiln into build/ with clang-22, lld-22 and
# ccache, then installs the kiln Python package (python/) into .venv, its
# kiln.compile defaulting to this build's kiln-compile.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
source "$root/scripts/configure.sh"
if [ ! -f "$build/build.ninja" ]; then
  configure_kiln "$build" Release -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit "$@"
fi
ninja -C "$build" ${KILN_NINJA_TARGETS:-}
"$root/.venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation \
  --no-deps "$root/python" \
  --config-settings=build-dir="$build/python-wheel" \
  --config-settings=cmake.define.KILN_COMPILE_TOOL="$build/bin/kiln-compile" \
  --config-settings=cmake.define.CMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang \
  --config-settings=cmake.define.CMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++
