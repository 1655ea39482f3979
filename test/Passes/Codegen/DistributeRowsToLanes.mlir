// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-distribute-rows-to-lanes))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-distribute-rows-to-lanes{lanes=64}))' | FileCheck %s --check-prefix=WAVE64

// A forall iteration per row that reduces the row (x - max(x)): each op
// becomes a loop in which lane l takes elements l, l + 32, ...; the max is
// folded per lane, combined by five xor shuffles and merged into the
// accumulator's old value. The kernel is marked for a warp per iteration.
// CHECK-LABEL: func.func @sub_row_max
// CHECK-SAME: kiln.lanes = 32 : i64
// CHECK: scf.forall (%[[ROW:.+]]) in (64)
// CHECK: %[[LANE:.+]] = gpu.lane_id
// CHECK: %[[PARTIAL:.+]] = scf.for %[[J:.+]] = %[[LANE]] to %c1000 step %c32 iter_args(%[[ACC:.+]] = %cst{{.*}}) -> (f32)
// CHECK:   memref.load %{{.+}}[%c0{{.*}}, %[[J]]]
// CHECK:   arith.maximumf %{{.+}}, %[[ACC]]
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: memref.store %{{.+}}, %[[MAX:.+]][%c0
// CHECK: scf.for %[[K:.+]] = %[[LANE]] to %c1000{{.*}} step %c32{{.*}} {
// CHECK:   arith.subf
// CHECK:   memref.store %{{.+}}, %{{.+}}[%c0{{.*}}, %[[K]]]
// CHECK-NOT: linalg.generic
// A CDNA wavefront: 64 lanes stride the row, six shuffles combine them.
// WAVE64-LABEL: func.func @sub_row_max
// WAVE64-SAME: kiln.lanes = 64 : i64
// WAVE64: scf.for %{{.+}} = %{{.+}} to %c1000 step %c64
// WAVE64-COUNT-6: gpu.shuffle  xor %{{.+}}, %{{.+}}, %c64
// WAVE64-NOT: gpu.shuffle
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sub_row_max(%x: memref<64x1000xf32>, %y: memref<64x1000xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  scf.forall (%i) in (64) {
    %xs = memref.subview %x[%i, 0] [1, 1000] [1, 1] : memref<64x1000xf32> to memref<1x1000xf32, strided<[1000, 1], offset: ?>>
    %ys = memref.subview %y[%i, 0] [1, 1000] [1, 1] : memref<64x1000xf32> to memref<1x1000xf32, strided<[1000, 1], offset: ?>>
    %max = memref.alloca() : memref<1xf32>
    linalg.fill ins(%ninf : f32) outs(%max : memref<1xf32>)
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%xs : memref<1x1000xf32, strided<[1000, 1], offset: ?>>) outs(%max : memref<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
    linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%xs, %max : memref<1x1000xf32, strided<[1000, 1], offset: ?>>, memref<1xf32>) outs(%ys : memref<1x1000xf32, strided<[1000, 1], offset: ?>>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %r = arith.subf %in, %m : f32
      linalg.yield %r : f32
    }
  }
  return
}

// -----

// A matmul's reduction runs over K, which the second operand indexes by its
// first dim: lanes would read it at a stride. Left alone (a thread per
// output).
// CHECK-LABEL: func.func @matmul_column
// CHECK-NOT: kiln.lanes
// CHECK-NOT: gpu.lane_id
// CHECK: linalg.generic
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @matmul_column(%x: memref<64x512xf32>, %w: memref<512x64xf32>, %y: memref<64x64xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  scf.forall (%i, %j) in (64, 64) {
    %xs = memref.subview %x[%i, 0] [1, 512] [1, 1] : memref<64x512xf32> to memref<1x512xf32, strided<[512, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [512, 1] [1, 1] : memref<512x64xf32> to memref<512x1xf32, strided<[64, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [1, 1] [1, 1] : memref<64x64xf32> to memref<1x1xf32, strided<[64, 1], offset: ?>>
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<1x512xf32, strided<[512, 1], offset: ?>>, memref<512x1xf32, strided<[64, 1], offset: ?>>) outs(%ys : memref<1x1xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %in2: f32, %acc: f32):
      %p = arith.mulf %in, %in2 : f32
      %s = arith.addf %acc, %p : f32
      linalg.yield %s : f32
    }
  }
  return
}

// -----

// Short rows (here 8) are not worth a warp: left alone.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT: kiln.lanes
// CHECK: linalg.generic
#id8 = affine_map<(d0, d1) -> (d0, d1)>
#row8 = affine_map<(d0, d1) -> (d0)>
func.func @short_rows(%x: memref<64x8xf32>, %y: memref<64xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  scf.forall (%i) in (64) {
    %xs = memref.subview %x[%i, 0] [1, 8] [1, 1] : memref<64x8xf32> to memref<1x8xf32, strided<[8, 1], offset: ?>>
    %ys = memref.subview %y[%i] [1] [1] : memref<64xf32> to memref<1xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id8, #row8], iterator_types = ["parallel", "reduction"]} ins(%xs : memref<1x8xf32, strided<[8, 1], offset: ?>>) outs(%ys : memref<1xf32, strided<[1], offset: ?>>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  }
  return
}
