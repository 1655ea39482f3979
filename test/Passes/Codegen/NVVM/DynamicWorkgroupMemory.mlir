// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-map-kernels-to-gpu{workgroup-memory-bytes=232448},kiln-dynamic-workgroup-memory)' | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-map-kernels-to-gpu{workgroup-memory-bytes=232448},kiln-dynamic-workgroup-memory,gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1},kiln-extern-dynamic-shared-memory))' | FileCheck %s --check-prefix=NVVM

// Two 32 KiB stage buffers (64 KiB) are more than a block may declare
// statically: they become views into the kernel's dynamic shared memory,
// each at a 128-byte aligned offset, and the host declaration records the
// bytes the launch must reserve. A kernel within 48 KiB keeps its static
// workgroup attributions.

// CHECK-LABEL: func.func private @big_stages
// CHECK-SAME: kiln.dynamic_workgroup_memory = 65664 : i64
// CHECK-SAME: kiln.workgroup_memory = 65568 : i64
// CHECK-LABEL: func.func private @small_stages
// CHECK-NOT: kiln.dynamic_workgroup_memory
// CHECK-SAME: kiln.workgroup_memory = 32768 : i64
// CHECK: gpu.module @kiln_kernels
// CHECK: gpu.func @big_stages(%{{.*}}: memref<2x128xf32>{{.*}}) kernel
// CHECK-NOT: workgroup(
// CHECK: %[[MEMORY:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK: memref.view %[[MEMORY]][%[[ZERO]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8200xf32, #gpu.address_space<workgroup>>
// CHECK: %[[SECOND:.*]] = arith.constant 32896 : index
// CHECK: memref.view %[[MEMORY]][%[[SECOND]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8192xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.func @small_stages(%{{.*}}: memref<2x128xf32>{{.*}}) workgroup(%{{.*}} : memref<4096xf32, #gpu.address_space<workgroup>> {{.*}}, %{{.*}} : memref<4096xf32, #gpu.address_space<workgroup>> {{.*}}) kernel
// CHECK-NOT: gpu.dynamic_shared_memory

// NVVM: llvm.mlir.global external @__dynamic_shmem__{{[0-9]*}}() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// NVVM: llvm.func @big_stages
// NVVM: llvm.mlir.addressof @__dynamic_shmem__

module @kernels {
  func.func @big_stages(%out: memref<2x128xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.lanes = 128 : i64, kiln.cooperative} {
    scf.forall (%i) in (2) {
      %a = memref.alloc() {alignment = 16 : i64} : memref<8200xf32, #gpu.address_space<workgroup>>
      %b = memref.alloc() {alignment = 16 : i64} : memref<8192xf32, #gpu.address_space<workgroup>>
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %a[%t] : memref<8200xf32, #gpu.address_space<workgroup>>
      memref.store %one, %b[%t] : memref<8192xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %v = memref.load %a[%t] : memref<8200xf32, #gpu.address_space<workgroup>>
      %w = memref.load %b[%t] : memref<8192xf32, #gpu.address_space<workgroup>>
      %s = arith.addf %v, %w : f32
      memref.store %s, %out[%i, %t] : memref<2x128xf32>
    }
    return
  }
  func.func @small_stages(%out: memref<2x128xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.lanes = 128 : i64, kiln.cooperative} {
    scf.forall (%i) in (2) {
      %a = memref.alloc() {alignment = 16 : i64} : memref<4096xf32, #gpu.address_space<workgroup>>
      %b = memref.alloc() {alignment = 16 : i64} : memref<4096xf32, #gpu.address_space<workgroup>>
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %a[%t] : memref<4096xf32, #gpu.address_space<workgroup>>
      memref.store %one, %b[%t] : memref<4096xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %v = memref.load %a[%t] : memref<4096xf32, #gpu.address_space<workgroup>>
      %w = memref.load %b[%t] : memref<4096xf32, #gpu.address_space<workgroup>>
      %s = arith.addf %v, %w : f32
      memref.store %s, %out[%i, %t] : memref<2x128xf32>
    }
    return
  }
}
