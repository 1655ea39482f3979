#!/usr/bin/env bash
# Builds the Debian package of build/ (cpack; cmake/Packaging.cmake), checks
# that apt can install it (its dependencies resolve), and checks it unpacked
# into a folder, as installed under a prefix: every
# tool's --version, a compile and a run of the bundled example with the
# packaged tools and runtime library, and the packaged Python module.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_BUILD_DIR:-$root/build}"
out="$build/package"
rm -rf "$out"
(cd "$build" && cpack -G DEB -B "$out" >/dev/null)
deb=$(ls "$out"/kiln_*_amd64.deb)
echo "package: $(basename "$deb") ($(du -h "$deb" | cut -f1))"
# Its declared dependencies resolve on this Debian (apt's simulation of
# installing it: nothing is installed).
apt-get install --simulate --no-install-recommends "$deb" > "$out/apt.log" 2>&1 ||
  { echo "apt cannot install $(basename "$deb"):"; cat "$out/apt.log"; exit 1; }
grep -q "^Inst kiln " "$out/apt.log" ||
  { echo "apt would not install kiln:"; cat "$out/apt.log"; exit 1; }
echo "apt: $(grep -c '^Inst ' "$out/apt.log") packages to install, kiln among them"
prefix="$out/root/usr"
dpkg-deb -x "$deb" "$out/root"

for tool in kiln-compile kiln-onnx-test kiln-run kiln-bench; do
  "$prefix/bin/$tool" --version | head -n 1
done
# The packaged tools load the packaged runtime, not the build's.
# (ldd's output kept first: grep -q leaving early would fail the pipe.)
libraries=$(ldd "$prefix/bin/kiln-run")
grep -q "$prefix/bin/../lib/libkiln_runtime.so" <<< "$libraries" || {
  echo "kiln-run does not load $prefix/lib/libkiln_runtime.so:"
  echo "$libraries"; exit 1; }

model="$root/examples/tiny_cnn"
"$prefix/bin/kiln-compile" "$model/model.onnx" -o "$out/tiny_cnn.kiln"
"$prefix/bin/kiln-run" "$out/tiny_cnn.kiln" \
  --input "input=@$model/test_data_set_0/input_0.pb" \
  --expected "probabilities=@$model/test_data_set_0/output_0.pb"

# The module from the package (it finds kiln-compile on $PATH).
PATH="$prefix/bin:$PATH" PYTHONPATH="$prefix/lib/python3/dist-packages" \
  "$root/.venv/bin/python" - "$prefix" "$model" <<'PY'
import sys
import numpy as np, onnx
from onnx import numpy_helper
import kiln
prefix, model = sys.argv[1], sys.argv[2]
assert kiln.__file__.startswith(prefix), kiln.__file__
assert kiln.compiler_path() == prefix + "/bin/kiln-compile", kiln.compiler_path()
x = numpy_helper.to_array(onnx.load_tensor(model + "/test_data_set_0/input_0.pb"))
want = numpy_helper.to_array(onnx.load_tensor(model + "/test_data_set_0/output_0.pb"))
[got] = kiln.InferenceSession(kiln.compile(model + "/model.onnx")).run(None, {"input": x})
np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-7)
print("python: kiln from", kiln.__file__, "matches the example's output")
PY
echo "package: ok"
