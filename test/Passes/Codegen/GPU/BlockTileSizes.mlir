// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{matrix-tile=16 workgroup-memory-bytes=232448},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s --check-prefix=MATRIX
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{thread-blocks=true},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s --check-prefix=THREADS
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels,kiln-tile-and-distribute{gpu=true}))' | FileCheck %s --check-prefix=NONE

// The output block passes/Codegen/GPU/BlockTileSizes.cpp chooses for a
// GPU contraction kernel (kiln-configure-gpu-kernels' blocks config): one
// block of output rows x columns per forall iteration, for matrix
// instructions (matrix-tile) or for a block of threads (thread-blocks).

// A float16 matmul of 2048 x 2048 outputs: matrix blocks start at the
// largest of 128, 64, 32, 16 that divides each side, 128 x 128, and halve
// while the kernel would have fewer than 264 blocks (two per SM of an
// H200's 132), the rows first on a tie: 64 x 128, 512 blocks. Thread
// blocks (no matrix tile) are chosen the same way. Without either option
// there is no block: per-thread tiles.
// MATRIX-LABEL: func.func @large_f16
// MATRIX-SAME: kiln.config = #kiln.config<blocks, tile_sizes = [64, 0, 128]>
// MATRIX-SAME: kiln.workgroups = 512
// THREADS-LABEL: func.func @large_f16
// THREADS-SAME: kiln.config = #kiln.config<blocks, tile_sizes = [64, 0, 128]>
// NONE-LABEL: func.func @large_f16
// NONE-SAME: kiln.config = #kiln.config<threads, tile_sizes = [4, 0, 4]>
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @large_f16(%arg0: memref<2048x64xf16>, %arg1: memref<64x2048xf16>, %arg2: memref<2048x2048xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<2048x64xf16> to tensor<2048x64xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<64x2048xf16> to tensor<64x2048xf16>
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<2048x64xf16>, tensor<64x2048xf16>) outs(%f : tensor<2048x2048xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<2048x2048xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg2 : (tensor<2048x2048xf32>, memref<2048x2048xf32>) -> ()
  return
}

// -----

// 512 x 512 outputs: halved down to 16 x 32 for 512 blocks.
// MATRIX-LABEL: func.func @square_f16
// MATRIX-SAME: kiln.config = #kiln.config<blocks, tile_sizes = [16, 0, 32]>
// MATRIX-SAME: kiln.workgroups = 512
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @square_f16(%arg0: memref<512x256xf16>, %arg1: memref<256x512xf16>, %arg2: memref<512x512xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<512x256xf16> to tensor<512x256xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<256x512xf16> to tensor<256x512xf16>
  %e = tensor.empty() : tensor<512x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<512x256xf16>, tensor<256x512xf16>) outs(%f : tensor<512x512xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<512x512xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg2 : (tensor<512x512xf32>, memref<512x512xf32>) -> ()
  return
}

// -----

// Float32 operands do not take matrix instructions (without TF32): the
// same matmul keeps per-thread tiles, unless thread blocks are on.
// MATRIX-LABEL: func.func @square_f32
// MATRIX-SAME: kiln.config = #kiln.config<threads, tile_sizes = [4, 0, 1]>
// THREADS-LABEL: func.func @square_f32
// THREADS-SAME: kiln.config = #kiln.config<blocks, tile_sizes = [16, 0, 32]>
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @square_f32(%arg0: memref<512x256xf32>, %arg1: memref<256x512xf32>, %arg2: memref<512x512xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<512x256xf32> to tensor<512x256xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<256x512xf32> to tensor<256x512xf32>
  %e = tensor.empty() : tensor<512x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<512x256xf32>, tensor<256x512xf32>) outs(%f : tensor<512x512xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.mulf %in, %in_0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<512x512xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg2 : (tensor<512x512xf32>, memref<512x512xf32>) -> ()
  return
}

// -----

// 1000 columns (a classifier's classes), which no multiple of 16 divides:
// matrix blocks of 25 columns, which the tiles compute padded to 32;
// thread blocks take 25 too, with rows halved to 8 for 320 blocks.
// MATRIX-LABEL: func.func @classes_f16
// MATRIX-SAME: kiln.config = #kiln.config<blocks, tile_sizes = [16, 0, 25]>
// MATRIX-SAME: kiln.workgroups = 160
// THREADS-LABEL: func.func @classes_f16
// THREADS-SAME: kiln.config = #kiln.config<blocks, tile_sizes = [8, 0, 25]>
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @classes_f16(%arg0: memref<64x256xf16>, %arg1: memref<256x1000xf16>, %arg2: memref<64x1000xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<64x256xf16> to tensor<64x256xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<256x1000xf16> to tensor<256x1000xf16>
  %e = tensor.empty() : tensor<64x1000xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x1000xf32>) -> tensor<64x1000xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<64x256xf16>, tensor<256x1000xf16>) outs(%f : tensor<64x1000xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<64x1000xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg2 : (tensor<64x1000xf32>, memref<64x1000xf32>) -> ()
  return
}

// -----

// 4 rows whose weights are stored N x K (both operands along K): a warp
// per output computes them as dot products, so no block.
// MATRIX-LABEL: func.func @few_rows
// MATRIX-SAME: kiln.config = #kiln.config<threads, tile_sizes = [1, 0, 1]>
// THREADS-LABEL: func.func @few_rows
// THREADS-SAME: kiln.config = #kiln.config<threads, tile_sizes = [1, 0, 1]>
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @few_rows(%arg0: memref<4x512xf32>, %arg1: memref<256x512xf32>, %arg2: memref<4x256xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<4x512xf32> to tensor<4x512xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<256x512xf32> to tensor<256x512xf32>
  %e = tensor.empty() : tensor<4x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x256xf32>) -> tensor<4x256xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<4x512xf32>, tensor<256x512xf32>) outs(%f : tensor<4x256xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %2 = arith.mulf %in, %in_0 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4x256xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg2 : (tensor<4x256xf32>, memref<4x256xf32>) -> ()
  return
}
