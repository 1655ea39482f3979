// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=amd},kiln-contract-with-matrix-cores{arch=amd}))' | FileCheck %s

// MFMA's fragments, one 16x16 output tile a wavefront (64 lanes), K = 32.
// Lane l holds column l % 16 of B's step and row l % 16 of A's; l / 16
// picks its 4 consecutive elements along K. float16: steps of 16 along K,
// one mfma 16x16x16 each over 4 halves of A and 4 of B; the lane keeps 4
// accumulators (rows 4 (l / 16) .. + 3 of column l % 16) and stores each
// once.
// CHECK-LABEL: func.func @tile_f16
// CHECK-SAME: kiln.contraction = #kiln.contraction<warps, "mfma 16x16x16", block = [16, 16, 32], tile = [16, 16], stage_k = 0
// CHECK-SAME: kiln.lanes = 64 : i64
// CHECK: %[[LANE:.+]] = gpu.lane_id
// CHECK: arith.divui %[[LANE]], %c16
// CHECK: arith.remui %[[LANE]], %c16
// CHECK: scf.for %{{.+}} = %c0{{.*}} to %c32 step %c16{{.*}} -> (vector<4xf32>)
// CHECK-COUNT-4: memref.load %arg0[{{.+}}] : memref<16x32xf16>
// CHECK-COUNT-4: memref.load %arg1[{{.+}}] : memref<32x16xf16>
// CHECK: amdgpu.mfma 16x16x16 %{{.+}} * %{{.+}} + %{{.+}} blgp = none : vector<4xf16>, vector<4xf16>, vector<4xf32>
// CHECK-NOT: amdgpu.mfma
// CHECK: scf.yield
// CHECK-COUNT-4: memref.store %{{.+}}, %arg2[{{.+}}] : memref<16x16xf32>
// CHECK-NOT: memref.store
// CHECK: return

// bfloat16: the same fragments and instruction shape.
// CHECK-LABEL: func.func @tile_bf16
// CHECK-SAME: "mfma 16x16x16"
// CHECK: amdgpu.mfma 16x16x16 {{.*}} : vector<4xbf16>, vector<4xbf16>, vector<4xf32>

// float32: no MFMA instruction is taken (AMD has no TF32 here), so the
// tile is left to the thread-tile path.
// CHECK-LABEL: func.func @tile_f32
// CHECK-NOT: kiln.lanes
// CHECK: linalg.generic
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @tile_f16(%x: memref<16x32xf16>, %w: memref<32x16xf16>, %y: memref<16x16xf32>) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (1) {
    linalg.fill ins(%zero : f32) outs(%y : memref<16x16xf32>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<16x32xf16>, memref<32x16xf16>) outs(%y : memref<16x16xf32>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_0 : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}
func.func @tile_bf16(%x: memref<16x32xbf16>, %w: memref<32x16xbf16>, %y: memref<16x16xf32>) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (1) {
    linalg.fill ins(%zero : f32) outs(%y : memref<16x16xf32>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<16x32xbf16>, memref<32x16xbf16>) outs(%y : memref<16x16xf32>) {
    ^bb0(%in: bf16, %in_0: bf16, %out: f32):
      %0 = arith.extf %in : bf16 to f32
      %1 = arith.extf %in_0 : bf16 to f32
      %2 = arith.mulf %0, %1 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}
func.func @tile_f32(%x: memref<16x32xf32>, %w: memref<32x16xf32>, %y: memref<16x16xf32>) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (1) {
    linalg.fill ins(%zero : f32) outs(%y : memref<16x16xf32>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<16x32xf32>, memref<32x16xf32>) outs(%y : memref<16x16xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}
