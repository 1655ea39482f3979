// RUN: kiln-opt %s --kiln-convert-to-linalg | FileCheck %s
// kiln-convert-to-linalg on gathers and slices (KilnToLinalg/DataMovement.cpp).

// CHECK-DAG: #[[STRIDED:.+]] = affine_map<(d0, d1) -> (d0 * 2 + 1, d1 * 2)>

// Gather reads the index operand through a projected map and extracts from
// the table at the normalized, clamped index.
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<3xi64>) outs(%{{.+}} : tensor<3x4xf32>)
// CHECK: arith.index_cast
// CHECK: arith.minsi
// CHECK: tensor.extract %arg0[%{{.+}}, %{{.+}}] : tensor<10x4xf32>
func.func @gather(%t: tensor<10x4xf32>, %ids: tensor<3xi64>) -> tensor<3x4xf32> attributes {kiln.kernel} {
  %0 = kiln.gather %t, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// Concatenation: an insert_slice per input, none for an input empty along
// the axis (placed last, its offset would be the result's extent).
// CHECK-LABEL: func.func @concat_with_empty_input
// CHECK: tensor.insert_slice %arg0 into %{{.+}}[0, 0, 0] [1, 4, 3] [1, 1, 1] : tensor<1x4x3xf32> into tensor<1x4x3xf32>
// CHECK-NOT: tensor.insert_slice
// CHECK: return
func.func @concat_with_empty_input(%x: tensor<1x4x3xf32>, %e: tensor<1x0x3xf32>) -> tensor<1x4x3xf32> attributes {kiln.kernel} {
  %0 = kiln.concat %x, %e {axis = 1 : i64} : (tensor<1x4x3xf32>, tensor<1x0x3xf32>) -> tensor<1x4x3xf32>
  return %0 : tensor<1x4x3xf32>
}

// A concatenation that is only the kernel's output (an LSTM's outputs of
// every step) writes each input to its slice of the output buffer: no
// chain of insert_slices for bufferization to analyse.
// CHECK-LABEL: func.func @concat_into_output
// CHECK-DAG: %[[A:.+]] = bufferization.to_tensor %arg0
// CHECK-DAG: %[[B:.+]] = bufferization.to_tensor %arg1
// CHECK: %[[FIRST:.+]] = memref.subview %arg3[0, 0] [1, 3] [1, 1] : memref<3x3xf32> to memref<1x3xf32, strided<[3, 1]>>
// CHECK: bufferization.materialize_in_destination %[[A]] in restrict writable %[[FIRST]]
// CHECK: %[[SECOND:.+]] = memref.subview %arg3[1, 0] [2, 3] [1, 1] : memref<3x3xf32> to memref<2x3xf32, strided<[3, 1], offset: 3>>
// CHECK: bufferization.materialize_in_destination %[[B]] in restrict writable %[[SECOND]]
// CHECK-NOT: tensor.insert_slice
// CHECK-NOT: materialize_in_destination
// CHECK: return
func.func @concat_into_output(%a: memref<1x3xf32>, %b: memref<2x3xf32>, %e: memref<0x3xf32>, %out: memref<3x3xf32>) attributes {kiln.kernel} {
  %0 = bufferization.to_tensor %a restrict : memref<1x3xf32> to tensor<1x3xf32>
  %1 = bufferization.to_tensor %b restrict : memref<2x3xf32> to tensor<2x3xf32>
  %2 = bufferization.to_tensor %e restrict : memref<0x3xf32> to tensor<0x3xf32>
  %3 = kiln.concat %0, %1, %2 {axis = 0 : i64} : (tensor<1x3xf32>, tensor<2x3xf32>, tensor<0x3xf32>) -> tensor<3x3xf32>
  bufferization.materialize_in_destination %3 in restrict writable %out : (tensor<3x3xf32>, memref<3x3xf32>) -> ()
  return
}

// Unit steps: a view. Positive steps above 1: a copy reading
// start + step * i (a kernel that can be split into workgroups).
// CHECK-LABEL: func.func @slice
// CHECK: tensor.extract_slice %arg0[1, 0] [5, 2] [1, 1] : tensor<10x4xf32> to tensor<5x2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[STRIDED]], #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<10x4xf32>) outs(%{{.+}} : tensor<5x2xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]]
func.func @slice(%t: tensor<10x4xf32>) -> (tensor<5x2xf32>, tensor<5x2xf32>) attributes {kiln.kernel} {
  %0 = kiln.slice %t {starts = array<i64: 1, 0>, steps = array<i64: 1, 1>} : tensor<10x4xf32> -> tensor<5x2xf32>
  %1 = kiln.slice %t {starts = array<i64: 1, 0>, steps = array<i64: 2, 2>} : tensor<10x4xf32> -> tensor<5x2xf32>
  return %0, %1 : tensor<5x2xf32>, tensor<5x2xf32>
}
