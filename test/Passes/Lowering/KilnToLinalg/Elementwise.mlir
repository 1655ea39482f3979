// RUN: kiln-opt %s --kiln-convert-to-linalg | FileCheck %s
// kiln-convert-to-linalg on elementwise ops (KilnToLinalg/Elementwise.cpp).

// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>

// Broadcasting reads the smaller operand through a projected map.
// CHECK-LABEL: func.func @add_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK: arith.addf
func.func @add_broadcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> attributes {kiln.kernel} {
  %0 = kiln.add %a, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// Integer compare and select.
// CHECK-LABEL: func.func @int_select
// CHECK: arith.cmpi slt, %{{.+}}, %{{.+}} : i64
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : i64
func.func @int_select(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> attributes {kiln.kernel} {
  %c = kiln.less %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi1>
  %0 = kiln.where %c, %a, %b : tensor<4xi1>, tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// SiLU: x * 1 / (1 + exp(-x)); HardSwish: x * clamp(x / 6 + 1/2, 0, 1).
// CHECK-LABEL: func.func @silu_hard_swish
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: %[[S:.+]] = arith.mulf %[[X]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: linalg.generic
// CHECK: ^bb0(%[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[SIXTH:.+]] = arith.mulf %{{.+}}, %[[Y]] : f32
// CHECK: arith.addf %[[SIXTH]]
// CHECK: arith.minimumf
// CHECK: arith.maximumf
// CHECK: %[[H:.+]] = arith.mulf %[[Y]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[H]]
func.func @silu_hard_swish(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {kiln.kernel} {
  %0 = kiln.silu %x : tensor<4x8xf32>
  %1 = kiln.hard_swish %x : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}
