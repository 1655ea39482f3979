// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-tile-and-distribute{gpu=true}))' | FileCheck %s

// GPU tiling: every parallel loop of the root gets tile size 1, one forall
// iteration per output element; kiln.workgroups counts the iterations.
// CHECK-LABEL: func.func @relu_of_exp
// CHECK-SAME: kiln.workgroups = 512 : i64
// CHECK: scf.forall (%[[I:.+]], %[[J:.+]]) in (64, 8)
// CHECK: math.exp
// CHECK: arith.maximumf
// CHECK: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[I]], %[[J]]] [1, 1] [1, 1]
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

// A fused producer that reduces each row (softmax-like: x - max(x)) keeps
// the innermost loop whole, so that each thread reduces its row once
// instead of once per element.
// CHECK-LABEL: func.func @sub_row_max
// CHECK-SAME: kiln.workgroups = 64 : i64
// CHECK: scf.forall (%[[I:.+]]) in (64)
// CHECK: arith.maximumf
// CHECK: arith.subf
// CHECK: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[I]], 0] [1, 8] [1, 1]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @sub_row_max(%arg0: memref<64x8xf32>, %arg1: memref<64x8xf32>, %wg: index, %nwg: index) attributes {kiln.kernel} {
  %ninf = arith.constant 0xFF800000 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<64x8xf32> to tensor<64x8xf32>
  %e0 = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<64xf32>) -> tensor<64xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x8xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %e1 = tensor.empty() : tensor<64x8xf32>
  %1 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<64x8xf32>, tensor<64xf32>) outs(%e1 : tensor<64x8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %r = arith.subf %in, %m : f32
    linalg.yield %r : f32
  } -> tensor<64x8xf32>
  bufferization.materialize_in_destination %1 in restrict writable %arg1 : (tensor<64x8xf32>, memref<64x8xf32>) -> ()
  return
}
