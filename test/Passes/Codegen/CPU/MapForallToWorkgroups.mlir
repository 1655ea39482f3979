// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-map-forall-to-workgroups))' | FileCheck %s

// The forall becomes workgroup id's share of the loop, iterations id, id +
// count, ...: once per call under the compiled count of 4, and under any
// other count each iteration once, none past the end.
// CHECK-LABEL: func.func @mapped
// CHECK-SAME: (%[[IN:.+]]: memref<64xf32>, %[[OUT:.+]]: memref<64xf32>, %[[ID:.+]]: index, %[[COUNT:.+]]: index)
// CHECK-SAME: kiln.workgroups = 4 : i64
// CHECK-NOT: scf.forall
// CHECK: %[[OFFSET:.+]] = arith.muli %[[ID]], %{{.+}} : index
// CHECK: %[[START:.+]] = arith.addi %{{.+}}, %[[OFFSET]] : index
// CHECK: %[[ATLEASTONE:.+]] = arith.maxsi %[[COUNT]], %{{.+}} : index
// CHECK: %[[STRIDE:.+]] = arith.muli %[[ATLEASTONE]], %{{.+}} : index
// CHECK: scf.for %[[IV:.+]] = %[[START]] to %{{.+}} step %[[STRIDE]]
// CHECK: memref.subview %[[IN]][%[[IV]]] [16] [1]
// CHECK: memref.subview %[[OUT]][%[[IV]]] [16] [1]
// CHECK: linalg.copy
func.func @mapped(%in: memref<64xf32>, %out: memref<64xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.workgroups = 4 : i64} {
  scf.forall (%i) = (0) to (64) step (16) {
    %a = memref.subview %in[%i] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
    %b = memref.subview %out[%i] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
    linalg.copy ins(%a : memref<16xf32, strided<[1], offset: ?>>) outs(%b : memref<16xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// A write to a kernel argument outside the loop would race between
// workgroups: the kernel falls back to a grid of one and keeps its loop.
// CHECK-LABEL: func.func @unsafe
// CHECK-SAME: kiln.workgroups = 1 : i64
// CHECK: scf.forall
func.func @unsafe(%in: memref<64xf32>, %out: memref<64xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.workgroups = 4 : i64} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<64xf32>)
  scf.forall (%i) = (0) to (64) step (16) {
    %a = memref.subview %in[%i] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
    %b = memref.subview %out[%i] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
    linalg.copy ins(%a : memref<16xf32, strided<[1], offset: ?>>) outs(%b : memref<16xf32, strided<[1], offset: ?>>)
  }
  return
}

// -----

// Kernels with a grid of one are left alone.
// CHECK-LABEL: func.func @single
// CHECK: linalg.copy
func.func @single(%in: memref<64xf32>, %out: memref<64xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.workgroups = 1 : i64} {
  linalg.copy ins(%in : memref<64xf32>) outs(%out : memref<64xf32>)
  return
}
