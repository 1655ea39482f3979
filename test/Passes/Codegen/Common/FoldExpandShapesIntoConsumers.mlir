// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fold-expand-shapes-into-consumers))' | FileCheck %s

#bias = affine_map<(d0, d1, d2) -> (d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#x = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A pointwise convolution computed over the flattened 7x7 image, then a
// residual add and a ReLU on the model's 4-D shape (ResNet's conv3 +
// Add + Relu): the add and the ReLU are collapsed to [1, 16, 49], the
// residual is read through a collapse_shape, and the result is written
// through a collapsed view of the output buffer. No expand_shape is left.
// CHECK-LABEL: func.func @conv_add_relu
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[RES:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<1x16x7x7xf32> into tensor<1x16x49xf32>
// CHECK: %[[ADD:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[ACC:.+]], %[[RES]] : tensor<1x16x49xf32>, tensor<1x16x49xf32>)
// CHECK: arith.addf
// CHECK: %[[RELU:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[ADD]] : tensor<1x16x49xf32>)
// CHECK: arith.maximumf
// CHECK: %[[VIEW:.+]] = memref.collapse_shape %arg4 {{\[}}[0], [1], [2, 3]] : memref<1x16x7x7xf32> into memref<1x16x49xf32>
// CHECK: bufferization.materialize_in_destination %[[RELU]] in restrict writable %[[VIEW]] : (tensor<1x16x49xf32>, memref<1x16x49xf32>)
// CHECK-NOT: tensor.expand_shape
func.func @conv_add_relu(%arg0: memref<1x8x7x7xf32>, %arg1: memref<16x8x1x1xf32>, %arg2: memref<16xf32>, %arg3: memref<1x16x7x7xf32>, %arg4: memref<1x16x7x7xf32>) attributes {kiln.kernel} {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = bufferization.to_tensor %arg0 restrict : memref<1x8x7x7xf32> to tensor<1x8x7x7xf32>
  %1 = bufferization.to_tensor %arg1 restrict : memref<16x8x1x1xf32> to tensor<16x8x1x1xf32>
  %2 = bufferization.to_tensor %arg2 restrict : memref<16xf32> to tensor<16xf32>
  %3 = bufferization.to_tensor %arg3 restrict : memref<1x16x7x7xf32> to tensor<1x16x7x7xf32>
  %x = tensor.collapse_shape %0 [[0], [1], [2, 3]] : tensor<1x8x7x7xf32> into tensor<1x8x49xf32>
  %w = tensor.collapse_shape %1 [[0], [1, 2, 3]] : tensor<16x8x1x1xf32> into tensor<16x8xf32>
  %4 = tensor.empty() : tensor<1x16x49xf32>
  %5 = linalg.generic {indexing_maps = [#bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%2 : tensor<16xf32>) outs(%4 : tensor<1x16x49xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x16x49xf32>
  %6 = linalg.generic {indexing_maps = [#x, #w, #out], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x8x49xf32>, tensor<16x8xf32>) outs(%5 : tensor<1x16x49xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %10 = arith.mulf %in, %in_1 : f32
    %11 = arith.addf %out, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<1x16x49xf32>
  %expanded = tensor.expand_shape %6 [[0], [1], [2, 3]] output_shape [1, 16, 7, 7] : tensor<1x16x49xf32> into tensor<1x16x7x7xf32>
  %7 = tensor.empty() : tensor<1x16x7x7xf32>
  %8 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded, %3 : tensor<1x16x7x7xf32>, tensor<1x16x7x7xf32>) outs(%7 : tensor<1x16x7x7xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %10 = arith.addf %in, %in_1 : f32
    linalg.yield %10 : f32
  } -> tensor<1x16x7x7xf32>
  %9 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%8 : tensor<1x16x7x7xf32>) outs(%7 : tensor<1x16x7x7xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.maximumf %in, %cst : f32
    linalg.yield %10 : f32
  } -> tensor<1x16x7x7xf32>
  bufferization.materialize_in_destination %9 in restrict writable %arg4 : (tensor<1x16x7x7xf32>, memref<1x16x7x7xf32>) -> ()
  return
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#sum = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>

// Left alone: a consumer that reduces (collapsing its loops would change
// what it sums over, so it reads the 4-D view), an expand_shape of a
// kernel argument (no generic to keep flattened), and functions that are
// not kernels.
// CHECK-LABEL: func.func @reduce_consumer
// CHECK: tensor.expand_shape
// CHECK: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: tensor.expand_shape
// CHECK: bufferization.materialize_in_destination %{{.+}} in restrict writable %arg2 : (tensor<1x4x2x8xf32>, memref<1x4x2x8xf32>)
func.func @reduce_consumer(%arg0: memref<1x4x16xf32>, %arg1: memref<1x4x2xf32>, %arg2: memref<1x4x2x8xf32>) attributes {kiln.kernel} {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = bufferization.to_tensor %arg0 restrict : memref<1x4x16xf32> to tensor<1x4x16xf32>
  %1 = tensor.empty() : tensor<1x4x16xf32>
  %2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0 : tensor<1x4x16xf32>) outs(%1 : tensor<1x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<1x4x16xf32>
  %e = tensor.expand_shape %2 [[0], [1], [2, 3]] output_shape [1, 4, 2, 8] : tensor<1x4x16xf32> into tensor<1x4x2x8xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%1 : tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %z = tensor.empty() : tensor<1x4x2xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%z : tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  %5 = linalg.generic {indexing_maps = [#sum, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%e : tensor<1x4x2x8xf32>) outs(%4 : tensor<1x4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<1x4x2xf32>
  bufferization.materialize_in_destination %5 in restrict writable %arg1 : (tensor<1x4x2xf32>, memref<1x4x2xf32>) -> ()
  %a = tensor.expand_shape %0 [[0], [1], [2, 3]] output_shape [1, 4, 2, 8] : tensor<1x4x16xf32> into tensor<1x4x2x8xf32>
  bufferization.materialize_in_destination %a in restrict writable %arg2 : (tensor<1x4x2x8xf32>, memref<1x4x2x8xf32>) -> ()
  return
}

// CHECK-LABEL: func.func @not_a_kernel
// CHECK: tensor.expand_shape
// CHECK: bufferization.materialize_in_destination %{{.+}} in restrict writable %arg1 : (tensor<1x4x2x8xf32>, memref<1x4x2x8xf32>)
func.func @not_a_kernel(%arg0: memref<1x4x16xf32>, %arg1: memref<1x4x2x8xf32>) {
  %0 = bufferization.to_tensor %arg0 restrict : memref<1x4x16xf32> to tensor<1x4x16xf32>
  %1 = tensor.empty() : tensor<1x4x16xf32>
  %2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0 : tensor<1x4x16xf32>) outs(%1 : tensor<1x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %n = arith.negf %in : f32
    linalg.yield %n : f32
  } -> tensor<1x4x16xf32>
  %e = tensor.expand_shape %2 [[0], [1], [2, 3]] output_shape [1, 4, 2, 8] : tensor<1x4x16xf32> into tensor<1x4x2x8xf32>
  bufferization.materialize_in_destination %e in restrict writable %arg1 : (tensor<1x4x2x8xf32>, memref<1x4x2x8xf32>) -> ()
  return
}

// -----

// A grouped convolution computes [N, G, F/G, H, W] (2 groups of 4 filters)
// and hands the model's [N, F, H, W] on through a collapse_shape: its ReLU
// is expanded to the 5-D shape and the result written through an expanded
// view of the output buffer, so that tiling fuses the convolution into the
// ReLU's tiles (it ran whole in every workgroup, behind the reshape).
// CHECK-LABEL: func.func @grouped_conv_relu
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[CONV:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<1x2x4x6x6xf32>)
// CHECK: %[[RELU:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[CONV]] : tensor<1x2x4x6x6xf32>)
// CHECK: arith.maximumf
// CHECK: %[[VIEW:.+]] = memref.expand_shape %arg2 {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 4, 6, 6] : memref<1x8x6x6xf32> into memref<1x2x4x6x6xf32>
// CHECK: bufferization.materialize_in_destination %[[RELU]] in restrict writable %[[VIEW]] : (tensor<1x2x4x6x6xf32>, memref<1x2x4x6x6xf32>)
// CHECK-NOT: tensor.collapse_shape
#gx = affine_map<(n, g, f, oh, c, kh, kw, ow) -> (n, g, c, oh + kh, ow + kw)>
#gw = affine_map<(n, g, f, oh, c, kh, kw, ow) -> (g, f, c, kh, kw)>
#gout = affine_map<(n, g, f, oh, c, kh, kw, ow) -> (n, g, f, oh, ow)>
#g4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @grouped_conv_relu(%arg0: memref<1x4x8x8xf32>, %arg1: memref<8x2x3x3xf32>, %arg2: memref<1x8x6x6xf32>) attributes {kiln.kernel} {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = bufferization.to_tensor %arg0 restrict : memref<1x4x8x8xf32> to tensor<1x4x8x8xf32>
  %1 = bufferization.to_tensor %arg1 restrict : memref<8x2x3x3xf32> to tensor<8x2x3x3xf32>
  %x = tensor.expand_shape %0 [[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 8, 8] : tensor<1x4x8x8xf32> into tensor<1x2x2x8x8xf32>
  %w = tensor.expand_shape %1 [[0, 1], [2], [3], [4]] output_shape [2, 4, 2, 3, 3] : tensor<8x2x3x3xf32> into tensor<2x4x2x3x3xf32>
  %2 = tensor.empty() : tensor<1x2x4x6x6xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<1x2x4x6x6xf32>) -> tensor<1x2x4x6x6xf32>
  %4 = linalg.generic {indexing_maps = [#gx, #gw, #gout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : tensor<1x2x2x8x8xf32>, tensor<2x4x2x3x3xf32>) outs(%3 : tensor<1x2x4x6x6xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %10 = arith.mulf %in, %in_1 : f32
    %11 = arith.addf %out, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<1x2x4x6x6xf32>
  %collapsed = tensor.collapse_shape %4 [[0], [1, 2], [3], [4]] : tensor<1x2x4x6x6xf32> into tensor<1x8x6x6xf32>
  %5 = tensor.empty() : tensor<1x8x6x6xf32>
  %6 = linalg.generic {indexing_maps = [#g4, #g4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed : tensor<1x8x6x6xf32>) outs(%5 : tensor<1x8x6x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %10 = arith.maximumf %in, %cst : f32
    linalg.yield %10 : f32
  } -> tensor<1x8x6x6xf32>
  bufferization.materialize_in_destination %6 in restrict writable %arg2 : (tensor<1x8x6x6xf32>, memref<1x8x6x6xf32>) -> ()
  return
}

// -----

// The same convolution scaled per filter by a [1, F, 1, 1] tensor read at
// `(n, f, h, w) -> (0, f, 0, 0)` (a quantized convolution's requantizing
// scale): the scale's unit dims are dropped, [F] read at `(f)`, so that
// the Mul is a projected permutation the expansion takes, and it is
// expanded to the 5-D shape with the scale read as [G, F/G]; kept, the
// convolution ran whole in every GPU thread (onnxruntime's quantized
// RegNet).
// CHECK-LABEL: func.func @grouped_conv_scaled
// CHECK: %[[CONV:.+]] = linalg.generic {{.*}} outs(%{{.+}} : tensor<1x2x4x6x6xf32>)
// CHECK: %[[SCALE:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1, 2, 3]] : tensor<1x8x1x1xf32> into tensor<8xf32>
// CHECK: %[[GROUPS:.+]] = tensor.expand_shape %[[SCALE]] {{\[}}[0, 1]] output_shape [2, 4] : tensor<8xf32> into tensor<2x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[CONV]], %[[GROUPS]] : tensor<1x2x4x6x6xf32>, tensor<2x4xf32>)
// CHECK: bufferization.materialize_in_destination %{{.+}} in restrict writable %{{.+}} : (tensor<1x2x4x6x6xf32>, memref<1x2x4x6x6xf32>)
#sx = affine_map<(n, g, f, oh, c, kh, kw, ow) -> (n, g, c, oh + kh, ow + kw)>
#sw = affine_map<(n, g, f, oh, c, kh, kw, ow) -> (g, f, c, kh, kw)>
#sout = affine_map<(n, g, f, oh, c, kh, kw, ow) -> (n, g, f, oh, ow)>
#s4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sscale = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
func.func @grouped_conv_scaled(%arg0: memref<1x4x8x8xf32>, %arg1: memref<8x2x3x3xf32>, %arg2: memref<1x8x1x1xf32>, %arg3: memref<1x8x6x6xf32>) attributes {kiln.kernel} {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = bufferization.to_tensor %arg0 restrict : memref<1x4x8x8xf32> to tensor<1x4x8x8xf32>
  %1 = bufferization.to_tensor %arg1 restrict : memref<8x2x3x3xf32> to tensor<8x2x3x3xf32>
  %scale = bufferization.to_tensor %arg2 restrict : memref<1x8x1x1xf32> to tensor<1x8x1x1xf32>
  %x = tensor.expand_shape %0 [[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 8, 8] : tensor<1x4x8x8xf32> into tensor<1x2x2x8x8xf32>
  %w = tensor.expand_shape %1 [[0, 1], [2], [3], [4]] output_shape [2, 4, 2, 3, 3] : tensor<8x2x3x3xf32> into tensor<2x4x2x3x3xf32>
  %2 = tensor.empty() : tensor<1x2x4x6x6xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<1x2x4x6x6xf32>) -> tensor<1x2x4x6x6xf32>
  %4 = linalg.generic {indexing_maps = [#sx, #sw, #sout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : tensor<1x2x2x8x8xf32>, tensor<2x4x2x3x3xf32>) outs(%3 : tensor<1x2x4x6x6xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %10 = arith.mulf %in, %in_1 : f32
    %11 = arith.addf %out, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<1x2x4x6x6xf32>
  %collapsed = tensor.collapse_shape %4 [[0], [1, 2], [3], [4]] : tensor<1x2x4x6x6xf32> into tensor<1x8x6x6xf32>
  %5 = tensor.empty() : tensor<1x8x6x6xf32>
  %6 = linalg.generic {indexing_maps = [#s4, #sscale, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%collapsed, %scale : tensor<1x8x6x6xf32>, tensor<1x8x1x1xf32>) outs(%5 : tensor<1x8x6x6xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %10 = arith.mulf %in, %in_1 : f32
    linalg.yield %10 : f32
  } -> tensor<1x8x6x6xf32>
  bufferization.materialize_in_destination %6 in restrict writable %arg3 : (tensor<1x8x6x6xf32>, memref<1x8x6x6xf32>) -> ()
  return
}

// -----

// The same convolution at --precision=f16: its input and weights are
// widened to float32 before the group dim is split out of them. Each
// widening is expanded to the 5-D shape, reading its float16 operand
// through an expand_shape (a view after bufferization), so that tiling
// fuses it into the convolution's tiles; behind the reshape it ran whole
// before the kernel's forall and the kernel was one GPU thread (ResNeXt-50,
// RegNetY). No reshape of a float32 tensor is left.
// CHECK-LABEL: func.func @grouped_conv_widened
// CHECK-DAG: %[[X16:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 8, 8] : tensor<1x4x8x8xf16> into tensor<1x2x2x8x8xf16>
// CHECK-DAG: %[[W16:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 4, 2, 3, 3] : tensor<8x2x3x3xf16> into tensor<2x4x2x3x3xf16>
// CHECK-DAG: %[[X:.+]] = linalg.generic {{.*}} ins(%[[X16]] : tensor<1x2x2x8x8xf16>) outs(%{{.+}} : tensor<1x2x2x8x8xf32>)
// CHECK-DAG: %[[W:.+]] = linalg.generic {{.*}} ins(%[[W16]] : tensor<2x4x2x3x3xf16>) outs(%{{.+}} : tensor<2x4x2x3x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<1x2x2x8x8xf32>, tensor<2x4x2x3x3xf32>)
// CHECK-NOT: tensor.expand_shape {{.*}}xf32>
#e4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ex = affine_map<(n, g, f, oh, c, kh, kw, ow) -> (n, g, c, oh + kh, ow + kw)>
#ew = affine_map<(n, g, f, oh, c, kh, kw, ow) -> (g, f, c, kh, kw)>
#eout = affine_map<(n, g, f, oh, c, kh, kw, ow) -> (n, g, f, oh, ow)>
func.func @grouped_conv_widened(%arg0: memref<1x4x8x8xf16>, %arg1: memref<8x2x3x3xf16>, %arg2: memref<1x2x4x6x6xf32>) attributes {kiln.kernel} {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = bufferization.to_tensor %arg0 restrict : memref<1x4x8x8xf16> to tensor<1x4x8x8xf16>
  %1 = bufferization.to_tensor %arg1 restrict : memref<8x2x3x3xf16> to tensor<8x2x3x3xf16>
  %e0 = tensor.empty() : tensor<1x4x8x8xf32>
  %x32 = linalg.generic {indexing_maps = [#e4, #e4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%0 : tensor<1x4x8x8xf16>) outs(%e0 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: f16, %out: f32):
    %10 = arith.extf %in : f16 to f32
    linalg.yield %10 : f32
  } -> tensor<1x4x8x8xf32>
  %e1 = tensor.empty() : tensor<8x2x3x3xf32>
  %w32 = linalg.generic {indexing_maps = [#e4, #e4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%1 : tensor<8x2x3x3xf16>) outs(%e1 : tensor<8x2x3x3xf32>) {
  ^bb0(%in: f16, %out: f32):
    %10 = arith.extf %in : f16 to f32
    linalg.yield %10 : f32
  } -> tensor<8x2x3x3xf32>
  %x = tensor.expand_shape %x32 [[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 8, 8] : tensor<1x4x8x8xf32> into tensor<1x2x2x8x8xf32>
  %w = tensor.expand_shape %w32 [[0, 1], [2], [3], [4]] output_shape [2, 4, 2, 3, 3] : tensor<8x2x3x3xf32> into tensor<2x4x2x3x3xf32>
  %2 = tensor.empty() : tensor<1x2x4x6x6xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<1x2x4x6x6xf32>) -> tensor<1x2x4x6x6xf32>
  %4 = linalg.generic {indexing_maps = [#ex, #ew, #eout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%x, %w : tensor<1x2x2x8x8xf32>, tensor<2x4x2x3x3xf32>) outs(%3 : tensor<1x2x4x6x6xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %10 = arith.mulf %in, %in_1 : f32
    %11 = arith.addf %out, %10 : f32
    linalg.yield %11 : f32
  } -> tensor<1x2x4x6x6xf32>
  bufferization.materialize_in_destination %4 in restrict writable %arg2 : (tensor<1x2x4x6x6xf32>, memref<1x2x4x6x6xf32>) -> ()
  return
}

// -----

// Both rules in one kernel (a float16 model's pointwise convolution on a
// 1x1 map with a residual add; MobileNetV3 hung here): the epilogue is
// collapsed to the matmul's [2, 16, 1] and stays so. The residual, widened
// by a generic of its own that no contraction computes, is read through a
// collapse_shape and not expanded back (which the collapsing rule would
// undo, forever).
// CHECK-LABEL: func.func @pointwise_residual_f16
// CHECK: %[[RES:.+]] = linalg.generic {{.*}} ins(%{{.+}} : tensor<2x16x1x1xf16>) outs(%{{.+}} : tensor<2x16x1x1xf32>)
// CHECK: %[[RES3:.+]] = tensor.collapse_shape %[[RES]] {{\[}}[0], [1], [2, 3]] : tensor<2x16x1x1xf32> into tensor<2x16x1xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[RES3]] : tensor<2x16x1xf32>, tensor<2x16x1xf32>)
// CHECK: arith.addf
// CHECK: memref.collapse_shape %arg3
#pid4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#px = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#pw = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
#pout = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
func.func @pointwise_residual_f16(%arg0: memref<2x8x1x1xf32>, %arg1: memref<16x8xf32>, %arg2: memref<2x16x1x1xf16>, %arg3: memref<2x16x1x1xf16>) attributes {kiln.kernel} {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = bufferization.to_tensor %arg0 restrict : memref<2x8x1x1xf32> to tensor<2x8x1x1xf32>
  %1 = bufferization.to_tensor %arg1 restrict : memref<16x8xf32> to tensor<16x8xf32>
  %2 = bufferization.to_tensor %arg2 restrict : memref<2x16x1x1xf16> to tensor<2x16x1x1xf16>
  %x = tensor.collapse_shape %0 [[0], [1], [2, 3]] : tensor<2x8x1x1xf32> into tensor<2x8x1xf32>
  %e3 = tensor.empty() : tensor<2x16x1xf32>
  %f3 = linalg.fill ins(%cst : f32) outs(%e3 : tensor<2x16x1xf32>) -> tensor<2x16x1xf32>
  %mm = linalg.generic {indexing_maps = [#px, #pw, #pout], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %1 : tensor<2x8x1xf32>, tensor<16x8xf32>) outs(%f3 : tensor<2x16x1xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %m = arith.mulf %in, %in_1 : f32
    %a = arith.addf %out, %m : f32
    linalg.yield %a : f32
  } -> tensor<2x16x1xf32>
  %expanded = tensor.expand_shape %mm [[0], [1], [2, 3]] output_shape [2, 16, 1, 1] : tensor<2x16x1xf32> into tensor<2x16x1x1xf32>
  %e16 = tensor.empty() : tensor<2x16x1x1xf16>
  %r16 = linalg.generic {indexing_maps = [#pid4, #pid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%expanded : tensor<2x16x1x1xf32>) outs(%e16 : tensor<2x16x1x1xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x16x1x1xf16>
  %e32 = tensor.empty() : tensor<2x16x1x1xf32>
  %w32 = linalg.generic {indexing_maps = [#pid4, #pid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%r16 : tensor<2x16x1x1xf16>) outs(%e32 : tensor<2x16x1x1xf32>) {
  ^bb0(%in: f16, %out: f32):
    %w = arith.extf %in : f16 to f32
    linalg.yield %w : f32
  } -> tensor<2x16x1x1xf32>
  %res = linalg.generic {indexing_maps = [#pid4, #pid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<2x16x1x1xf16>) outs(%e32 : tensor<2x16x1x1xf32>) {
  ^bb0(%in: f16, %out: f32):
    %w = arith.extf %in : f16 to f32
    linalg.yield %w : f32
  } -> tensor<2x16x1x1xf32>
  %sum = linalg.generic {indexing_maps = [#pid4, #pid4, #pid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w32, %res : tensor<2x16x1x1xf32>, tensor<2x16x1x1xf32>) outs(%e32 : tensor<2x16x1x1xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %a = arith.addf %in, %in_1 : f32
    linalg.yield %a : f32
  } -> tensor<2x16x1x1xf32>
  %out16 = linalg.generic {indexing_maps = [#pid4, #pid4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum : tensor<2x16x1x1xf32>) outs(%e16 : tensor<2x16x1x1xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x16x1x1xf16>
  bufferization.materialize_in_destination %out16 in restrict writable %arg3 : (tensor<2x16x1x1xf16>, memref<2x16x1x1xf16>) -> ()
  return
}

// -----

// A Mul by a [1] scalar (indexed by the constant 0, which the upstream
// collapsing patterns do not take) after a flattened pointwise
// convolution: the scalar is read as a 0-d tensor, so the Mul computes in
// the convolution's flattened shape and the result is written through a
// collapsed view of the output (the convolution then tiles with it).
// CHECK-LABEL: func.func @scaled_pointwise
// CHECK: %[[MM:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[S:.+]] = tensor.collapse_shape %{{.+}} [] : tensor<1xf32> into tensor<f32>
// CHECK: linalg.generic {{.*}}ins(%[[MM]], %[[S]] : tensor<1x16x64xf32>, tensor<f32>)
// CHECK: memref.collapse_shape
#px = affine_map<(n, f, c, p) -> (n, c, p)>
#pw = affine_map<(n, f, c, p) -> (f, c)>
#po = affine_map<(n, f, c, p) -> (n, f, p)>
#e4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#s4 = affine_map<(d0, d1, d2, d3) -> (0)>
func.func @scaled_pointwise(%arg0: memref<1x32x64xf32>, %arg1: memref<16x32xf32>, %arg2: memref<1xf32>, %arg3: memref<1x16x8x8xf32>) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<1x32x64xf32> to tensor<1x32x64xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<16x32xf32> to tensor<16x32xf32>
  %s = bufferization.to_tensor %arg2 restrict : memref<1xf32> to tensor<1xf32>
  %e = tensor.empty() : tensor<1x16x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x64xf32>) -> tensor<1x16x64xf32>
  %mm = linalg.generic {indexing_maps = [#px, #pw, #po], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%x, %w : tensor<1x32x64xf32>, tensor<16x32xf32>) outs(%f : tensor<1x16x64xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x16x64xf32>
  %ex = tensor.expand_shape %mm [[0], [1], [2, 3]] output_shape [1, 16, 8, 8] : tensor<1x16x64xf32> into tensor<1x16x8x8xf32>
  %e2 = tensor.empty() : tensor<1x16x8x8xf32>
  %r = linalg.generic {indexing_maps = [#e4, #s4, #e4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %s : tensor<1x16x8x8xf32>, tensor<1xf32>) outs(%e2 : tensor<1x16x8x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<1x16x8x8xf32>
  bufferization.materialize_in_destination %r in restrict writable %arg3 : (tensor<1x16x8x8xf32>, memref<1x16x8x8xf32>) -> ()
  return
}

// -----

// PP-LCNet's learnable affine (paddle2onnx): a Mul by a [1, 1, 1, 1]
// scalar after a pointwise convolution over the flattened NHWC image. The
// scalar's batch dim is indexed by the batch loop, of extent 1, which
// would tie it to the loops collapsed with the batch; it is read at 0
// only, so it is dropped with the others and the Mul computes flattened.
// CHECK-LABEL: func.func @affine_scaled_pointwise
// CHECK: %[[MM:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[S:.+]] = tensor.collapse_shape %{{.+}} [] : tensor<1x1x1x1xf32> into tensor<f32>
// CHECK: linalg.generic {{.*}}ins(%[[MM]], %[[S]] : tensor<96x16xf32>, tensor<f32>)
// CHECK: memref.collapse_shape
#ax = affine_map<(m, f, c) -> (m, c)>
#aw = affine_map<(m, f, c) -> (f, c)>
#ao = affine_map<(m, f, c) -> (m, f)>
#a4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ab4 = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, 0)>
func.func @affine_scaled_pointwise(%arg0: memref<96x8xf32>, %arg1: memref<16x8xf32>, %arg2: memref<1x1x1x1xf32>, %arg3: memref<1x8x12x16xf32>) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %x = bufferization.to_tensor %arg0 restrict : memref<96x8xf32> to tensor<96x8xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<16x8xf32> to tensor<16x8xf32>
  %s = bufferization.to_tensor %arg2 restrict : memref<1x1x1x1xf32> to tensor<1x1x1x1xf32>
  %e = tensor.empty() : tensor<96x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<96x16xf32>) -> tensor<96x16xf32>
  %mm = linalg.generic {indexing_maps = [#ax, #aw, #ao], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<96x8xf32>, tensor<16x8xf32>) outs(%f : tensor<96x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<96x16xf32>
  %ex = tensor.expand_shape %mm [[0, 1, 2], [3]] output_shape [1, 8, 12, 16] : tensor<96x16xf32> into tensor<1x8x12x16xf32>
  %e2 = tensor.empty() : tensor<1x8x12x16xf32>
  %r = linalg.generic {indexing_maps = [#a4, #ab4, #a4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %s : tensor<1x8x12x16xf32>, tensor<1x1x1x1xf32>) outs(%e2 : tensor<1x8x12x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<1x8x12x16xf32>
  bufferization.materialize_in_destination %r in restrict writable %arg3 : (tensor<1x8x12x16xf32>, memref<1x8x12x16xf32>) -> ()
  return
}

// -----

// MobileNetV3's squeeze-excitation scale: a 1x1 convolution on the pooled
// map computes [N, C, 1], its HardSigmoid-like epilogue too, and the
// broadcast Mul reads it through expand_shape [N, C, 1, 1] then
// collapse_shape [N, C]. The two reshapes become one collapse of the
// epilogue's result, and the Mul is expanded to [N, C, 1, H, W] so that it
// reads the epilogue directly (tiling then fuses the convolution into each
// iteration; with the reshapes in between it ran before the forall, on one
// GPU thread).
// CHECK-LABEL: func.func @squeeze_excite_scale
// CHECK: %[[MM:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK: %[[ACT:.+]] = linalg.generic {{.*}}ins(%[[MM]] : tensor<2x8x1xf32>)
// CHECK-NOT: tensor.collapse_shape %[[ACT]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[ACT]], %{{.+}} : tensor<2x8x1xf32>, tensor<2x8x1x4x4xf32>)
// CHECK: memref.expand_shape
#sx = affine_map<(n, c, k, p) -> (n, k, p)>
#sw = affine_map<(n, c, k, p) -> (c, k)>
#so = affine_map<(n, c, k, p) -> (n, c, p)>
#e3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#b4 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#i4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @squeeze_excite_scale(%arg0: memref<2x8x1xf32>, %arg1: memref<8x8xf32>, %arg2: memref<2x8x4x4xf32>, %arg3: memref<2x8x4x4xf32>) attributes {kiln.kernel} {
  %zero = arith.constant 0.0 : f32
  %sixth = arith.constant 0.166666672 : f32
  %pooled = bufferization.to_tensor %arg0 restrict : memref<2x8x1xf32> to tensor<2x8x1xf32>
  %w = bufferization.to_tensor %arg1 restrict : memref<8x8xf32> to tensor<8x8xf32>
  %x = bufferization.to_tensor %arg2 restrict : memref<2x8x4x4xf32> to tensor<2x8x4x4xf32>
  %e = tensor.empty() : tensor<2x8x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %mm = linalg.generic {indexing_maps = [#sx, #sw, #so], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%pooled, %w : tensor<2x8x1xf32>, tensor<8x8xf32>) outs(%f : tensor<2x8x1xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<2x8x1xf32>
  %e2 = tensor.empty() : tensor<2x8x1xf32>
  %act = linalg.generic {indexing_maps = [#e3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mm : tensor<2x8x1xf32>) outs(%e2 : tensor<2x8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %sixth : f32
    linalg.yield %0 : f32
  } -> tensor<2x8x1xf32>
  %ex = tensor.expand_shape %act [[0], [1], [2, 3]] output_shape [2, 8, 1, 1] : tensor<2x8x1xf32> into tensor<2x8x1x1xf32>
  %scale = tensor.collapse_shape %ex [[0], [1, 2, 3]] : tensor<2x8x1x1xf32> into tensor<2x8xf32>
  %e3 = tensor.empty() : tensor<2x8x4x4xf32>
  %r = linalg.generic {indexing_maps = [#b4, #i4, #i4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scale, %x : tensor<2x8xf32>, tensor<2x8x4x4xf32>) outs(%e3 : tensor<2x8x4x4xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    linalg.yield %0 : f32
  } -> tensor<2x8x4x4xf32>
  bufferization.materialize_in_destination %r in restrict writable %arg3 : (tensor<2x8x4x4xf32>, memref<2x8x4x4xf32>) -> ()
  return
}
