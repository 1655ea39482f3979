// RUN: kiln-opt %s --pass-pipeline='builtin.module(gpu.module(gpu.func(kiln-hoist-static-allocas)))' | FileCheck %s

// Static stack buffers inside the bounds guard, a loop and an alloca_scope
// move to the kernel's entry block; a dynamically sized one stays.
// CHECK-LABEL: gpu.func @kernel
// CHECK-NEXT: memref.alloca() : memref<2xf32>
// CHECK-NEXT: memref.alloca() : memref<4xf32>
// CHECK-NEXT: memref.alloca() {alignment = 64 : i64} : memref<4x4xf32>
// CHECK: scf.if
// CHECK: scf.for
// CHECK-NEXT: memref.store
// CHECK: memref.alloca_scope
// CHECK-NEXT: memref.store
// CHECK: memref.alloca(%{{.+}}) : memref<?xf32>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @kernel(%out: memref<16xf32>, %n: index, %guard: i1) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %zero = arith.constant 0.0 : f32
      scf.if %guard {
        %tile = memref.alloca() {alignment = 64 : i64} : memref<4x4xf32>
        scf.for %i = %c0 to %c4 step %c1 {
          %row = memref.alloca() : memref<4xf32>
          memref.store %zero, %row[%i] : memref<4xf32>
          memref.store %zero, %tile[%i, %i] : memref<4x4xf32>
        }
        memref.alloca_scope {
          %scoped = memref.alloca() : memref<2xf32>
          memref.store %zero, %scoped[%c0] : memref<2xf32>
        }
        %dyn = memref.alloca(%n) : memref<?xf32>
        memref.store %zero, %dyn[%c0] : memref<?xf32>
      }
      gpu.return
    }
  }
}
