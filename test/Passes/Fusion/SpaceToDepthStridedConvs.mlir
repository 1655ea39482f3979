// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-space-to-depth-strided-convs))' | FileCheck %s

// MobileNet's first convolution: 3x3 at stride 2, pad 1, over 3 channels.
// The begin pad is rounded up to 2 (a whole block) and the kernel shifted
// by one zero row and column, padded to 4x4: 2x2 blocks of the padded
// input stacked as 12 channels (channel c*4 + a*2 + b: row a, column b of
// a block of channel c) and a stride-1 2x2 convolution. Weight (0, c, r,
// q) = 9c + 3r + q + 1; blocked channel c*4 + a*2 + b, position (i, j)
// holds it at r = 2i + a - 1, q = 2j + b - 1 (e.g. channel 3, a = b = 1:
// 1, 3, 7, 9), zero outside the 3x3 kernel. The 12 channels are 16 as
// matrix instructions walk them: the image gets a fourth channel of zeros
// in the same pad (blocked channels 12-15, whose weights are zero).
// CHECK-LABEL: func.func @stem3x3
// CHECK: %[[W:.+]] = kiln.constant dense<{{\[\[\[}}[0.000000e+00, 0.000000e+00], [0.000000e+00, 5.000000e+00]], {{\[\[}}0.000000e+00, 0.000000e+00], [4.000000e+00, 6.000000e+00]], {{\[\[}}0.000000e+00, 2.000000e+00], [0.000000e+00, 8.000000e+00]], {{\[\[}}1.000000e+00, 3.000000e+00], [7.000000e+00, 9.000000e+00]], {{\[\[}}0.000000e+00, 0.000000e+00], [0.000000e+00, 1.400000e+01]], {{\[\[}}0.000000e+00, 0.000000e+00], [1.300000e+01, 1.500000e+01]], {{\[\[}}0.000000e+00, 1.100000e+01], [0.000000e+00, 1.700000e+01]], {{\[\[}}1.000000e+01, 1.200000e+01], [1.600000e+01, 1.800000e+01]], {{\[\[}}0.000000e+00, 0.000000e+00], [0.000000e+00, 2.300000e+01]], {{\[\[}}0.000000e+00, 0.000000e+00], [2.200000e+01, 2.400000e+01]], {{\[\[}}0.000000e+00, 2.000000e+01], [0.000000e+00, 2.600000e+01]], {{\[\[}}1.900000e+01, 2.100000e+01], [2.500000e+01, 2.700000e+01]], {{\[\[}}0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00]], {{\[\[}}0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00]], {{\[\[}}0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00]], {{\[\[}}0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00]]]]> : tensor<1x16x2x2xf32>
// CHECK: %[[P:.+]] = kiln.pad %arg0 {mode = "constant", pads = array<i64: 0, 0, 2, 2, 0, 1, 0, 0>, value = 0.000000e+00 : f64} : tensor<1x3x8x8xf32> -> tensor<1x4x10x10xf32>
// CHECK: %[[B:.+]] = kiln.reshape %[[P]] : tensor<1x4x10x10xf32> -> tensor<1x4x5x2x5x2xf32>
// CHECK: %[[T:.+]] = kiln.transpose %[[B]] {perm = array<i64: 0, 1, 3, 5, 2, 4>} : tensor<1x4x5x2x5x2xf32> -> tensor<1x4x2x2x5x5xf32>
// CHECK: %[[S:.+]] = kiln.reshape %[[T]] : tensor<1x4x2x2x5x5xf32> -> tensor<1x16x5x5xf32>
// CHECK: kiln.conv %[[S]], %[[W]], %arg1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x5x5xf32>, tensor<1x16x2x2xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
func.func @stem3x3(%x: tensor<1x3x8x8xf32>, %b: tensor<1xf32>) -> tensor<1x1x4x4xf32> {
  %w = kiln.constant dense<[[[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00], [7.000000e+00, 8.000000e+00, 9.000000e+00]], [[1.000000e+01, 1.100000e+01, 1.200000e+01], [1.300000e+01, 1.400000e+01, 1.500000e+01], [1.600000e+01, 1.700000e+01, 1.800000e+01]], [[1.900000e+01, 2.000000e+01, 2.100000e+01], [2.200000e+01, 2.300000e+01, 2.400000e+01], [2.500000e+01, 2.600000e+01, 2.700000e+01]]]]> : tensor<1x3x3x3xf32>
  %0 = kiln.conv %x, %w, %b {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<1x3x3x3xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// ResNet's 7x7 at stride 2, pad 3, on an odd 15x15 image: begin pad 4,
// the end padded to whole blocks (2 x 11 = 4 + 15 + 3), a 4x4 kernel.
// AlexNet's 11x11 at stride 4, pad 2: 48 channels, begin pad 4, a 4x4
// kernel over blocks of 4 (11 + 2 shifted, as 16).
// CHECK-LABEL: func.func @stems_7x7_11x11
// CHECK: kiln.pad %arg0 {mode = "constant", pads = array<i64: 0, 0, 4, 4, 0, 1, 3, 3>, value = 0.000000e+00 : f64} : tensor<2x3x15x15xf32> -> tensor<2x4x22x22xf32>
// CHECK: kiln.conv %{{.+}}, %{{.+}} {{{.+}} strides = array<i64: 1, 1>} : (tensor<2x16x11x11xf32>, tensor<8x16x4x4xf32>) -> tensor<2x8x8x8xf32>
// CHECK: kiln.pad %arg0 {mode = "constant", pads = array<i64: 0, 0, 4, 4, 0, 0, 5, 5>, value = 0.000000e+00 : f64} : tensor<2x3x15x15xf32> -> tensor<2x3x24x24xf32>
// CHECK: kiln.conv %{{.+}}, %{{.+}} {{{.+}} strides = array<i64: 1, 1>} : (tensor<2x48x6x6xf32>, tensor<8x48x4x4xf32>) -> tensor<2x8x3x3xf32>
func.func @stems_7x7_11x11(%x: tensor<2x3x15x15xf32>) -> (tensor<2x8x8x8xf32>, tensor<2x8x3x3xf32>) {
  %w7 = kiln.constant dense<0.5> : tensor<8x3x7x7xf32>
  %0 = kiln.conv %x, %w7 {pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x15x15xf32>, tensor<8x3x7x7xf32>) -> tensor<2x8x8x8xf32>
  %w11 = kiln.constant dense<0.25> : tensor<8x3x11x11xf32>
  %1 = kiln.conv %x, %w11 {pads = array<i64: 2, 2, 2, 2>, strides = array<i64: 4, 4>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x3x15x15xf32>, tensor<8x3x11x11xf32>) -> tensor<2x8x3x3xf32>
  return %0, %1 : tensor<2x8x8x8xf32>, tensor<2x8x3x3xf32>
}

// -----

// Left alone: stride 1; 16 input channels (matrix instructions take
// them); a 1x1 kernel; a weight that is not a constant; dilation; a patch
// embedding (windows that do not overlap: kiln-patchify-convs-as-einsums).
// CHECK-LABEL: func.func @not_candidates
// CHECK-NOT: kiln.pad
// CHECK-NOT: kiln.transpose
// CHECK-COUNT-5: strides = array<i64: {{[12]}}, {{[12]}}>
// CHECK: strides = array<i64: 4, 4>
func.func @not_candidates(%x: tensor<1x3x16x16xf32>, %y: tensor<1x16x16x16xf32>, %wv: tensor<4x3x3x3xf32>) -> (tensor<1x4x16x16xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>) {
  %w = kiln.constant dense<1.0> : tensor<4x3x3x3xf32>
  %w16 = kiln.constant dense<1.0> : tensor<4x16x3x3xf32>
  %w1 = kiln.constant dense<1.0> : tensor<4x3x1x1xf32>
  %0 = kiln.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x16x16xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x16x16xf32>
  %1 = kiln.conv %y, %w16 {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x16x16x16xf32>, tensor<4x16x3x3xf32>) -> tensor<1x4x8x8xf32>
  %2 = kiln.conv %x, %w1 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x16x16xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32>
  %3 = kiln.conv %x, %wv {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x16x16xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %4 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, group = 1 : i64} : (tensor<1x3x16x16xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %w4 = kiln.constant dense<1.0> : tensor<4x3x4x4xf32>
  %5 = kiln.conv %x, %w4 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 4, 4>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x16x16xf32>, tensor<4x3x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x4x16x16xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>
}
