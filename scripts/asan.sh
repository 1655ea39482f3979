#!/usr/bin/env bash
# Builds everything (the compiler and its tools, the runtime, the libFuzzer
# targets) with AddressSanitizer and UndefinedBehaviorSanitizer into
# build-asan/ (-O1; MLIR/LLVM themselves stay uninstrumented) and runs under
# them: the runtime unit tests, the importer lit tests, and a subset of the
# ONNX node suite that covers each family of ops (compiled and run by the
# instrumented kiln-onnx-test). Fails on any report.
#   scripts/asan.sh            # the test command's run
#   scripts/asan.sh --all      # the whole node suite (slow)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${KILN_ASAN_BUILD_DIR:-$root/build-asan}"
source "$root/scripts/configure.sh"
# Configured every time (cheap): the options below are what this build is.
configure_kiln_asan "$build" >/dev/null
ninja -C "$build" >/dev/null
# allow_user_poisoning=0: LLVM's BumpPtrAllocator poisons a new slab when
# instrumented code allocates from it (a kiln attribute's storage), and
# only instrumented code unpoisons what it takes; uninstrumented MLIR then
# allocates from the same slab and its objects read as poisoned.
# allocator_may_return_null=1: a corrupted artifact's arena size asks
# aligned_alloc for more than any machine has; the runtime reports the null
# it gets as out of memory, which ASan would otherwise abort on.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allow_user_poisoning=0:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$root"

echo "== runtime unit and tool tests under ASan+UBSan"
ctest --test-dir "$build" --output-on-failure -j2 | tail -3

echo "== importer lit tests under ASan+UBSan"
/usr/lib/llvm-22/bin/lit -q "$build/test/Import"

echo "== ONNX node suite subset under ASan+UBSan"
# One or two tests per op family: convolutions, matmuls, normalizations,
# reductions, recurrent ops, indexing, shape ops, elementwise math.
subset='^test_(conv_|convtranspose$|gemm_default|matmul_2d|softmax_axis_1$'
subset+='|logsoftmax_axis_1$|reduce_mean_keepdims_example|reduce_sum_keepdims_example'
subset+='|gather_0|gather_elements_0|slice$|resize_upsample_scales_linear$'
subset+='|lstm_defaults|gru_defaults|layer_normalization_2d_axis0$|batchnorm_example$'
subset+='|maxpool_2d_pads|averagepool_2d_pads$|constant_pad$|concat_2d_axis_0$'
subset+='|split_equal_parts_1d|transpose_default|where_example|cast_FLOAT_to_FLOAT16'
subset+='|top_k$|cumsum_1d$|einsum_batch_matmul|instancenorm_example|gelu_default_1$'
subset+='|erf$|expand_dim_changed|tile$|depthtospace_example|onehot_with_axis'
subset+='|range_float_type_positive_delta$|argmax_default_axis_example$'
subset+='|scatter_elements_with_axis|gathernd_example_float32|trilu_lower$|clip_example'
subset+='|pow$|leakyrelu$|prelu_example|hardswish$|sqrt$|relu$|add_bcast|mul_bcast'
subset+='|add_uint8|max_uint32|bitshift_right_uint64|if$'
# Found by this suite: an empty constant (memcpy from a null pointer).
subset+='|reduce_sum_empty_axes_input_noop_example)'
[ "${1:-}" = "--all" ] && subset='.'
"$build/bin/kiln-onnx-test" --target=cpu --xfail-file test/onnx/xfail-cpu.txt \
  --filter "$subset" /usr/share/libonnx-testdata/data/node | tail -1
