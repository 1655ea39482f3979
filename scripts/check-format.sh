#!/usr/bin/env bash
# Fails when a tracked C or C++ file differs from what clang-format (LLVM
# style, .clang-format) makes of it; scripts/format.sh rewrites them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
git ls-files -z --cached --others --exclude-standard '*.c' '*.cpp' '*.h' | xargs -0 clang-format-22 --dry-run --Werror
