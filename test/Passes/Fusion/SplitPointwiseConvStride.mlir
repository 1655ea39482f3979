// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-split-pointwise-conv-stride))' | FileCheck %s

// ResNet's downsample onto a 7x7 map: the pixels are taken first by a
// kiln.slice (its own copy kernel), then the convolution runs at stride 1
// with its bias.
// CHECK-LABEL: func.func @downsample
// CHECK: %[[S:.+]] = kiln.slice %arg0 {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 2, 2>} : tensor<1x8x14x14xf32> -> tensor<1x8x7x7xf32>
// CHECK: kiln.conv %[[S]], %arg1, %arg2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
// CHECK-SAME: (tensor<1x8x7x7xf32>, tensor<16x8x1x1xf32>, tensor<16xf32>) -> tensor<1x16x7x7xf32>
func.func @downsample(%x: tensor<1x8x14x14xf32>, %w: tensor<16x8x1x1xf32>, %b: tensor<16xf32>) -> tensor<1x16x7x7xf32> {
  %0 = kiln.conv %x, %w, %b {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x14x14xf32>, tensor<16x8x1x1xf32>, tensor<16xf32>) -> tensor<1x16x7x7xf32>
  return %0 : tensor<1x16x7x7xf32>
}

// -----

// An odd input (15 pixels at stride 2 give 8) and different strides per dim.
// CHECK-LABEL: func.func @odd
// CHECK: kiln.slice %arg0 {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 3, 2>} : tensor<2x4x9x15xf32> -> tensor<2x4x3x8xf32>
// CHECK: strides = array<i64: 1, 1>
func.func @odd(%x: tensor<2x4x9x15xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<2x4x3x8xf32> {
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 3, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x4x9x15xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x3x8xf32>
  return %0 : tensor<2x4x3x8xf32>
}

// -----

// Long output rows (28 pixels, computed row by row) are split too: the
// stride-1 convolution's vectors are plain loads.
// CHECK-LABEL: func.func @long_rows
// CHECK: %[[P:.+]] = kiln.slice %arg0 {{.*}}steps = array<i64: 1, 1, 2, 2>{{.*}} -> tensor<1x8x28x28xf32>
// CHECK: kiln.conv %[[P]], %arg1 {{.*}}strides = array<i64: 1, 1>
func.func @long_rows(%x: tensor<1x8x56x56xf32>, %w: tensor<8x8x1x1xf32>) -> tensor<1x8x28x28xf32> {
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x56x56xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x28x28xf32>
  return %0 : tensor<1x8x28x28xf32>
}

// -----

// Left alone: a 3x3 kernel, padding, groups, and stride 1.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: kiln.slice
// CHECK: strides = array<i64: 2, 2>
// CHECK: strides = array<i64: 2, 2>
// CHECK: strides = array<i64: 2, 2>
// CHECK: strides = array<i64: 1, 1>
// CHECK-NOT: kiln.slice
func.func @left_alone(%y: tensor<1x8x14x14xf32>, %w: tensor<8x8x1x1xf32>, %w3: tensor<8x8x3x3xf32>, %wg: tensor<8x4x1x1xf32>) -> (tensor<1x8x6x6xf32>, tensor<1x8x8x8xf32>, tensor<1x8x7x7xf32>, tensor<1x8x14x14xf32>) {
  %1 = kiln.conv %y, %w3 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x14x14xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x6x6xf32>
  %2 = kiln.conv %y, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x14x14xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x8x8xf32>
  %3 = kiln.conv %y, %wg {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x8x14x14xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x7x7xf32>
  %4 = kiln.conv %y, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x14x14xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x14x14xf32>
  return %1, %2, %3, %4 : tensor<1x8x6x6xf32>, tensor<1x8x8x8xf32>, tensor<1x8x7x7xf32>, tensor<1x8x14x14xf32>
}

// -----

// A 16-bit input widened for the convolution (--precision=f16) is
// subsampled in 16 bits and widened after, so the copy moves half the bytes
// and the convolution's operand is still a widened 16-bit value (its
// prologue: tensor cores).
// CHECK-LABEL: func.func @widened
// CHECK: %[[S:.+]] = kiln.slice %arg0 {{.*}}steps = array<i64: 1, 1, 2, 2>{{.*}} : tensor<1x8x56x56xf16> -> tensor<1x8x28x28xf16>
// CHECK: %[[W:.+]] = kiln.cast %[[S]] : tensor<1x8x28x28xf16> -> tensor<1x8x28x28xf32>
// CHECK: kiln.conv %[[W]], %arg1 {{.*}}strides = array<i64: 1, 1>
func.func @widened(%x: tensor<1x8x56x56xf16>, %w: tensor<8x8x1x1xf32>) -> tensor<1x8x28x28xf32> {
  %x32 = kiln.cast %x : tensor<1x8x56x56xf16> -> tensor<1x8x56x56xf32>
  %0 = kiln.conv %x32, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x56x56xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x28x28xf32>
  return %0 : tensor<1x8x28x28xf32>
}
