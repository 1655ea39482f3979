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

// -----

// A padding kernel's thread tile, as kiln-tile-and-distribute makes it on
// the GPU: one pixel of the padded dims, eight channels. Tiling guards the
// tile with a check that the slice of the source is empty along some dim;
// past it, each dynamic size is at least one and at most the tile's one,
// so the tile is the slice itself (no fill, no dynamically shaped copy).
// CHECK-LABEL: func.func @guarded_unit_tile
// CHECK: scf.if
// CHECK: tensor.generate
// CHECK: } else {
// CHECK-NOT: tensor.pad
// CHECK-NOT: linalg.fill
// CHECK: %[[S:.+]] = tensor.extract_slice %{{.+}}[%{{.+}}, %[[H:.+]], %[[W:.+]], %{{.+}}] [1, 1, 1, 8] [1, 1, 1, 1] : tensor<2x4x4x64xf16> to tensor<1x1x1x8xf16>
// CHECK-NEXT: scf.yield %[[S]]
// The same pad where the guard does not check the width's size: it may be
// empty, so the pad stays a fill and an insert.
// CHECK-LABEL: func.func @unchecked_size
// CHECK: } else {
// CHECK: linalg.fill
// CHECK: tensor.insert_slice
#low = affine_map<(d0) -> (-d0 + 1, 0)>
#start = affine_map<(d0) -> (d0 - 1, 0)>
#clamp = affine_map<(d0) -> (d0, 4)>
#size = affine_map<(d0, d1) -> (-d0 + 4, -d1 + 1)>
#nonneg = affine_map<(d0) -> (d0, 0)>
#high = affine_map<(d0, d1) -> (-d0 - d1 + 1)>
func.func @guarded_unit_tile(%arg0: memref<2x4x4x64xf16>, %arg1: memref<2x6x6x64xf16>) attributes {kiln.kernel} {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f16
  %0 = bufferization.to_tensor %arg0 restrict : memref<2x4x4x64xf16> to tensor<2x4x4x64xf16>
  %1 = tensor.empty() : tensor<2x6x6x64xf16>
  %2 = scf.forall (%n, %h, %w, %c) = (0, 0, 0, 0) to (2, 6, 6, 64) step (1, 1, 1, 8) shared_outs(%out = %1) -> (tensor<2x6x6x64xf16>) {
    %lh = affine.max #low(%h)
    %sh0 = affine.max #start(%h)
    %sh = affine.min #clamp(%sh0)
    %nh0 = affine.min #size(%sh, %lh)
    %nh = affine.max #nonneg(%nh0)
    %eh = arith.cmpi eq, %nh, %c0 : index
    %hh = affine.apply #high(%lh, %nh)
    %lw = affine.max #low(%w)
    %sw0 = affine.max #start(%w)
    %sw = affine.min #clamp(%sw0)
    %nw0 = affine.min #size(%sw, %lw)
    %nw = affine.max #nonneg(%nw0)
    %ew = arith.cmpi eq, %nw, %c0 : index
    %hw = affine.apply #high(%lw, %nw)
    %empty = arith.ori %ew, %eh : i1
    %tile = scf.if %empty -> (tensor<1x1x1x8xf16>) {
      %g = tensor.generate {
      ^bb0(%a: index, %b: index, %d: index, %e: index):
        tensor.yield %cst : f16
      } : tensor<1x1x1x8xf16>
      scf.yield %g : tensor<1x1x1x8xf16>
    } else {
      %s = tensor.extract_slice %0[%n, %sh, %sw, %c] [1, %nh, %nw, 8] [1, 1, 1, 1] : tensor<2x4x4x64xf16> to tensor<1x?x?x8xf16>
      %p = tensor.pad %s low[0, %lh, %lw, 0] high[0, %hh, %hw, 0] {
      ^bb0(%a: index, %b: index, %d: index, %e: index):
        tensor.yield %cst : f16
      } : tensor<1x?x?x8xf16> to tensor<1x?x?x8xf16>
      %t = tensor.cast %p : tensor<1x?x?x8xf16> to tensor<1x1x1x8xf16>
      scf.yield %t : tensor<1x1x1x8xf16>
    }
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %tile into %out[%n, %h, %w, %c] [1, 1, 1, 8] [1, 1, 1, 1] : tensor<1x1x1x8xf16> into tensor<2x6x6x64xf16>
    }
  }
  bufferization.materialize_in_destination %2 in restrict writable %arg1 : (tensor<2x6x6x64xf16>, memref<2x6x6x64xf16>) -> ()
  return
}
func.func @unchecked_size(%arg0: memref<2x4x4x64xf16>, %arg1: memref<2x6x6x64xf16>) attributes {kiln.kernel} {
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f16
  %0 = bufferization.to_tensor %arg0 restrict : memref<2x4x4x64xf16> to tensor<2x4x4x64xf16>
  %1 = tensor.empty() : tensor<2x6x6x64xf16>
  %2 = scf.forall (%n, %h, %w, %c) = (0, 0, 0, 0) to (2, 6, 6, 64) step (1, 1, 1, 8) shared_outs(%out = %1) -> (tensor<2x6x6x64xf16>) {
    %lh = affine.max #low(%h)
    %sh0 = affine.max #start(%h)
    %sh = affine.min #clamp(%sh0)
    %nh0 = affine.min #size(%sh, %lh)
    %nh = affine.max #nonneg(%nh0)
    %eh = arith.cmpi eq, %nh, %c0 : index
    %hh = affine.apply #high(%lh, %nh)
    %lw = affine.max #low(%w)
    %sw0 = affine.max #start(%w)
    %sw = affine.min #clamp(%sw0)
    %nw0 = affine.min #size(%sw, %lw)
    %nw = affine.max #nonneg(%nw0)
    %hw = affine.apply #high(%lw, %nw)
    %tile = scf.if %eh -> (tensor<1x1x1x8xf16>) {
      %g = tensor.generate {
      ^bb0(%a: index, %b: index, %d: index, %e: index):
        tensor.yield %cst : f16
      } : tensor<1x1x1x8xf16>
      scf.yield %g : tensor<1x1x1x8xf16>
    } else {
      %s = tensor.extract_slice %0[%n, %sh, %sw, %c] [1, %nh, %nw, 8] [1, 1, 1, 1] : tensor<2x4x4x64xf16> to tensor<1x?x?x8xf16>
      %p = tensor.pad %s low[0, %lh, %lw, 0] high[0, %hh, %hw, 0] {
      ^bb0(%a: index, %b: index, %d: index, %e: index):
        tensor.yield %cst : f16
      } : tensor<1x?x?x8xf16> to tensor<1x?x?x8xf16>
      %t = tensor.cast %p : tensor<1x?x?x8xf16> to tensor<1x1x1x8xf16>
      scf.yield %t : tensor<1x1x1x8xf16>
    }
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %tile into %out[%n, %h, %w, %c] [1, 1, 1, 8] [1, 1, 1, 1] : tensor<1x1x1x8xf16> into tensor<2x6x6x64xf16>
    }
  }
  bufferization.materialize_in_destination %2 in restrict writable %arg1 : (tensor<2x6x6x64xf16>, memref<2x6x6x64xf16>) -> ()
  return
}
