// RUN: kiln-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(kiln-map-kernels-to-gpu)' | FileCheck %s

// What is left of a block's accumulator tile once each lane keeps its
// fragments in registers: a heap buffer only stored to. On the GPU it
// would be a device malloc per thread (64 KiB each here, from an 8 MiB
// heap), so it goes, with its stores; the lane's result still reaches the
// output.
// CHECK-LABEL: gpu.func @write_only_tile
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<2x128xf32>
// CHECK-NOT: memref.alloc
// CHECK: gpu.return
module @kernels {
  func.func @write_only_tile(%out: memref<2x128xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.lanes = 128 : i64, kiln.cooperative} {
    scf.forall (%i) in (2) {
      %tile = memref.alloc() {alignment = 64 : i64} : memref<128x128xf32>
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %tile[%t, %t] : memref<128x128xf32>
      %v = vector.broadcast %one : f32 to vector<4xf32>
      vector.store %v, %tile[%t, %t] : memref<128x128xf32>, vector<4xf32>
      memref.store %one, %out[%i, %t] : memref<2x128xf32>
      memref.dealloc %tile : memref<128x128xf32>
    }
    return
  }
}

// -----

// A heap buffer the kernel reads back would stay a device malloc per
// thread: a code generator bug, reported by kernel name at compile time
// rather than as an illegal address once the device heap runs out.
module @kernels {
  func.func @read_tile(%out: memref<2x128xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.lanes = 128 : i64, kiln.cooperative} {
    scf.forall (%i) in (2) {
      // expected-error @+1 {{GPU kernel read_tile allocates a 'memref<128x128xf32>' per thread on the device heap}}
      %tile = memref.alloc() {alignment = 64 : i64} : memref<128x128xf32>
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %tile[%t, %t] : memref<128x128xf32>
      %v = memref.load %tile[%t, %t] : memref<128x128xf32>
      memref.store %v, %out[%i, %t] : memref<2x128xf32>
      memref.dealloc %tile : memref<128x128xf32>
    }
    return
  }
}
