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
