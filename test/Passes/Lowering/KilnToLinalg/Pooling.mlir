// RUN: kiln-opt %s --kiln-convert-to-linalg | FileCheck %s
// kiln-convert-to-linalg on pooling windows (KilnToLinalg/Pooling.cpp).

// ceil_mode windows that run past the input read -inf padding.
// CHECK-LABEL: func.func @max_pool
// CHECK: %[[NEG_INF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NEG_INF]]
// CHECK: tensor.empty() : tensor<2x2xf32>
// CHECK: arith.maximumf
func.func @max_pool(%x: tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32> attributes {kiln.kernel} {
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<1x2x7x7xf32> -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}
