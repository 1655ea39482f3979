// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia},kiln-contract-with-matrix-cores{arch=nvidia}))' | FileCheck %s --check-prefix=NV
// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=amd},kiln-contract-with-matrix-cores{arch=amd}))' | FileCheck %s --check-prefix=AMD

// A warp's matrix instructions by vendor (warpMatrixInstructions,
// passes/Codegen/GPU/MatrixInstructions.cpp) and the fragments
// loadFragment builds from the loaded elements, for one float16 matmul
// into float32 (16 x 16, K = 32).
// On NVIDIA, mma.sync m16n8k16: A's fragment 4 rows of 2 halves and B's 2 of
// 2, each row built from its elements and inserted.
// NV-LABEL: func.func @matmul_f16
// NV-COUNT-4: vector.insert %{{.+}}, %{{.+}} [{{[0-3]}}] : vector<2xf16> into vector<4x2xf16>
// NV-COUNT-2: vector.insert %{{.+}}, %{{.+}} [{{[0-1]}}] : vector<2xf16> into vector<2x2xf16>
// NV: nvgpu.mma.sync({{.+}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// NV-NOT: amdgpu.mfma
// On AMD, MFMA 16x16x16 on a 64-lane wave, each fragment one vector of 4
// halves.
// AMD-LABEL: func.func @matmul_f16
// AMD-SAME: "mfma 16x16x16"
// AMD: %[[A:.+]] = vector.from_elements %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : vector<4xf16>
// AMD: %[[B:.+]] = vector.from_elements %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : vector<4xf16>
// AMD: amdgpu.mfma 16x16x16 %[[A]] * %[[B]]
// AMD-NOT: nvgpu.mma.sync
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @matmul_f16(%x: memref<16x32xf16>, %w: memref<32x16xf16>, %y: memref<16x16xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  scf.forall (%i) in (1) {
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<16x32xf16>, memref<32x16xf16>) outs(%y : memref<16x16xf32>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in : f16 to f32
      %1 = arith.extf %in_0 : f16 to f32
      %2 = arith.mulf %0, %1 : f32
      %4 = arith.addf %out, %2 : f32
      linalg.yield %4 : f32
    }
  }
  return
}
