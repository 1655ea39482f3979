// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia},kiln-contract-with-matrix-cores{arch=nvidia}),canonicalize)' | FileCheck %s

// What passes/Codegen/GPU/OutputBlockEpilogue.cpp does after a block's
// reduction loop: the elementwise epilogue of a 32x32 block of a float16
// matmul (a bias per column, a residual of the output's shape, a ReLU) runs
// at each lane's own accumulator positions, no linalg op left. The bias
// and the residual are loaded there (the first of each pair of columns an
// accumulator holds with its 8-byte alignment, the second without), and
// each lane stores each of its 32 outputs once, the accumulators never
// written to the output before.
// CHECK-LABEL: func.func @deep_k
// CHECK: nvgpu.device_async_wait %{{.+}} {numGroups = 0 : i32}
// CHECK-NOT: linalg.
// CHECK: vector.extract %{{.+}}[0, 0] : f32 from vector<2x2xf32>
// CHECK: %[[BIAS:.+]] = memref.load %{{.+}}[%[[COL:.+]]] {alignment = 8 : i64} : memref<32xf32, strided<[1], offset: ?>>
// CHECK-NEXT: %[[RES:.+]] = memref.load %{{.+}}[%[[ROW:.+]], %[[COL]]] {alignment = 8 : i64} : memref<32x32xf32, strided<[64, 1], offset: ?>>
// CHECK-NEXT: %[[B:.+]] = arith.addf %{{.+}}, %[[BIAS]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.addf %[[B]], %[[RES]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.maximumf %[[R]], %{{.+}} : f32
// CHECK-NEXT: memref.store %[[Y]], %{{.+}}[%[[ROW]], %[[COL]]] {alignment = 8 : i64} : memref<32x32xf32, strided<[64, 1], offset: ?>>
// CHECK-NEXT: memref.load %{{.+}}[%[[COL2:.+]]] : memref<32xf32, strided<[1], offset: ?>>
// CHECK-COUNT-31: memref.store %{{.+}}, %{{.+}} : memref<32x32xf32, strided<[64, 1], offset: ?>>
// CHECK-NOT: memref.store
// CHECK-NOT: linalg.
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @deep_k(%x: memref<64x256xf16>, %w: memref<256x64xf16>, %bias: memref<64xf32>, %res: memref<64x64xf32>, %y: memref<64x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (32, 32) {
    %xs = memref.subview %x[%i, 0] [32, 256] [1, 1] : memref<64x256xf16> to memref<32x256xf16, strided<[256, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [256, 32] [1, 1] : memref<256x64xf16> to memref<256x32xf16, strided<[64, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [32, 32] [1, 1] : memref<64x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
    %rs = memref.subview %res[%i, %j] [32, 32] [1, 1] : memref<64x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
    %bs = memref.subview %bias[%j] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<32x256xf16, strided<[256, 1], offset: ?>>, memref<256x32xf16, strided<[64, 1], offset: ?>>) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_0 : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    linalg.generic {indexing_maps = [#id, #bias, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%ys, %bs, %rs : memref<32x32xf32, strided<[64, 1], offset: ?>>, memref<32xf32, strided<[1], offset: ?>>, memref<32x32xf32, strided<[64, 1], offset: ?>>) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %b: f32, %r: f32, %out: f32):
      %0 = arith.addf %in, %b : f32
      %1 = arith.addf %0, %r : f32
      %2 = arith.maximumf %1, %zero : f32
      linalg.yield %2 : f32
    }
  }
  return
}
