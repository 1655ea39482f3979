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
