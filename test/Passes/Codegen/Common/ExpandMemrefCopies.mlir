// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-expand-memref-copies))' | FileCheck %s

// Strided copies become linalg.copy (plain loops later), not calls into the
// MLIR runner library.
// CHECK-LABEL: func.func @strided_copy
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.+}} : memref<2x3xf32, strided<[8, 1]>>) outs(%{{.+}} : memref<2x3xf32>)
func.func @strided_copy(%src: memref<2x8xf32>, %dst: memref<2x3xf32>) {
  %view = memref.subview %src[0, 0] [2, 3] [1, 1] : memref<2x8xf32> to memref<2x3xf32, strided<[8, 1]>>
  memref.copy %view, %dst : memref<2x3xf32, strided<[8, 1]>> to memref<2x3xf32>
  return
}

// Other memory ops are left alone.
// CHECK-LABEL: func.func @no_copy
// CHECK: memref.load
// CHECK: memref.store
func.func @no_copy(%src: memref<4xf32>, %dst: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %src[%c0] : memref<4xf32>
  memref.store %v, %dst[%c0] : memref<4xf32>
  return
}
