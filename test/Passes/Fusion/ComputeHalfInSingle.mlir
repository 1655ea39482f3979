// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-compute-f16-in-f32))' | FileCheck %s

// A float16 op computes in float32 between casts; the cast of the input and
// the rounding of the result stay, ops on other types are left alone.
// CHECK-LABEL: func.func @half
// CHECK: %[[X:.+]] = kiln.cast %arg0 : tensor<4x8xf16> -> tensor<4x8xf32>
// CHECK: %[[S:.+]] = kiln.softmax %[[X]] {axis = 1 : i64} : tensor<4x8xf32>
// CHECK: %[[H:.+]] = kiln.cast %[[S]] : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK: kiln.relu %arg1 : tensor<4xf32>
// CHECK: return %[[H]]
func.func @half(%x: tensor<4x8xf16>, %y: tensor<4xf32>) -> (tensor<4x8xf16>, tensor<4xf32>) {
  %0 = kiln.softmax %x {axis = 1 : i64} : tensor<4x8xf16>
  %1 = kiln.relu %y : tensor<4xf32>
  return %0, %1 : tensor<4x8xf16>, tensor<4xf32>
}
