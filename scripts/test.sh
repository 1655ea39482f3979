#!/usr/bin/env bash
# Sets up the machine, builds Kiln and runs every test suite:
#   runtime unit tests (ctest), lit suites (dialect, importer, passes, target),
#   the whole-model suite and the ONNX backend suites (pytorch-converted,
#   pytorch-operator, simple, node) on the CPU.
# The last line is the node suite's "N passed, M failed, K skipped".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/setup.sh
bash scripts/build.sh

echo "== runtime unit tests (ctest)"
ctest --test-dir build --output-on-failure -j2

echo "== lit suites"
/usr/lib/llvm-22/bin/lit -sv build/test

echo "== whole-model suite (cpu)"
build/bin/kiln-onnx-test --target=cpu --xfail-file test/whole-models/xfail-cpu.txt \
  test/models examples test/whole-models

echo "== ONNX backend pytorch-converted, pytorch-operator and simple suites (cpu)"
build/bin/kiln-onnx-test --target=cpu --xfail-file test/onnx/xfail-cpu.txt \
  /usr/share/libonnx-testdata/data/pytorch-converted \
  /usr/share/libonnx-testdata/data/pytorch-operator \
  /usr/share/libonnx-testdata/data/simple

echo "== ONNX backend node suite (cpu)"
build/bin/kiln-onnx-test --target=cpu --xfail-file test/onnx/xfail-cpu.txt \
  /usr/share/libonnx-testdata/data/node
