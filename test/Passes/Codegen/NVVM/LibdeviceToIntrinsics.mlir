// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-libdevice-to-intrinsics)' | FileCheck %s

// Calls of libdevice functions that PTX has an instruction for become LLVM
// intrinsics, and their declarations go away.
// CHECK-LABEL: llvm.func @kernel
// CHECK-NOT: __nv_floorf
// CHECK-NOT: __nv_sqrtf
// CHECK: llvm.intr.floor
// CHECK: llvm.intr.sqrt
llvm.func @__nv_floorf(f32) -> f32
llvm.func @__nv_sqrtf(f32) -> f32
llvm.func @kernel(%x: f32) -> f32 {
  %f = llvm.call @__nv_floorf(%x) : (f32) -> f32
  %s = llvm.call @__nv_sqrtf(%f) : (f32) -> f32
  llvm.return %s : f32
}

// -----

// Other libdevice functions (no single instruction) stay calls: the cuda
// target then names them as needing a toolkit.
// CHECK-LABEL: llvm.func @needs_libdevice
// CHECK: llvm.call @__nv_expf
llvm.func @__nv_expf(f32) -> f32
llvm.func @needs_libdevice(%x: f32) -> f32 {
  %e = llvm.call @__nv_expf(%x) : (f32) -> f32
  llvm.return %e : f32
}
