// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cancel-layout-transposes))' | FileCheck %s

// tf2onnx's batch normalization and ReLU between NCHW -> NHWC -> NCHW
// transposes: computed in NCHW, its per-channel constants [1, 1, 1, C] and
// [C] transposed to [1, C, 1, 1] (folded), a scalar kept; no transpose is
// left.
// CHECK-LABEL: func.func @batch_norm_between_transposes
// CHECK-NOT: kiln.transpose
// CHECK: %[[M:.+]] = kiln.mul %arg0, %{{.+}} : tensor<1x8x4x6xf32>, tensor<1x8x1x1xf32> -> tensor<1x8x4x6xf32>
// CHECK: %[[A:.+]] = kiln.add %[[M]], %{{.+}} : tensor<1x8x4x6xf32>, tensor<1x8x1x1xf32> -> tensor<1x8x4x6xf32>
// CHECK: %[[S:.+]] = kiln.sub %[[A]], %{{.+}} : tensor<1x8x4x6xf32>, tensor<f32> -> tensor<1x8x4x6xf32>
// CHECK: %[[R:.+]] = kiln.relu %[[S]] : tensor<1x8x4x6xf32>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[R]]
func.func @batch_norm_between_transposes(%x: tensor<1x8x4x6xf32>) -> tensor<1x8x4x6xf32> {
  %scale = kiln.constant dense<2.0> : tensor<1x1x1x8xf32>
  %shift = kiln.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %t = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x8x4x6xf32> -> tensor<1x4x6x8xf32>
  %m = kiln.mul %t, %scale : tensor<1x4x6x8xf32>, tensor<1x1x1x8xf32> -> tensor<1x4x6x8xf32>
  %a = kiln.add %m, %shift : tensor<1x4x6x8xf32>, tensor<8xf32> -> tensor<1x4x6x8xf32>
  %s = kiln.sub %a, %half : tensor<1x4x6x8xf32>, tensor<f32> -> tensor<1x4x6x8xf32>
  %r = kiln.relu %s : tensor<1x4x6x8xf32>
  %back = kiln.transpose %r {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x6x8xf32> -> tensor<1x8x4x6xf32>
  return %back : tensor<1x8x4x6xf32>
}

// -----

// Two transposes that meet directly cancel too.
// CHECK-LABEL: func.func @adjacent
// CHECK-NEXT: return %arg0
func.func @adjacent(%x: tensor<1x8x4x6xf32>) -> tensor<1x8x4x6xf32> {
  %t = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x8x4x6xf32> -> tensor<1x4x6x8xf32>
  %back = kiln.transpose %t {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x6x8xf32> -> tensor<1x8x4x6xf32>
  return %back : tensor<1x8x4x6xf32>
}

// -----

// Left alone: a value of the chain that has another use (the NHWC value
// is an output too), two transposes that do not undo each other, and an
// elementwise op of two computed values.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-6: kiln.transpose
func.func @kept(%x: tensor<1x8x4x6xf32>, %y: tensor<1x4x6x8xf32>) -> (tensor<1x8x4x6xf32>, tensor<1x4x6x8xf32>, tensor<8x1x4x6xf32>, tensor<1x8x4x6xf32>) {
  %t0 = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x8x4x6xf32> -> tensor<1x4x6x8xf32>
  %r0 = kiln.relu %t0 : tensor<1x4x6x8xf32>
  %b0 = kiln.transpose %r0 {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x6x8xf32> -> tensor<1x8x4x6xf32>
  %t1 = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x8x4x6xf32> -> tensor<1x4x6x8xf32>
  %b1 = kiln.transpose %t1 {perm = array<i64: 3, 0, 1, 2>} : tensor<1x4x6x8xf32> -> tensor<8x1x4x6xf32>
  %t2 = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x8x4x6xf32> -> tensor<1x4x6x8xf32>
  %s2 = kiln.add %t2, %y : tensor<1x4x6x8xf32>, tensor<1x4x6x8xf32> -> tensor<1x4x6x8xf32>
  %b2 = kiln.transpose %s2 {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x6x8xf32> -> tensor<1x8x4x6xf32>
  return %b0, %r0, %b1, %b2 : tensor<1x8x4x6xf32>, tensor<1x4x6x8xf32>, tensor<8x1x4x6xf32>, tensor<1x8x4x6xf32>
}
