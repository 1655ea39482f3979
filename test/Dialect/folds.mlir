// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s
// The kiln ops' folders.

// An expand or a reshape to its input's own type is the input (the
// importer keeps such expands: at another batch size they broadcast).
// CHECK-LABEL: func.func @identity
// CHECK-NEXT: return %arg0
func.func @identity(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %e = kiln.expand %x : tensor<1x8xf32> -> tensor<1x8xf32>
  %r = kiln.reshape %e : tensor<1x8xf32> -> tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}

// -----

// An expand that broadcasts stays.
// CHECK-LABEL: func.func @broadcast
// CHECK-NEXT: kiln.expand %arg0 : tensor<1x8xf32> -> tensor<3x8xf32>
func.func @broadcast(%x: tensor<1x8xf32>) -> tensor<3x8xf32> {
  %e = kiln.expand %x : tensor<1x8xf32> -> tensor<3x8xf32>
  return %e : tensor<3x8xf32>
}

// -----

// A where whose branches are one value is that value (a Loop's state that
// its body passes through unchanged); a condition that broadcasts the value
// to a larger shape keeps it.
// CHECK-LABEL: func.func @where_same_branches
// CHECK-NEXT: %[[B:.+]] = kiln.where %arg0, %arg2, %arg2 : tensor<3x8xi1>, tensor<8xf32>, tensor<8xf32> -> tensor<3x8xf32>
// CHECK-NEXT: return %arg1, %[[B]]
func.func @where_same_branches(%c: tensor<3x8xi1>, %x: tensor<3x8xf32>, %y: tensor<8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>) {
  %same = kiln.where %c, %x, %x : tensor<3x8xi1>, tensor<3x8xf32>, tensor<3x8xf32> -> tensor<3x8xf32>
  %broadcast = kiln.where %c, %y, %y : tensor<3x8xi1>, tensor<8xf32>, tensor<8xf32> -> tensor<3x8xf32>
  return %same, %broadcast : tensor<3x8xf32>, tensor<3x8xf32>
}

// -----

// Arithmetic with a constant identity is its other operand: x - 0, x * 1,
// 1 * x, x / 1, and x + -0.0 for floats (0.0 would turn -0.0 into 0.0), 0
// for integers. Kept: x + 0.0, x - -0.0, 1 / x, and an identity that
// broadcasts x to a larger shape.
// CHECK-LABEL: func.func @identities
// CHECK-DAG: %[[PZ:.+]] = kiln.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[NZ:.+]] = kiln.constant dense<-0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[ONE:.+]] = kiln.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG: %[[ONES:.+]] = kiln.constant dense<1.000000e+00> : tensor<2x8xf32>
// CHECK-DAG: %[[ADD:.+]] = kiln.add %arg0, %[[PZ]]
// CHECK-DAG: %[[SUB:.+]] = kiln.sub %arg0, %[[NZ]]
// CHECK-DAG: %[[RECIP:.+]] = kiln.div %[[ONE]], %arg0
// CHECK-DAG: %[[BROADCAST:.+]] = kiln.mul %arg0, %[[ONES]]
// CHECK: return %arg0, %arg0, %arg0, %arg0, %arg0, %arg1, %[[ADD]], %[[SUB]], %[[RECIP]], %[[BROADCAST]]
func.func @identities(%x: tensor<8xf32>, %i: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x8xf32>) {
  %pz = kiln.constant dense<0.0> : tensor<f32>
  %nz = kiln.constant dense<-0.0> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %ones = kiln.constant dense<1.0> : tensor<2x8xf32>
  %izero = kiln.constant dense<0> : tensor<i32>
  %0 = kiln.sub %x, %pz : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %1 = kiln.mul %x, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %2 = kiln.mul %one, %x : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %3 = kiln.div %x, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %4 = kiln.add %nz, %x : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %5 = kiln.add %i, %izero : tensor<8xi32>, tensor<i32> -> tensor<8xi32>
  %6 = kiln.add %x, %pz : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %7 = kiln.sub %x, %nz : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %8 = kiln.div %one, %x : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %9 = kiln.mul %x, %ones : tensor<8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<2x8xf32>
}
