// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-configure-cpu-kernels{min-work-per-workgroup=256}))' | FileCheck %s

// findKernelRoot, hasTileableResults, outerReducedAxes and setKernelConfig
// (passes/Codegen/Common/KernelRoot.cpp), through the CPU's kernel config.

// The kernel writes its result through a collapse_shape: the root is the
// generic behind it, whose first loop is split.
// CHECK-LABEL: func.func @root_behind_collapse
// CHECK-SAME: kiln.config = #kiln.config<workgroups, tile_sizes = [4, 0]>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @root_behind_collapse(%arg0: memref<64x64xf32>, %arg1: memref<4096xf32>) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<64x64xf32> to tensor<64x64xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.0 : f32
    %r = arith.maximumf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  %1 = tensor.collapse_shape %0 [[0, 1]] : tensor<64x64xf32> into tensor<4096xf32>
  bufferization.materialize_in_destination %1 in restrict writable %arg1 : (tensor<4096xf32>, memref<4096xf32>) -> ()
  return
}

// -----

// A loop of no iterations (an output with a zero-size dim): nothing to
// distribute, no config.
// CHECK-LABEL: func.func @empty_loop
// CHECK-NOT: kiln.config
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @empty_loop(%arg0: memref<0x64xf32>, %arg1: memref<0x64xf32>) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<0x64xf32> to tensor<0x64xf32>
  %e = tensor.empty() : tensor<0x64xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<0x64xf32>) outs(%e : tensor<0x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<0x64xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg1 : (tensor<0x64xf32>, memref<0x64xf32>) -> ()
  return
}

// -----

// A root that reads a sum over its channels (a softmax over axis 1): split
// along the channels, each workgroup would recompute the whole sum, so the
// first other loop of more than one iteration (the rows) is split.
// CHECK-LABEL: func.func @outer_reduced_axis
// CHECK-SAME: kiln.config = #kiln.config<workgroups, tile_sizes = [0, 0, 1, 0]>
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#s = affine_map<(n, c, h, w) -> (n, h, w)>
#r = affine_map<(n, c, h, w) -> (n, h, w)>
#rx = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @outer_reduced_axis(%arg0: memref<1x64x16x16xf32>, %arg1: memref<1x64x16x16xf32>) attributes {kiln.kernel} {
  %x = bufferization.to_tensor %arg0 restrict : memref<1x64x16x16xf32> to tensor<1x64x16x16xf32>
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x16x16xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x16x16xf32>) -> tensor<1x16x16xf32>
  %sum = linalg.generic {indexing_maps = [#rx, #r], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%x : tensor<1x64x16x16xf32>) outs(%zs : tensor<1x16x16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<1x16x16xf32>
  %e = tensor.empty() : tensor<1x64x16x16xf32>
  %0 = linalg.generic {indexing_maps = [#x, #s, #x], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %sum : tensor<1x64x16x16xf32>, tensor<1x16x16xf32>) outs(%e : tensor<1x64x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<1x64x16x16xf32>
  bufferization.materialize_in_destination %0 in restrict writable %arg1 : (tensor<1x64x16x16xf32>, memref<1x64x16x16xf32>) -> ()
  return
}
