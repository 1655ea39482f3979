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
