#!/usr/bin/env bash
# Runs each libFuzzer target of the sanitized build of everything
# (build-asan/, ASan+UBSan; see scripts/asan.sh) — the artifact loader and
# its kernels (bytes, and forged artifacts), the .npy/.pb readers, the
# runtime's input binding and the ONNX importer (bytes, and hostile graphs) — from
# a seed corpus made from the test suites' files (valid, cut and corrupted),
# after replaying test/fuzz/regressions/<target>/.
# Fails on any sanitizer report, crash, leak or timeout; a finding is left in
# build-asan/findings/ (crash-*, leak-*, timeout-*) for a regression test.
#   scripts/fuzz.sh          # the test command: a fixed seed and a fixed
#                            # number of runs per target (30 to 120 s each);
#                            # runs still differ somewhat from one to the next
#                            # (coverage through pointer-keyed hash maps), so
#                            # run a target longer before relying on a pass
#   scripts/fuzz.sh 3600     # a longer, random run, keeping its corpus
set -euo pipefail
seconds="${1:-}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_ASAN_BUILD_DIR:-$root/build-asan}"
source "$root/scripts/configure.sh"
configure_kiln_asan "$build" >/dev/null
ninja -C "$build" kiln-fuzz-artifact kiln-fuzz-forged-artifact kiln-fuzz-tensor-file \
  kiln-fuzz-inputs kiln-fuzz-importer kiln-fuzz-onnx-graph kiln-make-test-artifact >/dev/null

# Seeds: a valid artifact and tensor files, then cut and corrupted copies.
corpus="$build/corpus"
rm -rf "$corpus"
mkdir -p "$corpus/trusted" "$corpus/artifact" "$corpus/tensor-file" "$corpus/inputs" \
  "$corpus/importer" "$corpus/forged-artifact" "$corpus/onnx-graph"
"$build/bin/kiln-make-test-artifact" "$corpus/trusted"
cp "$corpus/trusted/model.kiln" "$corpus/trusted/model-gpu.kiln" "$corpus/artifact/"
cp "$corpus/trusted/"*.npy "$corpus/trusted/"*.pb "$corpus/tensor-file/"
cp "$root"/test/models/*/test_data_set_0/*.pb "$corpus/tensor-file/" 2>/dev/null || true
for f in "$root"/test/Import/models/*.onnx "$root"/test/models/*/model.onnx; do
  cp "$f" "$corpus/importer/$(basename "$(dirname "$f")")-$(basename "$f")"
done
for dir in artifact tensor-file importer; do
  for f in "$corpus/$dir"/*; do
    size=$(stat -c %s "$f")
    for cut in 1 8 64 $((size / 2)) $((size - 1)); do
      [ "$cut" -gt 0 ] && [ "$cut" -lt "$size" ] && head -c "$cut" "$f" > "$f.cut$cut"
    done
    # Flip one byte at a few offsets (headers, tables, payload).
    for at in 4 16 $((size / 3)) $((size * 2 / 3)); do
      [ "$at" -lt "$size" ] || continue
      cp "$f" "$f.flip$at"
      printf '\xff' | dd of="$f.flip$at" bs=1 seek="$at" conv=notrunc status=none
    done
  done
done
head -c 64 /dev/zero > "$corpus/inputs/zeros"
printf '\x00\x00\x00\x02\x01\x04\x00' > "$corpus/inputs/set-run-get"
# The forger's and the graph fuzzer's bytes choose edits of a valid artifact
# and a graph's ops, inputs and attributes; they start from none.
head -c 16 /dev/zero > "$corpus/forged-artifact/zeros"
head -c 64 /dev/zero > "$corpus/onnx-graph/zeros"

rm -rf "$build/findings"
mkdir -p "$build/findings"
export KILN_FUZZ_ARTIFACT="$corpus/trusted/model.kiln"
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons a new slab when
# instrumented code allocates from it (a kiln attribute's storage), and
# only instrumented code unpoisons what it takes; uninstrumented MLIR then
# allocates from the same slab and its objects read as poisoned.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allow_user_poisoning=0:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
declare -A test_runs=([artifact]=1200000 [forged-artifact]=200000 [tensor-file]=600000
  [inputs]=1300000 [importer]=20000 [onnx-graph]=25000)
for target in artifact forged-artifact tensor-file inputs importer onnx-graph; do
  binary="$build/bin/kiln-fuzz-$target"
  if [ -n "$seconds" ]; then
    work="$build/work/$target"
    mkdir -p "$work"
    budget=(-max_total_time="$seconds")
    echo "== fuzz kiln-fuzz-$target for ${seconds} s"
  else
    work="$(mktemp -d)"
    budget=(-seed=1 -runs="${test_runs[$target]}" -max_total_time=120)
    echo "== fuzz kiln-fuzz-$target: ${test_runs[$target]} runs, seed 1"
  fi
  # Inputs that once failed (test/fuzz/regressions/<target>/) run first.
  regressions=("$root/test/fuzz/regressions/$target"/*)
  if [ -e "${regressions[0]}" ]; then
    "$binary" "${regressions[@]}" >/dev/null 2>&1 ||
      { echo "error: kiln-fuzz-$target fails on a regression input again:";
        "$binary" "${regressions[@]}" 2>&1 | grep -E "ERROR|runtime error|Running" | head -5; exit 1; }
  fi
  "$binary" "$work" "$corpus/$target" "${budget[@]}" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$build/findings/$target-" -print_final_stats=1 2>&1 |
    grep -E "^(stat::number_of_executed_units|stat::new_units_added|==[0-9]+==ERROR|SUMMARY)|Done|runtime error" || true
  [ -n "$seconds" ] || rm -rf "$work"
  # libFuzzer exits non-zero on a finding; the finding's file tells.
  if ls "$build/findings/$target-"* >/dev/null 2>&1; then
    echo "error: kiln-fuzz-$target found a problem: $(ls "$build/findings/$target-"*)"
    exit 1
  fi
done
echo "fuzzing: no findings"
