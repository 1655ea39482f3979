// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-form-dispatch-regions{fuse-conv-padding=true}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-form-dispatch-regions))' | FileCheck %s --check-prefix=APART

// A channels-last convolution's spatial zero padding (16-bit, widened for
// the convolution) joins the convolution's region: the GPU targets' blocks
// read the input through it in place instead of a padding kernel writing a
// padded copy.
// CHECK-LABEL: func.func @padded_conv
// CHECK: kiln.dispatch_region(%arg0, %arg1) : (tensor<1x8x8x16xf16>, tensor<16x16x3x3xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.pad
// CHECK-NEXT: kiln.cast
// CHECK-NEXT: kiln.conv
// CHECK-NEXT: kiln.relu
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.dispatch_region
// APART-LABEL: func.func @padded_conv
// APART: kiln.dispatch_region(%arg0)
// APART-NEXT: ^bb0
// APART-NEXT: kiln.pad
// APART-NEXT: kiln.yield
func.func @padded_conv(%x: tensor<1x8x8x16xf16>, %w: tensor<16x16x3x3xf32>) -> tensor<1x8x8x16xf32> {
  %p = kiln.pad %x {mode = "constant", pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>, value = 0.000000e+00 : f64} : tensor<1x8x8x16xf16> -> tensor<1x10x10x16xf16>
  %pw = kiln.cast %p : tensor<1x10x10x16xf16> -> tensor<1x10x10x16xf32>
  %c = kiln.conv %pw, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x10x10x16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x8x8x16xf32>
  %r = kiln.relu %c : tensor<1x8x8x16xf32>
  return %r : tensor<1x8x8x16xf32>
}

// -----

// Padding that is not zero, or of the channels (the last dim), or of an
// NCHW input, stays a kernel of its own.
// CHECK-LABEL: func.func @not_conv_padding
// CHECK-COUNT-6: kiln.dispatch_region
func.func @not_conv_padding(%x: tensor<1x8x8x16xf32>, %w: tensor<16x16x3x3xf32>, %v: tensor<16x18x3x3xf32>, %u: tensor<16x8x3x3xf32>) -> (tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>, tensor<1x16x6x16xf32>) {
  %p = kiln.pad %x {mode = "constant", pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>, value = 1.000000e+00 : f64} : tensor<1x8x8x16xf32> -> tensor<1x10x10x16xf32>
  %c = kiln.conv %p, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x10x10x16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x8x8x16xf32>
  %q = kiln.pad %x {mode = "constant", pads = array<i64: 0, 1, 1, 1, 0, 1, 1, 1>, value = 0.000000e+00 : f64} : tensor<1x8x8x16xf32> -> tensor<1x10x10x18xf32>
  %d = kiln.conv %q, %v {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x10x10x18xf32>, tensor<16x18x3x3xf32>) -> tensor<1x8x8x16xf32>
  %r = kiln.pad %x {mode = "constant", pads = array<i64: 0, 0, 0, 1, 0, 0, 0, 1>, value = 0.000000e+00 : f64} : tensor<1x8x8x16xf32> -> tensor<1x8x8x18xf32>
  %e = kiln.conv %r, %u {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x8x18xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x6x16xf32>
  return %c, %d, %e : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>, tensor<1x16x6x16xf32>
}
