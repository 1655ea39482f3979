// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-contract-int8-conv-quads,canonicalize,cse))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-contract-int8-conv-quads{matrix-tiles},canonicalize,cse))' | FileCheck %s --check-prefix=TILES

// kiln-pack-int8-conv-weights' convolution of a row of 19 outputs by 6
// filters over 2 quads of channels (X [1, 2, 1, 19 * 4], the output not
// filled with zeros here): one tile of 4 filters by 2 panels, the second
// panel's 3 outputs under a mask (12 bytes of X, 3 lanes of the output),
// then 2 filters one at a time. Each of the 2 steps loads 64 bytes of X
// per panel and broadcasts 4 bytes of W per filter into vpdpbusd; the
// sums are converted and added to the output.
// CHECK-LABEL: func.func @tails
// CHECK-DAG: %[[BYTES:.+]] = vector.constant_mask [12] : vector<64xi1>
// CHECK-DAG: %[[LANES:.+]] = vector.constant_mask [3] : vector<16xi1>
// CHECK: scf.for {{.*}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK: %[[X0:.+]] = vector.load %{{.+}}[%c0, %{{.+}}, %c0, %c0] : memref<1x2x1x76xi8>, vector<64xi8>
// CHECK: %[[X1:.+]] = vector.maskedload %{{.+}}[%c0, %{{.+}}, %c0, %c64], %[[BYTES]]
// CHECK: vector.load %arg1[%c0, %{{.+}}, %c0, %c0] : memref<6x2x1x4xi8>, vector<4xi8>
// CHECK: %[[W0:.+]] = vector.bitcast %{{.+}} : vector<16xi32> to vector<64xi8>
// CHECK-COUNT-8: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf32>
// CHECK: vector.load %arg2[%c0, %c0, %c0, %c0] : memref<1x6x1x19xf32>, vector<16xf32>
// CHECK: vector.maskedstore %arg2[%c0, %c0, %c0, %c16], %[[LANES]]
// CHECK: scf.for %{{.+}} = %c4 to %c6 step %c1
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK-NOT: linalg.generic
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 * 4 + d5)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
func.func @tails(%x: memref<1x2x1x76xui8>, %w: memref<6x2x1x4xi8>, %out: memref<1x6x1x19xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x2x1x76xui8>, memref<6x2x1x4xi8>) outs(%out : memref<1x6x1x19xf32>) {
  ^bb0(%a: ui8, %b: i8, %acc: f32):
    %wf = arith.sitofp %b : i8 to f32
    %xs = builtin.unrealized_conversion_cast %a : ui8 to i8
    %xf = arith.uitofp %xs : i8 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 1x1 convolution over 2 rows of 8 (X's rows 4 times the output's, both
// contiguous), zeros filled before it into a temporary that only an
// elementwise epilogue reads (a per-filter scale, a residual of bytes, a
// uint8 result): the rows are computed as one of 16 (collapsed views), and
// the epilogue runs on each tile's sums in registers, storing the bytes;
// the fill, the temporary and the epilogue's generic go.
// CHECK-LABEL: func.func @epilogue
// CHECK-NOT: memref.alloc
// CHECK-DAG: %[[RES:.+]] = memref.collapse_shape %arg3 {{\[}}[0], [1], [2, 3]] : memref<1x4x2x8xui8> into memref<1x4x16xui8>
// CHECK-DAG: %[[Y:.+]] = memref.collapse_shape %arg4 {{\[}}[0], [1], [2, 3]] : memref<1x4x2x8xui8> into memref<1x4x16xui8>
// CHECK-DAG: %[[X:.+]] = memref.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : memref<1x1x2x32xi8> into memref<1x1x64xi8>
// CHECK: vector.load %[[X]][%c0, %c0, %c0] : memref<1x1x64xi8>, vector<64xi8>
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: %[[SUM:.+]] = arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf32>
// CHECK: %[[S:.+]] = memref.load %arg2[%c0, %c0, %c0] : memref<4x1x1xf32>
// CHECK: %[[SB:.+]] = vector.broadcast %[[S]] : f32 to vector<16xf32>
// CHECK: %[[R:.+]] = vector.load %[[RES]][%c0, %c0, %c0] : memref<1x4x16xui8>, vector<16xui8>
// CHECK: arith.mulf %[[SUM]], %[[SB]] : vector<16xf32>
// CHECK: arith.fptoui %{{.+}} : vector<16xf32> to vector<16xi8>
// CHECK: vector.store %{{.+}}, %[[Y]][%c0, %c0, %c0] : memref<1x4x16xui8>, vector<16xui8>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.fill
// CHECK-NOT: memref.dealloc
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 * 4 + d5)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#f = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
func.func @epilogue(%x: memref<1x1x2x32xui8>, %w: memref<4x1x1x4xi8>, %scale: memref<4x1x1xf32>, %res: memref<1x4x2x8xui8>, %y: memref<1x4x2x8xui8>) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x4x2x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x4x2x8xf32>)
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x1x2x32xui8>, memref<4x1x1x4xi8>) outs(%acc : memref<1x4x2x8xf32>) {
  ^bb0(%a: ui8, %b: i8, %o: f32):
    %wf = arith.sitofp %b : i8 to f32
    %xs = builtin.unrealized_conversion_cast %a : ui8 to i8
    %xf = arith.uitofp %xs : i8 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #f, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%acc, %scale, %res : memref<1x4x2x8xf32>, memref<4x1x1xf32>, memref<1x4x2x8xui8>) outs(%y : memref<1x4x2x8xui8>) {
  ^bb0(%sum: f32, %s: f32, %r: ui8, %out: ui8):
    %m = arith.mulf %sum, %s : f32
    %rs = builtin.unrealized_conversion_cast %r : ui8 to i8
    %rf = arith.uitofp %rs : i8 to f32
    %t = arith.addf %m, %rf : f32
    %q = arith.fptoui %t : f32 to i8
    %qu = builtin.unrealized_conversion_cast %q : i8 to ui8
    linalg.yield %qu : ui8
  }
  memref.dealloc %acc : memref<1x4x2x8xf32>
  return
}

// -----

// A 3x3 convolution's rows of 7 outputs (a 7x7 map), 4 rows of them:
// a tile spans the 4 rows, one panel of 7 outputs (28 bytes of X, 7 lanes)
// in each, 4 filters by 4 panels in 16 accumulators; each of the 3 row taps
// (the loop) takes its 3 column taps unrolled, 4 bytes apart.
// CHECK-LABEL: func.func @short_rows
// CHECK-DAG: %[[BYTES:.+]] = vector.constant_mask [28] : vector<64xi1>
// CHECK: scf.for %[[KY:.+]] = %c0 to %c3 step %c1 iter_args({{.*}}) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK: vector.maskedload %{{.+}}[%c0, %c0, %[[KY]], %c0], %[[BYTES]]
// CHECK-COUNT-3: vector.maskedload %{{.+}}[%c0, %c0, %{{.+}}, %c0], %[[BYTES]]
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: vector.maskedload %{{.+}}[%c0, %c0, %[[KY]], %c4], %[[BYTES]]
// CHECK-COUNT-3: vector.maskedload %{{.+}}[%c0, %c0, %{{.+}}, %c4], %[[BYTES]]
// CHECK-COUNT-16: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: vector.maskedload %{{.+}}[%c0, %c0, %[[KY]], %c8], %[[BYTES]]
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 * 4 + d5)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
func.func @short_rows(%x: memref<1x1x6x36xui8>, %w: memref<4x1x3x12xi8>, %out: memref<1x4x4x7xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x1x6x36xui8>, memref<4x1x3x12xi8>) outs(%out : memref<1x4x4x7xf32>) {
  ^bb0(%a: ui8, %b: i8, %acc: f32):
    %wf = arith.sitofp %b : i8 to f32
    %xs = builtin.unrealized_conversion_cast %a : ui8 to i8
    %xf = arith.uitofp %xs : i8 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left alone: X read 8 bytes a step along the output row (8 * x + k), and
// a float32 input.
// CHECK-LABEL: func.func @others
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: vpdpbusd
#x8 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 * 8 + d5)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 * 4 + d5)>
func.func @others(%x: memref<1x1x1x132xui8>, %f: memref<1x1x1x68xf32>, %w: memref<4x1x1x4xi8>, %out: memref<1x4x1x16xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#x8, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x1x1x132xui8>, memref<4x1x1x4xi8>) outs(%out : memref<1x4x1x16xf32>) {
  ^bb0(%a: ui8, %b: i8, %acc: f32):
    %wf = arith.sitofp %b : i8 to f32
    %xs = builtin.unrealized_conversion_cast %a : ui8 to i8
    %xf = arith.uitofp %xs : i8 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%f, %w : memref<1x1x1x68xf32>, memref<4x1x1x4xi8>) outs(%out : memref<1x4x1x16xf32>) {
  ^bb0(%a: f32, %b: i8, %acc: f32):
    %wf = arith.sitofp %b : i8 to f32
    %p = arith.mulf %a, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Sums in float64 (an integer convolution whose exact sums may pass 2^24):
// the same tiles, each lane's int32 sum converted to float64.
// CHECK-LABEL: func.func @float64_sums
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf64>
// CHECK: vector.load %arg2[{{.*}}] : memref<1x4x1x16xf64>, vector<16xf64>
// CHECK-NOT: linalg.generic
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 * 4 + d5)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
func.func @float64_sums(%x: memref<1x1x1x64xui8>, %w: memref<4x1x1x4xi8>, %out: memref<1x4x1x16xf64>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x1x1x64xui8>, memref<4x1x1x4xi8>) outs(%out : memref<1x4x1x16xf64>) {
  ^bb0(%a: ui8, %b: i8, %acc: f64):
    %wf = arith.sitofp %b : i8 to f64
    %xs = builtin.unrealized_conversion_cast %a : ui8 to i8
    %xf = arith.uitofp %xs : i8 to f64
    %p = arith.mulf %xf, %wf : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// With matrix-tiles (AMX-INT8), a 1x1 convolution of 64 channels (16
// quads) by 20 filters over 2 rows of 10 outputs (one row of 20): one
// block of 16 filters on AMX tiles, the weights' tile (16 filters' 64
// bytes) by X's (16 quads of 16 outputs, row stride 80 bytes) and by a
// narrower one of the last 4 outputs (16 x 16 bytes, into 16 x 4 sums),
// tdpbsud (zext on X's bytes only); each filter's sums from the scratch
// added to the output, the narrower panel's under a mask. The 4 filters
// past the block on vector tiles.
// TILES-LABEL: func.func @pointwise_blocks
// TILES-DAG: %[[SCRATCH:.+]] = memref.alloca() : memref<16x16xi32>
// TILES-DAG: %[[X:.+]] = memref.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : memref<1x16x2x40xi8> into memref<1x16x80xi8>
// TILES-DAG: %[[W:.+]] = memref.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : memref<20x16x1x4xi8> into memref<20x64xi8>
// TILES-DAG: %[[ZERO:.+]] = amx.tile_zero : !amx.tile<16x16xi32>
// TILES-DAG: %[[ZERO4:.+]] = amx.tile_zero : !amx.tile<16x4xi32>
// TILES: %[[WT:.+]] = amx.tile_load %[[W]][%c0, %c0] : memref<20x64xi8> into !amx.tile<16x64xi8>
// TILES: %[[XT:.+]] = amx.tile_load %[[X]][%c0, %c0, %c0] : memref<1x16x80xi8> into !amx.tile<16x64xi8>
// TILES: %[[SUMS:.+]] = amx.tile_muli %[[WT]], %[[XT]] zext, %[[ZERO]]
// TILES: %[[XT4:.+]] = amx.tile_load %[[X]][%c0, %c0, %c64] : memref<1x16x80xi8> into !amx.tile<16x16xi8>
// TILES: %[[SUMS4:.+]] = amx.tile_muli %[[WT]], %[[XT4]] zext, %[[ZERO4]] : !amx.tile<16x64xi8>, !amx.tile<16x16xi8>, !amx.tile<16x4xi32>
// TILES: amx.tile_store %[[SCRATCH]][%c0, %c0], %[[SUMS]]
// TILES-COUNT-16: vector.load %[[SCRATCH]]
// TILES: amx.tile_store %[[SCRATCH]][%c0, %c0], %[[SUMS4]]
// TILES: vector.maskedstore
// TILES: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// TILES-NOT: amx.tile_muli
// TILES-NOT: linalg.generic
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 * 4 + d5)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
func.func @pointwise_blocks(%x: memref<1x16x2x40xui8>, %w: memref<20x16x1x4xi8>, %out: memref<1x20x2x10xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : memref<1x16x2x40xui8>, memref<20x16x1x4xi8>) outs(%out : memref<1x20x2x10xf32>) {
  ^bb0(%a: ui8, %b: i8, %acc: f32):
    %wf = arith.sitofp %b : i8 to f32
    %xs = builtin.unrealized_conversion_cast %a : ui8 to i8
    %xf = arith.uitofp %xs : i8 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
