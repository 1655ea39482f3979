// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{matrix-tile=16 workgroup-memory-bytes=232448 wide-matrix-blocks=true},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{matrix-tile=16 wide-matrix-blocks=true},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s --check-prefix=STATIC
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{matrix-tile=16 workgroup-memory-bytes=232448},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s --check-prefix=NARROW
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{min-threads=1},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s --check-prefix=OFF
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{matrix-tile=16 matrix-block-rows=32 matrix-block-cols=128},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s --check-prefix=BLOCK

// A float16 matmul (extf(a) * extf(b) + acc) under a bias epilogue: one
// output block per forall iteration (one GPU block of warps in
// kiln-contract-with-matrix-cores). 64x64 blocks would make one block, far
// fewer than an H200's SMs: the blocks halve, rows first, down to 16x16.
// The K loop stays whole. A block size that does not divide N (128 of 64
// columns) is ignored.
// CHECK-LABEL: func.func @matmul_f16_bias
// CHECK-SAME: kiln.matrix_tile = array<i64: 16, 16>
// CHECK-SAME: kiln.workgroups = 8 : i64
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (32, 64) step (16, 16)
// CHECK: linalg.generic {{.*}}ins(%{{.+}}, %{{.+}} : tensor<16x48xf16>, tensor<48x16xf16>) outs(%{{.+}} : tensor<16x16xf32>)
// Without matrix-tile: the float32 register tiles.
// OFF-LABEL: func.func @matmul_f16_bias
// OFF-NOT: kiln.matrix_tile
// OFF: step (4, 4)
// BLOCK-LABEL: func.func @matmul_f16_bias
// BLOCK-SAME: kiln.matrix_tile = array<i64: 16, 16>
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @matmul_f16_bias(%arg0: memref<32x48xf16>, %arg1: memref<48x64xf16>, %arg2: memref<64xf32>, %arg3: memref<32x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<32x48xf16> to tensor<32x48xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<48x64xf16> to tensor<48x64xf16>
  %b = bufferization.to_tensor %arg2 restrict : memref<64xf32> to tensor<64xf32>
  %e = tensor.empty() : tensor<32x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<32x48xf16>, tensor<48x64xf16>) outs(%f : tensor<32x64xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<32x64xf32>
  %r = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<32x64xf32>, tensor<64xf32>) outs(%e : tensor<32x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<32x64xf32>
  bufferization.materialize_in_destination %r in restrict writable %arg3 : (tensor<32x64xf32>, memref<32x64xf32>) -> ()
  return
}

// -----

// M = 8 is not a multiple of 16: the usual per-thread tiling.
// CHECK-LABEL: func.func @matmul_f16_short
// CHECK-NOT: kiln.matrix_tile
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @matmul_f16_short(%arg0: memref<8x48xf16>, %arg1: memref<48x64xf16>, %arg3: memref<8x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<8x48xf16> to tensor<8x48xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<48x64xf16> to tensor<48x64xf16>
  %e = tensor.empty() : tensor<8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<8x48xf16>, tensor<48x64xf16>) outs(%f : tensor<8x64xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<8x64xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg3 : (tensor<8x64xf32>, memref<8x64xf32>) -> ()
  return
}

// -----

// A large matmul: 128x128 blocks would be 256, fewer than two per SM of
// an H200, so the rows halve: 64x128 blocks (512 of them), one per forall
// iteration; the options choose other sizes that divide M and N.
// CHECK-LABEL: func.func @matmul_f16_large
// CHECK-SAME: kiln.matrix_tile = array<i64: 64, 0, 128>
// CHECK-SAME: kiln.workgroups = 512 : i64
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (2048, 2048) step (64, 128)
// CHECK: linalg.generic {{.*}}ins(%{{.+}}, %{{.+}} : tensor<64x256xf16>, tensor<256x128xf16>) outs(%{{.+}} : tensor<64x128xf32>)
// BLOCK-LABEL: func.func @matmul_f16_large
// BLOCK-SAME: kiln.matrix_tile = array<i64: 32, 0, 128>
// BLOCK-SAME: kiln.workgroups = 1024 : i64
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @matmul_f16_large(%arg0: memref<2048x256xf16>, %arg1: memref<256x2048xf16>, %arg3: memref<2048x2048xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<2048x256xf16> to tensor<2048x256xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<256x2048xf16> to tensor<256x2048xf16>
  %e = tensor.empty() : tensor<2048x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<2048x256xf16>, tensor<256x2048xf16>) outs(%f : tensor<2048x2048xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<2048x2048xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg3 : (tensor<2048x2048xf32>, memref<2048x2048xf32>) -> ()
  return
}

// -----

// A long reduction (K = 512, 16-bit operands) on warpgroup instructions
// (wide-matrix-blocks): blocks of 128x256, two warpgroups of m64n256
// reading a quarter less of the operands per product than 128x128 ones
// (widestMatrixColumns); 512 blocks keep two per SM.
// CHECK-LABEL: func.func @matmul_f16_wide_columns
// CHECK-SAME: kiln.matrix_tile = array<i64: 128, 0, 256>
// CHECK-SAME: kiln.workgroups = 512 : i64
// CHECK: linalg.generic {{.*}}ins(%{{.+}}, %{{.+}} : tensor<128x512xf16>, tensor<512x256xf16>) outs(%{{.+}} : tensor<128x256xf32>)
// In the 48 KiB a block declares statically (no deep pipeline), 128x128.
// STATIC-LABEL: func.func @matmul_f16_wide_columns
// STATIC-SAME: kiln.matrix_tile = array<i64: 128, 0, 128>
// Without wide-matrix-blocks (mma.sync: eight warps of 64x64 would fill
// an SM's registers with one block), 128x128.
// NARROW-LABEL: func.func @matmul_f16_wide_columns
// NARROW-SAME: kiln.matrix_tile = array<i64: 128, 0, 128>
// NARROW-SAME: kiln.workgroups = 1024 : i64
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @matmul_f16_wide_columns(%arg0: memref<4096x512xf16>, %arg1: memref<512x4096xf16>, %arg3: memref<4096x4096xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<4096x512xf16> to tensor<4096x512xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<512x4096xf16> to tensor<512x4096xf16>
  %e = tensor.empty() : tensor<4096x4096xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<4096x512xf16>, tensor<512x4096xf16>) outs(%f : tensor<4096x4096xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4096x4096xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg3 : (tensor<4096x4096xf32>, memref<4096x4096xf32>) -> ()
  return
}

// -----

// The same with half the columns: 128x256 blocks would be 256, fewer than
// two per SM, so the wider side halves back to 128x128 (512 blocks).
// CHECK-LABEL: func.func @matmul_f16_wide_columns_few_blocks
// CHECK-SAME: kiln.matrix_tile = array<i64: 128, 0, 128>
// CHECK-SAME: kiln.workgroups = 512 : i64
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @matmul_f16_wide_columns_few_blocks(%arg0: memref<4096x512xf16>, %arg1: memref<512x2048xf16>, %arg3: memref<4096x2048xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<4096x512xf16> to tensor<4096x512xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<512x2048xf16> to tensor<512x2048xf16>
  %e = tensor.empty() : tensor<4096x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x2048xf32>) -> tensor<4096x2048xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<4096x512xf16>, tensor<512x2048xf16>) outs(%f : tensor<4096x2048xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4096x2048xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg3 : (tensor<4096x2048xf32>, memref<4096x2048xf32>) -> ()
  return
}

// -----

// A short reduction (K = 256) keeps 128 columns at most: one 128x256
// block per SM would overlap its pipeline's first stages and its epilogue
// with no other block's loop.
// CHECK-LABEL: func.func @matmul_f16_short_reduction
// CHECK-SAME: kiln.matrix_tile = array<i64: 128, 0, 128>
// CHECK-SAME: kiln.workgroups = 1024 : i64
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @matmul_f16_short_reduction(%arg0: memref<4096x256xf16>, %arg1: memref<256x4096xf16>, %arg3: memref<4096x4096xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<4096x256xf16> to tensor<4096x256xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<256x4096xf16> to tensor<256x4096xf16>
  %e = tensor.empty() : tensor<4096x4096xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4096x4096xf32>) -> tensor<4096x4096xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<4096x256xf16>, tensor<256x4096xf16>) outs(%f : tensor<4096x4096xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4096x4096xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg3 : (tensor<4096x4096xf32>, memref<4096x4096xf32>) -> ()
  return
}

// -----

// Rows that no power of two above 16 divides (112, a stem's output row)
// make one block of 112 rows, seven warps of 16, instead of seven one-warp
// blocks that each stage all the weights, where that keeps at least 264
// blocks (336 here).
// CHECK-LABEL: func.func @rows_of_112
// CHECK-SAME: kiln.matrix_tile = array<i64: 1, 112, 0, 32>
// CHECK-SAME: kiln.workgroups = 336 : i64
#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#b = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
func.func @rows_of_112(%arg0: memref<336x112x64xf16>, %arg1: memref<64x32xf16>, %arg3: memref<336x112x32xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<336x112x64xf16> to tensor<336x112x64xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<64x32xf16> to tensor<64x32xf16>
  %e = tensor.empty() : tensor<336x112x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<336x112x32xf32>) -> tensor<336x112x32xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<336x112x64xf16>, tensor<64x32xf16>) outs(%f : tensor<336x112x32xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<336x112x32xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg3 : (tensor<336x112x32xf32>, memref<336x112x32xf32>) -> ()
  return
}

// -----

// The same with 100 rows of 112: one block each would be 100, fewer than
// two per SM, so 16-row blocks stay (700).
// CHECK-LABEL: func.func @rows_of_112_few
// CHECK-SAME: kiln.matrix_tile = array<i64: 1, 16, 0, 32>
// CHECK-SAME: kiln.workgroups = 700 : i64
#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#b = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
func.func @rows_of_112_few(%arg0: memref<100x112x64xf16>, %arg1: memref<64x32xf16>, %arg3: memref<100x112x32xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<100x112x64xf16> to tensor<100x112x64xf16>
  %w = bufferization.to_tensor %arg1 restrict : memref<64x32xf16> to tensor<64x32xf16>
  %e = tensor.empty() : tensor<100x112x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x112x32xf32>) -> tensor<100x112x32xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<100x112x64xf16>, tensor<64x32xf16>) outs(%f : tensor<100x112x32xf32>) {
  ^bb0(%in: f16, %in_0: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    %1 = arith.extf %in_0 : f16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<100x112x32xf32>
  bufferization.materialize_in_destination %mm in restrict writable %arg3 : (tensor<100x112x32xf32>, memref<100x112x32xf32>) -> ()
  return
}
