// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels{min-threads=1},kiln-tile-and-distribute{gpu=true}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels,kiln-tile-and-distribute{gpu=true}))' | FileCheck %s --check-prefix=FEW

// A matmul under a bias epilogue: each thread computes a 4x4 block of
// outputs (M from the first operand, N from the second), and the tiled
// contraction runs its K loop outermost (iterators reduction first).
// CHECK-LABEL: func.func @matmul_bias
// CHECK-SAME: kiln.workgroups = 256 : i64
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (64, 64) step (4, 4)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]
// CHECK-SAME: tensor<4x32xf32>, tensor<32x4xf32>
// CHECK: arith.addf
// With too few outputs for both 64x64 / 16 threads and the default 65536
// threads, the tile shrinks back to one output per thread.
// FEW-LABEL: func.func @matmul_bias
// FEW-SAME: kiln.workgroups = 4096 : i64
// FEW: scf.forall (%{{.+}}, %{{.+}}) in (64, 64)
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @matmul_bias(%arg0: memref<64x32xf32>, %arg1: memref<32x64xf32>, %arg2: memref<64xf32>, %arg3: memref<64x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<64x32xf32> to tensor<64x32xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<32x64xf32> to tensor<32x64xf32>
  %b = bufferization.to_tensor %arg2 restrict : memref<64xf32> to tensor<64xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x, %w : tensor<64x32xf32>, tensor<32x64xf32>) outs(%f : tensor<64x64xf32>) {
  ^bb0(%in: f32, %in2: f32, %acc: f32):
    %p = arith.mulf %in, %in2 : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<64x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %b : tensor<64x64xf32>, tensor<64xf32>) outs(%e2 : tensor<64x64xf32>) {
  ^bb0(%in: f32, %bb: f32, %out: f32):
    %s = arith.addf %in, %bb : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  bufferization.materialize_in_destination %y in restrict writable %arg3 : (tensor<64x64xf32>, memref<64x64xf32>) -> ()
  return
}

// -----

// Elementwise: four neighbouring elements of the innermost dim per thread
// (one 128-bit access per operand), however few threads that leaves: the
// thread floor is for register tiles.
// CHECK-LABEL: func.func @add
// CHECK-SAME: kiln.workgroups = 128 : i64
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (8, 64) step (1, 4)
// FEW-LABEL: func.func @add
// FEW-SAME: kiln.workgroups = 128 : i64
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @add(%arg0: memref<8x64xf32>, %arg1: memref<8x64xf32>, %arg2: memref<8x64xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<8x64xf32> to tensor<8x64xf32>
  %y = bufferization.to_tensor %arg1 restrict : memref<8x64xf32> to tensor<8x64xf32>
  %e = tensor.empty() : tensor<8x64xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<8x64xf32>, tensor<8x64xf32>) outs(%e : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x64xf32>
  bufferization.materialize_in_destination %s in restrict writable %arg2 : (tensor<8x64xf32>, memref<8x64xf32>) -> ()
  return
}

// -----

// At 16 bits a 128-bit access holds eight elements; a kernel that also
// reads or writes 32-bit elements keeps four (16 bytes of its widest).
// CHECK-LABEL: func.func @add_f16
// CHECK-SAME: kiln.workgroups = 64 : i64
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (8, 64) step (1, 8)
// CHECK-LABEL: func.func @narrow_f32
// CHECK-SAME: kiln.workgroups = 128 : i64
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (8, 64) step (1, 4)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @add_f16(%arg0: memref<8x64xf16>, %arg1: memref<8x64xf16>, %arg2: memref<8x64xf16>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<8x64xf16> to tensor<8x64xf16>
  %y = bufferization.to_tensor %arg1 restrict : memref<8x64xf16> to tensor<8x64xf16>
  %e = tensor.empty() : tensor<8x64xf16>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<8x64xf16>, tensor<8x64xf16>) outs(%e : tensor<8x64xf16>) {
  ^bb0(%a: f16, %b: f16, %out: f16):
    %r = arith.addf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<8x64xf16>
  bufferization.materialize_in_destination %s in restrict writable %arg2 : (tensor<8x64xf16>, memref<8x64xf16>) -> ()
  return
}
func.func @narrow_f32(%arg0: memref<8x64xf32>, %arg1: memref<8x64xf16>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<8x64xf32> to tensor<8x64xf32>
  %e = tensor.empty() : tensor<8x64xf16>
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x64xf32>) outs(%e : tensor<8x64xf16>) {
  ^bb0(%a: f32, %out: f16):
    %r = arith.truncf %a : f32 to f16
    linalg.yield %r : f16
  } -> tensor<8x64xf16>
  bufferization.materialize_in_destination %s in restrict writable %arg1 : (tensor<8x64xf16>, memref<8x64xf16>) -> ()
  return
}

// -----

// A channels-last convolution's padding: a thread copies 16 bytes of
// channels (the unpadded innermost dim), one pixel of the padded dims.
// CHECK-LABEL: func.func @pad_channels_last
// CHECK-SAME: kiln.workgroups = 576 : i64
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0, 0) to (2, 6, 6, 64) step (1, 1, 1, 8)
// CHECK: tensor.pad %{{.+}} low[0, %{{.+}}, %{{.+}}, 0] high[0, %{{.+}}, %{{.+}}, 0]
// CHECK: tensor.parallel_insert_slice %{{.+}} [1, 1, 1, 8] [1, 1, 1, 1] : tensor<1x1x1x8xf16>
// CHECK-LABEL: func.func @pad_innermost
// CHECK-SAME: kiln.workgroups = 288 : i64
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (8, 6, 6)
func.func @pad_channels_last(%arg0: memref<2x4x4x64xf16>, %arg1: memref<2x6x6x64xf16>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f16
  %x = bufferization.to_tensor %arg0 restrict : memref<2x4x4x64xf16> to tensor<2x4x4x64xf16>
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f16
  } : tensor<2x4x4x64xf16> to tensor<2x6x6x64xf16>
  bufferization.materialize_in_destination %p in restrict writable %arg1 : (tensor<2x6x6x64xf16>, memref<2x6x6x64xf16>) -> ()
  return
}
func.func @pad_innermost(%arg0: memref<8x4x4xf16>, %arg1: memref<8x6x6xf16>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f16
  %x = bufferization.to_tensor %arg0 restrict : memref<8x4x4xf16> to tensor<8x4x4xf16>
  %p = tensor.pad %x low[0, 1, 1] high[0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %cst : f16
  } : tensor<8x4x4xf16> to tensor<8x6x6xf16>
  bufferization.materialize_in_destination %p in restrict writable %arg1 : (tensor<8x6x6xf16>, memref<8x6x6xf16>) -> ()
  return
}
