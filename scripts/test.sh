#!/usr/bin/env bash
# Sets up the machine, checks the formatting, builds Kiln and runs every
# test suite:
#   runtime unit tests (ctest); everything built with ASan+UBSan running the
#   runtime tests, the importer lit tests and a node-suite subset
#   (scripts/asan.sh); 30 to 120 s of each libFuzzer target (scripts/fuzz.sh);
#   the runtime tests under ThreadSanitizer (scripts/tsan.sh); lit suites
#   (dialect, importer, passes, target),
#   the whole-model suite and the ONNX backend suites (pytorch-converted,
#   pytorch-operator, simple, node) on the CPU, the CUDA compile (NVVM,
#   then ptxas when a toolkit is installed, else PTX) and the ROCm compile
#   (hsaco code objects for gfx90a and gfx942) of the whole-model and node
#   suites, and every GPU kernel of the model suites emulated on the CPU
#   (scripts/emulate-gpu-suite): no GPU is needed for these. The Python
#   package's tests, its runtime-only wheel and the Debian package too.
# The last line is the node suite's "N passed, M failed, K skipped".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Each phase starts with "== name"; when the next one starts, the time the
# last took goes to stderr, and the whole list at the end (CI is asked to
# stay well under 45 minutes on two cores: this says where they go).
phase_times=()
phase_name=""
phase_start=$SECONDS
phase() {
  end_phase
  phase_name="$1"
  phase_start=$SECONDS
  echo "== $1"
}
end_phase() {
  if [ -n "$phase_name" ]; then
    local took=$((SECONDS - phase_start))
    phase_times+=("$(printf '%5d s  %s' "$took" "$phase_name")")
    echo "   ($took s)" >&2
  fi
  phase_name=""
}
print_phase_times() {
  end_phase
  echo "== time per phase (total $SECONDS s)" >&2
  printf '%s\n' "${phase_times[@]}" >&2
}
trap print_phase_times EXIT

phase "repository: no large or misnamed tracked files (scripts/check-repository.sh)"
bash scripts/check-repository.sh

phase "setup (scripts/setup.sh)"
bash scripts/setup.sh
phase "format: C and C++ files as clang-format (LLVM style) makes them (scripts/check-format.sh)"
bash scripts/check-format.sh
phase "build (scripts/build.sh)"
bash scripts/build.sh

phase "runtime unit tests (ctest)"
ctest --test-dir build --output-on-failure -j2

phase "everything under ASan+UBSan (scripts/asan.sh)"
bash scripts/asan.sh
phase "fuzzing (artifacts, tensor files, inputs, ONNX importer; scripts/fuzz.sh)"
bash scripts/fuzz.sh
phase "runtime under ThreadSanitizer (scripts/tsan.sh)"
bash scripts/tsan.sh

phase "Python package (pytest python/tests: the whole-model suite against onnxruntime, the API, its errors)"
.venv/bin/python -m pytest -q python/tests
phase "runtime-only wheel: pip wheel ./python alone, with neither MLIR nor LLVM (scripts/check-wheel.sh)"
bash scripts/check-wheel.sh
phase "Debian package: built by cpack, its tools and Python module run from the install prefix (scripts/check-package.sh)"
bash scripts/check-package.sh

phase "lit suites"
/usr/lib/llvm-22/bin/lit -sv build/test

phase "whole-model suite and its quantized models (cpu; test/quantized-models, made by scripts/make_quantized_models.py)"
build/bin/kiln-onnx-test --target=cpu --xfail-file test/whole-models/xfail-cpu.txt \
  test/models examples test/whole-models test/quantized-models

phase "quantized models as artifacts for AVX2 and AVX-VNNI CPUs (--cpu=x86-64-v3, --cpu=alderlake; run here where the CPU has those ISAs)"
# The int8 dot products of CPUs without AVX-512 VNNI (vpmaddwd on AVX2,
# 256-bit vpdpbusd on AVX-VNNI), on the quantized corpus.
for pair in "x86-64-v3 avx2" "alderlake avx_vnni"; do
  read -r cpu feature <<< "$pair"
  if grep -qw "$feature" /proc/cpuinfo; then
    build/bin/kiln-onnx-test --target=cpu --cpu="$cpu" test/quantized-models | tail -1
  else
    echo "skipped --cpu=$cpu: this CPU lacks $feature"
  fi
done

phase "whole-model suite with a dynamic batch (cpu; kiln-onnx-test --dynamic-batch: one artifact per model, each data set's batch through it)"
# Every model keeps batch elements apart and runs every batch through one
# artifact; one that stops running so (skipped with the node refused)
# fails the phase. The artifacts hold kernels for chunks of 1 and 3 too,
# so that each batch runs in pieces of several chunks.
build/bin/kiln-onnx-test --target=cpu --dynamic-batch --batch-chunks=1,3 test/whole-models |
  tee /dev/stderr | tail -1 | awk '{ if ($1 < 21) exit 1 }'

phase "ONNX backend pytorch-converted, pytorch-operator and simple suites (cpu)"
build/bin/kiln-onnx-test --target=cpu --xfail-file test/onnx/xfail-cpu.txt \
  /usr/share/libonnx-testdata/data/pytorch-converted \
  /usr/share/libonnx-testdata/data/pytorch-operator \
  /usr/share/libonnx-testdata/data/simple

phase "real-model corpus (cpu; test/real-models, made by scripts/make_real_models.py)"
# Real models exported by others: float32 through deep stacks, so compared
# with atol 1e-4 (onnxruntime's own reorderings differ by that much).
build/bin/kiln-onnx-test --target=cpu --atol 1e-4 test/real-models | tail -1

phase "real-model corpus with a dynamic batch (cpu; kiln-onnx-test --dynamic-batch)"
# Those with a symbolic batch run every data set through one artifact; the
# others are skipped (no symbolic leading dim, or the node refused). Fewer
# than the 21 that run so fails the phase.
build/bin/kiln-onnx-test --target=cpu --dynamic-batch --atol 1e-4 test/real-models |
  tee /dev/stderr | tail -1 | awk '{ if ($1 < 21) exit 1 }'

phase "CUDA compile of the whole-model and node suites (--target=cuda --compile-only)"
gpu_artifacts="$(mktemp -d)"
trap 'rm -rf "$gpu_artifacts"; print_phase_times' EXIT
# --max-serial-kernel-bytes: a model kernel that runs as one GPU thread over
# more than 4 KiB is a code generator bug (kernels the tiling could not
# parallelize were found this way) and fails the test.
build/bin/kiln-onnx-test --target=cuda --compile-only --artifact-dir "$gpu_artifacts" \
  --max-serial-kernel-bytes=4096 test/models examples test/whole-models test/quantized-models | grep -E "^FAIL|passed,"
build/bin/kiln-onnx-test --target=cuda --compile-only --artifact-dir "$gpu_artifacts" \
  /usr/share/libonnx-testdata/data/node | tail -1
# The corpus also fails on a kernel whose threads keep more than 1 KiB in
# local memory, or that moves more than 1 MiB in fewer blocks than the chip
# has multiprocessors (performance cliffs), unless its xfail list names it.
build/bin/kiln-onnx-test --target=cuda --compile-only --artifact-dir "$gpu_artifacts" \
  --max-serial-kernel-bytes=4096 --max-thread-private-bytes=1024 \
  --underfilled-kernel-bytes=1048576 --xfail-file test/real-models/xfail-cuda.txt \
  test/real-models | grep -E "^FAIL|passed,"

# Every GPU kernel of the model suites and of scripts/gpu-check's GPU
# patterns (staged matmul and convolution blocks sized to grow), run on the
# CPU as a GPU would run it (kiln-emulate-gpu) against the same kernel as
# loops, at each precision.
phase "GPU kernels of the whole-model, model and GPU-pattern suites emulated (scripts/emulate-gpu-suite)"
.venv/bin/python bench/make_gpu_bench_models.py --tests "$gpu_artifacts/patterns" > /dev/null
# Only what is not plainly OK is printed, then the count.
.venv/bin/python scripts/emulate-gpu-suite test/whole-models/*_opset17 test/models/* \
  "$gpu_artifacts"/patterns/* | grep -v "kernels OK, 0 skipped$"
# sm_90a's warpgroup matrix instructions (wgmma) on the patterns whose
# blocks have 64 or 128 rows; the lines of those that use them are printed.
.venv/bin/python scripts/emulate-gpu-suite "$gpu_artifacts"/patterns/* \
  --precisions f16@sm_90a | grep -v "kernels OK, 0 skipped (0 OK on wgmma)$"

# The real-model corpus's kernels at each precision.
.venv/bin/python scripts/emulate-gpu-suite test/real-models/*/ \
  | grep -v "kernels OK, [0-9]* skipped$"

# The quantized models' kernels in float32, where their integer sums are
# exact (in 16 bits, a requantized value moves a step with the order of a
# sum).
.venv/bin/python scripts/emulate-gpu-suite test/quantized-models/*/ --precisions f32 \
  | grep -v "kernels OK, 0 skipped$"

phase "ROCm compile of the whole-model and node suites (--target=rocm:gfx90a,gfx942 --compile-only)"
build/bin/kiln-onnx-test --target=rocm:gfx90a,gfx942 --compile-only --artifact-dir "$gpu_artifacts" \
  --max-serial-kernel-bytes=4096 test/models examples test/whole-models test/quantized-models | grep -E "^FAIL|passed,"
build/bin/kiln-onnx-test --target=rocm:gfx90a,gfx942 --compile-only --artifact-dir "$gpu_artifacts" \
  /usr/share/libonnx-testdata/data/node | tail -1
build/bin/kiln-onnx-test --target=rocm:gfx90a,gfx942 --compile-only --artifact-dir "$gpu_artifacts" \
  --max-serial-kernel-bytes=4096 --max-thread-private-bytes=1024 \
  --underfilled-kernel-bytes=1048576 --xfail-file test/real-models/xfail-rocm.txt \
  test/real-models | grep -E "^FAIL|passed,"

phase "ONNX backend node suite (cpu)"
build/bin/kiln-onnx-test --target=cpu --xfail-file test/onnx/xfail-cpu.txt \
  /usr/share/libonnx-testdata/data/node
