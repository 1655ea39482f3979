// RUN: kiln-opt %s --pass-pipeline='builtin.module(gpu.module(gpu.func(kiln-group-thread-accesses)))' | FileCheck %s

// A thread's run of 4 elements of c = a + b:
// unrolled, its 8 loads first (with no store among them), then the adds,
// then the 4 stores.
// CHECK-LABEL: gpu.func @run
// CHECK-NOT: scf.for
// CHECK: memref.load %{{.+}} : memref<4xf32
// CHECK-NOT: memref.store
// CHECK: memref.load
// CHECK-NOT: memref.store
// CHECK: memref.load
// CHECK-NOT: memref.store
// CHECK: memref.load
// CHECK-NOT: memref.store
// CHECK: memref.load
// CHECK-NOT: memref.store
// CHECK: memref.load
// CHECK-NOT: memref.store
// CHECK: memref.load
// CHECK-NOT: memref.store
// CHECK: memref.load
// CHECK-NOT: memref.load
// CHECK-COUNT-4: arith.addf
// CHECK-NOT: arith.addf
// CHECK-COUNT-4: memref.store
// CHECK: gpu.return

// A loop that loads and stores one buffer (an accumulation), one with a
// barrier, and one of 32 iterations stay loops.
// CHECK-LABEL: gpu.func @same_buffer
// CHECK: scf.for
// CHECK-LABEL: gpu.func @barrier
// CHECK: scf.for
// CHECK-LABEL: gpu.func @long
// CHECK: scf.for
gpu.module @kernels {
  gpu.func @run(%a: memref<4xf32, strided<[1], offset: ?>>, %b: memref<4xf32, strided<[1], offset: ?>>, %c: memref<4xf32, strided<[1], offset: ?>>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %a[%i] : memref<4xf32, strided<[1], offset: ?>>
      %y = memref.load %b[%i] : memref<4xf32, strided<[1], offset: ?>>
      %s = arith.addf %x, %y : f32
      memref.store %s, %c[%i] : memref<4xf32, strided<[1], offset: ?>>
    }
    gpu.return
  }
  gpu.func @same_buffer(%a: memref<4xf32>, %c: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %a[%i] : memref<4xf32>
      %y = memref.load %c[%i] : memref<4xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %c[%i] : memref<4xf32>
    }
    gpu.return
  }
  gpu.func @barrier(%a: memref<4xf32>, %c: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    scf.for %i = %c0 to %c4 step %c1 {
      %x = memref.load %a[%i] : memref<4xf32>
      gpu.barrier
      memref.store %x, %c[%i] : memref<4xf32>
    }
    gpu.return
  }
  gpu.func @long(%a: memref<32xf32>, %c: memref<32xf32>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    scf.for %i = %c0 to %c32 step %c1 {
      %x = memref.load %a[%i] : memref<32xf32>
      memref.store %x, %c[%i] : memref<32xf32>
    }
    gpu.return
  }
}
