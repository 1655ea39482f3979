// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-decompose-pads))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-decompose-pads),eliminate-empty-tensors,empty-tensor-to-alloc-tensor,one-shot-bufferize,canonicalize,cse,canonicalize)' | FileCheck %s --check-prefix=BUF

// A padding kernel's tile (two channels of a 1x4x6x6 map padded by one):
// an empty padded tile, filled with the pad value, the source inserted at
// offset 1. Bufferized, the fill and the copy write the output's tile:
// no temporary, and (after cse) no copy of the tile onto itself.
// CHECK-LABEL: func.func @pad_tile
// CHECK-NOT: tensor.pad
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x2x8x8xf32>
// CHECK: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<1x2x8x8xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %[[F]][0, 0, 1, 1] [1, 2, 6, 6] [1, 1, 1, 1]
// BUF-LABEL: func.func @pad_tile
// BUF-NOT: memref.alloc
// BUF: %[[TILE:.+]] = memref.subview %arg1[0, %{{.+}}, 0, 0] [1, 2, 8, 8]
// BUF: linalg.fill ins(%{{.+}} : f32) outs(%[[TILE]]
// BUF: %[[INNER:.+]] = memref.subview %[[TILE]][0, 0, 1, 1] [1, 2, 6, 6]
// BUF: memref.copy %{{.+}}, %[[INNER]]
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @pad_tile(%arg0: memref<1x4x6x6xf32>, %arg1: memref<1x4x8x8xf32>) attributes {kiln.kernel} {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = bufferization.to_tensor %arg0 restrict : memref<1x4x6x6xf32> to tensor<1x4x6x6xf32>
  %1 = tensor.empty() : tensor<1x4x8x8xf32>
  %2 = scf.forall (%i) = (0) to (4) step (2) shared_outs(%out = %1) -> (tensor<1x4x8x8xf32>) {
    %s = tensor.extract_slice %0[0, %i, 0, 0] [1, 2, 6, 6] [1, 1, 1, 1] : tensor<1x4x6x6xf32> to tensor<1x2x6x6xf32>
    %p = tensor.pad %s low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%a: index, %b: index, %c: index, %d: index):
      tensor.yield %cst : f32
    } : tensor<1x2x6x6xf32> to tensor<1x2x8x8xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %p into %out[0, %i, 0, 0] [1, 2, 8, 8] [1, 1, 1, 1] : tensor<1x2x8x8xf32> into tensor<1x4x8x8xf32>
    }
  }
  bufferization.materialize_in_destination %2 in restrict writable %arg1 : (tensor<1x4x8x8xf32>, memref<1x4x8x8xf32>) -> ()
  return
}

// -----

// Outside kernels, pads are left alone.
// CHECK-LABEL: func.func @host
// CHECK: tensor.pad
func.func @host(%x: tensor<2x2xf32>) -> tensor<4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %p = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%a: index, %b: index):
    tensor.yield %cst : f32
  } : tensor<2x2xf32> to tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}
