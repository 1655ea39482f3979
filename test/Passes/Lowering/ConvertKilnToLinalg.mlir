// RUN: kiln-opt %s --kiln-convert-to-linalg | FileCheck %s
// kiln-convert-to-linalg converts kernels only; each op family's patterns
// are tested beside this file, in KilnToLinalg/.

// Functions that are not kernels keep their kiln ops.
// CHECK-LABEL: func.func @host_side
// CHECK-NEXT: kiln.relu
func.func @host_side(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
