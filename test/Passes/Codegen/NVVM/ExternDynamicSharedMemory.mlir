// RUN: kiln-opt %s --pass-pipeline='builtin.module(gpu.module(kiln-extern-dynamic-shared-memory))' | FileCheck %s

// The zero-length shared global that gpu.dynamic_shared_memory lowers to
// becomes an external declaration (PTX `.extern .shared ... []`); sized
// shared buffers and globals in other address spaces keep their linkage.
// CHECK: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @stage() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
// CHECK: llvm.mlir.global internal @table() {addr_space = 1 : i32} : !llvm.array<0 x i8>
gpu.module @kiln_kernels {
  llvm.mlir.global internal @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @stage() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x i8>
  llvm.mlir.global internal @table() {addr_space = 1 : i32} : !llvm.array<0 x i8>
}
