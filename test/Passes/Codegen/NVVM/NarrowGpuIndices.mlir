// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-narrow-gpu-indices)' | FileCheck %s

// Buffers of a few MiB, a view of dynamic size inside one, workgroup and
// dynamic shared memory, 2^20 threads: every index fits 32 bits.
// Its index arithmetic is marked as not overflowing 32 signed bits.
// CHECK-LABEL: module @fits
// CHECK: gpu.module @kernels attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>}
// CHECK: arith.addi %{{.+}}, %{{.+}} overflow<nsw> : index
module @fits {
  func.func private @k(memref<1024x1024xf32>, memref<1024xf32>) attributes {kiln.workgroups = 4096 : i64, kiln.threads = 256 : i64}
  gpu.module @kernels {
    gpu.func @k(%a: memref<1024x1024xf32>, %b: memref<1024xf32>) workgroup(%w : memref<2x64x16xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %n = gpu.block_id x
      %c4 = arith.constant 4 : index
      %t4 = arith.addi %t, %c4 : index
      %d = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
      %row = memref.subview %a[%n, 0] [1, %t] [1, 1] : memref<1024x1024xf32> to memref<?xf32, strided<[1], offset: ?>>
      %x = memref.load %row[%c4] : memref<?xf32, strided<[1], offset: ?>>
      memref.store %x, %b[%t4] : memref<1024xf32>
      gpu.return
    }
  }
}

// -----

// An argument of 2^31 float32 elements (8 GiB): its offsets need 64 bits.
// So does a stack buffer of 2^29 float32 (2 GiB) in the next case.
// CHECK-LABEL: module @large_buffer
// CHECK-NOT: dlti.dl_spec
module @large_buffer {
  func.func private @k(memref<2x1073741824xf32>) attributes {kiln.workgroups = 1 : i64, kiln.threads = 32 : i64}
  gpu.module @kernels {
    gpu.func @k(%a: memref<2x1073741824xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: module @large_allocation
// CHECK-NOT: dlti.dl_spec
module @large_allocation {
  func.func private @k(memref<16xf32>) attributes {kiln.workgroups = 1 : i64, kiln.threads = 32 : i64}
  gpu.module @kernels {
    gpu.func @k(%a: memref<16xf32>) kernel {
      %s = memref.alloca() : memref<536870912xf32>
      gpu.return
    }
  }
}

// -----

// 2^23 blocks of 256 threads: a thread's linear id needs 32 unsigned bits.
// CHECK-LABEL: module @large_launch
// CHECK-NOT: dlti.dl_spec
module @large_launch {
  func.func private @k(memref<16xf32>) attributes {kiln.workgroups = 8388608 : i64, kiln.threads = 256 : i64}
  gpu.module @kernels {
    gpu.func @k(%a: memref<16xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// An index constant past 2^31.
// CHECK-LABEL: module @large_constant
// CHECK-NOT: dlti.dl_spec
module @large_constant {
  func.func private @k(memref<16xf32>) attributes {kiln.workgroups = 1 : i64, kiln.threads = 32 : i64}
  gpu.module @kernels {
    gpu.func @k(%a: memref<16xf32>) kernel {
      %big = arith.constant 4294967296 : index
      %t = gpu.thread_id x
      %i = arith.remui %big, %t : index
      %x = memref.load %a[%i] : memref<16xf32>
      memref.store %x, %a[%t] : memref<16xf32>
      gpu.return
    }
  }
}

// -----

// A kernel without its host declaration: no launch shape to bound.
// CHECK-LABEL: module @no_declaration
// CHECK-NOT: dlti.dl_spec
module @no_declaration {
  gpu.module @kernels {
    gpu.func @k(%a: memref<16xf32>) kernel {
      gpu.return
    }
  }
}
