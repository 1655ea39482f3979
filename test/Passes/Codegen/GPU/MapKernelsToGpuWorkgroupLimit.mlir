// RUN: not kiln-opt %s --pass-pipeline='builtin.module(kiln-map-kernels-to-gpu)' 2>&1 | FileCheck %s
// RUN: not kiln-opt %s --pass-pipeline='builtin.module(kiln-map-kernels-to-gpu{workgroup-memory-bytes=60000})' 2>&1 | FileCheck %s --check-prefix=BUDGET

// Two 32 KiB workgroup buffers add up to more than a GPU block may use
// (48 KiB by default, what CUDA allows statically and the rocm target
// keeps; the cuda target passes its chips' limit): the driver would refuse
// to launch it, so the kernel is rejected here, by name.
// CHECK: error: GPU kernel too_much_shared needs 65536 bytes of workgroup memory, more than the 49152 a block may use on this target
// BUDGET: error: GPU kernel too_much_shared needs 65536 bytes of workgroup memory, more than the 60000 a block may use on this target
module @kernels {
  func.func @too_much_shared(%out: memref<2x128xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.lanes = 128 : i64, kiln.cooperative} {
    scf.forall (%i) in (2) {
      %a = memref.alloc() {alignment = 16 : i64} : memref<8192xf32, #gpu.address_space<workgroup>>
      %b = memref.alloc() {alignment = 16 : i64} : memref<8192xf32, #gpu.address_space<workgroup>>
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %a[%t] : memref<8192xf32, #gpu.address_space<workgroup>>
      memref.store %one, %b[%t] : memref<8192xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %v = memref.load %a[%t] : memref<8192xf32, #gpu.address_space<workgroup>>
      %w = memref.load %b[%t] : memref<8192xf32, #gpu.address_space<workgroup>>
      %s = arith.addf %v, %w : f32
      memref.store %s, %out[%i, %t] : memref<2x128xf32>
    }
    return
  }
}
