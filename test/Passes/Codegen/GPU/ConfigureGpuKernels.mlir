// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-prepare-kernel-tiling{reorder-pads=true},kiln-configure-gpu-kernels,kiln-tile-and-distribute{gpu=true}))' | FileCheck %s

// GPU tiling: every parallel loop of the root gets tile size 1, one forall
// iteration per thread, except the innermost of an elementwise kernel,
// whose runs of 16 bytes (4 floats) a thread reads and writes;
// kiln.workgroups counts the iterations.
// CHECK-LABEL: func.func @relu_of_exp
// CHECK-SAME: kiln.workgroups = 128 : i64
// CHECK: scf.forall (%[[I:.+]], %[[J:.+]]) = (0, 0) to (64, 8) step (1, 4)
// CHECK: math.exp
// CHECK: arith.maximumf
// CHECK: tensor.parallel_insert_slice %{{.+}} into %{{.+}}[%[[I]], %[[J]]] [1, 4] [1, 1]
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

// -----

// A matmul accumulating into a kernel input (Gemm with a full matrix C):
// the input is copied into each iteration's output element by a fused
// linalg.copy, not whole before the loop (which kept the kernel on one GPU
// thread).
// CHECK-LABEL: func.func @accumulate_into_input
// CHECK: %[[C:.+]] = bufferization.to_tensor %arg2
// CHECK: %[[E:.+]] = tensor.empty() : tensor<3x4xf32>
// CHECK: scf.forall (%[[I:.+]], %[[J:.+]]) in (3, 4) shared_outs(%[[O:.+]] = %[[E]])
// CHECK: %[[CS:.+]] = tensor.extract_slice %[[C]][%[[I]], %[[J]]] [1, 1] [1, 1]
// CHECK: %[[OS:.+]] = tensor.extract_slice %[[O]][%[[I]], %[[J]]] [1, 1] [1, 1]
// CHECK: %[[INIT:.+]] = linalg.copy ins(%[[CS]] : tensor<1x1xf32>) outs(%[[OS]] : tensor<1x1xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[INIT]] : tensor<1x1xf32>)
#ga = affine_map<(d0, d1, d2) -> (d0, d1)>
#gb = affine_map<(d0, d1, d2) -> (d1, d2)>
#gc = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @accumulate_into_input(%arg0: memref<3x6xf32>, %arg1: memref<6x4xf32>, %arg2: memref<3x4xf32>, %arg3: memref<3x4xf32>) attributes {kiln.kernel} {
  %a = bufferization.to_tensor %arg0 restrict : memref<3x6xf32> to tensor<3x6xf32>
  %b = bufferization.to_tensor %arg1 restrict : memref<6x4xf32> to tensor<6x4xf32>
  %c = bufferization.to_tensor %arg2 restrict : memref<3x4xf32> to tensor<3x4xf32>
  %0 = linalg.generic {indexing_maps = [#ga, #gb, #gc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a, %b : tensor<3x6xf32>, tensor<6x4xf32>) outs(%c : tensor<3x4xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %1 = arith.mulf %in, %in_0 : f32
    %2 = arith.addf %out, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<3x4xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg3 : (tensor<3x4xf32>, memref<3x4xf32>) -> ()
  return
}
