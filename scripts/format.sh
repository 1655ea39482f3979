#!/usr/bin/env bash
# Formats every tracked C and C++ file with clang-format (LLVM style,
# .clang-format), as scripts/check-format.sh checks.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
git ls-files -z --cached --others --exclude-standard '*.c' '*.cpp' '*.h' | xargs -0 clang-format-22 -i
