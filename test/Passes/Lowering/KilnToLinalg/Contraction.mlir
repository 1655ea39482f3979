// RUN: kiln-opt %s --kiln-convert-to-linalg | FileCheck %s
// RUN: kiln-opt %s --kiln-convert-to-linalg=flatten-rows-below=0 | FileCheck %s --check-prefix=GPU
// kiln-convert-to-linalg on matmuls, Gemm, convolutions and einsums (KilnToLinalg/Contraction.cpp).

// CHECK-DAG: #[[PW_X:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[PW_W:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-DAG: #[[PW_OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[CONV_IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 * 2 + d4, d6 * 2 + d5)>
// CHECK-DAG: #[[CONV_W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
// CHECK-DAG: #[[DW_W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, 0, d3, d4)>

// Gemm: beta*C initialises the accumulator, alpha scales each product.
// CHECK-LABEL: func.func @gemm
// CHECK: %[[INIT:.+]] = linalg.generic {{.*}} ins(%arg2 : tensor<16xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<16x8xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
// CHECK: arith.constant 5.000000e-01
func.func @gemm(%a: tensor<4x8xf32>, %b: tensor<16x8xf32>, %c: tensor<16xf32>) -> tensor<4x16xf32> attributes {kiln.kernel} {
  %0 = kiln.gemm %a, %b, %c {alpha = 0.5 : f32, transB = true} : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// A batch of matrices times one matrix is one matmul over every row of the
// batch: A collapses to [b * M, K] (an alias), the result expands back.
// CHECK-LABEL: func.func @matmul_rows_of_batch
// CHECK: %[[A:.+]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2], [3]] : tensor<3x5x1x8xf32> into tensor<15x8xf32>
// CHECK: %[[MM:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[A]], %arg1 : tensor<15x8xf32>, tensor<8x16xf32>) outs(%{{.+}} : tensor<15x16xf32>)
// CHECK: tensor.expand_shape %[[MM]] {{\[\[}}0, 1, 2], [3]] output_shape [3, 5, 1, 16] : tensor<15x16xf32> into tensor<3x5x1x16xf32>
func.func @matmul_rows_of_batch(%a: tensor<3x5x1x8xf32>, %b: tensor<8x16xf32>) -> tensor<3x5x1x16xf32> attributes {kiln.kernel} {
  %0 = kiln.matmul %a, %b : tensor<3x5x1x8xf32>, tensor<8x16xf32> -> tensor<3x5x1x16xf32>
  return %0 : tensor<3x5x1x16xf32>
}

// Not when a value of the kernel broadcasts along some of the rows but not
// all (a Bahdanau attention's query [B, 1, N] added to the keys' product
// [B, S, N]): over flattened rows its epilogue would need a division, and
// the product would stay a whole temporary of the kernel. The batch stays
// a loop of the product.
// CHECK-LABEL: func.func @matmul_query_broadcast_over_rows
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}}ins(%arg0, %arg1 : tensor<2x3x8xf32>, tensor<8x4xf32>) outs(%{{.+}} : tensor<2x3x4xf32>)
func.func @matmul_query_broadcast_over_rows(%a: tensor<2x3x8xf32>, %b: tensor<8x4xf32>, %q: tensor<2x1x4xf32>) -> tensor<2x3x4xf32> attributes {kiln.kernel} {
  %0 = kiln.matmul %a, %b : tensor<2x3x8xf32>, tensor<8x4xf32> -> tensor<2x3x4xf32>
  %1 = kiln.add %0, %q : tensor<2x3x4xf32>, tensor<2x1x4xf32> -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// With a batch of B too, each batch is its own product (a batch loop).
// CHECK-LABEL: func.func @matmul_batched_b
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%arg0, %arg1 : tensor<3x4x8xf32>, tensor<3x8x16xf32>)
func.func @matmul_batched_b(%a: tensor<3x4x8xf32>, %b: tensor<3x8x16xf32>) -> tensor<3x4x16xf32> attributes {kiln.kernel} {
  %0 = kiln.matmul %a, %b : tensor<3x4x8xf32>, tensor<3x8x16xf32> -> tensor<3x4x16xf32>
  return %0 : tensor<3x4x16xf32>
}

// Conv: the input is padded once, then a 7-loop contraction with strides
// whose innermost loop walks an output row.
// CHECK-LABEL: func.func @conv
// CHECK: %[[PAD:.+]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[ZERO:.+]] = linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[CONV_IN]], #[[CONV_W]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%[[PAD]], %arg1 : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%[[ZERO]]
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> attributes {kiln.kernel} {
  %0 = kiln.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// Einsum: output subscripts parallel, summed ones reduction.
// CHECK-LABEL: func.func @einsum
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @einsum(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> attributes {kiln.kernel} {
  %0 = kiln.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// Depthwise convolution: no group reshapes, the channel is one loop, the
// weight is read at [c, 0, kh, kw].
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[DW_W]], #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]}
// CHECK-NOT: tensor.collapse_shape
func.func @depthwise(%x: tensor<1x8x6x6xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32> attributes {kiln.kernel} {
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x4x4xf32>
  return %0 : tensor<1x8x4x4xf32>
}

// Pointwise convolution on a 7x7 map: a batched matmul over the flattened
// image (loops n, f, c, p with p = h * 7 + w innermost), the bias
// broadcast along the filters, and the result expanded back to 4-D.
// CHECK-LABEL: func.func @pointwise
// CHECK: %[[X:.+]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<2x8x7x7xf32> into tensor<2x8x49xf32>
// CHECK: %[[W:.+]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<16x8x1x1xf32> into tensor<16x8xf32>
// CHECK: %[[BIAS:.+]] = linalg.generic {{.*}} ins(%arg2 : tensor<16xf32>) outs({{.*}} : tensor<2x16x49xf32>)
// CHECK: %[[ACC:.+]] = linalg.generic {indexing_maps = [#[[PW_X]], #[[PW_W]], #[[PW_OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[X]], %[[W]] : tensor<2x8x49xf32>, tensor<16x8xf32>) outs(%[[BIAS]] : tensor<2x16x49xf32>)
// CHECK: tensor.expand_shape %[[ACC]] {{\[}}[0], [1], [2, 3]] output_shape [2, 16, 7, 7]
func.func @pointwise(%x: tensor<2x8x7x7xf32>, %w: tensor<16x8x1x1xf32>, %b: tensor<16xf32>) -> tensor<2x16x7x7xf32> attributes {kiln.kernel} {
  %0 = kiln.conv %x, %w, %b {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<2x8x7x7xf32>, tensor<16x8x1x1xf32>, tensor<16xf32>) -> tensor<2x16x7x7xf32>
  return %0 : tensor<2x16x7x7xf32>
}

// Pointwise convolutions kept as image rows: rows of 16 pixels or more
// (split by rows, each workgroup keeps its input slice in cache), strided
// ones (kiln-split-pointwise-conv-stride subsamples those first) and 1-D.
// With flatten-rows-below=0 (the GPU targets, whose matmul blocks want M =
// H*W) the stride-1 one on 16-pixel rows is flattened too.
// CHECK-LABEL: func.func @pointwise_rows
// CHECK-NOT: tensor.collapse_shape
// GPU-LABEL: func.func @pointwise_rows
// GPU: tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<1x8x16x16xf32> into tensor<1x8x256xf32>
// GPU: iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// GPU: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]
// GPU: iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]
// CHECK: iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]
// CHECK-NOT: tensor.collapse_shape
func.func @pointwise_rows(%x: tensor<1x8x16x16xf32>, %w: tensor<16x8x1x1xf32>, %x1: tensor<1x8x5xf32>, %w1: tensor<16x8x1xf32>) -> (tensor<1x16x16x16xf32>, tensor<1x16x8x8xf32>, tensor<1x16x5xf32>) attributes {kiln.kernel} {
  %0 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x16x16xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x16x16xf32>
  %1 = kiln.conv %x, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x16x16xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x8x8xf32>
  %2 = kiln.conv %x1, %w1 {pads = array<i64: 0, 0>, strides = array<i64: 1>, dilations = array<i64: 1>, group = 1 : i64} : (tensor<1x8x5xf32>, tensor<16x8x1xf32>) -> tensor<1x16x5xf32>
  return %0, %1, %2 : tensor<1x16x16x16xf32>, tensor<1x16x8x8xf32>, tensor<1x16x5xf32>
}
