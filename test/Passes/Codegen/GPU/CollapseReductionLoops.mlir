// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-collapse-reduction-loops))' | FileCheck %s

// passes/Codegen/GPU/CollapseReductionLoops.cpp: GlobalAveragePool's sum
// over H and W of a kernel input reduces over one loop of H*W, reading the
// input through a collapsed view, so that each channel's row can go to a
// warp or block.
// CHECK-LABEL: func.func @pool_sum
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<1x96x40x80xf32> into tensor<1x96x3200xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ROWS]] : tensor<1x96x3200xf32>) outs(%{{.+}} : tensor<1x96xf32>)
#in4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out2 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @pool_sum(%arg0: tensor<1x96x40x80xf32>) -> tensor<1x96xf32> attributes {kiln.kernel} {
  %zero = arith.constant 0.000000e+00 : f32
  %empty = tensor.empty() : tensor<1x96xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x96xf32>) -> tensor<1x96xf32>
  %sum = linalg.generic {indexing_maps = [#in4, #out2], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0 : tensor<1x96x40x80xf32>) outs(%init : tensor<1x96xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x96xf32>
  return %sum : tensor<1x96xf32>
}

// -----

// Reduction loops that are not adjacent (axes 1 and 3) stay as they are.
// CHECK-LABEL: func.func @apart
// CHECK-NOT: tensor.collapse_shape
// CHECK: iterator_types = ["parallel", "reduction", "parallel", "reduction"]
#in4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out2 = affine_map<(d0, d1, d2, d3) -> (d0, d2)>
func.func @apart(%arg0: tensor<2x8x3x16xf32>) -> tensor<2x3xf32> attributes {kiln.kernel} {
  %zero = arith.constant 0.000000e+00 : f32
  %empty = tensor.empty() : tensor<2x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x3xf32>) -> tensor<2x3xf32>
  %sum = linalg.generic {indexing_maps = [#in4, #out2], iterator_types = ["parallel", "reduction", "parallel", "reduction"]} ins(%arg0 : tensor<2x8x3x16xf32>) outs(%init : tensor<2x3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x3xf32>
  return %sum : tensor<2x3xf32>
}

// -----

// An input computed in the kernel (a ReLU the reduction did not absorb)
// is left alone: a reshape between it and the reduction would keep tiling
// from fusing it into the reduction's rows.
// CHECK-LABEL: func.func @computed_input
// CHECK-NOT: tensor.collapse_shape
// CHECK: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
#in4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out2 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @computed_input(%arg0: tensor<1x8x4x4xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8xf32>) attributes {kiln.kernel} {
  %zero = arith.constant 0.000000e+00 : f32
  %e4 = tensor.empty() : tensor<1x8x4x4xf32>
  %relu = linalg.generic {indexing_maps = [#in4, #in4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<1x8x4x4xf32>) outs(%e4 : tensor<1x8x4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x8x4x4xf32>
  %empty = tensor.empty() : tensor<1x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x8xf32>) -> tensor<1x8xf32>
  %sum = linalg.generic {indexing_maps = [#in4, #out2], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%relu : tensor<1x8x4x4xf32>) outs(%init : tensor<1x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x8xf32>
  return %relu, %sum : tensor<1x8x4x4xf32>, tensor<1x8xf32>
}
