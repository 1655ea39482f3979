// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-gather-before-transpose))' | FileCheck %s

// PyTorch's MultiheadAttention: the packed projection [L=4, N=1, 3*E]
// unflattened, moved to [3, L, N, 1, E] by a transpose, squeezed, and q,
// k, v gathered from it. The squeeze goes ahead of the transpose, each
// gather ahead of it (on the projection's axis of 3), and what is left of
// the transpose is the identity: no copy of the whole projection.
// CHECK-LABEL: func.func @mha_packed_projection
// CHECK: %[[S:.+]] = kiln.reshape %arg0 : tensor<1x4x1x3x8xf32> -> tensor<4x1x3x8xf32>
// CHECK: %[[Q:.+]] = kiln.gather %[[S]], %{{.+}} {axis = 2 : i64} : (tensor<4x1x3x8xf32>, tensor<i64>) -> tensor<4x1x8xf32>
// CHECK: %[[K:.+]] = kiln.gather %[[S]], %{{.+}} {axis = 2 : i64}
// CHECK: %[[V:.+]] = kiln.gather %[[S]], %{{.+}} {axis = 2 : i64}
// CHECK-NOT: kiln.transpose
// CHECK: return %[[Q]], %[[K]], %[[V]]
func.func @mha_packed_projection(%x: tensor<1x4x1x3x8xf32>) -> (tensor<4x1x8xf32>, tensor<4x1x8xf32>, tensor<4x1x8xf32>) {
  %i0 = kiln.constant dense<0> : tensor<i64>
  %i1 = kiln.constant dense<1> : tensor<i64>
  %i2 = kiln.constant dense<2> : tensor<i64>
  %t = kiln.transpose %x {perm = array<i64: 3, 1, 2, 0, 4>} : tensor<1x4x1x3x8xf32> -> tensor<3x4x1x1x8xf32>
  %s = kiln.reshape %t : tensor<3x4x1x1x8xf32> -> tensor<3x4x1x8xf32>
  %q = kiln.gather %s, %i0 {axis = 0 : i64} : (tensor<3x4x1x8xf32>, tensor<i64>) -> tensor<4x1x8xf32>
  %k = kiln.gather %s, %i1 {axis = 0 : i64} : (tensor<3x4x1x8xf32>, tensor<i64>) -> tensor<4x1x8xf32>
  %v = kiln.gather %s, %i2 {axis = 0 : i64} : (tensor<3x4x1x8xf32>, tensor<i64>) -> tensor<4x1x8xf32>
  return %q, %k, %v : tensor<4x1x8xf32>, tensor<4x1x8xf32>, tensor<4x1x8xf32>
}

// -----

// A gather of one index on a transposed axis: the gather on the input's
// axis, then the rest of the transpose (here it moves elements).
// A transpose that moves only unit dims is a reshape.
// CHECK-LABEL: func.func @gather_then_rest
// CHECK: %[[G:.+]] = kiln.gather %arg0, %arg1 {axis = 1 : i64} : (tensor<2x3x5xf32>, tensor<i64>) -> tensor<2x5xf32>
// CHECK: kiln.transpose %[[G]] {perm = array<i64: 1, 0>} : tensor<2x5xf32> -> tensor<5x2xf32>
// CHECK: kiln.reshape %arg2 : tensor<1x6x1x4xf32> -> tensor<6x1x1x4xf32>
func.func @gather_then_rest(%x: tensor<2x3x5xf32>, %i: tensor<i64>, %y: tensor<1x6x1x4xf32>) -> (tensor<5x2xf32>, tensor<6x1x1x4xf32>) {
  %t = kiln.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x5xf32> -> tensor<3x5x2xf32>
  %g = kiln.gather %t, %i {axis = 0 : i64} : (tensor<3x5x2xf32>, tensor<i64>) -> tensor<5x2xf32>
  %u = kiln.transpose %y {perm = array<i64: 1, 2, 0, 3>} : tensor<1x6x1x4xf32> -> tensor<6x1x1x4xf32>
  return %g, %u : tensor<5x2xf32>, tensor<6x1x1x4xf32>
}

// -----

// Left alone: a gather of several indices (the axis stays) and a
// transpose that moves elements.
// CHECK-LABEL: func.func @left_alone
// CHECK: kiln.transpose %arg0 {perm = array<i64: 1, 0>}
// CHECK: kiln.gather %{{.+}}, %arg1 {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
func.func @left_alone(%x: tensor<2x3xf32>, %i: tensor<2xi64>) -> tensor<2x2xf32> {
  %t = kiln.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %g = kiln.gather %t, %i {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %g : tensor<2x2xf32>
}
