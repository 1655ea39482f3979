// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-vectorize-reduction-rows),canonicalize,cse)' | FileCheck %s

// A 13x13 max pooling (stride 1, on a padded input): the output's width
// (13) is one masked vector of 16; four output rows are computed together,
// their four vectors carried through the window loops (13 rows = three
// groups of four and one of one). The window operand, which the body does
// not read, does not matter.
// CHECK-LABEL: func.func @max_pool
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[H:.+]] = %{{.+}} to %c12 step %c4
// CHECK: %[[MASK:.+]] = vector.constant_mask [13] : vector<16xi1>
// CHECK-COUNT-4: vector.maskedload %arg2[%{{.+}}], %[[MASK]], %{{.+}} : memref<1x3x13x13xf32>
// CHECK: scf.for %[[KH:.+]] = {{.+}} iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for %[[KW:[a-z0-9_]+]] = {{.+}} iter_args(%[[ACC:[a-z0-9_]+]] = 
// CHECK: %[[X:.+]] = vector.maskedload %arg0[%{{.+}}, %{{.+}}, %{{.+}}, %[[KW]]], %[[MASK]]
// CHECK: arith.maximumf %[[X]], %[[ACC]] : vector<16xf32>
// CHECK-COUNT-3: arith.maximumf
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK-COUNT-4: vector.maskedstore %arg2
// The 13th row alone.
// CHECK: scf.for {{.+}} -> (vector<16xf32>)
#in = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
#window = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#out = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
func.func @max_pool(%in: memref<1x3x25x25xf32>, %window: memref<13x13xf32>, %out: memref<1x3x13x13xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#in, #window, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%in, %window : memref<1x3x25x25xf32>, memref<13x13xf32>) outs(%out : memref<1x3x13x13xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A depthwise 3x3 convolution: the filter does not depend on the output's
// width, so it is one broadcast value per step. The width (16) is one
// whole vector; rows 4 at a time.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: linalg.generic
// CHECK: scf.for {{.+}} step %c4
// CHECK: scf.for {{.+}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for %[[KW:[a-z0-9_]+]] = {{.+}} iter_args(%[[ACC:[a-z0-9_]+]] = 
// CHECK: %[[X:.+]] = vector.load %arg0[%{{.+}}, %{{.+}}, %[[KW]]] : memref<8x18x18xf32>, vector<16xf32>
// CHECK: %[[W:.+]] = memref.load %arg1[%{{.+}}, %{{.+}}, %[[KW]]] : memref<8x3x3xf32>
// CHECK: %[[WB:.+]] = vector.broadcast %[[W]] : f32 to vector<16xf32>
// CHECK: %[[P:.+]] = arith.mulf %[[X]], %[[WB]] : vector<16xf32>
// CHECK: arith.addf %[[ACC]], %[[P]] : vector<16xf32>
#dx = affine_map<(c, h, w, kh, kw) -> (c, h + kh, w + kw)>
#dw = affine_map<(c, h, w, kh, kw) -> (c, kh, kw)>
#dy = affine_map<(c, h, w, kh, kw) -> (c, h, w)>
func.func @depthwise(%x: memref<8x18x18xf32>, %w: memref<8x3x3xf32>, %y: memref<8x16x16xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#dx, #dw, #dy], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<8x18x18xf32>, memref<8x3x3xf32>) outs(%y : memref<8x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A scaled sum over the middle axis of [4, 64, 32]: the 32 columns are
// two whole vectors, the 4 rows computed together, their vectors carried
// through the 64 reduction steps; the scale from outside the body is
// broadcast.
// CHECK-LABEL: func.func @sum_middle_axis
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[COL:[a-z0-9_]+]] = %c0 to %c32 step %c16
// CHECK-COUNT-4: vector.load %arg1
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %c0 to %c64 step %c1 iter_args(%[[ACC:[a-z0-9_]+]] = 
// CHECK: %[[X:.+]] = vector.load %arg0[%c0, %[[K]], %[[COL]]] : memref<4x64x32xf32>, vector<16xf32>
// CHECK: %[[SCALE:.+]] = vector.broadcast %arg2 : f32 to vector<16xf32>
// CHECK: %[[S:.+]] = arith.mulf %[[X]], %[[SCALE]] : vector<16xf32>
// CHECK: arith.addf %[[ACC]], %[[S]] : vector<16xf32>
// CHECK-COUNT-4: vector.store
#sx = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#sy = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @sum_middle_axis(%x: memref<4x64x32xf32>, %y: memref<4x32xf32>, %scale: f32) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#sx, #sy], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<4x64x32xf32>) outs(%y : memref<4x32xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %scale : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Left alone: a sum over the innermost axis (the input would be read down
// its columns), a matmul with B transposed (B's rows would be read across),
// an integer division (a masked step's lanes past the row would divide by
// zero) and an op outside a kernel.
// CHECK-LABEL: func.func @sum_last_axis
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-LABEL: func.func @matmul_b_transposed
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-LABEL: func.func @integer_division
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-LABEL: func.func @not_a_kernel
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
#lx = affine_map<(d0, d1) -> (d0, d1)>
#ly = affine_map<(d0, d1) -> (d0)>
func.func @sum_last_axis(%x: memref<4x64xf32>, %y: memref<4xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#lx, #ly], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %acc, %a : f32
    linalg.yield %s : f32
  }
  return
}
#ta = affine_map<(m, n, k) -> (m, k)>
#tb = affine_map<(m, n, k) -> (n, k)>
#tc = affine_map<(m, n, k) -> (m, n)>
func.func @matmul_b_transposed(%a: memref<8x16xf32>, %b: memref<32x16xf32>, %c: memref<8x32xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#ta, #tb, #tc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<32x16xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
#da = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#db = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @integer_division(%x: memref<4x8x13xi32>, %d: memref<4x8x13xi32>, %y: memref<4x13xi32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#da, #da, #db], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %d : memref<4x8x13xi32>, memref<4x8x13xi32>) outs(%y : memref<4x13xi32>) {
  ^bb0(%a: i32, %b: i32, %acc: i32):
    %q = arith.divsi %a, %b : i32
    %s = arith.addi %acc, %q : i32
    linalg.yield %s : i32
  }
  return
}
#na = affine_map<(m, n, k) -> (m, k)>
#nb = affine_map<(m, n, k) -> (k, n)>
#nc = affine_map<(m, n, k) -> (m, n)>
func.func @not_a_kernel(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) {
  linalg.generic {indexing_maps = [#na, #nb, #nc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 3x3 max pooling of stride 2 (ResNet's, on a padded 41x41 input): each
// row of 20 outputs is a vector of 16 and a masked one of 4. A vector of
// outputs reads 31 input values (masked loads of 32), every second one
// kept; the remainder's 4 outputs read 7.
// CHECK-LABEL: func.func @strided_max_pool
// CHECK-NOT: linalg.generic
// CHECK: scf.for %[[KH:.+]] = {{.+}} iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.for %[[KW:[a-z0-9_]+]] = {{.+}} iter_args(%[[ACC:[a-z0-9_]+]] =
// CHECK: %[[WHOLE:.+]] = vector.constant_mask [31] : vector<32xi1>
// CHECK: %[[X:.+]] = vector.maskedload %arg0[{{.+}}], %[[WHOLE]], %{{.+}} : memref<1x2x41x41xf32>, vector<32xi1>, vector<32xf32> into vector<32xf32>
// CHECK: %[[EVEN:.+]] = vector.shuffle %[[X]], %[[X]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<32xf32>, vector<32xf32>
// CHECK: arith.maximumf %[[EVEN]], %[[ACC]] : vector<16xf32>
// CHECK: %[[TAIL:.+]] = vector.constant_mask [7] : vector<32xi1>
// CHECK: vector.maskedload %arg0[{{.+}}], %[[TAIL]]
#sin = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
#swindow = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#sout = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
func.func @strided_max_pool(%in: memref<1x2x41x41xf32>, %window: memref<3x3xf32>, %out: memref<1x2x20x20xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#sin, #swindow, #sout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%in, %window : memref<1x2x41x41xf32>, memref<3x3xf32>) outs(%out : memref<1x2x20x20xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A stride-2 max pooling of bytes widened in its body (a QDQ model's
// pooled bytes, kiln-pack-int8-conv-weights): the lowering's cast of ui8
// to i8 is the same bits on vectors, so the row is read as bytes, every
// second of 32 kept, cast and widened a vector at a time.
// CHECK-LABEL: func.func @max_pool_of_bytes
// CHECK-NOT: linalg.generic
// CHECK: %[[B:.+]] = vector.maskedload %arg0{{.+}} : memref<1x2x9x9xui8>, vector<32xi1>, vector<32xui8> into vector<32xui8>
// CHECK: %[[S:.+]] = vector.shuffle %[[B]], %[[B]] [0, 2, 4, 6
// CHECK: %[[I:.+]] = builtin.unrealized_conversion_cast %[[S]] : vector<16xui8> to vector<16xi8>
// CHECK: %[[F:.+]] = arith.uitofp %[[I]] : vector<16xi8> to vector<16xf32>
// CHECK: arith.maximumf %[[F]], %{{.+}} : vector<16xf32>
#bin = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
#bwindow = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#bout = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
func.func @max_pool_of_bytes(%in: memref<1x2x9x9xui8>, %window: memref<3x3xf32>, %out: memref<1x2x4x4xf32>) attributes {kiln.kernel} {
  linalg.generic {indexing_maps = [#bin, #bwindow, #bout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%in, %window : memref<1x2x9x9xui8>, memref<3x3xf32>) outs(%out : memref<1x2x4x4xf32>) {
  ^bb0(%x: ui8, %w: f32, %acc: f32):
    %i = builtin.unrealized_conversion_cast %x : ui8 to i8
    %f = arith.uitofp %i : i8 to f32
    %m = arith.maximumf %f, %acc : f32
    linalg.yield %m : f32
  }
  return
}
