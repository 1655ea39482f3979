// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{thread-blocks=true matrix-tile=16},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{thread-blocks=true matrix-tile=16 matrix-block-rows=64 matrix-block-cols=64},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s --check-prefix=BLOCK
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{matrix-tile=16 min-threads=1},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{thread-blocks=true matrix-tile=16 min-block-threads=64},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s --check-prefix=WAVE

// thread-blocks: a float32 matmul (which matrix instructions do not take
// without matrix-f32) gets output blocks for kiln-contract-with-thread-tiles.
// 128x128 would be 8 blocks, far fewer than an H200's SMs: the blocks
// halve, the larger side first, while they keep 32 threads: 16x32 (4x4
// outputs each; 256 blocks). --matrix-block 64x64 (256 threads) is taken as asked.
// Without thread-blocks: per-thread 4x4 register tiles. With
// min-block-threads=64 (AMD's wavefronts) the halving stops at 32x32 (64
// threads, 128 blocks).
// CHECK-LABEL: func.func @matmul_f32_bias
// CHECK-SAME: kiln.matrix_tile = array<i64: 16, 32>
// CHECK-SAME: kiln.workgroups = 256 : i64
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (256, 512) step (16, 32)
// CHECK: linalg.generic {{.*}}ins(%{{.+}}, %{{.+}} : tensor<16x64xf32>, tensor<64x32xf32>) outs(%{{.+}} : tensor<16x32xf32>)
// BLOCK-LABEL: func.func @matmul_f32_bias
// BLOCK-SAME: kiln.matrix_tile = array<i64: 64, 64>
// BLOCK: step (64, 64)
// WAVE-LABEL: func.func @matmul_f32_bias
// WAVE-SAME: kiln.matrix_tile = array<i64: 32, 32>
// WAVE-SAME: kiln.workgroups = 128 : i64
// OFF-LABEL: func.func @matmul_f32_bias
// OFF-NOT: kiln.matrix_tile
// OFF: step (4, 4)
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @matmul_f32_bias(%arg0: memref<256x64xf32>, %arg1: memref<64x512xf32>, %arg2: memref<512xf32>, %arg3: memref<256x512xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<256x64xf32> to tensor<256x64xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<64x512xf32> to tensor<64x512xf32>
  %b = bufferization.to_tensor %arg2 restrict : memref<512xf32> to tensor<512xf32>
  %e = tensor.empty() : tensor<256x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x512xf32>) -> tensor<256x512xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<256x64xf32>, tensor<64x512xf32>) outs(%f : tensor<256x512xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.mulf %in, %in_0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<256x512xf32>
  %r = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<256x512xf32>, tensor<512xf32>) outs(%e : tensor<256x512xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<256x512xf32>
  bufferization.materialize_in_destination %r in restrict writable %arg3 : (tensor<256x512xf32>, memref<256x512xf32>) -> ()
  return
}

// -----

// A large float32 matmul: 128x128 blocks (1024 of them), each 256 threads
// of 8x8 outputs in kiln-contract-with-thread-tiles.
// CHECK-LABEL: func.func @matmul_f32_large
// CHECK-SAME: kiln.matrix_tile = array<i64: 128, 0, 128>
// CHECK-SAME: kiln.workgroups = 1024 : i64
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (4096, 4096) step (128, 128)
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @matmul_f32_large(%arg0: memref<4096x64xf32>, %arg1: memref<64x4096xf32>, %arg3: memref<4096x4096xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<4096x64xf32> to tensor<4096x64xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<64x4096xf32> to tensor<64x4096xf32>
  %e = tensor.empty() : tensor<4096x4096xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<4096x64xf32>, tensor<64x4096xf32>) outs(%f : tensor<4096x4096xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.mulf %in, %in_0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4096x4096xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg3 : (tensor<4096x4096xf32>, memref<4096x4096xf32>) -> ()
  return
}

// -----

// A 3x3 convolution onto a 56x56 map with 32 filters (an implicit GEMM: M
// the output width, N the filters): 56 is the largest multiple of 4 from
// 16 to 128 dividing the row, so a block starts as a whole row (56 x 32:
// 14 x 8 threads of 4x4); 56 blocks
// are too few, and it halves to 14 x 32 (7 x 8 threads of 2x4; 224
// blocks).
// CHECK-LABEL: func.func @conv3x3_56
// CHECK-SAME: kiln.matrix_tile = array<i64: 1, 32, 1, 14, 0, 0, 0>
// CHECK-SAME: kiln.workgroups = 224 : i64
// CHECK: linalg.generic {{.*}}outs(%{{.+}} : tensor<1x32x1x14xf32>)
#cx = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#cw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#co = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv3x3_56(%arg0: memref<1x16x58x58xf32>, %arg1: memref<32x16x3x3xf32>, %arg2: memref<1x32x56x56xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<1x16x58x58xf32> to tensor<1x16x58x58xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<32x16x3x3xf32> to tensor<32x16x3x3xf32>
  %e = tensor.empty() : tensor<1x32x56x56xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x56x56xf32>) -> tensor<1x32x56x56xf32>
  %conv = linalg.generic {indexing_maps = [#cx, #cw, #co], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x16x58x58xf32>, tensor<32x16x3x3xf32>) outs(%f : tensor<1x32x56x56xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.mulf %in, %in_0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<1x32x56x56xf32>
  bufferization.materialize_in_destination %conv in restrict writable %arg2 : (tensor<1x32x56x56xf32>, memref<1x32x56x56xf32>) -> ()
  return
}

// -----

// Short rows (28 pixels, batch 32, 64 filters): blocks of whole output
// rows (M = rows x width). An image's 784 pixels give 112 (four rows) x
// 64 blocks of 8x8 outputs per thread; 224 blocks are too few and the rows
// halve to two: 56 x 64 (14 x 8 threads of 4x8), 448 blocks. One row
// alone would have been 28 x 64 (7 x 8 threads of 4x8).
// CHECK-LABEL: func.func @conv3x3_rows
// CHECK-SAME: kiln.matrix_tile = array<i64: 1, 64, 2, 28, 0, 0, 0>
// CHECK-SAME: kiln.workgroups = 448 : i64
#rx = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#rw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#ro = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv3x3_rows(%arg0: memref<32x64x30x30xf32>, %arg1: memref<64x64x3x3xf32>, %arg2: memref<32x64x28x28xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<32x64x30x30xf32> to tensor<32x64x30x30xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<64x64x3x3xf32> to tensor<64x64x3x3xf32>
  %e = tensor.empty() : tensor<32x64x28x28xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64x28x28xf32>) -> tensor<32x64x28x28xf32>
  %conv = linalg.generic {indexing_maps = [#rx, #rw, #ro], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<32x64x30x30xf32>, tensor<64x64x3x3xf32>) outs(%f : tensor<32x64x28x28xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.mulf %in, %in_0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<32x64x28x28xf32>
  bufferization.materialize_in_destination %conv in restrict writable %arg2 : (tensor<32x64x28x28xf32>, memref<32x64x28x28xf32>) -> ()
  return
}

// -----

// Float16 on 56-pixel rows: no row is a multiple of 16, two rows (112)
// are, seven 16-row matrix tiles: blocks of 2 x 56 rows x 16 filters (64
// halved to reach 448 blocks; a row of 56 cannot halve into 16s).
// CHECK-LABEL: func.func @conv3x3_rows_f16
// CHECK-SAME: kiln.matrix_tile = array<i64: 1, 16, 2, 56, 0, 0, 0>
// CHECK-SAME: kiln.workgroups = 448 : i64
#hx = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#hw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#ho = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv3x3_rows_f16(%arg0: memref<4x64x58x58xf16>, %arg1: memref<64x64x3x3xf16>, %arg2: memref<4x64x56x56xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<4x64x58x58xf16> to tensor<4x64x58x58xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<64x64x3x3xf16> to tensor<64x64x3x3xf16>
  %e = tensor.empty() : tensor<4x64x56x56xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64x56x56xf32>) -> tensor<4x64x56x56xf32>
  %conv = linalg.generic {indexing_maps = [#hx, #hw, #ho], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<4x64x58x58xf16>, tensor<64x64x3x3xf16>) outs(%f : tensor<4x64x56x56xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %1 = arith.extf %in : f16 to f32
    %2 = arith.extf %in_0 : f16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<4x64x56x56xf32>
  bufferization.materialize_in_destination %conv in restrict writable %arg2 : (tensor<4x64x56x56xf32>, memref<4x64x56x56xf32>) -> ()
  return
}

// -----

// Float16 on 14x14 maps: no whole number of 14-pixel rows that divides
// the map is a multiple of 16, so seven rows (98) are computed as 112
// (paddedMatrixRows, a quarter at most); 64 filters halve to 32 before the
// padded rows do, for 512 blocks. On 7x7 maps the whole image (49) is
// computed as 64.
// CHECK-LABEL: func.func @conv3x3_14_f16
// CHECK-SAME: kiln.matrix_tile = array<i64: 1, 32, 7, 14, 0, 0, 0>
// CHECK-SAME: kiln.workgroups = 512 : i64
// CHECK-LABEL: func.func @conv3x3_7_f16
// CHECK-SAME: kiln.matrix_tile = array<i64: 1, 32, 7, 7, 0, 0, 0>
// CHECK-SAME: kiln.workgroups = 512 : i64
#px = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#pw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#po = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv3x3_14_f16(%arg0: memref<32x256x16x16xf16>, %arg1: memref<256x256x3x3xf16>, %arg2: memref<32x256x14x14xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<32x256x16x16xf16> to tensor<32x256x16x16xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<256x256x3x3xf16> to tensor<256x256x3x3xf16>
  %e = tensor.empty() : tensor<32x256x14x14xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x256x14x14xf32>) -> tensor<32x256x14x14xf32>
  %conv = linalg.generic {indexing_maps = [#px, #pw, #po], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<32x256x16x16xf16>, tensor<256x256x3x3xf16>) outs(%f : tensor<32x256x14x14xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %1 = arith.extf %in : f16 to f32
    %2 = arith.extf %in_0 : f16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<32x256x14x14xf32>
  bufferization.materialize_in_destination %conv in restrict writable %arg2 : (tensor<32x256x14x14xf32>, memref<32x256x14x14xf32>) -> ()
  return
}
func.func @conv3x3_7_f16(%arg0: memref<32x512x9x9xf16>, %arg1: memref<512x512x3x3xf16>, %arg2: memref<32x512x7x7xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<32x512x9x9xf16> to tensor<32x512x9x9xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<512x512x3x3xf16> to tensor<512x512x3x3xf16>
  %e = tensor.empty() : tensor<32x512x7x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x512x7x7xf32>) -> tensor<32x512x7x7xf32>
  %conv = linalg.generic {indexing_maps = [#px, #pw, #po], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<32x512x9x9xf16>, tensor<512x512x3x3xf16>) outs(%f : tensor<32x512x7x7xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %1 = arith.extf %in : f16 to f32
    %2 = arith.extf %in_0 : f16 to f32
    %3 = arith.mulf %1, %2 : f32
    %4 = arith.addf %out, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<32x512x7x7xf32>
  bufferization.materialize_in_destination %conv in restrict writable %arg2 : (tensor<32x512x7x7xf32>, memref<32x512x7x7xf32>) -> ()
  return
}

// -----

// A matrix-vector product (a batch-1 Gemm: M = 1) has no block of 32
// threads: per-thread tiles.
// CHECK-LABEL: func.func @gemv
// CHECK-NOT: kiln.matrix_tile
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @gemv(%arg0: memref<1x512xf32>, %arg1: memref<512x1000xf32>, %arg2: memref<1x1000xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<1x512xf32> to tensor<1x512xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<512x1000xf32> to tensor<512x1000xf32>
  %e = tensor.empty() : tensor<1x1000xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x512xf32>, tensor<512x1000xf32>) outs(%f : tensor<1x1000xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.mulf %in, %in_0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<1x1000xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg2 : (tensor<1x1000xf32>, memref<1x1000xf32>) -> ()
  return
}

// -----

// A contraction whose only block of 32 threads is its whole output (64x8)
// keeps per-thread tiles: a forall of one iteration would be folded away
// and the kernel run by one thread.
// CHECK-LABEL: func.func @one_block
// CHECK-NOT: kiln.matrix_tile
// CHECK: scf.forall
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @one_block(%arg0: memref<64x16xf32>, %arg1: memref<16x8xf32>, %arg2: memref<64x8xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<64x16xf32> to tensor<64x16xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<16x8xf32> to tensor<16x8xf32>
  %e = tensor.empty() : tensor<64x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x8xf32>) -> tensor<64x8xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<64x16xf32>, tensor<16x8xf32>) outs(%f : tensor<64x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.mulf %in, %in_0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<64x8xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg2 : (tensor<64x8xf32>, memref<64x8xf32>) -> ()
  return
}
// -----

// At most kMaxGpuDotProductRows (4) rows whose B is stored N x K (a Dense
// layer's constant weights at a small batch, kiln-transpose-weights) take
// no block, which would split K or pad the rows: each output is the dot
// product of two contiguous rows, one forall iteration (a warp, in
// kiln-distribute-rows-to-lanes). Five rows take a block.
// CHECK-LABEL: func.func @dot_products_of_3_rows
// CHECK-NOT: kiln.matrix_tile
// CHECK: scf.forall (%{{.+}}, %{{.+}}) in (3, 64)
// CHECK: linalg.generic {{.*}}ins(%{{.+}}, %{{.+}} : tensor<1x256xf32>, tensor<1x256xf32>) outs(%{{.+}} : tensor<1x1xf32>)
#rows = affine_map<(d0, d1, d2) -> (d0, d2)>
#cols = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @dot_products_of_3_rows(%arg0: memref<3x256xf32>, %arg1: memref<64x256xf32>, %arg2: memref<3x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<3x256xf32> to tensor<3x256xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<64x256xf32> to tensor<64x256xf32>
  %e = tensor.empty() : tensor<3x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x64xf32>) -> tensor<3x64xf32>
  %mm = linalg.generic {indexing_maps = [#rows, #cols, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<3x256xf32>, tensor<64x256xf32>) outs(%f : tensor<3x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<3x64xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg2 : (tensor<3x64xf32>, memref<3x64xf32>) -> ()
  return
}

// -----

// CHECK-LABEL: func.func @dot_products_of_5_rows
// CHECK-SAME: kiln.matrix_tile
#rows = affine_map<(d0, d1, d2) -> (d0, d2)>
#cols = affine_map<(d0, d1, d2) -> (d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @dot_products_of_5_rows(%arg0: memref<5x256xf32>, %arg1: memref<64x256xf32>, %arg2: memref<5x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<5x256xf32> to tensor<5x256xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<64x256xf32> to tensor<64x256xf32>
  %e = tensor.empty() : tensor<5x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<5x64xf32>) -> tensor<5x64xf32>
  %mm = linalg.generic {indexing_maps = [#rows, #cols, #out], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<5x256xf32>, tensor<64x256xf32>) outs(%f : tensor<5x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %acc: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<5x64xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg2 : (tensor<5x64xf32>, memref<5x64xf32>) -> ()
  return
}
