// RUN: kiln-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(kiln-tile-and-distribute))' | FileCheck %s

// kiln-tile-and-distribute applies the kernel's kiln.config and decides
// nothing itself. Workgroups: the one tiled loop and its size become the
// kiln.tile report; the grid is the number of tiles.
// CHECK-LABEL: func.func @workgroups
// CHECK-SAME: kiln.tile = array<i64: 1, 3>
// CHECK-SAME: kiln.workgroups = 3 : i64
// CHECK: scf.forall (%[[J:.+]]) = (0) to (8) step (3)
// CHECK: tensor.extract_slice %{{.+}}[0, %[[J]]] [64, %{{.+}}] [1, 1]
// CHECK: math.exp
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @workgroups(%arg0: memref<64x8xf32>, %arg1: memref<64x8xf32>) attributes {kiln.kernel, kiln.config = #kiln.config<workgroups, tile_sizes = [0, 3]>} {
  %x = bufferization.to_tensor %arg0 restrict : memref<64x8xf32> to tensor<64x8xf32>
  %e = tensor.empty() : tensor<64x8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x8xf32>) outs(%e : tensor<64x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<64x8xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg1 : (tensor<64x8xf32>, memref<64x8xf32>) -> ()
  return
}

// -----

// Blocks: a loop its block does not divide (10 rows in blocks of 4) gets
// one more block, shifted back to end with the loop (offset min(i, 6)), so
// that every block has its static size; the sizes become kiln.matrix_tile.
// CHECK-LABEL: func.func @shifted_blocks
// CHECK-SAME: kiln.matrix_tile = array<i64: 4, 8>
// CHECK-SAME: kiln.workgroups = 3 : i64
// CHECK: scf.forall (%[[I:.+]], %[[J:.+]]) = (0, 0) to (10, 8) step (4, 8)
// CHECK: %[[ROW:.+]] = arith.minui %[[I]], %c6
// CHECK: tensor.extract_slice %{{.+}}[%[[ROW]], %[[J]]] [4, 8] [1, 1]
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @shifted_blocks(%arg0: memref<10x8xf32>, %arg1: memref<10x8xf32>) attributes {kiln.kernel, kiln.config = #kiln.config<blocks, tile_sizes = [4, 8]>} {
  %x = bufferization.to_tensor %arg0 restrict : memref<10x8xf32> to tensor<10x8xf32>
  %e = tensor.empty() : tensor<10x8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<10x8xf32>) outs(%e : tensor<10x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<10x8xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg1 : (tensor<10x8xf32>, memref<10x8xf32>) -> ()
  return
}

// -----

// No config: one workgroup, untiled.
// CHECK-LABEL: func.func @no_config
// CHECK-SAME: kiln.workgroups = 1 : i64
// CHECK-NOT: scf.forall
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @no_config(%arg0: memref<64x8xf32>, %arg1: memref<64x8xf32>) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<64x8xf32> to tensor<64x8xf32>
  %e = tensor.empty() : tensor<64x8xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x8xf32>) outs(%e : tensor<64x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<64x8xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg1 : (tensor<64x8xf32>, memref<64x8xf32>) -> ()
  return
}

// -----

// A config that does not fit the root is an error, not a guess.
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @config_of_another_root(%arg0: memref<64x8xf32>, %arg1: memref<64x8xf32>) attributes {kiln.kernel, kiln.config = #kiln.config<threads, tile_sizes = [1, 1, 1]>} {
  %x = bufferization.to_tensor %arg0 restrict : memref<64x8xf32> to tensor<64x8xf32>
  %e = tensor.empty() : tensor<64x8xf32>
  // expected-error @+1 {{kiln.config has 3 tile sizes for a root of 2 loops}}
  %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x8xf32>) outs(%e : tensor<64x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<64x8xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg1 : (tensor<64x8xf32>, memref<64x8xf32>) -> ()
  return
}
