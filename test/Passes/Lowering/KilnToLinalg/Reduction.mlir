// RUN: kiln-opt %s --kiln-convert-to-linalg | FileCheck %s
// kiln-convert-to-linalg on reductions, Softmax and LayerNorm (KilnToLinalg/Reduction.cpp).

// Mean: a sum over the reduced dim, then a division by its size.
// CHECK-LABEL: func.func @reduce_mean
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: arith.addf
// CHECK: arith.constant 3.000000e+00 : f32
// CHECK: arith.divf
func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> tensor<2x4xf32> attributes {kiln.kernel} {
  %0 = kiln.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// Softmax: row max, row sum of exp(x - max), then exp(x - max) / sum.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MAX:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x10xf32>) outs(%{{.+}} : tensor<2xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} ins(%arg0, %[[MAX]] : tensor<2x10xf32>, tensor<2xf32>) outs(%{{.+}} : tensor<2xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[MAX]], %[[SUM]] : {{.*}}) outs(%{{.+}} : tensor<2x10xf32>)
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> attributes {kiln.kernel} {
  %0 = kiln.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
  return %0 : tensor<2x10xf32>
}

// LayerNorm's core: the row sum, the sum of squares of the centered values
// (two passes, numerically stable), then (x - mean) / sqrt(var + eps); the
// statistics have the row shape (no keepdims), so tiling fuses them.
// CHECK-LABEL: func.func @layer_norm
// CHECK: %[[SUM:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x8x32xf32>) outs(%{{.+}} : tensor<2x8xf32>)
// CHECK: arith.addf
// CHECK: %[[SQ:.+]] = linalg.generic {{.*}} ins(%arg0, %[[SUM]] : tensor<2x8x32xf32>, tensor<2x8xf32>) outs(%{{.+}} : tensor<2x8xf32>)
// CHECK: arith.constant 3.125000e-02 : f32
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[SUM]], %[[SQ]] : {{.*}}) outs(%{{.+}} : tensor<2x8x32xf32>)
// CHECK: arith.constant 9.99999974E-6 : f32
// CHECK: math.sqrt
// CHECK: arith.divf
func.func @layer_norm(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> attributes {kiln.kernel} {
  %0 = kiln.layer_norm %x {axis = 2 : i64, epsilon = 1.0e-05 : f32} : tensor<2x8x32xf32>
  return %0 : tensor<2x8x32xf32>
}

// A sum of integers (CumSum's running counts) adds as integers, from 0.
// CHECK-LABEL: func.func @reduce_sum_i32
// CHECK: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK: linalg.fill ins(%[[ZERO]] : i32)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: arith.addi
// CHECK-NOT: arith.addf
// CHECK: linalg.yield
func.func @reduce_sum_i32(%x: tensor<2x12x12xi32>) -> tensor<2x12xi32> attributes {kiln.kernel} {
  %0 = kiln.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : tensor<2x12x12xi32> -> tensor<2x12xi32>
  return %0 : tensor<2x12xi32>
}
