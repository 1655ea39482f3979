// RUN: kiln-emulate-gpu %s --target=cuda | FileCheck %s --check-prefix=NV
// RUN: kiln-emulate-gpu %s --target=rocm | FileCheck %s --check-prefix=AMD
// RUN: kiln-emulate-gpu %s --target=cuda --allow-tf32 | FileCheck %s --check-prefix=TF32

// The GPU code generation of matrix kernels, run: kiln-emulate-gpu gives
// each kernel to kiln-contract-with-matrix-cores and kiln-map-kernels-to-gpu,
// runs the gpu.func on the CPU (a fiber per GPU thread, barriers and
// warp-wide matrix instructions as on the device, workgroup memory starting
// as NaN) and compares every buffer with the kernel run as plain loops.
// One 16x16 tile per warp, fragments from global memory; a block per warp
// (four tiles: far fewer blocks than SMs):
// NV: matmul_f16_bias_relu: 4 blocks x 32 threads, mma.sync m16n8k16, 0 workgroup buffers: max error {{.*}}: OK
// AMD: matmul_f16_bias_relu: 4 blocks x 64 threads, mfma 16x16x16, 0 workgroup buffers: max error {{.*}}: OK
// 64x64 blocks of four warps staging operands through workgroup memory:
// NV: matmul_f16_staged: 8 blocks x 128 threads, mma.sync m16n8k16, 2 workgroup buffers: max error {{.*}}: OK
// AMD: matmul_f16_staged: 8 blocks x 256 threads, mfma 16x16x16, 2 workgroup buffers: max error {{.*}}: OK
// 128x128 blocks: four warps of 64x64 (4x4 subtiles each), on NVIDIA
// cp.async buffers of 32 along K per operand (K = 64: two stages, three
// buffers; A's rows swizzled, B's [k][n] rows padded); 128x64 blocks with a bias: four
// warps of 64x32, K = 192 in six stages through three buffers per operand
// on NVIDIA (two stages in flight).
// NV: matmul_f16_block128: 4 blocks x 128 threads, mma.sync m16n8k16, 2 workgroup buffers: max error {{.*}}: OK
// AMD: matmul_f16_block128: 4 blocks x 256 threads, mfma 16x16x16, 2 workgroup buffers: max error {{.*}}: OK
// NV: matmul_f16_block128x64: 4 blocks x 128 threads, mma.sync m16n8k16, 2 workgroup buffers: max error {{.*}}: OK
// AMD: matmul_f16_block128x64: 4 blocks x 256 threads, mfma 16x16x16, 2 workgroup buffers: max error {{.*}}: OK
// A transposed B ([N][K]: the copy runs along K) in 64x32 blocks of two
// warps, K = 48 in stages of 16:
// NV: gemm_f16_transb_staged: 4 blocks x 64 threads, mma.sync m16n8k16, 2 workgroup buffers: max error {{.*}}: OK
// AMD: gemm_f16_transb_staged: 4 blocks x 128 threads, mfma 16x16x16, 2 workgroup buffers: max error {{.*}}: OK
// A 3x3 convolution as implicit GEMM: 32 output columns x 64 filters per
// block (two warps), 16 channels per stage, the window around the stages:
// NV: conv3x3_f16_staged: 4 blocks x 64 threads, mma.sync m16n8k16, 2 workgroup buffers: max error {{.*}}: OK
// AMD: conv3x3_f16_staged: 4 blocks x 128 threads, mfma 16x16x16, 2 workgroup buffers: max error {{.*}}: OK
// float32: TF32 tensor cores with --allow-tf32 (m16n8k8, staged); otherwise, and
// on AMD, kiln-contract-with-thread-tiles: 256 threads of 4x4 outputs each,
// staging k-major slices through workgroup memory.
// NV: matmul_f32_staged: 4 blocks x 256 threads, thread tiles 4x4, 2 workgroup buffers: max error {{.*}}: OK
// AMD: matmul_f32_staged: 4 blocks x 256 threads, thread tiles 4x4, 2 workgroup buffers: max error {{.*}}: OK
// TF32: matmul_f32_staged: 4 blocks x 128 threads, mma.sync m16n8k8 tf32, 2 workgroup buffers: max error {{.*}}: OK
// 128x128 float32 blocks: 256 threads of 8x8 outputs in runs of 4 half
// the block apart, K = 64 in four stages of 16; on TF32 tensor cores,
// four 64x64 warps in stages of 16 (two buffers of 32 would need 72 KiB of
// workgroup memory, over the 48 a block may declare):
// NV: matmul_f32_block128: 4 blocks x 256 threads, thread tiles 8x8, 2 workgroup buffers: max error {{.*}}: OK
// AMD: matmul_f32_block128: 4 blocks x 256 threads, thread tiles 8x8, 2 workgroup buffers: max error {{.*}}: OK
// TF32: matmul_f32_block128: 4 blocks x 128 threads, mma.sync m16n8k8 tf32, 2 workgroup buffers: max error {{.*}}: OK
// A 3x3 convolution whose block is a 28-pixel output row by 128 filters:
// 7 x 16 threads of 4x8 outputs (the filters in two runs of 4, 64 apart).
// NV: conv3x3_f32_filters128: 4 blocks x 112 threads, thread tiles 4x8, 2 workgroup buffers: max error {{.*}}: OK
// AMD: conv3x3_f32_filters128: 4 blocks x 112 threads, thread tiles 4x8, 2 workgroup buffers: max error {{.*}}: OK
// Thread tiles at odd sizes (below):
// NV: conv3x3_f32_stride2_rows: 4 blocks x 42 threads, thread tiles 2x4, 2 workgroup buffers: max error {{.*}}: OK
// NV: gemm_f32_alpha_transb: 4 blocks x 64 threads, thread tiles 4x4, 2 workgroup buffers: max error {{.*}}: OK
// AMD: conv3x3_f32_stride2_rows: 4 blocks x 42 threads, thread tiles 2x4, 2 workgroup buffers: max error {{.*}}: OK
// AMD: gemm_f32_alpha_transb: 4 blocks x 64 threads, thread tiles 4x4, 2 workgroup buffers: max error {{.*}}: OK

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @matmul_f16_bias_relu(%x: memref<32x64xf16>, %w: memref<64x32xf16>, %b: memref<32xf16>, %y: memref<32x32xf16>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (32, 32) step (16, 16) {
    %xs = memref.subview %x[%i, 0] [16, 64] [1, 1] : memref<32x64xf16> to memref<16x64xf16, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 16] [1, 1] : memref<64x32xf16> to memref<64x16xf16, strided<[32, 1], offset: ?>>
    %acc = memref.alloca() : memref<16x16xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<16x16xf32>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<16x64xf16, strided<[64, 1], offset: ?>>, memref<64x16xf16, strided<[32, 1], offset: ?>>) outs(%acc : memref<16x16xf32>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in_0 : f16 to f32
      %1 = arith.extf %in : f16 to f32
      %2 = arith.mulf %1, %0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    %bs = memref.subview %b[%j] [16] [1] : memref<32xf16> to memref<16xf16, strided<[1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [16, 16] [1, 1] : memref<32x32xf16> to memref<16x16xf16, strided<[32, 1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%acc, %bs : memref<16x16xf32>, memref<16xf16, strided<[1], offset: ?>>) outs(%ys : memref<16x16xf16, strided<[32, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f16, %out: f16):
      %0 = arith.extf %in_0 : f16 to f32
      %1 = arith.addf %in, %0 : f32
      %2 = arith.maximumf %1, %zero : f32
      %3 = arith.truncf %2 : f32 to f16
      linalg.yield %3 : f16
    }
  }
  return
}

func.func @matmul_f16_staged(%x: memref<128x128xf16>, %w: memref<128x256xf16>, %b: memref<256xf32>, %y: memref<128x256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (128, 256) step (64, 64) {
    %xs = memref.subview %x[%i, 0] [64, 128] [1, 1] : memref<128x128xf16> to memref<64x128xf16, strided<[128, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [128, 64] [1, 1] : memref<128x256xf16> to memref<128x64xf16, strided<[256, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [64, 64] [1, 1] : memref<128x256xf32> to memref<64x64xf32, strided<[256, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<64x128xf16, strided<[128, 1], offset: ?>>, memref<128x64xf16, strided<[256, 1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in_0 : f16 to f32
      %1 = arith.extf %in : f16 to f32
      %2 = arith.mulf %1, %0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    %bs = memref.subview %b[%j] [64] [1] : memref<256xf32> to memref<64xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%ys, %bs : memref<64x64xf32, strided<[256, 1], offset: ?>>, memref<64xf32, strided<[1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.addf %in, %in_0 : f32
      linalg.yield %0 : f32
    }
  }
  return
}

func.func @matmul_f16_block128(%x: memref<256x64xf16>, %w: memref<64x256xf16>, %y: memref<256x256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (256, 256) step (128, 128) {
    %xs = memref.subview %x[%i, 0] [128, 64] [1, 1] : memref<256x64xf16> to memref<128x64xf16, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 128] [1, 1] : memref<64x256xf16> to memref<64x128xf16, strided<[256, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [128, 128] [1, 1] : memref<256x256xf32> to memref<128x128xf32, strided<[256, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<128x128xf32, strided<[256, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<128x64xf16, strided<[64, 1], offset: ?>>, memref<64x128xf16, strided<[256, 1], offset: ?>>) outs(%ys : memref<128x128xf32, strided<[256, 1], offset: ?>>) {
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

func.func @matmul_f16_block128x64(%x: memref<256x192xf16>, %w: memref<192x128xf16>, %b: memref<128xf32>, %y: memref<256x128xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (256, 128) step (128, 64) {
    %xs = memref.subview %x[%i, 0] [128, 192] [1, 1] : memref<256x192xf16> to memref<128x192xf16, strided<[192, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [192, 64] [1, 1] : memref<192x128xf16> to memref<192x64xf16, strided<[128, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [128, 64] [1, 1] : memref<256x128xf32> to memref<128x64xf32, strided<[128, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<128x64xf32, strided<[128, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<128x192xf16, strided<[192, 1], offset: ?>>, memref<192x64xf16, strided<[128, 1], offset: ?>>) outs(%ys : memref<128x64xf32, strided<[128, 1], offset: ?>>) {
    ^bb0(%in: f16, %in_0: f16, %out: f32):
      %0 = arith.extf %in_0 : f16 to f32
      %1 = arith.extf %in : f16 to f32
      %2 = arith.mulf %1, %0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    %bs = memref.subview %b[%j] [64] [1] : memref<128xf32> to memref<64xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%ys, %bs : memref<128x64xf32, strided<[128, 1], offset: ?>>, memref<64xf32, strided<[1], offset: ?>>) outs(%ys : memref<128x64xf32, strided<[128, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.addf %in, %in_0 : f32
      linalg.yield %0 : f32
    }
  }
  return
}

#wt = affine_map<(d0, d1, d2) -> (d2, d1)>
func.func @gemm_f16_transb_staged(%x: memref<128x48xf16>, %w: memref<64x48xf16>, %y: memref<128x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (128, 64) step (64, 32) {
    %xs = memref.subview %x[%i, 0] [64, 48] [1, 1] : memref<128x48xf16> to memref<64x48xf16, strided<[48, 1], offset: ?>>
    %ws = memref.subview %w[%j, 0] [32, 48] [1, 1] : memref<64x48xf16> to memref<32x48xf16, strided<[48, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [64, 32] [1, 1] : memref<128x64xf32> to memref<64x32xf32, strided<[64, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<64x32xf32, strided<[64, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #wt, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<64x48xf16, strided<[48, 1], offset: ?>>, memref<32x48xf16, strided<[48, 1], offset: ?>>) outs(%ys : memref<64x32xf32, strided<[64, 1], offset: ?>>) {
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

#cx = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#cw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#co = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#cb = affine_map<(n, f, oh, ow) -> (f)>
#cid = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
func.func @conv3x3_f16_staged(%x: memref<1x16x6x34xf16>, %w: memref<64x16x3x3xf16>, %b: memref<64xf32>, %y: memref<1x64x4x32xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  scf.forall (%oh) in (4) {
    %xs = memref.subview %x[0, 0, %oh, 0] [1, 16, 3, 34] [1, 1, 1, 1] : memref<1x16x6x34xf16> to memref<1x16x3x34xf16, strided<[3264, 204, 34, 1], offset: ?>>
    %ys = memref.subview %y[0, 0, %oh, 0] [1, 64, 1, 32] [1, 1, 1, 1] : memref<1x64x4x32xf32> to memref<1x64x1x32xf32, strided<[8192, 128, 32, 1], offset: ?>>
    linalg.generic {indexing_maps = [#cb, #cid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<64xf32>) outs(%ys : memref<1x64x1x32xf32, strided<[8192, 128, 32, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
    linalg.generic {indexing_maps = [#cx, #cw, #co], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%xs, %w : memref<1x16x3x34xf16, strided<[3264, 204, 34, 1], offset: ?>>, memref<64x16x3x3xf16>) outs(%ys : memref<1x64x1x32xf32, strided<[8192, 128, 32, 1], offset: ?>>) {
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

func.func @matmul_f32_staged(%x: memref<128x64xf32>, %w: memref<64x128xf32>, %y: memref<128x128xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (128, 128) step (64, 64) {
    %xs = memref.subview %x[%i, 0] [64, 64] [1, 1] : memref<128x64xf32> to memref<64x64xf32, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 64] [1, 1] : memref<64x128xf32> to memref<64x64xf32, strided<[128, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [64, 64] [1, 1] : memref<128x128xf32> to memref<64x64xf32, strided<[128, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<64x64xf32, strided<[128, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<64x64xf32, strided<[64, 1], offset: ?>>, memref<64x64xf32, strided<[128, 1], offset: ?>>) outs(%ys : memref<64x64xf32, strided<[128, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}

func.func @matmul_f32_block128(%x: memref<256x64xf32>, %w: memref<64x256xf32>, %b: memref<256xf32>, %y: memref<256x256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (256, 256) step (128, 128) {
    %xs = memref.subview %x[%i, 0] [128, 64] [1, 1] : memref<256x64xf32> to memref<128x64xf32, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 128] [1, 1] : memref<64x256xf32> to memref<64x128xf32, strided<[256, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [128, 128] [1, 1] : memref<256x256xf32> to memref<128x128xf32, strided<[256, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<128x128xf32, strided<[256, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<128x64xf32, strided<[64, 1], offset: ?>>, memref<64x128xf32, strided<[256, 1], offset: ?>>) outs(%ys : memref<128x128xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    %bs = memref.subview %b[%j] [128] [1] : memref<256xf32> to memref<128xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%ys, %bs : memref<128x128xf32, strided<[256, 1], offset: ?>>, memref<128xf32, strided<[1], offset: ?>>) outs(%ys : memref<128x128xf32, strided<[256, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.maximumf %in, %in_0 : f32
      linalg.yield %0 : f32
    }
  }
  return
}

func.func @conv3x3_f32_filters128(%x: memref<1x8x6x30xf32>, %w: memref<128x8x3x3xf32>, %b: memref<128xf32>, %y: memref<1x128x4x28xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  scf.forall (%oh) in (4) {
    %xs = memref.subview %x[0, 0, %oh, 0] [1, 8, 3, 30] [1, 1, 1, 1] : memref<1x8x6x30xf32> to memref<1x8x3x30xf32, strided<[1440, 180, 30, 1], offset: ?>>
    %ys = memref.subview %y[0, 0, %oh, 0] [1, 128, 1, 28] [1, 1, 1, 1] : memref<1x128x4x28xf32> to memref<1x128x1x28xf32, strided<[14336, 112, 28, 1], offset: ?>>
    linalg.generic {indexing_maps = [#cb, #cid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<128xf32>) outs(%ys : memref<1x128x1x28xf32, strided<[14336, 112, 28, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
    linalg.generic {indexing_maps = [#cx, #cw, #co], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%xs, %w : memref<1x8x3x30xf32, strided<[1440, 180, 30, 1], offset: ?>>, memref<128x8x3x3xf32>) outs(%ys : memref<1x128x1x28xf32, strided<[14336, 112, 28, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}

// kiln-contract-with-thread-tiles at odd sizes: a 3x3 convolution at
// stride 2 whose block is a whole 14-pixel output row by 24 filters (2x4
// outputs per thread, 42 threads: a warp and a part), 6 channels in stages
// of 2 (the last share of each stage copy guarded), bias and ReLU.
#sx = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#srow = affine_map<(d) -> (d * 2)>
func.func @conv3x3_f32_stride2_rows(%x: memref<1x6x9x29xf32>, %w: memref<24x6x3x3xf32>, %b: memref<24xf32>, %y: memref<1x24x4x14xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%oh) in (4) {
    %row = affine.apply #srow(%oh)
    %xs = memref.subview %x[0, 0, %row, 0] [1, 6, 3, 29] [1, 1, 1, 1] : memref<1x6x9x29xf32> to memref<1x6x3x29xf32, strided<[1566, 261, 29, 1], offset: ?>>
    %ys = memref.subview %y[0, 0, %oh, 0] [1, 24, 1, 14] [1, 1, 1, 1] : memref<1x24x4x14xf32> to memref<1x24x1x14xf32, strided<[1344, 56, 14, 1], offset: ?>>
    linalg.generic {indexing_maps = [#cb, #cid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b : memref<24xf32>) outs(%ys : memref<1x24x1x14xf32, strided<[1344, 56, 14, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
    linalg.generic {indexing_maps = [#sx, #cw, #co], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%xs, %w : memref<1x6x3x29xf32, strided<[1566, 261, 29, 1], offset: ?>>, memref<24x6x3x3xf32>) outs(%ys : memref<1x24x1x14xf32, strided<[1344, 56, 14, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
    linalg.generic {indexing_maps = [#cid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%ys : memref<1x24x1x14xf32, strided<[1344, 56, 14, 1], offset: ?>>) {
    ^bb0(%out: f32):
      %0 = arith.maximumf %out, %zero : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// Gemm with alpha (the products scaled: the sum starts from zero and is
// scaled once, then added to the bias already in the output) and a
// transposed B, 32x32 blocks of 64 threads, K = 20 in stages of 4.
func.func @gemm_f32_alpha_transb(%x: memref<64x20xf32>, %w: memref<64x20xf32>, %c: memref<64xf32>, %y: memref<64x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %alpha = arith.constant 0.5 : f32
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (32, 32) {
    %xs = memref.subview %x[%i, 0] [32, 20] [1, 1] : memref<64x20xf32> to memref<32x20xf32, strided<[20, 1], offset: ?>>
    %ws = memref.subview %w[%j, 0] [32, 20] [1, 1] : memref<64x20xf32> to memref<32x20xf32, strided<[20, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [32, 32] [1, 1] : memref<64x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
    %cs = memref.subview %c[%j] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel"]} ins(%cs : memref<32xf32, strided<[1], offset: ?>>) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    }
    linalg.generic {indexing_maps = [#a, #wt, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<32x20xf32, strided<[20, 1], offset: ?>>, memref<32x20xf32, strided<[20, 1], offset: ?>>) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %s = arith.mulf %2, %alpha : f32
      %3 = arith.addf %out, %s : f32
      linalg.yield %3 : f32
    }
  }
  return
}
