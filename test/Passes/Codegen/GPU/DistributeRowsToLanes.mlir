// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-distribute-rows-to-lanes))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-distribute-rows-to-lanes{lanes=64}))' | FileCheck %s --check-prefix=WAVE64
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-distribute-rows-to-lanes{row-registers=8 max-row-threads=32}))' | FileCheck %s --check-prefix=LOOP

// A forall iteration per row that reduces the row (x - max(x)). The row of
// 1000 fits a warp's registers (32 per lane): lane l takes elements
// l, l + 32, ..., l + 992 as straight-line code, the last one only where
// it is inside the row. The max is folded per lane, combined by five xor
// shuffles and merged into the accumulator's old value, read before the
// lanes meet. The subtraction reuses the loaded elements: the row is read
// from memory once. The kernel is marked for a warp per iteration.
// CHECK-LABEL: func.func @sub_row_max
// CHECK-SAME: kiln.lanes = 32 : i64
// CHECK-NOT: kiln.cooperative
// CHECK: scf.forall (%[[ROW:.+]]) in (64)
// CHECK: %[[LANE:.+]] = gpu.lane_id
// CHECK: %[[J0:.+]] = arith.addi %[[LANE]], %c0
// CHECK: %[[X0:.+]] = memref.load %[[XS:.+]][%c0{{.*}}, %[[J0]]]
// CHECK: %[[M0:.+]] = arith.maximumf %[[X0]], %cst
// CHECK: %[[J1:.+]] = arith.addi %[[LANE]], %c32
// CHECK: %[[X1:.+]] = memref.load %[[XS]][%c0{{.*}}, %[[J1]]]
// CHECK: arith.maximumf %[[X1]], %[[M0]]
// CHECK: %[[J31:.+]] = arith.addi %[[LANE]], %c992
// CHECK: %[[IN:.+]] = arith.cmpi ult, %[[J31]], %c1000
// CHECK: %[[PARTIAL:.+]] = scf.if %[[IN]] -> (f32) {
// CHECK:   memref.load %[[XS]][%c0{{.*}}, %[[J31]]]
// CHECK: } else {
// CHECK: %[[OLD:.+]] = memref.load %[[MAX:.+]][%c0{{[_0-9]*}}] : memref<1xf32>
// CHECK: gpu.shuffle  xor %[[PARTIAL]], %c16{{.*}}, %c32
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: %[[TOTAL:.+]] = arith.maximumf %{{.+}}, %[[OLD]]
// CHECK: memref.store %[[TOTAL]], %[[MAX]][%c0
// CHECK-NOT: memref.load
// CHECK: %[[D0:.+]] = arith.subf %[[X0]], %[[TOTAL]]
// CHECK: memref.store %[[D0]], %[[YS:.+]][%c0{{.*}}, %{{.+}}]
// CHECK-NOT: memref.load
// CHECK: arith.subf %[[X1]], %[[TOTAL]]
// CHECK: scf.if
// CHECK:   memref.load %[[XS]]
// CHECK:   arith.subf
// CHECK:   memref.store
// CHECK-NOT: linalg.generic
// A CDNA wavefront: 64 lanes, 16 elements each, six shuffles.
// WAVE64-LABEL: func.func @sub_row_max
// WAVE64-SAME: kiln.lanes = 64 : i64
// WAVE64: %[[LANE:.+]] = gpu.lane_id
// WAVE64: %[[J15:.+]] = arith.addi %[[LANE]], %c960
// WAVE64: arith.cmpi ult, %[[J15]], %c1000
// WAVE64-COUNT-6: gpu.shuffle  xor %{{.+}}, %{{.+}}, %c64
// WAVE64-NOT: gpu.shuffle
// Rows that do not fit the registers a thread may give them: each op a
// loop in which lane l takes elements l, l + 32, ...
// LOOP-LABEL: func.func @sub_row_max
// LOOP-SAME: kiln.lanes = 32 : i64
// LOOP: %[[LANE:.+]] = gpu.lane_id
// LOOP: %[[PARTIAL:.+]] = scf.for %[[J:.+]] = %[[LANE]] to %c1000 step %c32 iter_args(%[[ACC:.+]] = %cst{{.*}}) -> (f32)
// LOOP:   memref.load %{{.+}}[%c0{{.*}}, %[[J]]]
// LOOP:   arith.maximumf %{{.+}}, %[[ACC]]
// LOOP-COUNT-5: gpu.shuffle  xor
// LOOP: memref.store %{{.+}}, %[[MAX:.+]][%c0
// LOOP: scf.for %[[K:.+]] = %[[LANE]] to %c1000{{.*}} step %c32{{.*}} {
// LOOP:   memref.load
// LOOP:   arith.subf
// LOOP:   memref.store %{{.+}}, %{{.+}}[%c0{{.*}}, %[[K]]]
// LOOP-NOT: linalg.generic
// LOOP: return
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

// -----

// A softmax-like kernel over rows of 4096: a warp would hold 128 elements
// per lane, so the row gets a block of 128 threads (32 each), marked
// cooperative. Runs of 4 (4t + 512k + i) tile the row exactly. Each warp's
// total goes to workgroup memory from its first lane; after a barrier
// every thread combines the four totals. The exp-sum reads no element
// again.
// CHECK-LABEL: func.func @long_rows
// CHECK-SAME: kiln.cooperative
// CHECK-SAME: kiln.lanes = 128 : i64
// CHECK: %[[T:.+]] = gpu.thread_id  x
// CHECK: %[[START:.+]] = arith.muli %[[T]], %c4
// CHECK: memref.load %[[XS:.+]][%c0{{.*}}, %{{.+}}]
// CHECK: %[[J1:.+]] = arith.addi %[[START]], %c1
// CHECK: memref.load %[[XS]][%c0{{.*}}, %[[J1]]]
// CHECK: %[[J4:.+]] = arith.addi %[[START]], %c512
// CHECK: memref.load %[[XS]][%c0{{.*}}, %[[J4]]]
// CHECK: arith.addi %[[START]], %c3587
// CHECK-NOT: scf.if %{{.+}} -> (f32)
// CHECK: %[[OLD:.+]] = memref.load %{{.+}}[%c0{{[_0-9]*}}] : memref<1xf32>
// CHECK-COUNT-5: gpu.shuffle  xor %{{.+}}, %{{.+}}, %c32
// CHECK: %[[TOTALS:.+]] = memref.alloc() : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK: %[[LANE:.+]] = arith.remui %[[T]], %c32
// CHECK: %[[WARP:.+]] = arith.divui %[[T]], %c32
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK:   memref.store %{{.+}}, %[[TOTALS]][%[[WARP]]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[TOTALS]][%c0
// CHECK: memref.load %[[TOTALS]][%c1
// CHECK: memref.load %[[TOTALS]][%c2
// CHECK: %[[W3:.+]] = memref.load %[[TOTALS]][%c3
// CHECK: %[[ALL:.+]] = arith.maximumf %{{.+}}, %[[W3]]
// CHECK: arith.maximumf %[[ALL]], %[[OLD]]
// CHECK-NOT: memref.load %[[XS]]
// CHECK: math.exp
// CHECK: gpu.barrier
// CHECK-NOT: linalg.generic
// CHECK: return
// Two 64-lane wavefronts on AMD.
// WAVE64-LABEL: func.func @long_rows
// WAVE64-SAME: kiln.lanes = 128 : i64
// WAVE64: memref.alloc() : memref<2xf32, #gpu.address_space<workgroup>>
// Capped at a warp, the same row is a loop per op.
// LOOP-LABEL: func.func @long_rows
// LOOP-NOT: kiln.cooperative
// LOOP: gpu.lane_id
// LOOP: scf.for %{{.+}} = %{{.+}} to %c4096 step %c32
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @long_rows(%x: memref<8x4096xf32>, %s: memref<8xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (8) {
    %xs = memref.subview %x[%i, 0] [1, 4096] [1, 1] : memref<8x4096xf32> to memref<1x4096xf32, strided<[4096, 1], offset: ?>>
    %ss = memref.subview %s[%i] [1] [1] : memref<8xf32> to memref<1xf32, strided<[1], offset: ?>>
    %max = memref.alloca() : memref<1xf32>
    linalg.fill ins(%ninf : f32) outs(%max : memref<1xf32>)
    linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%xs : memref<1x4096xf32, strided<[4096, 1], offset: ?>>) outs(%max : memref<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
    linalg.fill ins(%zero : f32) outs(%ss : memref<1xf32, strided<[1], offset: ?>>)
    linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%xs, %max : memref<1x4096xf32, strided<[4096, 1], offset: ?>>, memref<1xf32>) outs(%ss : memref<1xf32, strided<[1], offset: ?>>) {
    ^bb0(%in: f32, %m: f32, %acc: f32):
      %d = arith.subf %in, %m : f32
      %e = math.exp %d : f32
      %a = arith.addf %e, %acc : f32
      linalg.yield %a : f32
    }
  }
  return
}

// -----

// A row temporary (here exp(x) in a private buffer) that one op writes and
// the next reads: the reader takes the written values; nothing is loaded
// from the temporary. A unit op (the fills) is every thread's own and makes
// what it writes unknown: after the second fill, the second sum's old
// value is loaded again, not taken from the first sum's store.
// CHECK-LABEL: func.func @row_temporary
// CHECK-SAME: kiln.lanes = 32 : i64
// CHECK: %[[X0:.+]] = memref.load %[[XS:.+]][%c0
// CHECK: %[[E0:.+]] = math.exp %[[X0]]
// CHECK: memref.store %[[E0]], %[[TMP:.+]][%c0
// CHECK-COUNT-3: math.exp
// CHECK: linalg.fill
// CHECK-NOT: memref.load %[[TMP]]
// CHECK: arith.addf %[[E0]], %cst
// CHECK: memref.load %[[SS:.+]][%c0{{[_0-9]*}}] : memref<1xf32, strided
// CHECK-COUNT-5: gpu.shuffle
// CHECK: memref.store %{{.+}}, %[[SS]]
// CHECK: linalg.fill
// CHECK-NOT: memref.load %[[TMP]]
// CHECK: memref.load %[[SS]]
// CHECK-COUNT-5: gpu.shuffle
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
func.func @row_temporary(%x: memref<16x128xf32>, %s: memref<16xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (16) {
    %xs = memref.subview %x[%i, 0] [1, 128] [1, 1] : memref<16x128xf32> to memref<1x128xf32, strided<[128, 1], offset: ?>>
    %ss = memref.subview %s[%i] [1] [1] : memref<16xf32> to memref<1xf32, strided<[1], offset: ?>>
    %tmp = memref.alloca() : memref<1x128xf32>
    linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%xs : memref<1x128xf32, strided<[128, 1], offset: ?>>) outs(%tmp : memref<1x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %e = math.exp %in : f32
      linalg.yield %e : f32
    }
    linalg.fill ins(%zero : f32) outs(%ss : memref<1xf32, strided<[1], offset: ?>>)
    linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]} ins(%tmp : memref<1x128xf32>) outs(%ss : memref<1xf32, strided<[1], offset: ?>>) {
    ^bb0(%in: f32, %acc: f32):
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
    linalg.fill ins(%zero : f32) outs(%ss : memref<1xf32, strided<[1], offset: ?>>)
    linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]} ins(%tmp : memref<1x128xf32>) outs(%ss : memref<1xf32, strided<[1], offset: ?>>) {
    ^bb0(%in: f32, %acc: f32):
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  }
  return
}

// -----

// Ops over rows of different lengths (a sum over 64, a broadcast add over
// 128): a thread would read elements another wrote, so a warp and a loop
// per op, each lane keeping to its own elements.
// CHECK-LABEL: func.func @mixed_rows
// CHECK-SAME: kiln.lanes = 32 : i64
// CHECK: scf.for %{{.+}} = %{{.+}} to %c64 step %c32
// CHECK: scf.for %{{.+}} = %{{.+}} to %c128 step %c32
#a3 = affine_map<(d0, d1) -> (d0, d1)>
#r3 = affine_map<(d0, d1) -> (d0)>
func.func @mixed_rows(%x: memref<16x64xf32>, %z: memref<16x128xf32>, %y: memref<16x128xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (16) {
    %xs = memref.subview %x[%i, 0] [1, 64] [1, 1] : memref<16x64xf32> to memref<1x64xf32, strided<[64, 1], offset: ?>>
    %zs = memref.subview %z[%i, 0] [1, 128] [1, 1] : memref<16x128xf32> to memref<1x128xf32, strided<[128, 1], offset: ?>>
    %ys = memref.subview %y[%i, 0] [1, 128] [1, 1] : memref<16x128xf32> to memref<1x128xf32, strided<[128, 1], offset: ?>>
    %sum = memref.alloca() : memref<1xf32>
    linalg.fill ins(%zero : f32) outs(%sum : memref<1xf32>)
    linalg.generic {indexing_maps = [#a3, #r3], iterator_types = ["parallel", "reduction"]} ins(%xs : memref<1x64xf32, strided<[64, 1], offset: ?>>) outs(%sum : memref<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
    linalg.generic {indexing_maps = [#a3, #r3, #a3], iterator_types = ["parallel", "parallel"]} ins(%zs, %sum : memref<1x128xf32, strided<[128, 1], offset: ?>>, memref<1xf32>) outs(%ys : memref<1x128xf32, strided<[128, 1], offset: ?>>) {
    ^bb0(%in: f32, %t: f32, %out: f32):
      %a = arith.addf %in, %t : f32
      linalg.yield %a : f32
    }
  }
  return
}

// -----

// Ops of row-invariant values (here sqrt(var + eps) of LayerNorm) are
// computed once per thread, not once per element; so is the reciprocal of
// a row-invariant divisor, each element then multiplied by it.
// CHECK-LABEL: func.func @row_invariant
// CHECK: math.sqrt
// CHECK-NOT: math.sqrt
// CHECK: %[[R:.+]] = arith.divf %cst{{.*}}, %{{.+}} : f32
// CHECK-NOT: arith.divf
// CHECK-COUNT-4: arith.mulf %{{.+}}, %[[R]] : f32
// CHECK-NOT: arith.divf
#a4 = affine_map<(d0, d1) -> (d0, d1)>
#r4 = affine_map<(d0, d1) -> (d0)>
func.func @row_invariant(%x: memref<16x128xf32>, %v: memref<16xf32>, %y: memref<16x128xf32>, %id: index, %count: index) attributes {kiln.kernel} {
  %eps = arith.constant 1.0e-5 : f32
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (16) {
    %xs = memref.subview %x[%i, 0] [1, 128] [1, 1] : memref<16x128xf32> to memref<1x128xf32, strided<[128, 1], offset: ?>>
    %vs = memref.subview %v[%i] [1] [1] : memref<16xf32> to memref<1xf32, strided<[1], offset: ?>>
    %ys = memref.subview %y[%i, 0] [1, 128] [1, 1] : memref<16x128xf32> to memref<1x128xf32, strided<[128, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%vs : memref<1xf32, strided<[1], offset: ?>>)
    linalg.generic {indexing_maps = [#a4, #r4], iterator_types = ["parallel", "reduction"]} ins(%xs : memref<1x128xf32, strided<[128, 1], offset: ?>>) outs(%vs : memref<1xf32, strided<[1], offset: ?>>) {
    ^bb0(%in: f32, %acc: f32):
      %sq = arith.mulf %in, %in : f32
      %a = arith.addf %sq, %acc : f32
      linalg.yield %a : f32
    }
    linalg.generic {indexing_maps = [#a4, #r4, #a4], iterator_types = ["parallel", "parallel"]} ins(%xs, %vs : memref<1x128xf32, strided<[128, 1], offset: ?>>, memref<1xf32, strided<[1], offset: ?>>) outs(%ys : memref<1x128xf32, strided<[128, 1], offset: ?>>) {
    ^bb0(%in: f32, %var: f32, %out: f32):
      %e = arith.addf %var, %eps : f32
      %r = math.sqrt %e : f32
      %d = arith.divf %in, %r : f32
      linalg.yield %d : f32
    }
  }
  return
}
