// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=none},kiln-contract-with-thread-tiles))' | FileCheck %s

// A float32 matmul with a bias epilogue, one 64x64 output block per forall
// iteration: 256 threads of 4x4 outputs, numbered along N (the output's
// contiguous dim: 16 threads across). K goes in 4 stages of 16 through two
// k-major workgroup buffers per operand (64 + 4 padding columns, 16-byte
// aligned): the first stage is copied before the loop and the second
// stage's 4 + 4 elements per thread are loaded from global memory into
// registers the loop carries; each iteration loads the stage after next
// (two iterations ahead of its use), computes its stage (each k one
// vector<4xf32> load of A and one of B and 16 multiply-adds), stores the
// carried elements of the next stage into the other buffer and meets the
// others at one barrier. The fill is forwarded into the
// accumulators and the bias added in registers: each thread stores its 16
// outputs once (the fill's and the contraction's own stores are
// overwritten before anything reads them, so they are dropped).
// CHECK-LABEL: func.func @matmul_bias
// CHECK-SAME: kiln.contraction = #kiln.contraction<threads, "fma", block = [64, 64, 64], tile = [4, 4], stage_k = 16, stage_buffers = 0, groups_in_flight = 0>
// CHECK-SAME: kiln.cooperative
// CHECK-SAME: kiln.lanes = 256 : i64
// CHECK: scf.forall
// CHECK: %[[T:.+]] = gpu.thread_id x
// CHECK: arith.remui %[[T]], %c16
// CHECK: %[[A:.+]] = memref.alloc() {alignment = 16 : i64} : memref<2x16x68xf32, #gpu.address_space<workgroup>>
// CHECK: %[[B:.+]] = memref.alloc() {alignment = 16 : i64} : memref<2x16x68xf32, #gpu.address_space<workgroup>>
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<64x64xf32, strided<[64, 1], offset: ?>>, vector<4xf32>
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<64x64xf32, strided<[128, 1], offset: ?>>, vector<4xf32>
// CHECK: memref.subview %[[A]][%{{.+}}, 0, 0] [1, 16, 68] [1, 1, 1]
// CHECK-COUNT-4: memref.store
// CHECK: memref.subview %[[B]][%{{.+}}, 0, 0] [1, 16, 68] [1, 1, 1]
// CHECK: vector.store {{.*}} {alignment = 16 : i64} : memref<16x68xf32, strided<[68, 1], offset: ?>, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: %[[NEXTA:.+]] = vector.load {{.*}} : memref<64x64xf32, strided<[64, 1], offset: ?>>, vector<4xf32>
// CHECK: %[[NEXTB:.+]] = vector.load {{.*}} : memref<64x64xf32, strided<[128, 1], offset: ?>>, vector<4xf32>
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %{{.+}} = %{{.+}} to %c4{{.*}} step %c1{{.*}} iter_args({{.*}}, %[[CA:.+]] = %[[NEXTA]], %[[CB:.+]] = %[[NEXTB]]) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, vector<4xf32>, vector<4xf32>)
// CHECK: %[[AHEAD:.+]] = arith.addi %{{.+}}, %c2
// CHECK: %[[LIVE:.+]] = arith.cmpi ult, %[[AHEAD]], %c4
// CHECK: %[[AHEADLOADS:.+]]:2 = scf.if %[[LIVE]] -> (vector<4xf32>, vector<4xf32>) {
// CHECK: %[[LA:.+]] = vector.load {{.*}} : memref<64x64xf32, strided<[64, 1], offset: ?>>, vector<4xf32>
// CHECK: %[[LB:.+]] = vector.load {{.*}} : memref<64x64xf32, strided<[128, 1], offset: ?>>, vector<4xf32>
// CHECK-NEXT: scf.yield %[[LA]], %[[LB]]
// Past the last stage, the values carried in (no zeros to set every
// iteration; they are stored into a buffer nobody reads again):
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[CA]], %[[CB]] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT: }
// CHECK-NOT: gpu.barrier
// CHECK: %[[SA:.+]] = memref.subview %[[A]]
// CHECK: %[[SB:.+]] = memref.subview %[[B]]
// CHECK: vector.load %[[SA]][%c0{{.*}}, %{{.+}}] {alignment = 16 : i64} : memref<16x68xf32, strided<[68, 1], offset: ?>, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: vector.load %[[SB]][%c0{{.*}}, %{{.+}}] {alignment = 16 : i64} : memref<16x68xf32, strided<[68, 1], offset: ?>, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-16: arith.addf %{{.+}}, %{{.+}} fastmath<contract> : f32
// CHECK-NOT: gpu.barrier
// CHECK: memref.subview %[[A]]
// CHECK: vector.extract %[[CA]][0]
// CHECK-COUNT-4: memref.store
// CHECK: memref.subview %[[B]]
// CHECK: vector.store %[[CB]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.yield {{.*}}, %[[AHEADLOADS]]#0, %[[AHEADLOADS]]#1 :
// CHECK-NOT: linalg.
// CHECK-NOT: memref.store
// CHECK-COUNT-16: memref.store %{{.+}}, %{{.+}} : memref<64x64xf32, strided<[128, 1], offset: ?>>
// CHECK-NOT: memref.store
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @matmul_bias(%x: memref<128x64xf32>, %w: memref<64x128xf32>, %bias: memref<128xf32>, %y: memref<128x128xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (128, 128) step (64, 64) {
    %xs = memref.subview %x[%i, 0] [64, 64] [1, 1] : memref<128x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 64] [1, 1] : memref<64x128xf32> to memref<64x64xf32, strided<[128, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [64, 64] [1, 1] : memref<128x128xf32> to memref<64x64xf32, strided<[128, 1], offset: ?>>
    %bs = memref.subview %bias[%j] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<64x64xf32, strided<[128, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<64x64xf32, strided<[64, 1], offset: ?>>, memref<64x64xf32, strided<[128, 1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[128, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%ys, %bs : memref<64x64xf32, strided<[128, 1], offset: ?>>, memref<64xf32, strided<[1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[128, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.addf %in, %in_0 : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// A 3x3 convolution at stride 2 whose block is a 14-pixel output row by 24
// filters: 2x4 outputs per thread, 42 threads numbered along the output
// width (the NCHW output's contiguous dim: 7 across). Six channels, which
// 4 does not divide: one stage of all 6 (stageDepth), 9 steps (the 3x3
// window positions; stages of 2 would make 27 of a third the work each);
// the filter slice of a stage (6 x 24 = 144 elements) does not divide
// among 42 threads, so its last share is guarded; the input's (6 x 14 =
// 84) does.
// CHECK-LABEL: func.func @conv_rows
// CHECK-SAME: kiln.contraction = #kiln.contraction<threads, "fma", block = [14, 24, 6], tile = [2, 4], stage_k = 6
// CHECK-SAME: kiln.lanes = 42 : i64
// CHECK: %[[T:.+]] = gpu.thread_id x
// CHECK: arith.remui %[[T]], %c7
// CHECK: memref.alloc() {alignment = 16 : i64} : memref<2x6x18xf32, #gpu.address_space<workgroup>>
// CHECK: memref.alloc() {alignment = 16 : i64} : memref<2x6x28xf32, #gpu.address_space<workgroup>>
// A stage's loads index views at its origin (its channels' first, its
// window position), with what depends on the thread alone:
// CHECK: %[[XO:.+]] = memref.subview %{{.+}}[0, %{{.+}}, %{{.+}}, %{{.+}}] [1, %{{.+}}, %{{.+}}, %{{.+}}] [1, 1, 1, 1] : memref<1x6x3x29xf32, {{.+}}> to memref<1x?x?x?xf32
// CHECK: memref.load %[[XO]]
// CHECK: %[[WO:.+]] = memref.subview %{{.+}}[0, %{{.+}}, %{{.+}}, %{{.+}}] [24, %{{.+}}, %{{.+}}, %{{.+}}] [1, 1, 1, 1] : memref<24x6x3x3xf32> to memref<24x?x?x?xf32
// CHECK: memref.load %[[WO]][%{{.+}}, %{{.+}}, %c0{{.*}}, %c0{{.*}}]
// CHECK-NOT: arith.cmpi ult, %{{.+}}, %c84
// CHECK: arith.cmpi ult, %{{.+}}, %c144
// CHECK: scf.if
// CHECK: scf.for %{{.+}} = %{{.+}} to %c9 step %c1
// CHECK: vector.load {{.*}} : memref<6x18xf32, strided<[18, 1], offset: ?>, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK: vector.load {{.*}} : memref<6x28xf32, strided<[28, 1], offset: ?>, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NOT: linalg.
// CHECK-COUNT-8: arith.maximumf
#sx = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#cw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#co = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#cb = affine_map<(n, f, oh, ow) -> (f)>
#cid = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
#srow = affine_map<(d) -> (d * 2)>
func.func @conv_rows(%x: memref<1x6x9x29xf32>, %w: memref<24x6x3x3xf32>, %b: memref<24xf32>, %y: memref<1x24x4x14xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%oh) in (4) {
    %row = affine.apply #srow(%oh)
    %xs = memref.subview %x[0, 0, %row, 0] [1, 6, 3, 29] [1, 1, 1, 1] : memref<1x6x9x29xf32> to memref<1x6x3x29xf32, strided<[1566, 261, 29, 1], offset: ?>>
    %ys = memref.subview %y[0, 0, %oh, 0] [1, 24, 1, 14] [1, 1, 1, 1] : memref<1x24x4x14xf32> to memref<1x24x1x14xf32, strided<[1344, 56, 14, 1], offset: ?>>
    linalg.generic {indexing_maps = [#cb, #cid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<24xf32>) outs(%ys : memref<1x24x1x14xf32, strided<[1344, 56, 14, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
    linalg.generic {indexing_maps = [#sx, #cw, #co], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%xs, %w : memref<1x6x3x29xf32, strided<[1566, 261, 29, 1], offset: ?>>, memref<24x6x3x3xf32>) outs(%ys : memref<1x24x1x14xf32, strided<[1344, 56, 14, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    linalg.generic {indexing_maps = [#cid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%ys : memref<1x24x1x14xf32, strided<[1344, 56, 14, 1], offset: ?>>) {
    ^bb0(%out: f32):
      %0 = arith.maximumf %out, %zero : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// Left alone: a per-thread 4x4 register tile (kiln-tile-and-distribute
// without thread-blocks) would be a block of one thread.
// CHECK-LABEL: func.func @per_thread_tile
// CHECK-NOT: kiln.contraction
// CHECK: linalg.generic
// CHECK-NOT: gpu.thread_id
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @per_thread_tile(%x: memref<128x64xf32>, %w: memref<64x128xf32>, %y: memref<128x128xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  scf.forall (%i, %j) = (0, 0) to (128, 128) step (4, 4) {
    %xs = memref.subview %x[%i, 0] [4, 64] [1, 1] : memref<128x64xf32> to memref<4x64xf32, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 4] [1, 1] : memref<64x128xf32> to memref<64x4xf32, strided<[128, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [4, 4] [1, 1] : memref<128x128xf32> to memref<4x4xf32, strided<[128, 1], offset: ?>>
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<4x64xf32, strided<[64, 1], offset: ?>>, memref<64x4xf32, strided<[128, 1], offset: ?>>) outs(%ys : memref<4x4xf32, strided<[128, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}

// -----

// Left alone: a row reduction is not a contraction.
// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: kiln.contraction
// CHECK: linalg.generic
func.func @row_sum(%x: memref<256x64xf32>, %y: memref<256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  scf.forall (%i) = (0) to (256) step (64) {
    %xs = memref.subview %x[%i, 0] [64, 64] [1, 1] : memref<256x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    %ys = memref.subview %y[%i] [64] [1] : memref<256xf32> to memref<64xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%xs : memref<64x64xf32, strided<[64, 1], offset: ?>>) outs(%ys : memref<64xf32, strided<[1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.addf %in, %out : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// The stage copies move 16 bytes at a time only where each run is known
// to start 16-byte aligned: A's rows here are 66 floats apart and its
// slice starts 2 floats into each row, so its runs are 2 floats (8 bytes);
// B's rows are 130 floats apart but its slice starts one float in (runs
// of 1: scalar loads).
// CHECK-LABEL: func.func @matmul_unaligned
// CHECK: vector.load {{.*}} {alignment = 8 : i64} : memref<64x64xf32, strided<[66, 1], offset: ?>>, vector<2xf32>
// CHECK-NOT: vector.load {{.*}} : memref<64x64xf32, strided<[130, 1], offset: ?>>
// CHECK: memref.load {{.*}} : memref<64x64xf32, strided<[130, 1], offset: ?>>
#ua = affine_map<(d0, d1, d2) -> (d0, d1)>
#ub = affine_map<(d0, d1, d2) -> (d1, d2)>
#uc = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @matmul_unaligned(%x: memref<128x66xf32>, %w: memref<64x130xf32>, %y: memref<128x128xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (128, 128) step (64, 64) {
    %xs = memref.subview %x[%i, 2] [64, 64] [1, 1] : memref<128x66xf32> to memref<64x64xf32, strided<[66, 1], offset: ?>>
    %ws0 = memref.subview %w[0, 1] [64, 128] [1, 1] : memref<64x130xf32> to memref<64x128xf32, strided<[130, 1], offset: 1>>
    %ws = memref.subview %ws0[0, %j] [64, 64] [1, 1] : memref<64x128xf32, strided<[130, 1], offset: 1>> to memref<64x64xf32, strided<[130, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [64, 64] [1, 1] : memref<128x128xf32> to memref<64x64xf32, strided<[128, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<64x64xf32, strided<[128, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#ua, #ub, #uc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<64x64xf32, strided<[66, 1], offset: ?>>, memref<64x64xf32, strided<[130, 1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[128, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}

// -----

// A 128x128 block: 256 threads of 8x8 outputs, each side two runs of 4
// half the block apart (thread t's columns 4t..4t+3 and 64+4t..64+4t+3),
// so that at each k the 16 threads across read neighbouring 16-byte
// vectors of the stage row: per k, two vector<4xf32> loads of A and two of
// B feed 64 multiply-adds. The outputs are stored in the same runs.
// CHECK-LABEL: func.func @matmul_block128
// CHECK-SAME: kiln.contraction = #kiln.contraction<threads, "fma", block = [128, 128, 32], tile = [8, 8], stage_k = 16
// CHECK-SAME: kiln.lanes = 256 : i64
// CHECK: %[[T:.+]] = gpu.thread_id x
// CHECK: %[[TN:.+]] = arith.remui %[[T]], %c16
// CHECK: %[[TM:.+]] = arith.divui %[[T]], %c16
// CHECK: %[[ROW:.+]] = arith.muli %[[TM]], %c4
// CHECK: %[[COL:.+]] = arith.muli %[[TN]], %c4
// CHECK: memref.alloc() {alignment = 16 : i64} : memref<2x16x132xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: %[[SA:.+]] = memref.subview
// CHECK: %[[SB:.+]] = memref.subview
// CHECK: vector.load %[[SA]][%c0{{.*}}, %[[ROW]]] {alignment = 16 : i64} : memref<16x132xf32, {{.*}}>, vector<4xf32>
// CHECK: %[[ROW2:.+]] = arith.addi %[[ROW]], %c64
// CHECK: vector.load %[[SA]][%c0{{.*}}, %[[ROW2]]] {alignment = 16 : i64} : memref<16x132xf32, {{.*}}>, vector<4xf32>
// CHECK: vector.load %[[SB]][%c0{{.*}}, %[[COL]]] {alignment = 16 : i64} : memref<16x132xf32, {{.*}}>, vector<4xf32>
// CHECK: %[[COL2:.+]] = arith.addi %[[COL]], %c64
// CHECK: vector.load %[[SB]][%c0{{.*}}, %[[COL2]]] {alignment = 16 : i64} : memref<16x132xf32, {{.*}}>, vector<4xf32>
// CHECK-COUNT-64: arith.addf %{{.+}}, %{{.+}} fastmath<contract> : f32
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK-COUNT-64: memref.store %{{.+}}, %{{.+}} : memref<128x128xf32, strided<[256, 1], offset: ?>>
// CHECK-NOT: memref.store
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @matmul_block128(%x: memref<256x32xf32>, %w: memref<32x256xf32>, %y: memref<256x256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (256, 256) step (128, 128) {
    %xs = memref.subview %x[%i, 0] [128, 32] [1, 1] : memref<256x32xf32> to memref<128x32xf32, strided<[32, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [32, 128] [1, 1] : memref<32x256xf32> to memref<32x128xf32, strided<[256, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [128, 128] [1, 1] : memref<256x256xf32> to memref<128x128xf32, strided<[256, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<128x128xf32, strided<[256, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<128x32xf32, strided<[32, 1], offset: ?>>, memref<32x128xf32, strided<[256, 1], offset: ?>>) outs(%ys : memref<128x128xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}
