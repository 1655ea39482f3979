#!/usr/bin/env bash
# Sets up the machine, builds Kiln, compiles the bundled example model
# (examples/tiny_cnn) and runs it, printing its output and its error against
# the onnxruntime reference.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash scripts/setup.sh
bash scripts/build.sh

# The CPU by default; an NVIDIA GPU when the machine has one (and a driver).
target=cpu
device=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  target=cuda
  device=cuda
fi

model=examples/tiny_cnn
mkdir -p build/examples
echo "== kiln-compile $model/model.onnx --target=$target"
build/bin/kiln-compile "$model/model.onnx" --target="$target" \
  -o build/examples/tiny_cnn.kiln --summary
echo "== kiln-run on $device"
build/bin/kiln-run build/examples/tiny_cnn.kiln --device "$device" --print \
  --input "input=@$model/test_data_set_0/input_0.pb" \
  --expected "probabilities=@$model/test_data_set_0/output_0.pb"
