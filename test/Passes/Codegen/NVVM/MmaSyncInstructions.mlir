// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia tf32=true},kiln-contract-with-matrix-cores{arch=nvidia}))' | FileCheck %s

// mma.sync's fragments, one 16x16 output tile a warp (32 lanes), K = 32.
// Lane l = 4g + t holds rows g and g + 8 of the tile. float16: steps of 16
// along K, each two m16n8k16 (one per 8 columns) over A's fragment of 8
// halves (4 registers of 2; rows g and g + 8, columns 2t, 2t + 1 and
// 2t + 8, 2t + 9 of the step) and B's of 4 per 8 columns (2 registers of 2);
// the lane keeps 2 x 4 accumulators and stores each once.
// CHECK-LABEL: func.func @tile_f16
// CHECK-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16", block = [16, 16, 32], tile = [16, 16], stage_k = 0
// CHECK-SAME: kiln.lanes = 32 : i64
// CHECK: %[[LANE:.+]] = gpu.lane_id
// CHECK: arith.divui %[[LANE]], %c4
// CHECK: arith.remui %[[LANE]], %c4
// CHECK: scf.for %{{.+}} = %c0{{.*}} to %c32 step %c16{{.*}} -> (vector<2x2xf32>, vector<2x2xf32>)
// CHECK-COUNT-8: memref.load %arg0[{{.+}}] : memref<16x32xf16>
// CHECK-COUNT-8: memref.load %arg1[{{.+}}] : memref<32x16xf16>
// CHECK: nvgpu.mma.sync(%{{.+}}, %{{.+}}, %{{.+}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-NEXT: nvgpu.mma.sync(%{{.+}}, %{{.+}}, %{{.+}}) {mmaShape = [16, 8, 16]}
// CHECK: scf.yield
// CHECK-COUNT-8: memref.store %{{.+}}, %arg2[{{.+}}] {{.*}}: memref<16x16xf32>
// CHECK-NOT: memref.store
// CHECK: return

// bfloat16: the same fragments; nvvm.mma.sync itself (nvgpu.mma.sync
// covers float16 only), each pair packed in a 32-bit register.
// CHECK-LABEL: func.func @tile_bf16
// CHECK-SAME: "mma.sync m16n8k16"
// CHECK: scf.for %{{.+}} = %c0{{.*}} to %c32 step %c16
// CHECK: nvvm.mma.sync A[{{.+}}] B[{{.+}}] C[{{.+}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield

// float32 with TF32 allowed: m16n8k8, steps of 8 along K; A's fragment is
// 4 elements (rows g, g + 8; columns t, t + 4), B's 2 per 8 columns.
// CHECK-LABEL: func.func @tile_f32
// CHECK-SAME: "mma.sync m16n8k8 tf32"
// CHECK: scf.for %{{.+}} = %c0{{.*}} to %c32 step %c8
// CHECK-COUNT-4: memref.load %arg0[{{.+}}] : memref<16x32xf32>
// CHECK-COUNT-4: memref.load %arg1[{{.+}}] : memref<32x16xf32>
// CHECK: nvgpu.mma.sync(%{{.+}}, %{{.+}}, %{{.+}}) {mmaShape = [16, 8, 8], tf32Enabled} : (vector<4x1xf32>, vector<2x1xf32>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK-NEXT: nvgpu.mma.sync
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
