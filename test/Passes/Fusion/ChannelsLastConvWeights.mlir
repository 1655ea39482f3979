// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-channels-last-conv-weights))' | FileCheck %s

// A 2x2 convolution's constant weight [F=1][C=2][2][2] (element values
// are their indices) is stored [F][kh][kw][C]: element (f, r, s, c) is
// the source's (f, c, r, s), so 0, 4, 1, 5, 2, 6, 3, 7; a transpose reads
// it back as [F][C][kh][kw] for the convolution.
// CHECK-LABEL: func.func @conv2x2
// CHECK: %[[STORED:.+]] = kiln.constant dense<{{\[\[\[}}[0.000000e+00, 4.000000e+00], [1.000000e+00, 5.000000e+00]], {{\[\[}}2.000000e+00, 6.000000e+00], [3.000000e+00, 7.000000e+00]]]]> : tensor<1x2x2x2xf32>
// CHECK: %[[W:.+]] = kiln.transpose %[[STORED]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
// CHECK: kiln.conv %arg0, %[[W]]
func.func @conv2x2(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %w = kiln.constant dense<[[[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0], [6.0, 7.0]]]]> : tensor<1x2x2x2xf32>
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// At --precision=f16 the constant is float16 behind its widening cast: the
// transpose goes between them, in float16.
// CHECK-LABEL: func.func @conv3x3_f16
// CHECK: %[[STORED:.+]] = kiln.constant dense<1.000000e+00> : tensor<8x3x3x4xf16>
// CHECK: %[[W:.+]] = kiln.transpose %[[STORED]] {perm = array<i64: 0, 3, 1, 2>} : tensor<8x3x3x4xf16> -> tensor<8x4x3x3xf16>
// CHECK: %[[WIDE:.+]] = kiln.cast %[[W]] : tensor<8x4x3x3xf16> -> tensor<8x4x3x3xf32>
// CHECK: kiln.conv %{{.+}}, %[[WIDE]]
func.func @conv3x3_f16(%x: tensor<1x4x5x5xf32>) -> tensor<1x8x3x3xf32> {
  %w16 = kiln.constant dense<1.0> : tensor<8x4x3x3xf16>
  %w = kiln.cast %w16 : tensor<8x4x3x3xf16> -> tensor<8x4x3x3xf32>
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x3x3xf32>
  return %0 : tensor<1x8x3x3xf32>
}

// -----

// A grouped convolution (split-K's) too: [F][C/G][k...] as [F][k...][C/G].
// CHECK-LABEL: func.func @grouped
// CHECK: %[[STORED:.+]] = kiln.constant dense<1.000000e+00> : tensor<8x3x3x2xf32>
// CHECK: %[[W:.+]] = kiln.transpose %[[STORED]] {perm = array<i64: 0, 3, 1, 2>} : tensor<8x3x3x2xf32> -> tensor<8x2x3x3xf32>
// CHECK: kiln.conv %arg0, %[[W]] {{.*}}group = 2
func.func @grouped(%x: tensor<1x4x5x5xf32>) -> tensor<1x8x3x3xf32> {
  %wg = kiln.constant dense<1.0> : tensor<8x2x3x3xf32>
  %0 = kiln.conv %x, %wg {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x3x3xf32>
  return %0 : tensor<1x8x3x3xf32>
}

// -----

// Left alone: a 1x1 convolution (its weight is [F][C] already), a
// depthwise one ([F][1][k...]: nothing to gather along C), and one whose
// weight is not a constant.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: kiln.transpose
// CHECK: return
func.func @left_alone(%x: tensor<1x4x5x5xf32>, %wv: tensor<8x4x3x3xf32>) -> (tensor<1x8x5x5xf32>, tensor<1x4x3x3xf32>, tensor<1x8x3x3xf32>) {
  %w1 = kiln.constant dense<1.0> : tensor<8x4x1x1xf32>
  %0 = kiln.conv %x, %w1 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x5x5xf32>
  %wd = kiln.constant dense<1.0> : tensor<4x1x3x3xf32>
  %1 = kiln.conv %x, %wd {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %2 = kiln.conv %x, %wv {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x3x3xf32>
  return %0, %1, %2 : tensor<1x8x5x5xf32>, tensor<1x4x3x3xf32>, tensor<1x8x3x3xf32>
}

// -----

// A depthwise convolution on NHWC activations (channels_last): neighbouring
// threads take neighbouring channels, so its weight [C=2][1][2][2] is
// stored [1][2][2][C] and read back through perm [3, 0, 1, 2] (channel
// c's window elements are 4c..4c+3).
// CHECK-LABEL: func.func @depthwise_channels_last
// CHECK: %[[STORED:.+]] = kiln.constant dense<{{\[\[\[}}[0.000000e+00, 4.000000e+00], [1.000000e+00, 5.000000e+00]], {{\[\[}}2.000000e+00, 6.000000e+00], [3.000000e+00, 7.000000e+00]]]]> : tensor<1x2x2x2xf32>
// CHECK: %[[W:.+]] = kiln.transpose %[[STORED]] {perm = array<i64: 3, 0, 1, 2>} : tensor<1x2x2x2xf32> -> tensor<2x1x2x2xf32>
// CHECK: kiln.conv %arg0, %[[W]] {channels_last
func.func @depthwise_channels_last(%x: tensor<1x3x3x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = kiln.constant dense<[[[[0.0, 1.0], [2.0, 3.0]]], [[[4.0, 5.0], [6.0, 7.0]]]]> : tensor<2x1x2x2xf32>
  %0 = kiln.conv %x, %w {channels_last, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x3x3x2xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}
