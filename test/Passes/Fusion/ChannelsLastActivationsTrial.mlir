// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-channels-last-activations))' | FileCheck %s

// The pass rewrites a function only where its trial run leaves at least
// two convolutions per transpose it adds (min-convs-per-transpose): each
// transpose left is a kernel. A lone convolution would need two.
// CHECK-LABEL: func.func @lone
// CHECK-NOT: kiln.transpose
// CHECK-NOT: channels_last
func.func @lone(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %c = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x4x4xf32>
  return %c : tensor<1x8x4x4xf32>
}

// -----

// Four in a chain: two transposes for four convolutions.
// CHECK-LABEL: func.func @chain
// CHECK: kiln.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>}
// CHECK-COUNT-4: kiln.conv {{.*}}channels_last
// CHECK: kiln.transpose {{.*}}perm = array<i64: 0, 3, 1, 2>
// CHECK-NOT: kiln.transpose
func.func @chain(%x: tensor<1x8x6x6xf32>, %w: tensor<8x8x1x1xf32>) -> tensor<1x8x6x6xf32> {
  %c1 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  %r1 = kiln.relu %c1 : tensor<1x8x6x6xf32>
  %c2 = kiln.conv %r1, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  %r2 = kiln.relu %c2 : tensor<1x8x6x6xf32>
  %c3 = kiln.conv %r2, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  %r3 = kiln.relu %c3 : tensor<1x8x6x6xf32>
  %c4 = kiln.conv %r3, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x6x6xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  return %c4 : tensor<1x8x6x6xf32>
}
