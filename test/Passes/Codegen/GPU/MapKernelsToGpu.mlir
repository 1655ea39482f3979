// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-map-kernels-to-gpu)' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(kiln-map-kernels-to-gpu{min-blocks=1})' | FileCheck %s --check-prefix=ONE

// A kernel whose only side effect is its forall: one thread per iteration.
// 4x28 = 112 iterations: with blocks of 256 threads (rounded down to
// warps) they would be one block on one SM; blocks shrink, down to a warp,
// while the kernel has fewer than 132 of them: 4 blocks of 32. Thread ids
// past 112 skip the body. The CPU workgroup arguments go away and the host
// keeps a declaration with the launch shape.
// CHECK-LABEL: module @kernels attributes {gpu.container_module}
// CHECK: func.func private @mapped(memref<4x28xf32>, memref<4x28xf32>, index, index)
// CHECK-SAME: kiln.threads = 32 : i64, kiln.workgroups = 4 : i64
// CHECK: gpu.module @kiln_kernels
// CHECK: gpu.func @mapped(%[[IN:.+]]: memref<4x28xf32> {llvm.align = 64 : i64, llvm.noalias}, %[[OUT:.+]]: memref<4x28xf32> {llvm.align = 64 : i64, llvm.noalias}) kernel
// CHECK-SAME: known_block_size = array<i32: 32, 1, 1>
// With min-blocks=1, the fewest blocks: one of 128 threads.
// ONE: func.func private @mapped(memref<4x28xf32>, memref<4x28xf32>, index, index)
// ONE-SAME: kiln.threads = 128 : i64, kiln.workgroups = 1 : i64
// CHECK-DAG: %[[BID:.+]] = gpu.block_id x
// CHECK-DAG: %[[TID:.+]] = gpu.thread_id x
// CHECK: %[[LINEAR:.+]] = arith.addi %{{.+}}, %[[TID]] : index
// CHECK: %[[IN_RANGE:.+]] = arith.cmpi ult, %[[LINEAR]], %c112
// CHECK: scf.if %[[IN_RANGE]] {
// CHECK:   %[[J:.+]] = arith.remui %[[LINEAR]], %c28
// CHECK:   %[[I:.+]] = arith.divui %[[LINEAR]], %c28
// CHECK:   memref.load %[[IN]][%{{.+}}, %{{.+}}]
// CHECK:   memref.store
// CHECK: gpu.return
module @kernels {
  func.func @mapped(%in: memref<4x28xf32>, %out: memref<4x28xf32>, %id: index, %count: index) attributes {kiln.kernel} {
    scf.forall (%i, %j) in (4, 28) {
      %v = memref.load %in[%i, %j] : memref<4x28xf32>
      memref.store %v, %out[%i, %j] : memref<4x28xf32>
    }
    return
  }
}

// -----

// Work outside the forall (here a write to the output) would be repeated by
// every thread: the kernel runs serially in one thread, its forall as a loop.
// CHECK-LABEL: module @kernels
// CHECK: func.func private @serial
// CHECK-SAME: kiln.threads = 1 : i64, kiln.workgroups = 1 : i64
// CHECK: gpu.func @serial
// CHECK-SAME: known_block_size = array<i32: 1, 1, 1>
// CHECK-NOT: gpu.thread_id
// CHECK: scf.for
// CHECK-NOT: scf.forall
module @kernels {
  func.func @serial(%in: memref<64xf32>, %out: memref<64xf32>, %id: index, %count: index) attributes {kiln.kernel} {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    memref.store %zero, %out[%c0] : memref<64xf32>
    scf.forall (%i) in (64) {
      %v = memref.load %in[%i] : memref<64xf32>
      memref.store %v, %out[%i] : memref<64xf32>
    }
    return
  }
}

// -----

// Constant tables move into the GPU module; a zero-element buffer is passed
// as one element (a bare pointer cannot stand for an empty memref) and seen
// through a reinterpret_cast.
// CHECK-LABEL: module @kernels
// CHECK: gpu.module @kiln_kernels
// CHECK: memref.global "private" constant @table
// CHECK: gpu.func @empty(%[[ARG:.+]]: memref<1xf32> {{{.+}}}, %{{.+}}: memref<4xf32> {{{.+}}}) kernel
// CHECK: memref.reinterpret_cast %[[ARG]] to offset: [0], sizes: [3, 0], strides: [0, 1]
// CHECK: memref.get_global @table
module @kernels {
  memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
  func.func @empty(%in: memref<3x0xf32>, %out: memref<4xf32>, %id: index, %count: index) attributes {kiln.kernel} {
    %t = memref.get_global @table : memref<4xf32>
    scf.forall (%i) in (4) {
      %v = memref.load %t[%i] : memref<4xf32>
      memref.store %v, %out[%i] : memref<4xf32>
    }
    return
  }
}

// -----

// A cooperative kernel (kiln-contract-with-matrix-cores' staged tiles): each
// forall iteration is one whole block of kiln.lanes threads, here 3
// iterations of 128 threads as 3 blocks, even though two would fit the
// default 256-thread block. Its workgroup-memory buffer becomes a workgroup
// attribution of the gpu.func: one copy per block, shared by its threads,
// aligned as the allocation asks.
// CHECK-LABEL: module @kernels
// CHECK: func.func private @cooperative
// CHECK-SAME: kiln.threads = 128 : i64, kiln.workgroup_memory = 512 : i64, kiln.workgroups = 3 : i64
// CHECK: gpu.func @cooperative(%{{.+}}: memref<3x128xf32> {{.*}}) workgroup(%[[STAGE:.+]] : memref<128xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: scf.if
// CHECK:   memref.store %{{.+}}, %[[STAGE]]
// CHECK:   gpu.barrier
// CHECK:   memref.load %[[STAGE]]
// CHECK-NOT: memref.alloc
// CHECK: gpu.return
module @kernels {
  func.func @cooperative(%out: memref<3x128xf32>, %id: index, %count: index) attributes {kiln.kernel, kiln.lanes = 128 : i64, kiln.cooperative} {
    scf.forall (%i) in (3) {
      %stage = memref.alloc() {alignment = 16 : i64} : memref<128xf32, #gpu.address_space<workgroup>>
      %t = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %stage[%t] : memref<128xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c127 = arith.constant 127 : index
      %r = arith.subi %c127, %t : index
      %v = memref.load %stage[%r] : memref<128xf32, #gpu.address_space<workgroup>>
      memref.store %v, %out[%i, %t] : memref<3x128xf32>
    }
    return
  }
}
