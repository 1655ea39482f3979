// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-split-conv-padding))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-split-conv-padding{split-depthwise=false}))' | FileCheck %s --check-prefix=KEEP

// The padding moves into a kiln.pad (a kernel of its own); the convolution
// keeps its bias, strides and dilations and reads the padded input.
// CHECK-LABEL: func.func @padded
// CHECK: %[[P:.+]] = kiln.pad %arg0 {mode = "constant", pads = array<i64: 0, 0, 1, 2, 0, 0, 1, 0>, value = 0.000000e+00 : f64} : tensor<1x3x8x8xf32> -> tensor<1x3x10x10xf32>
// CHECK: kiln.conv %[[P]], %arg1, %arg2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
// CHECK-SAME: (tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
func.func @padded(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.conv %x, %w, %b {pads = array<i64: 1, 2, 1, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// A convolution without padding is left alone.
// CHECK-LABEL: func.func @unpadded
// CHECK-NOT: kiln.pad
// CHECK: kiln.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>
func.func @unpadded(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

// A depthwise convolution (8 groups of one channel): its padding is split
// by default (the GPUs), kept with split-depthwise=false (the CPU, where a
// workgroup pads its own channels in cache).
// CHECK-LABEL: func.func @depthwise
// CHECK: kiln.pad
// CHECK: kiln.conv
// KEEP-LABEL: func.func @depthwise
// KEEP-NOT: kiln.pad
// KEEP: kiln.conv %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 1, 1, 1, 1>
func.func @depthwise(%x: tensor<1x8x6x6xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %0 = kiln.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %0 : tensor<1x8x6x6xf32>
}

// A grouped convolution with two channels per group keeps splitting (each
// filter reads two input channels).
// KEEP-LABEL: func.func @grouped
// KEEP: kiln.pad
func.func @grouped(%x: tensor<1x8x6x6xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = kiln.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x8x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}
