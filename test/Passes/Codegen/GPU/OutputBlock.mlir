// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia},kiln-contract-with-matrix-cores{arch=nvidia}))' | FileCheck %s --check-prefix=MMA
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=none},kiln-contract-with-thread-tiles))' | FileCheck %s --check-prefix=SIMT

// What passes/Codegen/GPU/OutputBlock.{h,cpp} does for both passes that use it
// (kiln-contract-with-matrix-cores, kiln-contract-with-thread-tiles), on
// one 32x32 block of a float16 matmul with a fill and a ReLU epilogue:
// the fill is forwarded into the accumulators (no load of the output), the
// ReLU runs at the thread's own positions, and each thread stores each of
// its outputs once (the fill's and the contraction's stores, overwritten
// before anything reads them, are dropped). Matrix cores: one warp of 32
// lanes, 32 outputs each (2x2 subtiles), K = 64 in two stages of 32 (rows
// of 64 bytes, unpadded and swizzled) through two cp.async buffers per
// operand (one per stage: both copied before the loop, none refilled);
// thread tiles: 64 threads of 4x4, K
// in stages of 16 (16 bytes of padding = 8 float16), k-major.
// MMA-LABEL: func.func @matmul_relu
// MMA-SAME: kiln.cooperative
// MMA: memref.alloc() {alignment = 16 : i64} : memref<2x32x32xf16, #gpu.address_space<workgroup>>
// MMA-NOT: memref.load {{.*}} : memref<32x32xf32
// MMA: scf.for
// MMA: scf.yield
// MMA-NOT: linalg.
// MMA: arith.maximumf
// MMA-COUNT-32: memref.store %{{.+}}, %{{.+}} : memref<32x32xf32, strided<[64, 1], offset: ?>>
// MMA-NOT: memref.store
// SIMT-LABEL: func.func @matmul_relu
// SIMT-SAME: kiln.lanes = 64 : i64
// SIMT: memref.alloc() {alignment = 16 : i64} : memref<2x16x40xf16, #gpu.address_space<workgroup>>
// SIMT-NOT: memref.load {{.*}} : memref<32x32xf32
// SIMT: scf.for
// SIMT: arith.extf
// SIMT: scf.yield
// SIMT-NOT: linalg.
// SIMT: arith.maximumf
// SIMT-COUNT-16: memref.store %{{.+}}, %{{.+}} : memref<32x32xf32, strided<[64, 1], offset: ?>>
// SIMT-NOT: memref.store
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @matmul_relu(%x: memref<64x64xf16>, %w: memref<64x64xf16>, %y: memref<64x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (32, 32) {
    %xs = memref.subview %x[%i, 0] [32, 64] [1, 1] : memref<64x64xf16> to memref<32x64xf16, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 32] [1, 1] : memref<64x64xf16> to memref<64x32xf16, strided<[64, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [32, 32] [1, 1] : memref<64x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<32x64xf16, strided<[64, 1], offset: ?>>, memref<64x32xf16, strided<[64, 1], offset: ?>>) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_0 : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %in, %zero : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// Not an output block, left alone by both: an op with a region beside the
// contraction (the threads could not each run it at their positions).
// MMA-LABEL: func.func @region_beside
// MMA-NOT: kiln.lanes
// MMA: linalg.generic
// SIMT-LABEL: func.func @region_beside
// SIMT-NOT: kiln.lanes
// SIMT: linalg.generic
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @region_beside(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %y: memref<64x64xf32>, %flag: i1, %wg: index, %nwg: index) attributes {kiln.kernel} {
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (32, 32) {
    %xs = memref.subview %x[%i, 0] [32, 64] [1, 1] : memref<64x64xf32> to memref<32x64xf32, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 32] [1, 1] : memref<64x64xf32> to memref<64x32xf32, strided<[64, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [32, 32] [1, 1] : memref<64x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
    scf.if %flag {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %ys[%c0, %c0] : memref<32x32xf32, strided<[64, 1], offset: ?>>
    }
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<32x64xf32, strided<[64, 1], offset: ?>>, memref<64x32xf32, strided<[64, 1], offset: ?>>) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}
