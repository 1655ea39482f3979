// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-distribute-rows-to-lanes))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-distribute-rows-to-lanes{row-registers=8 max-row-threads=32}))' | FileCheck %s --check-prefix=LOOP

// passes/Codegen/GPU/WholeTensorRow.cpp, the first step of
// kiln-distribute-rows-to-lanes: a kernel without a forall that reduces
// whole tensors becomes one row.

// A kernel reducing a whole tensor (ReduceMean over every axis, keepdims)
// has no forall: tiling found no parallel loop. Its reduction's loops merge
// into one over a 1-D view of the input, every op moves into a forall of
// one iteration, and that row of 6000 elements gets a block of 256 threads
// (24 positions each, the last ones guarded). The 0-d and unit ops (the
// division, the copy into the [1, 1, 1] result) run in every thread.
// CHECK-LABEL: func.func @mean_all
// CHECK-SAME: kiln.cooperative
// CHECK-SAME: kiln.lanes = 256
// CHECK: scf.forall (%{{.+}}) in (1)
// CHECK: gpu.thread_id x
// CHECK: memref.collapse_shape %arg0 {{\[}}[0, 1, 2]] : memref<3x40x50xf32> into memref<6000xf32>
// CHECK: gpu.shuffle xor
// CHECK: gpu.barrier
// CHECK: arith.divf
// LOOP-LABEL: func.func @mean_all
// LOOP: scf.forall (%{{.+}}) in (1)
// LOOP: scf.for
#all3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#none3 = affine_map<(d0, d1, d2) -> ()>
#scalar = affine_map<() -> ()>
func.func @mean_all(%arg0: memref<3x40x50xf32>, %arg1: memref<1x1x1xf32>) attributes {kiln.kernel} {
  %n = arith.constant 6.000000e+03 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %sum = memref.alloca() : memref<f32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<f32>)
  linalg.generic {indexing_maps = [#all3, #none3], iterator_types = ["reduction", "reduction", "reduction"]} ins(%arg0 : memref<3x40x50xf32>) outs(%sum : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  %mean = memref.alloca() : memref<f32>
  linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []} ins(%sum : memref<f32>) outs(%mean : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.divf %in, %n : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#none3, #all3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mean : memref<f32>) outs(%arg1 : memref<1x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A reduction with a long parallel loop beside the long reduction loops
// (a column sum) is not a whole-tensor row: left alone.
// CHECK-LABEL: func.func @column_sum
// CHECK-NOT: scf.forall
// CHECK-NOT: gpu.
#cols_in = affine_map<(d0, d1) -> (d0, d1)>
#cols_out = affine_map<(d0, d1) -> (d1)>
func.func @column_sum(%arg0: memref<512x8xf32>, %arg1: memref<8xf32>) attributes {kiln.kernel} {
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%arg1 : memref<8xf32>)
  linalg.generic {indexing_maps = [#cols_in, #cols_out], iterator_types = ["reduction", "parallel"]} ins(%arg0 : memref<512x8xf32>) outs(%arg1 : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}
