// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-contract-int8-quads{rows=2 panels=2}),canonicalize)' | FileCheck %s

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
