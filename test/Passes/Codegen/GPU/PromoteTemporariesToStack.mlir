// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-promote-temporaries-to-stack{max-bytes=1024}))' | FileCheck %s

// A small static temporary goes on the stack and its dealloc disappears.
// CHECK-LABEL: func.func @small
// CHECK: memref.alloca() {alignment = 64 : i64} : memref<16xf32>
// CHECK-NOT: memref.alloc(
// CHECK-NOT: memref.dealloc
func.func @small(%out: memref<16xf32>) {
  %tmp = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %tmp, %out : memref<16xf32> to memref<16xf32>
  memref.dealloc %tmp : memref<16xf32>
  return
}

// -----

// Larger than max-bytes, or dynamically sized: left alone.
// CHECK-LABEL: func.func @large
// CHECK: memref.alloc() : memref<1024xf32>
// CHECK: memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK-NOT: memref.alloca
func.func @large(%n: index) {
  %big = memref.alloc() : memref<1024xf32>
  %dyn = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %big : memref<1024xf32>
  memref.dealloc %dyn : memref<?xf32>
  return
}
