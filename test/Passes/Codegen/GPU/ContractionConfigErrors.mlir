// RUN: kiln-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(kiln-contract-with-matrix-cores{arch=nvidia},kiln-contract-with-thread-tiles))'

// kiln-contract-with-matrix-cores and kiln-contract-with-thread-tiles build
// the kiln.contraction they are given; one that does not fit the kernel's
// output block (here 32x32 over K = 64) is an error naming the kernel, not
// a kernel computing something else.

#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
// expected-error @+1 {{does not fit the kernel's 32x32x64 output block}}
func.func @warps_smaller_than_the_block(%x: memref<64x64xf16>, %w: memref<64x64xf16>, %y: memref<64x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel, kiln.contraction = #kiln.contraction<warps, "mma.sync m16n8k16", block = [16, 32, 64], tile = [16, 16], stage_k = 32, stage_buffers = 0, groups_in_flight = 0>} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (32, 32) {
    %xs = memref.subview %x[%i, 0] [32, 64] [1, 1] : memref<64x64xf16> to memref<32x64xf16, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 32] [1, 1] : memref<64x64xf16> to memref<64x32xf16, strided<[64, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [32, 32] [1, 1] : memref<64x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<32x64xf16, strided<[64, 1], offset: ?>>, memref<64x32xf16, strided<[64, 1], offset: ?>>) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
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
// A thread tile of 3 is not one the SIMT pass builds.
// expected-error @+1 {{does not fit the kernel's 32x32x64 output block}}
func.func @odd_thread_tile(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %y: memref<64x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel, kiln.contraction = #kiln.contraction<threads, "fma", block = [32, 32, 64], tile = [3, 4], stage_k = 16, stage_buffers = 0, groups_in_flight = 0>} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (64, 64) step (32, 32) {
    %xs = memref.subview %x[%i, 0] [32, 64] [1, 1] : memref<64x64xf32> to memref<32x64xf32, strided<[64, 1], offset: ?>>
    %ws = memref.subview %w[0, %j] [64, 32] [1, 1] : memref<64x64xf32> to memref<64x32xf32, strided<[64, 1], offset: ?>>
    %ys = memref.subview %y[%i, %j] [32, 32] [1, 1] : memref<64x64xf32> to memref<32x32xf32, strided<[64, 1], offset: ?>>
    linalg.fill ins(%zero : f32) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>)
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xs, %ws : memref<32x64xf32, strided<[64, 1], offset: ?>>, memref<64x32xf32, strided<[64, 1], offset: ?>>) outs(%ys : memref<32x32xf32, strided<[64, 1], offset: ?>>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %2 = arith.mulf %in, %in_0 : f32
      %3 = arith.addf %out, %2 : f32
      linalg.yield %3 : f32
    }
  }
  return
}
