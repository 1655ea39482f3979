// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-distribute-copies-to-threads))' | FileCheck %s

// A Concat of a 2x4 and a 2x2 input along the last dim, after
// bufferization: two copies into disjoint slices of the output. One forall
// over the larger copy's 8 elements; iteration i copies element i of the
// first, and of the second (4 elements) only when i < 4. Indices are i
// taken apart row-major.
// CHECK-LABEL: func.func @concat
// CHECK-NOT: linalg.copy
// CHECK: scf.forall (%[[I:.+]]) in (8) {
// CHECK:   %[[C1:.+]] = arith.remui %[[I]], %c4
// CHECK:   %[[R1:.+]] = arith.divui %[[I]], %c4
// CHECK:   %[[V:.+]] = memref.load %arg0[%[[R1]], %[[C1]]]
// CHECK:   memref.store %[[V]], %[[LEFT:.+]][%[[R1]], %[[C1]]]
// CHECK:   %[[IN:.+]] = arith.cmpi ult, %[[I]], %c4
// CHECK:   scf.if %[[IN]] {
// CHECK:     %[[C2:.+]] = arith.remui %[[I]], %c2
// CHECK:     %[[R2:.+]] = arith.divui %[[I]], %c2
// CHECK:     %[[W:.+]] = memref.load %arg1[%[[R2]], %[[C2]]]
// CHECK:     memref.store %[[W]], %[[RIGHT:.+]][%[[R2]], %[[C2]]]
// CHECK: return
func.func @concat(%a: memref<2x4xf32>, %b: memref<2x2xf32>, %y: memref<2x6xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  %left = memref.subview %y[0, 0] [2, 4] [1, 1] : memref<2x6xf32> to memref<2x4xf32, strided<[6, 1]>>
  linalg.copy ins(%a : memref<2x4xf32>) outs(%left : memref<2x4xf32, strided<[6, 1]>>)
  %right = memref.subview %y[0, 4] [2, 2] [1, 1] : memref<2x6xf32> to memref<2x2xf32, strided<[6, 1], offset: 4>>
  linalg.copy ins(%b : memref<2x2xf32>) outs(%right : memref<2x2xf32, strided<[6, 1], offset: 4>>)
  return
}

// -----

// A Split's slice: one copy from a view of the input, a thread per element.
// CHECK-LABEL: func.func @split
// CHECK: %[[SLICE:.+]] = memref.subview %arg0[0, 32] [8, 32]
// CHECK: scf.forall (%[[I:.+]]) in (256) {
// CHECK-NOT: scf.if
// CHECK:   memref.load %[[SLICE]]
// CHECK:   memref.store %{{.+}}, %arg1
func.func @split(%x: memref<8x96xf32>, %y: memref<8x32xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  %slice = memref.subview %x[0, 32] [8, 32] [1, 1] : memref<8x96xf32> to memref<8x32xf32, strided<[96, 1], offset: 32>>
  linalg.copy ins(%slice : memref<8x32xf32, strided<[96, 1], offset: 32>>) outs(%y : memref<8x32xf32>)
  return
}

// -----

// A copy reads what another writes: their order matters. Left alone.
// CHECK-LABEL: func.func @chain
// CHECK-NOT: scf.forall
// CHECK: linalg.copy
// CHECK: linalg.copy
func.func @chain(%a: memref<8xf32>, %t: memref<8xf32>, %y: memref<8xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  linalg.copy ins(%a : memref<8xf32>) outs(%t : memref<8xf32>)
  linalg.copy ins(%t : memref<8xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

// Two copies into overlapping slices of one buffer: the later one's values
// must win. Left alone.
// CHECK-LABEL: func.func @overlap
// CHECK-NOT: scf.forall
// CHECK: linalg.copy
// CHECK: linalg.copy
func.func @overlap(%a: memref<4xf32>, %b: memref<4xf32>, %y: memref<6xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  %first = memref.subview %y[0] [4] [1] : memref<6xf32> to memref<4xf32, strided<[1]>>
  linalg.copy ins(%a : memref<4xf32>) outs(%first : memref<4xf32, strided<[1]>>)
  %second = memref.subview %y[2] [4] [1] : memref<6xf32> to memref<4xf32, strided<[1], offset: 2>>
  linalg.copy ins(%b : memref<4xf32>) outs(%second : memref<4xf32, strided<[1], offset: 2>>)
  return
}

// -----

// A kernel with other work besides its copy (a forall from tiling) is not
// a copy kernel. Left alone.
// CHECK-LABEL: func.func @not_only_copies
// CHECK: linalg.copy
// CHECK: scf.forall (%{{.+}}) in (4)
// CHECK-NOT: scf.forall
func.func @not_only_copies(%a: memref<4xf32>, %y: memref<4xf32>, %z: memref<4xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  linalg.copy ins(%a : memref<4xf32>) outs(%y : memref<4xf32>)
  scf.forall (%i) in (4) {
    %v = memref.load %a[%i] : memref<4xf32>
    memref.store %v, %z[%i] : memref<4xf32>
  }
  return
}
