// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-contract-with-vector-registers),canonicalize)' | FileCheck %s

// A matmul C[m, n] += A[m, k] * B[k, n] (M 10, N 48, K 8): rows of M by
// vectors of N. N 48 is one 32-wide tile and a 16-wide remainder, M 10 an
// 8-row tile and a 2-row remainder: four tile shapes. Each keeps its
// accumulators in vector registers across the K loop: one vector load of
// B's row per step, one broadcast element of A per row, one FMA per row.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: kiln.register_tile = array<i64: 8, 32>
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC0:.+]] = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK: %[[B:.+]] = vector.load %arg1[%[[K]], %{{.+}}] : memref<8x48xf32>, vector<32xf32>
// CHECK: %[[A:.+]] = memref.load %arg0[%{{.+}}, %[[K]]] : memref<10x8xf32>
// CHECK: %[[AB:.+]] = vector.broadcast %[[A]] : f32 to vector<32xf32>
// CHECK: vector.fma %[[B]], %[[AB]], %[[ACC0]] : vector<32xf32>
// CHECK-COUNT-7: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-8: vector.store %{{.+}}, %arg2[%{{.+}}, %{{.+}}] : memref<10x48xf32>, vector<32xf32>
// The 2-row remainder of the 32-wide column tiles.
// CHECK: -> (vector<32xf32>, vector<32xf32>)
// The 16-wide remainder column: 8 rows, then 2.
// CHECK: -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: -> (vector<16xf32>, vector<16xf32>)
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @matmul(%a: memref<10x8xf32>, %b: memref<8x48xf32>, %c: memref<10x48xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<10x8xf32>, memref<8x48xf32>) outs(%c : memref<10x48xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A convolution (NCHW, 3x3, stride 1) as the workgroup sees it: a subview
// of its output. Rows are filters (4), vectors run along the output width
// (16), and each tile also takes 3 output rows (the block loop): every
// step of the reduction (input channels x window) loads 3 input rows'
// vectors `oh + kh` and broadcasts each filter's weight once for 3 FMAs.
// The 4th output row is a tile of one row.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: kiln.register_tile = array<i64: 4, 16>
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[C:.+]] = {{.+}} iter_args({{.+}}) -> ([[V:vector<16xf32>]], [[V]], [[V]], [[V]], [[V]], [[V]], [[V]], [[V]], [[V]], [[V]], [[V]], [[V]])
// CHECK: scf.for %[[KH:.+]] = {{.+}} iter_args
// CHECK: scf.for %[[KW:.+]] = {{.+}} iter_args
// CHECK: %[[X0:.+]] = vector.load %arg0[%{{.+}}, %[[C]], %[[KH]], %[[KW]]] : memref<1x2x6x18xf32>, vector<16xf32>
// CHECK: %[[R1:.+]] = affine.apply #{{.+}}(%[[KH]])
// CHECK: %[[X1:.+]] = vector.load %arg0[%{{.+}}, %[[C]], %[[R1]], %[[KW]]]
// CHECK: %[[R2:.+]] = affine.apply #{{.+}}(%[[KH]])
// CHECK: %[[X2:.+]] = vector.load %arg0[%{{.+}}, %[[C]], %[[R2]], %[[KW]]]
// CHECK: memref.load %arg1[%{{.+}}, %[[C]], %[[KH]], %[[KW]]] : memref<4x2x3x3xf32>
// CHECK: %[[W0:.+]] = vector.broadcast
// CHECK: vector.fma %[[X0]], %[[W0]]
// CHECK: vector.fma %[[X1]], %[[W0]]
// CHECK: vector.fma %[[X2]], %[[W0]]
// CHECK-COUNT-9: vector.fma
// CHECK-COUNT-12: vector.store {{.+}} : memref<1x4x4x16xf32, strided<[1024, 256, 16, 1], offset: ?>>, vector<16xf32>
// CHECK: scf.for {{.+}} -> ([[V]], [[V]], [[V]], [[V]])
// CHECK-COUNT-4: vector.fma
// CHECK-COUNT-4: vector.store {{.+}}[%{{.+}}, %{{.+}}, %c3, %{{.+}}]
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv(%x: memref<1x2x6x18xf32>, %w: memref<4x2x3x3xf32>, %y: memref<1x4x16x16xf32>, %wg: index) attributes {kiln.kernel} {
  %tile = memref.subview %y[0, 0, %wg, 0] [1, 4, 4, 16] [1, 1, 1, 1] : memref<1x4x16x16xf32> to memref<1x4x4x16xf32, strided<[1024, 256, 16, 1], offset: ?>>
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x2x6x18xf32>, memref<4x2x3x3xf32>) outs(%tile : memref<1x4x4x16xf32, strided<[1024, 256, 16, 1], offset: ?>>) {
  ^bb0(%i: f32, %k: f32, %acc: f32):
    %p = arith.mulf %i, %k : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A stride-2 convolution: each step loads the 2 * (8 - 1) + 1 = 15 input
// pixels its 8 outputs span (a 16-wide load whose last lane is masked off,
// so that the last row never reads past the buffer) and keeps every second
// one.
// CHECK-LABEL: func.func @strided_conv
// CHECK-SAME: kiln.register_tile = array<i64: 2, 8>
// CHECK: %[[MASK:.+]] = vector.constant_mask [15] : vector<16xi1>
// CHECK: %[[SPAN:.+]] = vector.maskedload %arg0[{{.+}}], %[[MASK]], %{{.+}} : memref<1x1x17x17xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: vector.shuffle %[[SPAN]], %[[SPAN]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xf32>, vector<16xf32>
// CHECK-COUNT-2: vector.fma {{.+}} : vector<8xf32>
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @strided_conv(%x: memref<1x1x17x17xf32>, %w: memref<2x1x3x3xf32>, %y: memref<1x2x8x8xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x1x17x17xf32>, memref<2x1x3x3xf32>) outs(%y : memref<1x2x8x8xf32>) {
  ^bb0(%i: f32, %k: f32, %acc: f32):
    %p = arith.mulf %i, %k : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Gemm's alpha multiplies each broadcast element; f16 inputs are widened
// after loading (a vector extf of B's row, a scalar extf of A's element).
// CHECK-LABEL: func.func @scaled_f16
// CHECK: %[[B:.+]] = vector.load %arg1[{{.+}}] : memref<4x16xf16>, vector<16xf16>
// CHECK: %[[BW:.+]] = arith.extf %[[B]] : vector<16xf16> to vector<16xf32>
// CHECK: %[[A:.+]] = memref.load %arg0
// CHECK: %[[AW:.+]] = arith.extf %[[A]] : f16 to f32
// CHECK: %[[AS:.+]] = arith.mulf %[[AW]], %arg3 : f32
// CHECK: %[[AB:.+]] = vector.broadcast %[[AS]]
// CHECK: vector.fma %[[BW]], %[[AB]]
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @scaled_f16(%a: memref<2x4xf16>, %b: memref<4x16xf16>, %c: memref<2x16xf32>, %alpha: f32) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x4xf16>, memref<4x16xf16>) outs(%c : memref<2x16xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xw = arith.extf %x : f16 to f32
    %yw = arith.extf %y : f16 to f32
    %p = arith.mulf %xw, %yw : f32
    %q = arith.mulf %p, %alpha : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A weight stored as int8 (kiln-narrow-integer-weights): B's row is loaded
// as 16 bytes and converted to float32 in registers.
// CHECK-LABEL: func.func @int8_weight
// CHECK: %[[B:.+]] = vector.load %arg1[{{.+}}] : memref<4x16xi8>, vector<16xi8>
// CHECK: %[[BW:.+]] = arith.sitofp %[[B]] : vector<16xi8> to vector<16xf32>
// CHECK: vector.fma %[[BW]]
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @int8_weight(%a: memref<2x4xf32>, %b: memref<4x16xi8>, %c: memref<2x16xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x4xf32>, memref<4x16xi8>) outs(%c : memref<2x16xf32>) {
  ^bb0(%x: f32, %y: i8, %acc: f32):
    %yw = arith.sitofp %y : i8 to f32
    %p = arith.mulf %x, %yw : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The ops around the contraction: the bias broadcast into the accumulator
// temporary starts the accumulators (a broadcast of the bias element of
// each row), and the residual add + ReLU epilogue, the temporary's only
// reader, runs on the accumulators in registers and stores its result:
// the temporary is gone. The 14-wide rows are an 8-wide tile and a 6-wide
// one (odd sizes above 8 would be legalized element by element).
// CHECK-LABEL: func.func @fill_and_epilogue
// CHECK-SAME: kiln.register_tile = array<i64: 4, 8>
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.generic
// CHECK: %[[BIAS:.+]] = memref.load %arg1[%{{.+}}] : memref<4xf32>
// CHECK: %[[INIT:.+]] = vector.broadcast %[[BIAS]] : f32 to vector<8xf32>
// CHECK: %[[ACC:.+]]:4 = scf.for {{.+}} iter_args(%{{.+}} = %[[INIT]],
// CHECK: %[[RES:.+]] = vector.load %arg2[{{.+}}] : memref<4x14xf32>, vector<8xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[ACC]]#0, %[[RES]] : vector<8xf32>
// CHECK: %[[RELU:.+]] = arith.maximumf %[[SUM]], %{{.+}} : vector<8xf32>
// CHECK: vector.store %[[RELU]], %arg3[{{.+}}] : memref<4x14xf32>, vector<8xf32>
// CHECK: -> (vector<6xf32>, vector<6xf32>, vector<6xf32>, vector<6xf32>)
// CHECK: vector.store %{{.+}}, %arg3[{{.+}}] : memref<4x14xf32>, vector<6xf32>
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
#row = affine_map<(m, n) -> (m)>
#id = affine_map<(m, n) -> (m, n)>
func.func @fill_and_epilogue(%a: memref<4x8xf32>, %bias: memref<4xf32>, %residual: memref<4x14xf32>, %y: memref<4x14xf32>, %b: memref<8x14xf32>) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<4x14xf32>
  linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%bias : memref<4xf32>) outs(%acc : memref<4x14xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x8xf32>, memref<8x14xf32>) outs(%acc : memref<4x14xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc, %residual : memref<4x14xf32>, memref<4x14xf32>) outs(%y : memref<4x14xf32>) {
  ^bb0(%v: f32, %r: f32, %o: f32):
    %s = arith.addf %v, %r : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// An epilogue that is not the temporary's only reader stays an op of its
// own, after the tiles store the accumulators.
// CHECK-LABEL: func.func @temporary_read_twice
// CHECK: memref.alloc
// CHECK: vector.fma
// CHECK: vector.store %{{.+}}, %[[ACC:.+]][{{.+}}] : memref<2x16xf32>
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
func.func @temporary_read_twice(%a: memref<2x4xf32>, %b: memref<4x16xf32>, %y: memref<2x16xf32>, %z: memref<2x16xf32>) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<2x16xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<2x16xf32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x4xf32>, memref<4x16xf32>) outs(%acc : memref<2x16xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<2x16xf32>) outs(%y : memref<2x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<2x16xf32>) outs(%z : memref<2x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// Left alone: B transposed (no input is contiguous along the output's
// innermost dim), a body that is not a multiply-add, and a function that is
// not a kernel.
// CHECK-LABEL: func.func @transposed_b
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
// CHECK-LABEL: func.func @max_plus
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
// CHECK-LABEL: func.func @not_a_kernel
// CHECK: linalg.generic
// CHECK-NOT: vector.fma
#mA = affine_map<(m, n, k) -> (m, k)>
#mBt = affine_map<(m, n, k) -> (n, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @transposed_b(%a: memref<8x8xf32>, %b: memref<16x8xf32>, %c: memref<8x16xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#mA, #mBt, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x8xf32>, memref<16x8xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
func.func @max_plus(%a: memref<8x8xf32>, %b: memref<8x16xf32>, %c: memref<8x16xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x8xf32>, memref<8x16xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.addf %x, %y : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
func.func @not_a_kernel(%a: memref<8x8xf32>, %b: memref<8x16xf32>, %c: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x8xf32>, memref<8x16xf32>) outs(%c : memref<8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The vector input computed by an elementwise generic into a temporary
// just before (4-bit weights unpacked from bytes: [j, r, n] = (bytes[r, n]
// >> shifts[j]) & 15, times the column's scale), for one row of outputs
// (a decoder step): each unpacked vector serves one tile, so the tiles
// compute it in registers from the bytes where they would load it, and
// the temporary is never stored.
// CHECK-LABEL: func.func @unpacked_in_registers
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.generic
// CHECK: scf.for
// CHECK: scf.for %[[R:.+]] = {{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (vector<16xf32>)
// CHECK: %[[BYTES:.+]] = vector.load %arg0[%[[R]], %{{.+}}] : memref<2x16xi8>, vector<16xi8>
// CHECK: %[[SHIFT:.+]] = vector.broadcast %{{.+}} : i8 to vector<16xi8>
// CHECK: %[[SCALE:.+]] = vector.load %arg2[%{{.+}}, %{{.+}}] : memref<1x16xf32>, vector<16xf32>
// CHECK: %[[SHIFTED:.+]] = arith.shrsi %[[BYTES]], %[[SHIFT]] : vector<16xi8>
// CHECK: %[[NIBBLE:.+]] = arith.andi %[[SHIFTED]], %{{.+}} : vector<16xi8>
// CHECK: %[[F:.+]] = arith.sitofp %[[NIBBLE]] : vector<16xi8> to vector<16xf32>
// CHECK: %[[W:.+]] = arith.mulf %[[F]], %[[SCALE]] : vector<16xf32>
// CHECK: vector.fma %[[W]], %{{.+}}, %[[ACC]] : vector<16xf32>
#mBytes = affine_map<(j, r, n) -> (r, n)>
#mShift = affine_map<(j, r, n) -> (j)>
#mScale = affine_map<(j, r, n) -> (0, n)>
#mW = affine_map<(j, r, n) -> (j, r, n)>
#uA = affine_map<(m, n, j, r) -> (m, j, r)>
#uW = affine_map<(m, n, j, r) -> (j, r, n)>
#uC = affine_map<(m, n, j, r) -> (m, n)>
func.func @unpacked_in_registers(%bytes: memref<2x16xi8>, %shifts: memref<2xi8>, %scale: memref<1x16xf32>, %a: memref<1x2x2xf32>, %c: memref<1x16xf32>) attributes {kiln.kernel} {
  %w = memref.alloc() : memref<2x2x16xf32>
  linalg.generic {indexing_maps = [#mBytes, #mShift, #mScale, #mW], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bytes, %shifts, %scale : memref<2x16xi8>, memref<2xi8>, memref<1x16xf32>) outs(%w : memref<2x2x16xf32>) {
  ^bb0(%byte: i8, %shift: i8, %s: f32, %out: f32):
    %fifteen = arith.constant 15 : i8
    %shifted = arith.shrsi %byte, %shift : i8
    %nibble = arith.andi %shifted, %fifteen : i8
    %f = arith.sitofp %nibble : i8 to f32
    %v = arith.mulf %f, %s : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#uA, #uW, #uC], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %w : memref<1x2x2xf32>, memref<2x2x16xf32>) outs(%c : memref<1x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The same for 10 rows, more than a register tile's 8: each unpacked
// vector would be computed once per row tile, so the generic stores them
// once and the tiles load them.
// CHECK-LABEL: func.func @unpacked_once_for_many_rows
// CHECK: %[[W:.+]] = memref.alloc() : memref<2x2x16xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[W]] : memref<2x2x16xf32>)
// CHECK: vector.load %[[W]]
#mBytes = affine_map<(j, r, n) -> (r, n)>
#mShift = affine_map<(j, r, n) -> (j)>
#mScale = affine_map<(j, r, n) -> (0, n)>
#mW = affine_map<(j, r, n) -> (j, r, n)>
#uA = affine_map<(m, n, j, r) -> (m, j, r)>
#uW = affine_map<(m, n, j, r) -> (j, r, n)>
#uC = affine_map<(m, n, j, r) -> (m, n)>
func.func @unpacked_once_for_many_rows(%bytes: memref<2x16xi8>, %shifts: memref<2xi8>, %scale: memref<1x16xf32>, %a: memref<10x2x2xf32>, %c: memref<10x16xf32>) attributes {kiln.kernel} {
  %w = memref.alloc() : memref<2x2x16xf32>
  linalg.generic {indexing_maps = [#mBytes, #mShift, #mScale, #mW], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%bytes, %shifts, %scale : memref<2x16xi8>, memref<2xi8>, memref<1x16xf32>) outs(%w : memref<2x2x16xf32>) {
  ^bb0(%byte: i8, %shift: i8, %s: f32, %out: f32):
    %fifteen = arith.constant 15 : i8
    %shifted = arith.shrsi %byte, %shift : i8
    %nibble = arith.andi %shifted, %fifteen : i8
    %f = arith.sitofp %nibble : i8 to f32
    %v = arith.mulf %f, %s : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#uA, #uW, #uC], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %w : memref<10x2x2xf32>, memref<2x2x16xf32>) outs(%c : memref<10x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
