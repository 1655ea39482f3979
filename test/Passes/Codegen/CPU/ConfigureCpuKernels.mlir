// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling,kiln-configure-cpu-kernels{min-work-per-workgroup=256},kiln-tile-and-distribute))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling,kiln-configure-cpu-kernels{min-work-per-workgroup=256 quad-rows=16},kiln-tile-and-distribute))' | FileCheck %s --check-prefix=AMX

// The root (the op the kernel writes) is tiled along its first parallel loop
// into an scf.forall; its producer is fused into the loop body.
// CHECK-LABEL: func.func @relu_of_exp
// CHECK-SAME: kiln.config = #kiln.config<workgroups, tile_sizes = [16, 0]>
// CHECK-SAME: kiln.workgroups = 4 : i64
// CHECK: scf.forall (%[[I:.+]]) = (0) to (64) step (16) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<64x8xf32>)
// CHECK: tensor.extract_slice %{{.+}}[%[[I]], 0] [16, 8] [1, 1]
// CHECK: math.exp
// CHECK: arith.maximumf
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][%[[I]], 0] [16, 8] [1, 1]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @relu_of_exp(%arg0: memref<64x8xf32>, %arg1: memref<64x8xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<64x8xf32> to tensor<64x8xf32>
  %e0 = tensor.empty() : tensor<64x8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x8xf32>) outs(%e0 : tensor<64x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<64x8xf32>
  %e1 = tensor.empty() : tensor<64x8xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<64x8xf32>) outs(%e1 : tensor<64x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %cst : f32
    linalg.yield %r : f32
  } -> tensor<64x8xf32>
  bufferization.materialize_in_destination %1 in restrict writable %arg1 : (tensor<64x8xf32>, memref<64x8xf32>) -> ()
  return
}

// -----

// A kernel with less work than one workgroup's worth stays untiled, with a
// grid of one.
// CHECK-LABEL: func.func @tiny
// CHECK-SAME: kiln.workgroups = 1 : i64
// CHECK-NOT: scf.forall
#map = affine_map<(d0) -> (d0)>
func.func @tiny(%arg0: memref<4xf32>, %arg1: memref<4xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<4xf32> to tensor<4xf32>
  %e0 = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e0 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<4xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg1 : (tensor<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// Functions that are not kernels are left alone.
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: kiln.workgroups
// CHECK-NOT: scf.forall
#map = affine_map<(d0) -> (d0)>
func.func @not_a_kernel(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %e0 = tensor.empty() : tensor<4096xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4096xf32>) outs(%e0 : tensor<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  } -> tensor<4096xf32>
  return %0 : tensor<4096xf32>
}

// -----

// A convolution that kiln-contract-with-vector-registers will compute in
// register tiles (filters x output rows x output width): the workgroups
// split its output rows (loop 2), not its filters (loop 1, the first
// parallel loop of size above 1), so that every workgroup keeps all 16
// filters for its tiles, two rows each so that a tile can take two rows.
// CHECK-LABEL: func.func @conv_splits_rows
// CHECK-SAME: kiln.tile = array<i64: 2, 2>
// CHECK-SAME: kiln.workgroups = 8 : i64
// CHECK: scf.forall (%{{.+}}) = (0) to (16) step (2)
#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv_splits_rows(%arg0: memref<1x8x18x18xf32>, %arg1: memref<16x8x3x3xf32>, %arg2: memref<1x16x16x16xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<1x8x18x18xf32> to tensor<1x8x18x18xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<16x8x3x3xf32> to tensor<16x8x3x3xf32>
  %e = tensor.empty() : tensor<1x16x16x16xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
  %0 = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x8x18x18xf32>, tensor<16x8x3x3xf32>) outs(%z : tensor<1x16x16x16xf32>) {
  ^bb0(%i: f32, %k: f32, %acc: f32):
    %p = arith.mulf %i, %k : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x16x16x16xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<1x16x16x16xf32>, memref<1x16x16x16xf32>) -> ()
  return
}

// -----

// The same convolution onto 67 output rows, more than the 64 workgroups at
// most: 67 is prime, so no tiles of two or more rows divide it (uneven
// tiles would leave the register tiles dynamic sizes); the filters (loop 1)
// are split instead, in whole register tiles of 8 rows, rather than the
// kernel running as one workgroup (SqueezeNet's 109 rows did).
// CHECK-LABEL: func.func @conv_prime_rows_splits_filters
// CHECK-SAME: kiln.tile = array<i64: 1, 8>
// CHECK-SAME: kiln.workgroups = 2 : i64
// CHECK: scf.forall (%{{.+}}) = (0) to (16) step (8)
#pin = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#pw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
#pout = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
func.func @conv_prime_rows_splits_filters(%arg0: memref<1x8x69x69xf32>, %arg1: memref<16x8x3x3xf32>, %arg2: memref<1x16x67x67xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<1x8x69x69xf32> to tensor<1x8x69x69xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<16x8x3x3xf32> to tensor<16x8x3x3xf32>
  %e = tensor.empty() : tensor<1x16x67x67xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x67x67xf32>) -> tensor<1x16x67x67xf32>
  %0 = linalg.generic {indexing_maps = [#pin, #pw, #pout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x8x69x69xf32>, tensor<16x8x3x3xf32>) outs(%z : tensor<1x16x67x67xf32>) {
  ^bb0(%i: f32, %k: f32, %acc: f32):
    %p = arith.mulf %i, %k : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x16x67x67xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<1x16x67x67xf32>, memref<1x16x67x67xf32>) -> ()
  return
}

// -----

// A matmul (M 64) split along M in multiples of the register tile's 8 rows:
// its work alone would give each of 32 workgroups 2 rows; they get 8.
// CHECK-LABEL: func.func @matmul_splits_whole_row_tiles
// CHECK-SAME: kiln.tile = array<i64: 0, 8>
// CHECK-SAME: kiln.workgroups = 8 : i64
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @matmul_splits_whole_row_tiles(%arg0: memref<64x4xf32>, %arg1: memref<4x32xf32>, %arg2: memref<64x32xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %arg0 restrict : memref<64x4xf32> to tensor<64x4xf32>
  %b = bufferization.to_tensor %arg1 restrict : memref<4x32xf32> to tensor<4x32xf32>
  %e = tensor.empty() : tensor<64x32xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %0 = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<64x4xf32>, tensor<4x32xf32>) outs(%z : tensor<64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<64x32xf32>, memref<64x32xf32>) -> ()
  return
}

// -----

// A classifier (1 x 64 times 64 x 1000) split along its 1000 columns: no
// multiple of two vectors (32) divides 1000, so the tiles are the smallest
// multiple of 8 that does, 40 (one 32-wide and one 8-wide register tile),
// not 20 (16 + 4): 25 workgroups.
// CHECK-LABEL: func.func @classifier_half_vector_tiles
// CHECK-SAME: kiln.tile = array<i64: 1, 40>
// CHECK-SAME: kiln.workgroups = 25 : i64
// CHECK: scf.forall (%{{.+}}) = (0) to (1000) step (40)
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @classifier_half_vector_tiles(%arg0: memref<1x64xf32>, %arg1: memref<64x1000xf32>, %arg2: memref<1x1000xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %arg0 restrict : memref<1x64xf32> to tensor<1x64xf32>
  %b = bufferization.to_tensor %arg1 restrict : memref<64x1000xf32> to tensor<64x1000xf32>
  %e = tensor.empty() : tensor<1x1000xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  %0 = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<1x64xf32>, tensor<64x1000xf32>) outs(%z : tensor<1x1000xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x1000xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<1x1000xf32>, memref<1x1000xf32>) -> ()
  return
}

// -----

// Tiles that divide their loop: 1280 rows for 64 workgroups would be tiles
// of 20, 24 as a multiple of the register tile's 8 rows, which leaves a
// partial last tile (dynamic sizes in every tile, which register tiles
// cannot take); 32 divides 1280: 40 workgroups.
// CHECK-LABEL: func.func @matmul_even_row_tiles
// CHECK-SAME: kiln.tile = array<i64: 0, 32>
// CHECK-SAME: kiln.workgroups = 40 : i64
// CHECK: scf.forall (%{{.+}}) = (0) to (1280) step (32)
// CHECK-NOT: affine.min
#mA = affine_map<(m, n, k) -> (m, k)>
#mB = affine_map<(m, n, k) -> (k, n)>
#mC = affine_map<(m, n, k) -> (m, n)>
func.func @matmul_even_row_tiles(%arg0: memref<1280x4xf32>, %arg1: memref<4x16xf32>, %arg2: memref<1280x16xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %arg0 restrict : memref<1280x4xf32> to tensor<1280x4xf32>
  %b = bufferization.to_tensor %arg1 restrict : memref<4x16xf32> to tensor<4x16xf32>
  %e = tensor.empty() : tensor<1280x16xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1280x16xf32>) -> tensor<1280x16xf32>
  %0 = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<1280x4xf32>, tensor<4x16xf32>) outs(%z : tensor<1280x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1280x16xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<1280x16xf32>, memref<1280x16xf32>) -> ()
  return
}

// -----

// An einsum of uint8 by int8 quads (kiln-pack-int8-matmul-weights), 128
// rows by 48 panels: the panels are split, in multiples of the register
// tile's 4 panels, so that each workgroup reads its own panels of the
// weights once and runs tiles of 4 rows.
// CHECK-LABEL: func.func @int8_quads
// CHECK-SAME: kiln.config = #kiln.config<workgroups, tile_sizes = [0, 4, 0, 0, 0]>
// CHECK-SAME: kiln.workgroups = 12 : i64
#qa = affine_map<(m, p, w, q, t) -> (m, q, t)>
#qb = affine_map<(m, p, w, q, t) -> (p, q, w, t)>
#qo = affine_map<(m, p, w, q, t) -> (m, p, w)>
func.func @int8_quads(%arg0: memref<128x192x4xui8>, %arg1: memref<48x192x16x4xi8>, %arg2: memref<128x48x16xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %arg0 restrict : memref<128x192x4xui8> to tensor<128x192x4xui8>
  %b = bufferization.to_tensor %arg1 restrict : memref<48x192x16x4xi8> to tensor<48x192x16x4xi8>
  %e = tensor.empty() : tensor<128x48x16xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<128x48x16xf32>) -> tensor<128x48x16xf32>
  %0 = linalg.generic {indexing_maps = [#qa, #qb, #qo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a, %b : tensor<128x192x4xui8>, tensor<48x192x16x4xi8>) outs(%z : tensor<128x48x16xf32>) {
  ^bb0(%x: ui8, %y: i8, %acc: f32):
    %xi = builtin.unrealized_conversion_cast %x : ui8 to i8
    %xf = arith.uitofp %xi : i8 to f32
    %yf = arith.sitofp %y : i8 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<128x48x16xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<128x48x16xf32>, memref<128x48x16xf32>) -> ()
  return
}

// -----

// A convolution of int8 quads (kiln-pack-int8-conv-weights, 3x3 on 56x56
// with 64 channels): its input outweighs its weights, so its output rows
// are split, one a workgroup, each running whole tiles of its filters.
// CHECK-LABEL: func.func @int8_conv_rows
// CHECK-SAME: kiln.config = #kiln.config<workgroups, tile_sizes = [0, 0, 1, 0, 0, 0, 0]>
// CHECK-SAME: kiln.workgroups = 56 : i64
#cx = affine_map<(n, f, y, q, i, k, x) -> (n, q, y + i, x * 4 + k)>
#cw = affine_map<(n, f, y, q, i, k, x) -> (f, q, i, k)>
#co = affine_map<(n, f, y, q, i, k, x) -> (n, f, y, x)>
func.func @int8_conv_rows(%arg0: memref<1x16x58x232xui8>, %arg1: memref<64x16x3x12xi8>, %arg2: memref<1x64x56x56xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %arg0 restrict : memref<1x16x58x232xui8> to tensor<1x16x58x232xui8>
  %b = bufferization.to_tensor %arg1 restrict : memref<64x16x3x12xi8> to tensor<64x16x3x12xi8>
  %e = tensor.empty() : tensor<1x64x56x56xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %0 = linalg.generic {indexing_maps = [#cx, #cw, #co], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%a, %b : tensor<1x16x58x232xui8>, tensor<64x16x3x12xi8>) outs(%z : tensor<1x64x56x56xf32>) {
  ^bb0(%x: ui8, %y: i8, %acc: f32):
    %xi = builtin.unrealized_conversion_cast %x : ui8 to i8
    %xf = arith.uitofp %xi : i8 to f32
    %yf = arith.sitofp %y : i8 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x64x56x56xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<1x64x56x56xf32>, memref<1x64x56x56xf32>) -> ()
  return
}

// -----

// ResNet-50's last 3x3 convolutions: 2.4 MB of weights for 7x7 outputs of
// 512 filters. The filters are split, in multiples of the register tile's
// 4, so that each workgroup reads only its own filters' weights.
// CHECK-LABEL: func.func @int8_conv_filters
// CHECK-SAME: kiln.config = #kiln.config<workgroups, tile_sizes = [0, 8, 0, 0, 0, 0, 0]>
// CHECK-SAME: kiln.workgroups = 64 : i64

#cx = affine_map<(n, f, y, q, i, k, x) -> (n, q, y + i, x * 4 + k)>
#cw = affine_map<(n, f, y, q, i, k, x) -> (f, q, i, k)>
#co = affine_map<(n, f, y, q, i, k, x) -> (n, f, y, x)>
func.func @int8_conv_filters(%arg0: memref<1x128x9x36xui8>, %arg1: memref<512x128x3x12xi8>, %arg2: memref<1x512x7x7xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %arg0 restrict : memref<1x128x9x36xui8> to tensor<1x128x9x36xui8>
  %b = bufferization.to_tensor %arg1 restrict : memref<512x128x3x12xi8> to tensor<512x128x3x12xi8>
  %e = tensor.empty() : tensor<1x512x7x7xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32>
  %0 = linalg.generic {indexing_maps = [#cx, #cw, #co], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%a, %b : tensor<1x128x9x36xui8>, tensor<512x128x3x12xi8>) outs(%z : tensor<1x512x7x7xf32>) {
  ^bb0(%x: ui8, %y: i8, %acc: f32):
    %xi = builtin.unrealized_conversion_cast %x : ui8 to i8
    %xf = arith.uitofp %xi : i8 to f32
    %yf = arith.sitofp %y : i8 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x512x7x7xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<1x512x7x7xf32>, memref<1x512x7x7xf32>) -> ()
  return
}

// -----

// A 1x1 convolution of int8 quads on 56x56 (64 channels, 256 filters):
// its rows are split, one a workgroup; on AMX tiles (quad-rows=16), in
// fours, so that each workgroup's 224 outputs are whole pairs of panels.
// CHECK-LABEL: func.func @int8_pointwise_conv_rows
// CHECK-SAME: kiln.config = #kiln.config<workgroups, tile_sizes = [0, 0, 1, 0, 0, 0, 0]>
// CHECK-SAME: kiln.workgroups = 56 : i64
// AMX-LABEL: func.func @int8_pointwise_conv_rows
// AMX-SAME: kiln.config = #kiln.config<workgroups, tile_sizes = [0, 0, 4, 0, 0, 0, 0]>
// AMX-SAME: kiln.workgroups = 14 : i64
#px = affine_map<(n, f, y, q, i, k, x) -> (n, q, y + i, x * 4 + k)>
#pw = affine_map<(n, f, y, q, i, k, x) -> (f, q, i, k)>
#po = affine_map<(n, f, y, q, i, k, x) -> (n, f, y, x)>
func.func @int8_pointwise_conv_rows(%arg0: memref<1x16x56x224xui8>, %arg1: memref<256x16x1x4xi8>, %arg2: memref<1x256x56x56xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %arg0 restrict : memref<1x16x56x224xui8> to tensor<1x16x56x224xui8>
  %b = bufferization.to_tensor %arg1 restrict : memref<256x16x1x4xi8> to tensor<256x16x1x4xi8>
  %e = tensor.empty() : tensor<1x256x56x56xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x256x56x56xf32>) -> tensor<1x256x56x56xf32>
  %0 = linalg.generic {indexing_maps = [#px, #pw, #po], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%a, %b : tensor<1x16x56x224xui8>, tensor<256x16x1x4xi8>) outs(%z : tensor<1x256x56x56xf32>) {
  ^bb0(%x: ui8, %y: i8, %acc: f32):
    %xi = builtin.unrealized_conversion_cast %x : ui8 to i8
    %xf = arith.uitofp %xi : i8 to f32
    %yf = arith.sitofp %y : i8 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x256x56x56xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<1x256x56x56xf32>, memref<1x256x56x56xf32>) -> ()
  return
}

// -----

// The same over 36 channels (9 quads, not whole AMX tile rows): vector
// tiles on either CPU, one row a workgroup.
// CHECK-LABEL: func.func @int8_pointwise_conv_vector_depth
// CHECK-SAME: kiln.config = #kiln.config<workgroups, tile_sizes = [0, 0, 1, 0, 0, 0, 0]>
// AMX-LABEL: func.func @int8_pointwise_conv_vector_depth
// AMX-SAME: kiln.config = #kiln.config<workgroups, tile_sizes = [0, 0, 1, 0, 0, 0, 0]>
#vx = affine_map<(n, f, y, q, i, k, x) -> (n, q, y + i, x * 4 + k)>
#vw = affine_map<(n, f, y, q, i, k, x) -> (f, q, i, k)>
#vo = affine_map<(n, f, y, q, i, k, x) -> (n, f, y, x)>
func.func @int8_pointwise_conv_vector_depth(%arg0: memref<1x9x56x224xui8>, %arg1: memref<256x9x1x4xi8>, %arg2: memref<1x256x56x56xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %cst = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %arg0 restrict : memref<1x9x56x224xui8> to tensor<1x9x56x224xui8>
  %b = bufferization.to_tensor %arg1 restrict : memref<256x9x1x4xi8> to tensor<256x9x1x4xi8>
  %e = tensor.empty() : tensor<1x256x56x56xf32>
  %z = linalg.fill ins(%cst : f32) outs(%e : tensor<1x256x56x56xf32>) -> tensor<1x256x56x56xf32>
  %0 = linalg.generic {indexing_maps = [#vx, #vw, #vo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%a, %b : tensor<1x9x56x224xui8>, tensor<256x9x1x4xi8>) outs(%z : tensor<1x256x56x56xf32>) {
  ^bb0(%x: ui8, %y: i8, %acc: f32):
    %xi = builtin.unrealized_conversion_cast %x : ui8 to i8
    %xf = arith.uitofp %xi : i8 to f32
    %yf = arith.sitofp %y : i8 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x256x56x56xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg2 : (tensor<1x256x56x56xf32>, memref<1x256x56x56xf32>) -> ()
  return
}
