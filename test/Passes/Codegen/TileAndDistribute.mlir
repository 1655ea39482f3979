// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-tile-and-distribute{min-work-per-workgroup=256}))' | FileCheck %s

// The root (the op the kernel writes) is tiled along its first parallel loop
// into an scf.forall; its producer is fused into the loop body.
// CHECK-LABEL: func.func @relu_of_exp
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
