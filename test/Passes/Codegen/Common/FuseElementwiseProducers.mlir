// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fuse-elementwise-producers))' | FileCheck %s

// The generics that only widen a 16-bit operand are folded into the matmul
// and the bias add that read them: their bodies load f16 and widen it in
// registers (`extf(a) * extf(b) + acc`). The bias add and the rounding
// (single use, read element for element) become one generic.
// CHECK-LABEL: func.func @matmul_f16
// CHECK-NOT: linalg.generic {{.*}}ins(%{{[^ ]+}} : tensor<64x32xf16>) outs(%{{[^ ]+}} : tensor<64x32xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<64x32xf16>, tensor<32x64xf16>) outs(%{{.+}} : tensor<64x64xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<64x64xf32>, tensor<64xf16>) outs(%{{.+}} : tensor<64x64xf16>)
// CHECK: arith.extf
// CHECK: arith.addf
// CHECK: arith.truncf
// CHECK-NOT: linalg.generic
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>
func.func @matmul_f16(%x: tensor<64x32xf16>, %w: tensor<32x64xf16>, %b: tensor<64xf16>) -> tensor<64x64xf16> attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<64x32xf32>
  %xw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x32xf16>) outs(%ex : tensor<64x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<64x32xf32>
  %ew = tensor.empty() : tensor<32x64xf32>
  %ww = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<32x64xf16>) outs(%ew : tensor<32x64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<32x64xf32>
  %eb = tensor.empty() : tensor<64xf32>
  %bw = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%b : tensor<64xf16>) outs(%eb : tensor<64xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<64xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%xw, %ww : tensor<64x32xf32>, tensor<32x64xf32>) outs(%f : tensor<64x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<64x64xf32>
  %add = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]} ins(%mm, %bw : tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<64x64xf32>
  %eh = tensor.empty() : tensor<64x64xf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%add : tensor<64x64xf32>) outs(%eh : tensor<64x64xf16>) {
  ^bb0(%in: f32, %out: f16):
    %0 = arith.truncf %in : f32 to f16
    linalg.yield %0 : f16
  } -> tensor<64x64xf16>
  return %r : tensor<64x64xf16>
}

// -----

// Left alone: a producer with another user (fusing would compute it twice)
// and one its consumer reads with a broadcast (computed once per row
// otherwise).
// CHECK-LABEL: func.func @shared_and_broadcast
// CHECK: %[[E:.+]] = linalg.generic {{.*}}ins(%arg0 : tensor<8x16xf32>)
// CHECK: math.exp
// CHECK: %[[N:.+]] = linalg.generic {{.*}}ins(%arg1 : tensor<16xf32>)
// CHECK: arith.negf
// CHECK: %[[R:.+]] = linalg.generic {{.*}}ins(%[[E]], %[[N]] : tensor<8x16xf32>, tensor<16xf32>)
// CHECK: return %[[R]], %[[E]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#v = affine_map<(d0) -> (d0)>
func.func @shared_and_broadcast(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) attributes {kiln.kernel} {
  %e0 = tensor.empty() : tensor<8x16xf32>
  %ex = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<8x16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %nb = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]} ins(%b : tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  } -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%ex, %nb : tensor<8x16xf32>, tensor<16xf32>) outs(%e0 : tensor<8x16xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %1 = arith.addf %in, %in_1 : f32
    linalg.yield %1 : f32
  } -> tensor<8x16xf32>
  return %r, %ex : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A batched MatMul computed as one 2-D matmul reads its widened activations
// through a collapse_shape: the widening moves below the collapse and then
// folds into the matmul, leaving no full-size op outside it.
// CHECK-LABEL: func.func @collapsed_widening
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : tensor<2x16x32xf16> into tensor<32x32xf16>
// CHECK-NOT: linalg.generic
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]{{.*}} ins(%[[FLAT]], %{{.+}} : tensor<32x32xf16>, tensor<32x64xf16>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK-NOT: linalg.generic
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @collapsed_widening(%x: tensor<2x16x32xf16>, %w: tensor<32x64xf16>) -> tensor<32x64xf32> attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<2x16x32xf32>
  %wide = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<2x16x32xf16>) outs(%e3 : tensor<2x16x32xf32>) {
  ^bb0(%in: f16, %out: f32):
    %0 = arith.extf %in : f16 to f32
    linalg.yield %0 : f32
  } -> tensor<2x16x32xf32>
  %flat = tensor.collapse_shape %wide [[0, 1], [2]] : tensor<2x16x32xf32> into tensor<32x32xf32>
  %e = tensor.empty() : tensor<32x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "reduction", "parallel"]} ins(%flat, %w : tensor<32x32xf32>, tensor<32x64xf16>) outs(%f : tensor<32x64xf32>) {
  ^bb0(%in: f32, %in_0: f16, %out: f32):
    %0 = arith.extf %in_0 : f16 to f32
    %1 = arith.mulf %in, %0 : f32
    %2 = arith.addf %out, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<32x64xf32>
  return %mm : tensor<32x64xf32>
}

// -----

// A chain of elementwise generics becomes one, its body in the chain's
// order (the fusion goes in rounds of disjoint producer-consumer pairs:
// (add, mul) and (sub, div) first, then the two results).
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.subf
// CHECK-NEXT: arith.divf
// CHECK-NOT: linalg.generic
#id1 = affine_map<(d0) -> (d0)>
func.func @chain(%x: tensor<64xf32>, %y: tensor<64xf32>) -> tensor<64xf32> attributes {kiln.kernel} {
  %e = tensor.empty() : tensor<64xf32>
  %0 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%x, %y : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %1 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%0, %y : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %2 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%1, %x : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %3 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%2, %y : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %3 : tensor<64xf32>
}

// -----

// A weight stored as int8 (kiln-narrow-integer-weights) is widened in the
// matmul's body: `a * sitofp(b) + acc`, loading bytes.
// CHECK-LABEL: func.func @matmul_int8_weight
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<8x32xf32>, tensor<32x64xi8>) outs(%{{.+}} : tensor<8x64xf32>)
// CHECK: arith.sitofp %{{.+}} : i8 to f32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
#a = affine_map<(d0, d1, d2) -> (d0, d1)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @matmul_int8_weight(%x: tensor<8x32xf32>, %w: tensor<32x64xi8>) -> tensor<8x64xf32> attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %ew = tensor.empty() : tensor<32x64xf32>
  %ww = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<32x64xi8>) outs(%ew : tensor<32x64xf32>) {
  ^bb0(%in: i8, %out: f32):
    %0 = arith.sitofp %in : i8 to f32
    linalg.yield %0 : f32
  } -> tensor<32x64xf32>
  %e = tensor.empty() : tensor<8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %mm = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %ww : tensor<8x32xf32>, tensor<32x64xf32>) outs(%f : tensor<8x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<8x64xf32>
  return %mm : tensor<8x64xf32>
}

// -----

// kiln-pack-int8-conv-weights' convolution summing in float64: the uint8
// bytes and the int8 weights, each widened to float64 by a generic of its
// own, are read by the convolution's body as uitofp and sitofp.
// CHECK-LABEL: func.func @int8_quads_float64
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<1x1x1x64xui8>, tensor<4x1x1x4xi8>) outs(%{{.+}} : tensor<1x4x1x16xf64>)
// CHECK-DAG: arith.uitofp %{{.+}} : i8 to f64
// CHECK-DAG: arith.sitofp %{{.+}} : i8 to f64
// CHECK-NOT: linalg.generic
#qx = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d2 + d4, d6 * 4 + d5)>
#qw = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d3, d4, d5)>
#qo = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @int8_quads_float64(%x: tensor<1x1x1x64xui8>, %w: tensor<4x1x1x4xi8>) -> tensor<1x4x1x16xf64> attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f64
  %ex = tensor.empty() : tensor<1x1x1x64xf64>
  %xf = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x1x1x64xui8>) outs(%ex : tensor<1x1x1x64xf64>) {
  ^bb0(%in: ui8, %out: f64):
    %0 = builtin.unrealized_conversion_cast %in : ui8 to i8
    %1 = arith.uitofp %0 : i8 to f64
    linalg.yield %1 : f64
  } -> tensor<1x1x1x64xf64>
  %ew = tensor.empty() : tensor<4x1x1x4xf64>
  %wf = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w : tensor<4x1x1x4xi8>) outs(%ew : tensor<4x1x1x4xf64>) {
  ^bb0(%in: i8, %out: f64):
    %0 = arith.sitofp %in : i8 to f64
    linalg.yield %0 : f64
  } -> tensor<4x1x1x4xf64>
  %e = tensor.empty() : tensor<1x4x1x16xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<1x4x1x16xf64>) -> tensor<1x4x1x16xf64>
  %y = linalg.generic {indexing_maps = [#qx, #qw, #qo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%xf, %wf : tensor<1x1x1x64xf64>, tensor<4x1x1x4xf64>) outs(%f : tensor<1x4x1x16xf64>) {
  ^bb0(%in: f64, %in_0: f64, %out: f64):
    %0 = arith.mulf %in, %in_0 : f64
    %1 = arith.addf %out, %0 : f64
    linalg.yield %1 : f64
  } -> tensor<1x4x1x16xf64>
  return %y : tensor<1x4x1x16xf64>
}
