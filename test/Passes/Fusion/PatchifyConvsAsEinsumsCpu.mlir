// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-patchify-convs-as-einsums{vector-registers=true}))' | FileCheck %s

// The CPU's form: windows of any width (here 1x8), the constant weight
// [O, C, p, q] stored [C, p, q, O] (element [c, b, a, o] is the weight's
// [o, c, b, a]), and the einsum writes tokens; a result in the
// convolution's layout (with its bias) is transposed back.
// CHECK-LABEL: func.func @filters_last
// CHECK: %[[W:.+]] = kiln.constant dense<{{\[\[\[\[}}0.000000e+00, 8.000000e+00], [1.000000e+00, 9.000000e+00], [2.000000e+00, 1.000000e+01]
// CHECK-SAME: tensor<1x1x8x2xf32>
// CHECK: %[[P:.+]] = kiln.reshape %arg0 : tensor<1x1x2x16xf32> -> tensor<1x1x2x1x2x8xf32>
// CHECK: %[[E:.+]] = kiln.einsum %[[P]], %[[W]] {equation = "ncubva,cbao->nuvo"} : (tensor<1x1x2x1x2x8xf32>, tensor<1x1x8x2xf32>) -> tensor<1x2x2x2xf32>
// CHECK: %[[B:.+]] = kiln.reshape %arg1 : tensor<2xf32> -> tensor<1x1x1x2xf32>
// CHECK: %[[A:.+]] = kiln.add %[[E]], %[[B]]
// CHECK: %[[T:.+]] = kiln.transpose %[[A]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
// CHECK: return %[[T]]
func.func @filters_last(%x: tensor<1x1x2x16xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %w = kiln.constant dense<[[[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]], [[[8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]]]]> : tensor<2x1x1x8xf32>
  %0 = kiln.conv %x, %w, %b {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 8>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x16xf32>, tensor<2x1x1x8xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// Made tokens (ViT's reshape and transpose) from 4x4 windows and a weight
// stored in float16 (--precision): the permuted 16-bit constant is widened
// after, and a reshape replaces the transpose.
// CHECK-LABEL: func.func @tokens
// CHECK: %[[W:.+]] = kiln.constant dense<5.000000e-01> : tensor<3x4x4x8xf16>
// CHECK: %[[WW:.+]] = kiln.cast %[[W]] : tensor<3x4x4x8xf16> -> tensor<3x4x4x8xf32>
// CHECK: %[[E:.+]] = kiln.einsum %{{.+}}, %[[WW]] {equation = "ncubva,cbao->nuvo"} : (tensor<1x3x2x4x2x4xf32>, tensor<3x4x4x8xf32>) -> tensor<1x2x2x8xf32>
// CHECK: %[[T:.+]] = kiln.reshape %[[E]] : tensor<1x2x2x8xf32> -> tensor<1x4x8xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[T]]
func.func @tokens(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8xf32> {
  %h = kiln.constant dense<0.5> : tensor<8x3x4x4xf16>
  %w = kiln.cast %h : tensor<8x3x4x4xf16> -> tensor<8x3x4x4xf32>
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 4, 4>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<8x3x4x4xf32>) -> tensor<1x8x2x2xf32>
  %1 = kiln.reshape %0 : tensor<1x8x2x2xf32> -> tensor<1x8x4xf32>
  %2 = kiln.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<1x8x4xf32> -> tensor<1x4x8xf32>
  return %2 : tensor<1x4x8xf32>
}

// -----

// Left alone: 4x4 windows in the convolution's layout (its own register
// tiles load the stride-4 input), and a weight that is not a constant.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-2: kiln.conv
// CHECK-NOT: kiln.einsum
func.func @kept(%x: tensor<1x3x32x32xf32>, %w8: tensor<8x3x8x8xf32>) -> (tensor<1x8x8x8xf32>, tensor<1x8x4x4xf32>) {
  %w4 = kiln.constant dense<1.0> : tensor<8x3x4x4xf32>
  %0 = kiln.conv %x, %w4 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 4, 4>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x4x4xf32>) -> tensor<1x8x8x8xf32>
  %1 = kiln.conv %x, %w8 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 8, 8>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x32x32xf32>, tensor<8x3x8x8xf32>) -> tensor<1x8x4x4xf32>
  return %0, %1 : tensor<1x8x8x8xf32>, tensor<1x8x4x4xf32>
}

// -----

// A 1-D convolution of frames of 8 (a signal's downscaling): the einsum
// over frames [N, C, T/8, 8] with the weight stored [C, q, O], the bias,
// and the transpose back to [N, O, T/8]. Frames of 4 keep the
// convolution's own register tiles.
// CHECK-LABEL: func.func @frames
// CHECK: %[[W:.+]] = kiln.constant dense<2.500000e-01> : tensor<3x8x16xf32>
// CHECK: %[[F:.+]] = kiln.reshape %arg0 : tensor<1x3x64xf32> -> tensor<1x3x8x8xf32>
// CHECK: %[[E:.+]] = kiln.einsum %[[F]], %[[W]] {equation = "ncva,cao->nvo"} : (tensor<1x3x8x8xf32>, tensor<3x8x16xf32>) -> tensor<1x8x16xf32>
// CHECK: %[[A:.+]] = kiln.add %[[E]]
// CHECK: kiln.transpose %[[A]] {perm = array<i64: 0, 2, 1>} : tensor<1x8x16xf32> -> tensor<1x16x8xf32>
// CHECK: kiln.conv %arg0
func.func @frames(%x: tensor<1x3x64xf32>, %b: tensor<16xf32>) -> (tensor<1x16x8xf32>, tensor<1x16x16xf32>) {
  %w8 = kiln.constant dense<0.25> : tensor<16x3x8xf32>
  %w4 = kiln.constant dense<0.25> : tensor<16x3x4xf32>
  %0 = kiln.conv %x, %w8, %b {pads = array<i64: 0, 0>, strides = array<i64: 8>, dilations = array<i64: 1>, group = 1 : i64} : (tensor<1x3x64xf32>, tensor<16x3x8xf32>, tensor<16xf32>) -> tensor<1x16x8xf32>
  %1 = kiln.conv %x, %w4 {pads = array<i64: 0, 0>, strides = array<i64: 4>, dilations = array<i64: 1>, group = 1 : i64} : (tensor<1x3x64xf32>, tensor<16x3x4xf32>) -> tensor<1x16x16xf32>
  return %0, %1 : tensor<1x16x8xf32>, tensor<1x16x16xf32>
}
