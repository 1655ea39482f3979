// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-map-kernels-to-gpu{workgroup-memory-bytes=232448},kiln-dynamic-workgroup-memory,kiln-add-gpu-kernel-signatures)' | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline='builtin.module(kiln-map-kernels-to-gpu{workgroup-memory-bytes=232448},kiln-dynamic-workgroup-memory,kiln-add-gpu-kernel-signatures,gpu.module(convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}))' | FileCheck %s --check-prefix=NVVM

// Each kernel's signature: its binding count, blocks, threads per block,
// dynamic shared bytes, then the bytes it reaches in each binding. A
// kernel whose shared buffers moved to dynamic shared memory records their
// bytes; an empty buffer (passed to the kernel as one element) reaches 0.

// CHECK: gpu.module @kiln_kernels
// CHECK: llvm.mlir.global external constant @big_stages__signature(dense<[1, 2, 128, 65664, 1024]> : tensor<5xi64>) {addr_space = 1 : i32, alignment = 8 : i64} : !llvm.array<5 x i64>
// CHECK: gpu.func @big_stages
// CHECK: llvm.mlir.global external constant @copy_with_empty__signature(dense<[3, 2, 32, 0, 256, 0, 256]> : tensor<7xi64>) {addr_space = 1 : i32, alignment = 8 : i64} : !llvm.array<7 x i64>
// CHECK: gpu.func @copy_with_empty

// The globals survive the lowering to NVVM beside the kernels.
// NVVM: llvm.mlir.global external constant @big_stages__signature
// NVVM: llvm.func @big_stages
// NVVM: llvm.mlir.global external constant @copy_with_empty__signature
// NVVM: llvm.func @copy_with_empty

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
  func.func @copy_with_empty(%in: memref<64xf32>, %empty: memref<0x4xf32>, %out: memref<64xf32>, %id: index, %count: index) attributes {kiln.kernel} {
    scf.forall (%i) in (64) {
      %v = memref.load %in[%i] : memref<64xf32>
      memref.store %v, %out[%i] : memref<64xf32>
    }
    return
  }
}
