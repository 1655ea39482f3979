// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-fold-empty-results))' | FileCheck %s

// Ops whose results have no element compute nothing: a matmul with no
// rows, and a convolution and pooling of a batch of 0, become empty
// constants (the convolution's weights are then unused). Ops whose result
// has elements run whatever their inputs: a matmul whose K is 0 (zeros),
// a sum over an empty axis (zeros), a concat with an empty part.
// CHECK-LABEL: func.func @empty_results
// CHECK-NOT: kiln.conv
// CHECK-NOT: kiln.max_pool
// CHECK: %[[ROWS:.+]] = kiln.constant dense<> : tensor<0x16xf32>
// CHECK: %[[NOK:.+]] = kiln.matmul %arg2, %arg3 : tensor<4x0xf32>, tensor<0x16xf32> -> tensor<4x16xf32>
// CHECK: %[[POOLED:.+]] = kiln.constant dense<> : tensor<0x4x4x4xf32>
// CHECK: %[[SUM:.+]] = kiln.reduce_sum %arg2 {axes = array<i64: 1>, keepdims = false} : tensor<4x0xf32> -> tensor<4xf32>
// CHECK: %[[CAT:.+]] = kiln.concat %arg4, %arg5 {axis = 0 : i64} : (tensor<0x10xf32>, tensor<3x10xf32>) -> tensor<3x10xf32>
// CHECK-NOT: kiln.conv
// CHECK-NOT: kiln.max_pool
// CHECK: return %[[ROWS]], %[[NOK]], %[[POOLED]], %[[SUM]], %[[CAT]]
func.func @empty_results(%rows: tensor<0x8xf32>, %w: tensor<8x16xf32>, %a: tensor<4x0xf32>, %b: tensor<0x16xf32>, %none: tensor<0x10xf32>, %x: tensor<3x10xf32>, %images: tensor<0x3x8x8xf32>) -> (tensor<0x16xf32>, tensor<4x16xf32>, tensor<0x4x4x4xf32>, tensor<4xf32>, tensor<3x10xf32>) {
  %weights = kiln.constant dense<1.0> : tensor<4x3x3x3xf32>
  %0 = kiln.matmul %rows, %w : tensor<0x8xf32>, tensor<8x16xf32> -> tensor<0x16xf32>
  %1 = kiln.matmul %a, %b : tensor<4x0xf32>, tensor<0x16xf32> -> tensor<4x16xf32>
  %2 = kiln.conv %images, %weights {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<0x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<0x4x8x8xf32>
  %3 = kiln.max_pool %2 {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : tensor<0x4x8x8xf32> -> tensor<0x4x4x4xf32>
  %4 = kiln.reduce_sum %a {axes = array<i64: 1>, keepdims = false} : tensor<4x0xf32> -> tensor<4xf32>
  %5 = kiln.concat %none, %x {axis = 0 : i64} : (tensor<0x10xf32>, tensor<3x10xf32>) -> tensor<3x10xf32>
  return %0, %1, %3, %4, %5 : tensor<0x16xf32>, tensor<4x16xf32>, tensor<0x4x4x4xf32>, tensor<4xf32>, tensor<3x10xf32>
}
