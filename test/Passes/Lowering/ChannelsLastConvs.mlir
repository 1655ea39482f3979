// RUN: kiln-opt %s --kiln-convert-to-linalg | FileCheck %s
// RUN: kiln-opt %s --kiln-convert-to-linalg=read-window-padding-in-place=true | FileCheck %s --check-prefix=INPLACE

// Convolutions and pooling on NHWC activations (channels_last, made by
// kiln-channels-last-activations): the result's dims are the loops in
// order (n, o_1, o_2, then f or c), reductions after.

// CHECK-DAG: #[[C3_X:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d5, d2 + d6, d4)>
// CHECK-DAG: #[[C3_W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d4, d5, d6)>
// CHECK-DAG: #[[C3_O:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[PW_X:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[PW_W:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[PW_O:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[G_X:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 + d6, d2 + d7, d3, d5)>
// CHECK-DAG: #[[G_W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d4, d5, d6, d7)>
// CHECK-DAG: #[[G_O:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[DW_X:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>
// CHECK-DAG: #[[DW_W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, 0, d4, d5)>

// A 3x3 convolution with padding and bias: the padding pads H and W (dims
// 1 and 2), the bias runs along the last dim, and the input is read
// contiguous along C.
// CHECK-LABEL: func.func @conv3x3
// CHECK: tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.generic {indexing_maps = [#[[C3_X]], #[[C3_W]], #[[C3_O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME: outs({{.*}} : tensor<2x6x6x16xf32>)
func.func @conv3x3(%x: tensor<2x6x6x8xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>) -> tensor<2x6x6x16xf32> attributes {kiln.kernel} {
  %0 = kiln.conv %x, %w, %b {channels_last, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x6x6x8xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<2x6x6x16xf32>
  return %0 : tensor<2x6x6x16xf32>
}

// A pointwise convolution: one matmul over the flattened pixels with the
// weight read k-major, [N*H*W, C] x [F, C] -> [N*H*W, F].
// CHECK-LABEL: func.func @pointwise
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0, 1, 2], [3]] : tensor<2x7x7x8xf32> into tensor<98x8xf32>
// CHECK: tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<16x8x1x1xf32> into tensor<16x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[PW_X]], #[[PW_W]], #[[PW_O]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: tensor.expand_shape {{.*}} {{\[}}[0, 1, 2], [3]] output_shape [2, 7, 7, 16] : tensor<98x16xf32> into tensor<2x7x7x16xf32>
func.func @pointwise(%x: tensor<2x7x7x8xf32>, %w: tensor<16x8x1x1xf32>) -> tensor<2x7x7x16xf32> attributes {kiln.kernel} {
  %0 = kiln.conv %x, %w {channels_last, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x7x7x8xf32>, tensor<16x8x1x1xf32>) -> tensor<2x7x7x16xf32>
  return %0 : tensor<2x7x7x16xf32>
}

// kiln-split-conv-k's parts: a grouped 3x3 convolution over [N, H, W, G,
// C/G] and [G, F/G, C/G, kh, kw] views, the result [N, H', W', G, F/G]
// collapsed to [N, H', W', F].
// CHECK-LABEL: func.func @grouped
// CHECK: tensor.expand_shape %arg0 {{\[}}[0], [1], [2], [3, 4]] output_shape [1, 6, 6, 2, 16]
// CHECK: tensor.expand_shape %arg1 {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 8, 16, 3, 3]
// CHECK: linalg.generic {indexing_maps = [#[[G_X]], #[[G_W]], #[[G_O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: tensor.collapse_shape {{.*}} {{\[}}[0], [1], [2], [3, 4]] : tensor<1x4x4x2x8xf32> into tensor<1x4x4x16xf32>
func.func @grouped(%x: tensor<1x6x6x32xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x4x4x16xf32> attributes {kiln.kernel} {
  %0 = kiln.conv %x, %w {channels_last, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x6x6x32xf32>, tensor<16x16x3x3xf32>) -> tensor<1x4x4x16xf32>
  return %0 : tensor<1x4x4x16xf32>
}

// A depthwise convolution, loops n, o_1, o_2, c, k_1, k_2: channels
// innermost. GPU targets read the padding in place (the weight the only
// operand, the input element extracted at its clamped position, [n, h, w,
// c]); the CPU pads a copy.
// CHECK-LABEL: func.func @depthwise
// CHECK: tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.generic {indexing_maps = [#[[DW_X]], #[[DW_W]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// INPLACE-LABEL: func.func @depthwise
// INPLACE-NOT: tensor.pad
// INPLACE: linalg.generic
// INPLACE-SAME: ins(%arg1 : tensor<8x1x3x3xf32>)
// INPLACE: tensor.extract %arg0[{{.*}}] : tensor<1x8x8x8xf32>
// INPLACE: arith.select
func.func @depthwise(%x: tensor<1x8x8x8xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x4x4x8xf32> attributes {kiln.kernel} {
  %0 = kiln.conv %x, %w {channels_last, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x8x8xf32>, tensor<8x1x3x3xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// Max pooling over H and W of [N, H, W, C], channels the last loop of the
// result's.
// CHECK-LABEL: func.func @max_pool
// CHECK: tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: linalg.generic {indexing_maps = [#[[DW_X]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK: arith.maximumf
// INPLACE-LABEL: func.func @max_pool
// INPLACE-NOT: tensor.pad
// INPLACE: tensor.extract %arg0[{{.*}}] : tensor<1x8x8x4xf32>
func.func @max_pool(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> attributes {kiln.kernel} {
  %0 = kiln.max_pool %x {channels_last, ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x8x8x4xf32> -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// Average pooling divides by the window counts [H', W', 1], broadcast over
// N and C.
// CHECK-LABEL: func.func @average_pool
// CHECK: arith.constant dense<{{.*}}> : tensor<4x4x1xf32>
// CHECK: arith.divf
func.func @average_pool(%x: tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32> attributes {kiln.kernel} {
  %0 = kiln.average_pool %x {channels_last, ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x8x8x4xf32> -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}
