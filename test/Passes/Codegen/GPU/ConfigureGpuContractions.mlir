// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia workgroup-memory-bytes=166912}))' | FileCheck %s --check-prefix=SM80
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia wgmma=true workgroup-memory-bytes=232448}))' | FileCheck %s --check-prefix=SM90A
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia wgmma=true workgroup-memory-bytes=49152}))' | FileCheck %s --check-prefix=SM90A48K
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia wgmma=true wgmma-groups-in-flight=0 workgroup-memory-bytes=232448}))' | FileCheck %s --check-prefix=SERIAL
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=nvidia tf32=true workgroup-memory-bytes=232448}))' | FileCheck %s --check-prefix=TF32
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-gpu-contractions{arch=amd workgroup-memory-bytes=49152}))' | FileCheck %s --check-prefix=GFX942

// The config alone, per target (the options the pipeline gives sm_80,
// sm_90a, sm_90a under --workgroup-memory-limit=49152 or with
// --wgmma-groups-in-flight=0, --allow-tf32, and gfx942): each kernel's
// output block, as kiln-configure-gpu-kernels and kiln-tile-and-distribute
// made it, gets the kiln.contraction that kiln-contract-with-matrix-cores or
// kiln-contract-with-thread-tiles builds.

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
// A 128x128 float16 block over K = 1024: warps of 64x64 on mma.sync, four
// cp.async buffers of 32 along K in sm_80's 163 KiB; on sm_90a two
// warpgroups of wgmma m64n128k16 and five buffers (a group left running
// holds one more), or four of 16 in 48 KiB (two of 32 would keep only one
// stage in flight); on gfx942 MFMA with two buffers filled from registers.
// SM80-LABEL: func.func @block128_f16
// SM80-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16", block = [128, 128, 1024], tile = [64, 64], stage_k = 32, stage_buffers = 4, groups_in_flight = 0>
// SM90A-LABEL: func.func @block128_f16
// SM90A-SAME: kiln.contraction = #kiln.contraction<warpgroups, "wgmma m64n128k16", block = [128, 128, 1024], tile = [16, 128], stage_k = 32, stage_buffers = 5, groups_in_flight = 1>
// SM90A48K-LABEL: func.func @block128_f16
// SM90A48K-SAME: kiln.contraction = #kiln.contraction<warpgroups, "wgmma m64n128k16", block = [128, 128, 1024], tile = [16, 128], stage_k = 16, stage_buffers = 4, groups_in_flight = 1>
// SERIAL-LABEL: func.func @block128_f16
// SERIAL-SAME: kiln.contraction = #kiln.contraction<warpgroups, "wgmma m64n128k16", block = [128, 128, 1024], tile = [16, 128], stage_k = 32, stage_buffers = 4, groups_in_flight = 0>
// TF32-LABEL: func.func @block128_f16
// TF32-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16", block = [128, 128, 1024], tile = [64, 64]
// GFX942-LABEL: func.func @block128_f16
// GFX942-SAME: kiln.contraction = #kiln.contraction<warps, "mfma 16x16x16", block = [128, 128, 1024], tile = [64, 64], stage_k = 32, stage_buffers = 0, groups_in_flight = 0>
func.func @block128_f16(%x: memref<256x1024xf16>, %w: memref<1024x256xf16>, %y: memref<256x256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (256, 256) step (128, 128) {
    %xs = memref.subview %x[%i, 0] [128, 1024] [1, 1] : memref<256x1024xf16> to memref<128x1024xf16, strided<[1024, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [1024, 128] [1, 1] : memref<1024x256xf16> to memref<1024x128xf16, strided<[256, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [128, 128] [1, 1] : memref<256x256xf32> to memref<128x128xf32, strided<[256, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<128x128xf32, strided<[256, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<128x1024xf16, strided<[1024, 1], offset: ?>>, memref<1024x128xf16, strided<[256, 1], offset: ?>>) outs(%ys : memref<128x128xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in_0 : f16 to f32
      %1 = arith.extf %in : f16 to f32
      %2 = arith.mulf %1, %0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
// A 64x64 block: four warps of 32x32, or one warpgroup on sm_90a.
// SM80-LABEL: func.func @block64_f16
// SM80-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16", block = [64, 64, 512], tile = [32, 32], stage_k = 32, stage_buffers = 4, groups_in_flight = 0>
// SM90A-LABEL: func.func @block64_f16
// SM90A-SAME: kiln.contraction = #kiln.contraction<warpgroups, "wgmma m64n64k16", block = [64, 64, 512], tile = [16, 64], stage_k = 32, stage_buffers = 5, groups_in_flight = 1>
// GFX942-LABEL: func.func @block64_f16
// GFX942-SAME: kiln.contraction = #kiln.contraction<warps, "mfma 16x16x16", block = [64, 64, 512], tile = [32, 32], stage_k = 32, stage_buffers = 0
func.func @block64_f16(%x: memref<128x512xf16>, %w: memref<512x256xf16>, %y: memref<128x256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (128, 256) step (64, 64) {
    %xs = memref.subview %x[%i, 0] [64, 512] [1, 1] : memref<128x512xf16> to memref<64x512xf16, strided<[512, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [512, 64] [1, 1] : memref<512x256xf16> to memref<512x64xf16, strided<[256, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [64, 64] [1, 1] : memref<128x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<64x512xf16, strided<[512, 1], offset: ?>>, memref<512x64xf16, strided<[256, 1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in_0 : f16 to f32
      %1 = arith.extf %in : f16 to f32
      %2 = arith.mulf %1, %0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
// 14 rows (a 14-pixel image row) are computed as 16, wasting an eighth;
// a single 16x16 block is one warp reading global memory (no stages), on
// every target: wgmma needs rows that 64 divides.
// SM80-LABEL: func.func @rows14_f16
// SM80-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16", block = [16, 16, 48], tile = [16, 16], stage_k = 0, stage_buffers = 0, groups_in_flight = 0>
// SM90A-LABEL: func.func @rows14_f16
// SM90A-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16", block = [16, 16, 48], tile = [16, 16], stage_k = 0
// GFX942-LABEL: func.func @rows14_f16
// GFX942-SAME: kiln.contraction = #kiln.contraction<warps, "mfma 16x16x16", block = [16, 16, 48], tile = [16, 16], stage_k = 0
func.func @rows14_f16(%x: memref<28x48xf16>, %w: memref<48x32xf16>, %y: memref<28x32xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (28, 32) step (14, 16) {
    %xs = memref.subview %x[%i, 0] [14, 48] [1, 1] : memref<28x48xf16> to memref<14x48xf16, strided<[48, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [48, 16] [1, 1] : memref<48x32xf16> to memref<48x16xf16, strided<[32, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [14, 16] [1, 1] : memref<28x32xf32> to memref<14x16xf32, strided<[32, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<14x16xf32, strided<[32, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<14x48xf16, strided<[48, 1], offset: ?>>, memref<48x16xf16, strided<[32, 1], offset: ?>>) outs(%ys : memref<14x16xf32, strided<[32, 1], offset: ?>>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in_0 : f16 to f32
      %1 = arith.extf %in : f16 to f32
      %2 = arith.mulf %1, %0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
// Float32 operands: thread tiles of 4x4 outputs, stages of 16 along K;
// with tf32=true (--allow-tf32) mma.sync m16n8k8 on 32x32 warp tiles,
// stages filled from registers: TF32 fragments are loaded element by
// element from [tile][k] buffers (no ldmatrix), which cp.async's runs
// along the operands' global order would not fill.
// SM80-LABEL: func.func @block64_f32
// SM80-SAME: kiln.contraction = #kiln.contraction<threads, "fma", block = [64, 64, 256], tile = [4, 4], stage_k = 16, stage_buffers = 0, groups_in_flight = 0>
// SM90A-LABEL: func.func @block64_f32
// SM90A-SAME: kiln.contraction = #kiln.contraction<threads, "fma"
// TF32-LABEL: func.func @block64_f32
// TF32-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k8 tf32", block = [64, 64, 256], tile = [32, 32], stage_k = 32, stage_buffers = 0, groups_in_flight = 0>
// GFX942-LABEL: func.func @block64_f32
// GFX942-SAME: kiln.contraction = #kiln.contraction<threads, "fma", block = [64, 64, 256], tile = [4, 4], stage_k = 16
func.func @block64_f32(%x: memref<128x256xf32>, %w: memref<256x128xf32>, %y: memref<128x128xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (128, 128) step (64, 64) {
    %xs = memref.subview %x[%i, 0] [64, 256] [1, 1] : memref<128x256xf32> to memref<64x256xf32, strided<[256, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [256, 64] [1, 1] : memref<256x128xf32> to memref<256x64xf32, strided<[128, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [64, 64] [1, 1] : memref<128x128xf32> to memref<64x64xf32, strided<[128, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<64x64xf32, strided<[128, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<64x256xf32, strided<[256, 1], offset: ?>>, memref<256x64xf32, strided<[128, 1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[128, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
// K = 24 (input channels) is walked as 32, the operands reading zeros past
// it: one stage, copied into its own buffer before the loop.
// SM80-LABEL: func.func @block64_bf16_k24
// SM80-SAME: kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16", block = [64, 64, 32], tile = [32, 32], stage_k = 32, stage_buffers = 1, groups_in_flight = 0>
// SM90A-LABEL: func.func @block64_bf16_k24
// SM90A-SAME: kiln.contraction = #kiln.contraction<warpgroups, "wgmma m64n64k16", block = [64, 64, 32], tile = [16, 64], stage_k = 32, stage_buffers = 1, groups_in_flight = 1>
// GFX942-LABEL: func.func @block64_bf16_k24
// GFX942-SAME: kiln.contraction = #kiln.contraction<warps, "mfma 16x16x16", block = [64, 64, 32], tile = [32, 32], stage_k = 32, stage_buffers = 0
func.func @block64_bf16_k24(%x: memref<128x24xbf16>, %w: memref<24x128xbf16>, %y: memref<128x128xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (128, 128) step (64, 64) {
    %xs = memref.subview %x[%i, 0] [64, 24] [1, 1] : memref<128x24xbf16> to memref<64x24xbf16, strided<[24, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [24, 64] [1, 1] : memref<24x128xbf16> to memref<24x64xbf16, strided<[128, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [64, 64] [1, 1] : memref<128x128xf32> to memref<64x64xf32, strided<[128, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<64x64xf32, strided<[128, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<64x24xbf16, strided<[24, 1], offset: ?>>, memref<24x64xbf16, strided<[128, 1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[128, 1], offset: ?>>) {
    ^bb0(%in: bf16, %in_0: bf16, %out: f32):
      %0 = arith.extf %in_0 : bf16 to f32
      %1 = arith.extf %in : bf16 to f32
      %2 = arith.mulf %1, %0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}


// -----

// Not a contraction output block (a row reduction): no config.
// SM80-LABEL: func.func @row_sum
// SM80-NOT: kiln.contraction
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%x: memref<64x128xf32>, %y: memref<64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  scf.forall (%i) = (0) to (64) step (16) {
    %xs = memref.subview %x[%i, 0] [16, 128] [1, 1] : memref<64x128xf32> to memref<16x128xf32, strided<[128, 1], offset: ?>>
    %ys = memref.subview %y[%i] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]} ins(%xs : memref<16x128xf32, strided<[128, 1], offset: ?>>) outs(%ys : memref<16xf32, strided<[1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.addf %in, %out : f32
      linalg.yield %0 : f32
    }
  }
  return
}
