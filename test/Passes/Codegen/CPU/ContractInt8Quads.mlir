// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-contract-int8-quads{rows=2 panels=2}),canonicalize)' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-contract-int8-quads{matrix-tiles=true}),canonicalize)' | FileCheck %s --check-prefix=TILES

// kiln-pack-int8-matmul-weights' einsum, uint8 A [3, 2, 4] (M 3, K 8 as
// 2 quads) by int8 B [3, 2, 16, 4] (N 48 as 3 panels): tiles of 2 rows by
// 2 panels, the third panel and the third row as one-wide tiles. Each
// quad step loads one 64-byte quad per panel, broadcasts 4 bytes per row
// and adds with vpdpbusd into int32 accumulators, converted and added to
// the output after the reduction.
// CHECK-LABEL: func.func @quads
// CHECK: %[[A:.+]] = builtin.unrealized_conversion_cast %arg0 : memref<3x2x4xui8> to memref<3x2x4xi8>
// CHECK: %[[B:.+]] = memref.collapse_shape %arg1 {{\[\[}}0], [1], [2, 3]] : memref<3x2x16x4xi8> into memref<3x2x64xi8>
// The 2 x 2 tile: two quads, two broadcast rows, four dot products.
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// CHECK-COUNT-2: vector.load %[[B]]{{.*}} : memref<3x2x64xi8>, vector<64xi8>
// CHECK: vector.load %[[A]]{{.*}} : memref<3x2x4xi8>, vector<4xi8>
// CHECK: vector.bitcast {{.*}} : vector<4xi8> to vector<1xi32>
// CHECK: vector.broadcast {{.*}} : i32 to vector<16xi32>
// CHECK: vector.bitcast {{.*}} : vector<16xi32> to vector<64xi8>
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: vector.load %[[A]]
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: scf.yield
// CHECK: arith.sitofp {{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: vector.store {{.*}}, %arg2{{.*}} : memref<3x3x16xf32>, vector<16xf32>
// The remainders: 2 rows x 1 panel, then 1 row x 2 panels and 1 x 1.
// CHECK: -> (vector<16xi32>, vector<16xi32>)
// CHECK: -> (vector<16xi32>, vector<16xi32>)
// CHECK: -> (vector<16xi32>)
// CHECK-NOT: linalg.generic
func.func @quads(%a: memref<3x2x4xui8>, %b: memref<3x2x16x4xi8>, %out: memref<3x3x16xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [affine_map<(m, p, w, q, t) -> (m, q, t)>, affine_map<(m, p, w, q, t) -> (p, q, w, t)>, affine_map<(m, p, w, q, t) -> (m, p, w)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a, %b : memref<3x2x4xui8>, memref<3x2x16x4xi8>) outs(%out : memref<3x3x16xf32>) {
  ^bb0(%x: ui8, %y: i8, %acc: f32):
    %xi = builtin.unrealized_conversion_cast %x : ui8 to i8
    %xf = arith.uitofp %xi : i8 to f32
    %yf = arith.sitofp %y : i8 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left alone: signed activations (vpdpbusd multiplies unsigned by signed
// bytes), and panels of 8 outputs.
// CHECK-LABEL: func.func @others
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: vpdpbusd
func.func @others(%a: memref<3x2x4xi8>, %b: memref<3x2x16x4xi8>, %out: memref<3x3x16xf32>, %b8: memref<3x2x8x4xi8>, %out8: memref<3x3x8xf32>, %u: memref<3x2x4xui8>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [affine_map<(m, p, w, q, t) -> (m, q, t)>, affine_map<(m, p, w, q, t) -> (p, q, w, t)>, affine_map<(m, p, w, q, t) -> (m, p, w)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a, %b : memref<3x2x4xi8>, memref<3x2x16x4xi8>) outs(%out : memref<3x3x16xf32>) {
  ^bb0(%x: i8, %y: i8, %acc: f32):
    %xf = arith.sitofp %x : i8 to f32
    %yf = arith.sitofp %y : i8 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(m, p, w, q, t) -> (m, q, t)>, affine_map<(m, p, w, q, t) -> (p, q, w, t)>, affine_map<(m, p, w, q, t) -> (m, p, w)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%u, %b8 : memref<3x2x4xui8>, memref<3x2x8x4xi8>) outs(%out8 : memref<3x3x8xf32>) {
  ^bb0(%x: ui8, %y: i8, %acc: f32):
    %xi = builtin.unrealized_conversion_cast %x : ui8 to i8
    %xf = arith.uitofp %xi : i8 to f32
    %yf = arith.sitofp %y : i8 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// With matrix-tiles (AMX-INT8), 18 rows by 3 panels, K = 128: one block
// of 16 rows on tiles, its panels two at a time then one. Per 64 bytes of
// K (two steps, unrolled; the one block's loop folds): a tile of the block's rows of A (16 x 64
// bytes, row stride K) and one of each panel's 16 quads of B into
// tdpbusd (`amx.tile_muli` of zero-extended A); the sums stored to a
// 16 x 16 scratch, converted and added to the output row by row. The two
// rows left take the vector tiles.
// Without it, vector tiles only.
// CHECK-LABEL: func.func @matrix_tiles
// CHECK-NOT: amx.
// TILES-LABEL: func.func @matrix_tiles
// TILES: memref.alloca() : memref<16x16xi32>
// TILES: %[[ROWS:.+]] = memref.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : memref<18x32x4xi8> into memref<18x128xi8>
// TILES-COUNT-2: amx.tile_zero : !amx.tile<16x16xi32>
// TILES: amx.tile_load %[[ROWS]][%c0, %c0] : memref<18x128xi8> into !amx.tile<16x64xi8>
// TILES: amx.tile_muli {{.*}} zext
// TILES: amx.tile_load %[[ROWS]][%c0, %c64] : memref<18x128xi8> into !amx.tile<16x64xi8>
// TILES: amx.tile_store {{.*}} : memref<16x16xi32>, !amx.tile<16x16xi32>
// TILES: arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf32>
// TILES: scf.for %{{.+}} = %c16 to %c18 step %c1
// TILES: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// TILES-NOT: linalg.generic
#ma = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
#mb = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3, d4)>
#mo = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>
func.func @matrix_tiles(%a: memref<18x32x4xui8>, %b: memref<3x32x16x4xi8>, %out: memref<18x3x16xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#ma, #mb, #mo], iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"]} ins(%a, %b : memref<18x32x4xui8>, memref<3x32x16x4xi8>) outs(%out : memref<18x3x16xf32>) {
  ^bb0(%x: ui8, %w: i8, %acc: f32):
    %xs = builtin.unrealized_conversion_cast %x : ui8 to i8
    %xf = arith.uitofp %xs : i8 to f32
    %wf = arith.sitofp %w : i8 to f32
    %p = arith.mulf %xf, %wf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
