// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-split-conv-k))' | FileCheck %s --check-prefix=SPLIT
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-channels-last-activations{min-convs-per-transpose=0}))' | FileCheck %s --check-prefix=NHWC

// The helpers of Widening.cpp, through the passes that use them: a graph
// rewrite of a widened 16-bit operand (--precision=f16) acts on the 16-bit
// value (storedValue) and widens after, so that the widening stays next to
// the convolution (its kernel's prologue: 16-bit loads, tensor cores).
// kiln-split-conv-k reshapes both operands before their widening
// (reshapeBeforeWidening); kiln-channels-last-activations transposes the
// input before it.
// SPLIT-LABEL: func.func @widened_pointwise
// SPLIT: %[[X:.+]] = kiln.reshape %arg0 : tensor<1x512x7x7xf16> -> tensor<1x4x128x49xf16>
// SPLIT: %[[XW:.+]] = kiln.cast %[[X]] : tensor<1x4x128x49xf16> -> tensor<1x4x128x49xf32>
// SPLIT: %[[W:.+]] = kiln.reshape %arg1 : tensor<2048x512x1x1xf16> -> tensor<2048x4x128xf16>
// SPLIT: %[[WW:.+]] = kiln.cast %[[W]] : tensor<2048x4x128xf16> -> tensor<2048x4x128xf32>
// SPLIT: kiln.einsum %[[XW]], %[[WW]]
// NHWC-LABEL: func.func @widened_pointwise
// NHWC: %[[X:.+]] = kiln.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x512x7x7xf16> -> tensor<1x7x7x512xf16>
// NHWC: %[[WW:.+]] = kiln.cast %arg1
// NHWC: %[[XW:.+]] = kiln.cast %[[X]] : tensor<1x7x7x512xf16> -> tensor<1x7x7x512xf32>
// NHWC: kiln.conv %[[XW]], %[[WW]] {channels_last
func.func @widened_pointwise(%x: tensor<1x512x7x7xf16>, %w: tensor<2048x512x1x1xf16>) -> tensor<1x2048x7x7xf32> {
  %xw = kiln.cast %x : tensor<1x512x7x7xf16> -> tensor<1x512x7x7xf32>
  %ww = kiln.cast %w : tensor<2048x512x1x1xf16> -> tensor<2048x512x1x1xf32>
  %0 = kiln.conv %xw, %ww {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x512x7x7xf32>, tensor<2048x512x1x1xf32>) -> tensor<1x2048x7x7xf32>
  return %0 : tensor<1x2048x7x7xf32>
}
