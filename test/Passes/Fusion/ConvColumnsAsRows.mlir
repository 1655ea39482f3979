// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-conv-columns-as-rows))' | FileCheck %s

// Keras's Conv1D as tf2onnx exports it: a [5, 1] window over a [1, 8, 32, 1]
// image. It computes one row of 28 pixels over the image reshaped to
// [1, 8, 1, 32] (the weight's reshape folds into the constant), padding and
// stride moved to the width, and its result is reshaped back.
// CHECK-LABEL: func.func @conv1d_as_column
// CHECK-DAG: %[[W:.+]] = kiln.constant dense<{{.+}}> : tensor<4x8x1x5xf32>
// CHECK-DAG: %[[X:.+]] = kiln.reshape %arg0 : tensor<1x8x32x1xf32> -> tensor<1x8x1x32xf32>
// CHECK: %[[Y:.+]] = kiln.conv %[[X]], %[[W]], %arg1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x1x32xf32>, tensor<4x8x1x5xf32>, tensor<4xf32>) -> tensor<1x4x1x30xf32>
// CHECK: kiln.reshape %[[Y]] : tensor<1x4x1x30xf32> -> tensor<1x4x30x1xf32>
func.func @conv1d_as_column(%x: tensor<1x8x32x1xf32>, %b: tensor<4xf32>) -> tensor<1x4x30x1xf32> {
  %w = kiln.constant dense<0.5> : tensor<4x8x5x1xf32>
  %y = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x32x1xf32>, tensor<4x8x5x1xf32>, tensor<4xf32>) -> tensor<1x4x30x1xf32>
  return %y : tensor<1x4x30x1xf32>
}

// -----

// A convolution two columns wide is left alone.
// CHECK-LABEL: func.func @two_columns
// CHECK-NOT: kiln.reshape
// CHECK: kiln.conv %arg0
func.func @two_columns(%x: tensor<1x8x32x2xf32>, %w: tensor<4x8x5x1xf32>) -> tensor<1x4x28x2xf32> {
  %y = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x32x2xf32>, tensor<4x8x5x1xf32>) -> tensor<1x4x28x2xf32>
  return %y : tensor<1x4x28x2xf32>
}
