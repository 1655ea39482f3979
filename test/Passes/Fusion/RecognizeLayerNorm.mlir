// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-recognize-layer-norm))' | FileCheck %s

// The opset-13 export of LayerNorm (Pow with exponent 2) and the importer's
// own form (Mul of the centered values by themselves): one kiln.layer_norm
// each, epsilon taken from the constant; scale and bias stay.
// CHECK-LABEL: func.func @exported
// CHECK-NEXT: %[[W:.+]] = kiln.constant
// CHECK-NEXT: %[[N:.+]] = kiln.layer_norm %arg0 {axis = 2 : i64, epsilon = 9.99999996E-13 : f32} : tensor<2x8x32xf32>
// CHECK-NEXT: %[[S:.+]] = kiln.mul %[[N]], %[[W]]
// CHECK-NEXT: return %[[S]]
func.func @exported(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-12> : tensor<f32>
  %w = kiln.constant dense<0.5> : tensor<32xf32>
  %m = kiln.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %d = kiln.sub %x, %m : tensor<2x8x32xf32>, tensor<2x8x1xf32> -> tensor<2x8x32xf32>
  %p = kiln.pow %d, %two : tensor<2x8x32xf32>, tensor<f32> -> tensor<2x8x32xf32>
  %v = kiln.reduce_mean %p {axes = array<i64: 2>, keepdims = true} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %e = kiln.add %v, %eps : tensor<2x8x1xf32>, tensor<f32> -> tensor<2x8x1xf32>
  %s = kiln.sqrt %e : tensor<2x8x1xf32>
  %n = kiln.div %d, %s : tensor<2x8x32xf32>, tensor<2x8x1xf32> -> tensor<2x8x32xf32>
  %y = kiln.mul %n, %w : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// CHECK-LABEL: func.func @imported
// CHECK: kiln.layer_norm %arg0 {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : tensor<4x16xf32>
// CHECK-NOT: kiln.reduce_mean
func.func @imported(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %m = kiln.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x16xf32> -> tensor<4x1xf32>
  %d = kiln.sub %x, %m : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  %p = kiln.mul %d, %d : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %v = kiln.reduce_mean %p {axes = array<i64: 1>, keepdims = true} : tensor<4x16xf32> -> tensor<4x1xf32>
  %e = kiln.add %eps, %v : tensor<f32>, tensor<4x1xf32> -> tensor<4x1xf32>
  %s = kiln.sqrt %e : tensor<4x1xf32>
  %n = kiln.div %d, %s : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  return %n : tensor<4x16xf32>
}

// -----

// Left alone: the mean is also an output (LayerNormalization's Mean), and a
// normalization over two dims (InstanceNormalization's H x W).
// CHECK-LABEL: func.func @mean_used
// CHECK-NOT: kiln.layer_norm
// CHECK: kiln.div
// CHECK-LABEL: func.func @two_dims
// CHECK-NOT: kiln.layer_norm
// CHECK: kiln.div
func.func @mean_used(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x1xf32>) {
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %m = kiln.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x16xf32> -> tensor<4x1xf32>
  %d = kiln.sub %x, %m : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  %p = kiln.mul %d, %d : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %v = kiln.reduce_mean %p {axes = array<i64: 1>, keepdims = true} : tensor<4x16xf32> -> tensor<4x1xf32>
  %e = kiln.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %s = kiln.sqrt %e : tensor<4x1xf32>
  %n = kiln.div %d, %s : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  return %n, %m : tensor<4x16xf32>, tensor<4x1xf32>
}
func.func @two_dims(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %m = kiln.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %d = kiln.sub %x, %m : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %p = kiln.mul %d, %d : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %v = kiln.reduce_mean %p {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %e = kiln.add %v, %eps : tensor<1x2x1x1xf32>, tensor<f32> -> tensor<1x2x1x1xf32>
  %s = kiln.sqrt %e : tensor<1x2x1x1xf32>
  %n = kiln.div %d, %s : tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32> -> tensor<1x2x4x4xf32>
  return %n : tensor<1x2x4x4xf32>
}
