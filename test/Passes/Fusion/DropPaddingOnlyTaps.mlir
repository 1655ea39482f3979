// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-drop-padding-only-taps))' | FileCheck %s

// DeepLabV3's ASPP at rate 12 on a 3x3 map: only the centre tap reads the
// image, at every output pixel. The weight is stored cut to it and the
// convolution is a 1x1 one without padding.
// CHECK-LABEL: func.func @aspp_rate_12
// CHECK: %[[W:.+]] = kiln.constant dense<{{\[\[\[\[}}5.000000e+00]]], {{\[\[\[}}1.400000e+01]]]]> : tensor<2x1x1x1xf32>
// CHECK: kiln.conv %arg0, %[[W]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
// CHECK-SAME: (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
func.func @aspp_rate_12(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = kiln.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[10.0, 11.0, 12.0], [13.0, 14.0, 15.0], [16.0, 17.0, 18.0]]]]> : tensor<2x1x3x3xf32>
  %0 = kiln.conv %x, %w {pads = array<i64: 12, 12, 12, 12>, strides = array<i64: 1, 1>, dilations = array<i64: 12, 12>, group = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// A wide map keeps every tap along its width: the window is cut to its
// middle row only, and only the height loses its padding.
// CHECK-LABEL: func.func @short_and_wide
// CHECK: %[[W:.+]] = kiln.constant dense<{{\[\[\[\[}}4.000000e+00, 5.000000e+00, 6.000000e+00]]]]> : tensor<1x1x1x3xf32>
// CHECK: kiln.conv %arg0, %[[W]] {dilations = array<i64: 1, 12>, group = 1 : i64, pads = array<i64: 0, 12, 0, 12>, strides = array<i64: 1, 1>}
// CHECK-SAME: (tensor<1x1x3x20xf32>, tensor<1x1x1x3xf32>) -> tensor<1x1x3x20xf32>
func.func @short_and_wide(%x: tensor<1x1x3x20xf32>) -> tensor<1x1x3x20xf32> {
  %w = kiln.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]]]> : tensor<1x1x3x3xf32>
  %0 = kiln.conv %x, %w {pads = array<i64: 12, 12, 12, 12>, strides = array<i64: 1, 1>, dilations = array<i64: 12, 12>, group = 1 : i64} : (tensor<1x1x3x20xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x20xf32>
  return %0 : tensor<1x1x3x20xf32>
}

// -----

// A weight computed at run time is read through a kiln.slice of its live
// taps; the bias stays.
// CHECK-LABEL: func.func @computed_weight
// CHECK: %[[W:.+]] = kiln.slice %arg1 {starts = array<i64: 0, 0, 1, 1>, steps = array<i64: 1, 1, 1, 1>} : tensor<4x2x3x3xf32> -> tensor<4x2x1x1xf32>
// CHECK: kiln.conv %arg0, %[[W]], %arg2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>
func.func @computed_weight(%x: tensor<1x2x2x2xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x2x2xf32> {
  %0 = kiln.conv %x, %w, %b {pads = array<i64: 6, 6, 6, 6>, strides = array<i64: 1, 1>, dilations = array<i64: 6, 6>, group = 1 : i64} : (tensor<1x2x2x2xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  return %0 : tensor<1x4x2x2xf32>
}

// -----

// Left alone: a 3x3 window at dilation 2 over a 3x3 map reads the image
// with every tap at some pixel.
// CHECK-LABEL: func.func @every_tap_reads
// CHECK: kiln.conv %arg0, %arg1 {dilations = array<i64: 2, 2>, group = 1 : i64, pads = array<i64: 2, 2, 2, 2>
func.func @every_tap_reads(%x: tensor<1x1x3x3xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %0 = kiln.conv %x, %w {pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, group = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// Left alone: the only live tap lies past the begin padding (it reads
// pixel 1 of 2), so cutting to it would need a negative padding, a crop.
// CHECK-LABEL: func.func @would_crop
// CHECK: kiln.conv %arg0, %arg1 {dilations = array<i64: 2>, group = 1 : i64, pads = array<i64: 1, 2>
func.func @would_crop(%x: tensor<1x1x2xf32>, %w: tensor<1x1x3xf32>) -> tensor<1x1x1xf32> {
  %0 = kiln.conv %x, %w {pads = array<i64: 1, 2>, strides = array<i64: 1>, dilations = array<i64: 2>, group = 1 : i64} : (tensor<1x1x2xf32>, tensor<1x1x3xf32>) -> tensor<1x1x1xf32>
  return %0 : tensor<1x1x1xf32>
}
