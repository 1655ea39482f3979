// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-pack-int8-conv-weights{min-weight-elements=0},canonicalize))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-pack-int8-conv-weights))' | FileCheck %s --check-prefix=SMALL

// Weights under min-weight-elements (4096 by default) keep their convolution.
// SMALL-LABEL: func.func @padded
// SMALL: kiln.conv {{.*}} strides = array<i64: 1, 1>

// A QDQ model's padded 3x3 convolution: x = (X - 2) * 0.5, zeros around
// it (kiln-split-conv-padding), integer weights W (W[f, c, i, j] =
// (36f + 9c + 3i + j) mod 7 - 3). X's bytes are padded with the zero point
// 2 and laid out as [1, 1, 5, 5 * 4], each pixel's 4 channels side by
// side; W as [2, 1, 3, 3 * 4], Wq[f, 0, i, 4j + t] = W[f, t, i, j]. The
// convolution with strides [1, 4], minus 2 * sum(W[f]) (-3 and -2), times
// 0.5.
// CHECK-LABEL: func.func @padded
// CHECK-DAG: %[[SCALE:.+]] = kiln.constant dense<5.000000e-01> : tensor<2x1x1xf32>
// CHECK-DAG: %[[SHARE:.+]] = kiln.constant dense<{{\[}}{{\[}}[-6.000000e+00]], {{\[}}[-4.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-DAG: %[[Q:.+]] = kiln.constant dense<{{\[}}{{\[}}{{\[}}[-3, -1, 1, 3, -2, 0, 2, -3, -1, 1, 3, -2], [0, 2, -3, -1, {{.*}} : tensor<2x1x3x12xi8>
// CHECK: %[[P:.+]] = kiln.pad %arg0 {mode = "constant", pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 2.000000e+00 : f64} : tensor<1x4x3x3xui8> -> tensor<1x4x5x5xui8>
// CHECK: %[[S:.+]] = kiln.reshape %[[P]] : tensor<1x4x5x5xui8> -> tensor<1x1x4x5x5x1xui8>
// CHECK: %[[T:.+]] = kiln.transpose %[[S]] {perm = array<i64: 0, 1, 3, 5, 4, 2>} : tensor<1x1x4x5x5x1xui8> -> tensor<1x1x5x1x5x4xui8>
// CHECK: %[[R:.+]] = kiln.reshape %[[T]] : tensor<1x1x5x1x5x4xui8> -> tensor<1x1x5x20xui8>
// CHECK: %[[A:.+]] = kiln.cast %[[R]] : tensor<1x1x5x20xui8> -> tensor<1x1x5x20xf32>
// CHECK: %[[B:.+]] = kiln.cast %[[Q]] : tensor<2x1x3x12xi8> -> tensor<2x1x3x12xf32>
// CHECK: %[[C:.+]] = kiln.conv %[[A]], %[[B]] {{{.*}} pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 4>} : (tensor<1x1x5x20xf32>, tensor<2x1x3x12xf32>) -> tensor<1x2x3x3xf32>
// CHECK: %[[D:.+]] = kiln.sub %[[C]], %[[SHARE]]
// CHECK: %[[M:.+]] = kiln.mul %[[D]], %[[SCALE]]
// CHECK: return %[[M]]
func.func @padded(%x: tensor<1x4x3x3xui8>) -> tensor<1x2x3x3xf32> {
  %xf = kiln.cast %x : tensor<1x4x3x3xui8> -> tensor<1x4x3x3xf32>
  %z = kiln.constant dense<2.0> : tensor<f32>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %c = kiln.sub %xf, %z : tensor<1x4x3x3xf32>, tensor<f32> -> tensor<1x4x3x3xf32>
  %d = kiln.mul %c, %s : tensor<1x4x3x3xf32>, tensor<f32> -> tensor<1x4x3x3xf32>
  %p = kiln.pad %d {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = "constant", value = 0.0 : f64} : tensor<1x4x3x3xf32> -> tensor<1x4x5x5xf32>
  %w = kiln.constant dense<[[[[-3.0, -2.0, -1.0], [0.0, 1.0, 2.0], [3.0, -3.0, -2.0]], [[-1.0, 0.0, 1.0], [2.0, 3.0, -3.0], [-2.0, -1.0, 0.0]], [[1.0, 2.0, 3.0], [-3.0, -2.0, -1.0], [0.0, 1.0, 2.0]], [[3.0, -3.0, -2.0], [-1.0, 0.0, 1.0], [2.0, 3.0, -3.0]]], [[[-2.0, -1.0, 0.0], [1.0, 2.0, 3.0], [-3.0, -2.0, -1.0]], [[0.0, 1.0, 2.0], [3.0, -3.0, -2.0], [-1.0, 0.0, 1.0]], [[2.0, 3.0, -3.0], [-2.0, -1.0, 0.0], [1.0, 2.0, 3.0]], [[-3.0, -2.0, -1.0], [0.0, 1.0, 2.0], [3.0, -3.0, -2.0]]]]> : tensor<2x4x3x3xf32>
  %y = kiln.conv %p, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// A stride-2 convolution of 3 channels, padded 1 (W[f, c, i, j] =
// (27f + 9c + 3i + j) mod 5 - 2). X is padded with its zero point 7
// around and to 4 channels, and its columns' two phases become rows:
// Xq[0, 0, 2y + ph, 4x + t] = X[0, t, y, 2x + ph], [1, 1, 20, 20]. The
// weights likewise, Wq[f, 0, 2i + ph, 4j + t] = W[f, t, i, 2j + ph], zero
// for the 4th channel and the 4th column: the convolution with strides
// [4, 4] reads, for output (y, x), input rows 2y + i and columns
// 2x + 2j + ph.
// CHECK-LABEL: func.func @strided
// CHECK-DAG: kiln.constant dense<{{\[}}{{\[}}[-2.100000e+01]], {{\[}}[7.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-DAG: %[[Q:.+]] = kiln.constant dense<{{\[}}{{\[}}{{\[}}[-2, 2, 1, 0, 0, -1, -2, 0], [-1, -2, 2, 0, 0, 0, 0, 0], {{.*}} : tensor<2x1x6x8xi8>
// CHECK: %[[P:.+]] = kiln.pad %arg0 {mode = "constant", pads = array<i64: 0, 0, 1, 1, 0, 1, 1, 1>, value = 7.000000e+00 : f64} : tensor<1x3x8x8xui8> -> tensor<1x4x10x10xui8>
// CHECK: %[[S:.+]] = kiln.reshape %[[P]] : tensor<1x4x10x10xui8> -> tensor<1x1x4x10x5x2xui8>
// CHECK: %[[T:.+]] = kiln.transpose %[[S]] {perm = array<i64: 0, 1, 3, 5, 4, 2>} : tensor<1x1x4x10x5x2xui8> -> tensor<1x1x10x2x5x4xui8>
// CHECK: kiln.reshape %[[T]] : tensor<1x1x10x2x5x4xui8> -> tensor<1x1x20x20xui8>
// CHECK: kiln.conv {{.*}} strides = array<i64: 4, 4>} : (tensor<1x1x20x20xf32>, tensor<2x1x6x8xf32>) -> tensor<1x2x4x4xf32>
func.func @strided(%x: tensor<1x3x8x8xui8>) -> tensor<1x2x4x4xf32> {
  %xf = kiln.cast %x : tensor<1x3x8x8xui8> -> tensor<1x3x8x8xf32>
  %z = kiln.constant dense<7.0> : tensor<f32>
  %s = kiln.constant dense<0.25> : tensor<f32>
  %c = kiln.sub %xf, %z : tensor<1x3x8x8xf32>, tensor<f32> -> tensor<1x3x8x8xf32>
  %d = kiln.mul %c, %s : tensor<1x3x8x8xf32>, tensor<f32> -> tensor<1x3x8x8xf32>
  %w = kiln.constant dense<[[[[-2.0, -1.0, 0.0], [1.0, 2.0, -2.0], [-1.0, 0.0, 1.0]], [[2.0, -2.0, -1.0], [0.0, 1.0, 2.0], [-2.0, -1.0, 0.0]], [[1.0, 2.0, -2.0], [-1.0, 0.0, 1.0], [2.0, -2.0, -1.0]]], [[[0.0, 1.0, 2.0], [-2.0, -1.0, 0.0], [1.0, 2.0, -2.0]], [[-1.0, 0.0, 1.0], [2.0, -2.0, -1.0], [0.0, 1.0, 2.0]], [[-2.0, -1.0, 0.0], [1.0, 2.0, -2.0], [-1.0, 0.0, 1.0]]]]> : tensor<2x3x3x3xf32>
  %y = kiln.conv %d, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A 1x1 convolution of X * 0.125 (zero point 0) subsampled by a slice
// (kiln-split-pointwise-conv-stride: X's bytes are sliced instead), by
// weights Q * s that the importer left unfolded (s 0.5 and 0.25, one per
// filter), with a bias: the sums times 0.125 * s, plus the bias.
// CHECK-LABEL: func.func @scaled
// CHECK-DAG: %[[SCALE:.+]] = kiln.constant dense<{{\[}}{{\[}}[6.250000e-02]], {{\[}}[3.125000e-02]]]> : tensor<2x1x1xf32>
// CHECK-DAG: %[[Q:.+]] = kiln.constant dense<{{\[}}{{\[}}{{\[}}[127, 1, 2, 3]], {{\[}}[4, 5, 6, 7]]], {{\[}}{{\[}}[-127, 1, 3, 5]], {{\[}}[7, 9, 11, 13]]]]> : tensor<2x2x1x4xi8>
// CHECK: %[[X:.+]] = kiln.slice %arg0 {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 2, 2>} : tensor<1x8x4x4xui8> -> tensor<1x8x2x2xui8>
// CHECK: kiln.reshape %[[X]] : tensor<1x8x2x2xui8> -> tensor<1x2x4x2x2x1xui8>
// CHECK: %[[C:.+]] = kiln.conv {{.*}} strides = array<i64: 1, 4>} : (tensor<1x2x2x8xf32>, tensor<2x2x1x4xf32>) -> tensor<1x2x2x2xf32>
// CHECK: %[[M:.+]] = kiln.mul %[[C]], %[[SCALE]]
// CHECK: %[[B:.+]] = kiln.reshape %arg1 : tensor<2xf32> -> tensor<2x1x1xf32>
// CHECK: kiln.add %[[M]], %[[B]]
// CHECK-NOT: tensor<2x8x1x1xf32>
func.func @scaled(%x: tensor<1x8x4x4xui8>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {
  %xf = kiln.cast %x : tensor<1x8x4x4xui8> -> tensor<1x8x4x4xf32>
  %s = kiln.constant dense<0.125> : tensor<f32>
  %d = kiln.mul %xf, %s : tensor<1x8x4x4xf32>, tensor<f32> -> tensor<1x8x4x4xf32>
  %e = kiln.slice %d {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 2, 2>} : tensor<1x8x4x4xf32> -> tensor<1x8x2x2xf32>
  %q = kiln.constant dense<[[[[127.0]], [[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]]], [[[-127.0]], [[1.0]], [[3.0]], [[5.0]], [[7.0]], [[9.0]], [[11.0]], [[13.0]]]]> : tensor<2x8x1x1xf32>
  %ws = kiln.constant dense<[[[[0.5]]], [[[0.25]]]]> : tensor<2x1x1x1xf32>
  %w = kiln.mul %q, %ws : tensor<2x8x1x1xf32>, tensor<2x1x1x1xf32> -> tensor<2x8x1x1xf32>
  %y = kiln.conv %e, %w, %b {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x8x2x2xf32>, tensor<2x8x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %y : tensor<1x2x2x2xf32>
}

// -----

// Left alone: float32 activations, weights off any int8 grid (1.5), groups,
// dilations, and a zero point that is not an integer.
// CHECK-LABEL: func.func @others
// CHECK-COUNT-5: kiln.conv {{.*}} strides = array<i64: 1, 1>
// CHECK-NOT: strides = array<i64: 1, 4>
func.func @others(%f: tensor<1x4x4x4xf32>, %x: tensor<1x4x4x4xui8>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x2x2xf32>, tensor<1x4x4x4xf32>) {
  %xf = kiln.cast %x : tensor<1x4x4x4xui8> -> tensor<1x4x4x4xf32>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %d = kiln.mul %xf, %s : tensor<1x4x4x4xf32>, tensor<f32> -> tensor<1x4x4x4xf32>
  %w = kiln.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[5.0]], [[6.0]], [[7.0]], [[8.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[5.0]], [[6.0]], [[7.0]], [[8.0]]]]> : tensor<4x4x1x1xf32>
  %a = kiln.conv %f, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %half = kiln.constant dense<[[[[1.5]], [[2.0]], [[3.0]], [[4.0]]], [[[5.0]], [[6.0]], [[7.0]], [[8.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[5.0]], [[6.0]], [[7.0]], [[8.0]]]]> : tensor<4x4x1x1xf32>
  %b = kiln.conv %d, %half {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %g = kiln.constant dense<1.0> : tensor<4x1x1x1xf32>
  %c = kiln.conv %d, %g {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x4x4xf32>, tensor<4x1x1x1xf32>) -> tensor<1x4x4x4xf32>
  %w3 = kiln.constant dense<[[[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]], [[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]], [[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]], [[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]]]> : tensor<4x4x2x2xf32>
  %e = kiln.conv %d, %w3 {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 2, 2>, group = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<4x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %zh = kiln.constant dense<2.5> : tensor<f32>
  %xc = kiln.sub %xf, %zh : tensor<1x4x4x4xf32>, tensor<f32> -> tensor<1x4x4x4xf32>
  %xd = kiln.mul %xc, %s : tensor<1x4x4x4xf32>, tensor<f32> -> tensor<1x4x4x4xf32>
  %h = kiln.conv %xd, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  return %a, %b, %c, %e, %h : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x2x2xf32>, tensor<1x4x4x4xf32>
}

// -----

// Max pooling between the dequantization and two convolutions (a QDQ
// ResNet's stem): the largest dequantized value is the dequantized largest
// byte, so the bytes are pooled (widened, pooling takes floats, and
// narrowed back), once for both; its padding pads the bytes, with 0 (the
// smallest byte: every window holds a byte of X), before the widening.
// So are the quads laid out, the two convolutions having the same stride
// and pads.
// CHECK-LABEL: func.func @pooled
// CHECK: %[[PB:.+]] = kiln.pad %arg0 {mode = "constant", pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0.000000e+00 : f64} : tensor<1x4x4x4xui8> -> tensor<1x4x6x6xui8>
// CHECK: %[[W:.+]] = kiln.cast %[[PB]] : tensor<1x4x6x6xui8> -> tensor<1x4x6x6xf32>
// CHECK: %[[P:.+]] = kiln.max_pool %[[W]] {{.*}}pads = array<i64: 0, 0, 0, 0>{{.*}} : tensor<1x4x6x6xf32> -> tensor<1x4x2x2xf32>
// CHECK: %[[B:.+]] = kiln.cast %[[P]] : tensor<1x4x2x2xf32> -> tensor<1x4x2x2xui8>
// CHECK: %[[S:.+]] = kiln.reshape %[[B]]
// CHECK: %[[T:.+]] = kiln.transpose %[[S]]
// CHECK: %[[Q:.+]] = kiln.reshape %[[T]]
// CHECK: kiln.conv {{.*}} strides = array<i64: 1, 4>}
// CHECK-NOT: kiln.transpose
// CHECK: kiln.cast %[[Q]]
// CHECK: kiln.conv {{.*}} strides = array<i64: 1, 4>}
// CHECK-NOT: kiln.max_pool
func.func @pooled(%x: tensor<1x4x4x4xui8>) -> (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) {
  %xf = kiln.cast %x : tensor<1x4x4x4xui8> -> tensor<1x4x4x4xf32>
  %z = kiln.constant dense<3.0> : tensor<f32>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %c = kiln.sub %xf, %z : tensor<1x4x4x4xf32>, tensor<f32> -> tensor<1x4x4x4xf32>
  %d = kiln.mul %c, %s : tensor<1x4x4x4xf32>, tensor<f32> -> tensor<1x4x4x4xf32>
  %p = kiln.max_pool %d {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = false} : tensor<1x4x4x4xf32> -> tensor<1x4x2x2xf32>
  %w = kiln.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[5.0]], [[6.0]], [[7.0]], [[8.0]]], [[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[5.0]], [[6.0]], [[7.0]], [[8.0]]]]> : tensor<4x4x1x1xf32>
  %a = kiln.conv %p, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x2x2xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x2x2xf32>
  %b = kiln.conv %p, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x2x2xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x2x2xf32>
  return %a, %b : tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>
}

// -----

// Rows of 5 outputs would fill 5 of a vector's 16 lanes: the convolution
// becomes a matmul of patches. X's bytes, padded with the zero point 3 and
// made channels-last, are cut into the 9 taps' [1, 5, 5, 128] windows,
// stacked as [1, 5, 5, 9, 128] and read as [1, 25, 9 * 128] (each
// output's taps outer, channels inner); the weights as [9 * 128, 16]
// times each filter's scale. The sums, [1, 25, 16], go back to [1, 16, 5,
// 5]; kiln-pack-int8-matmul-weights packs the matmul.
// CHECK-LABEL: func.func @patches
// CHECK: %[[P:.+]] = kiln.pad %arg0 {mode = "constant", pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 3.000000e+00 : f64} : tensor<1x128x5x5xui8> -> tensor<1x128x7x7xui8>
// CHECK: %[[L:.+]] = kiln.transpose %[[P]] {perm = array<i64: 0, 2, 3, 1>} : tensor<1x128x7x7xui8> -> tensor<1x7x7x128xui8>
// CHECK: kiln.slice %[[L]] {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x7x7x128xui8> -> tensor<1x5x5x128xui8>
// CHECK-COUNT-8: kiln.slice %[[L]]
// CHECK: %[[S:.+]] = kiln.concat {{.*}} {axis = 3 : i64} : ({{.*}}) -> tensor<1x5x5x9x128xui8>
// CHECK: %[[R:.+]] = kiln.reshape %[[S]] : tensor<1x5x5x9x128xui8> -> tensor<1x25x1152xui8>
// CHECK: %[[A:.+]] = kiln.cast %[[R]] : tensor<1x25x1152xui8> -> tensor<1x25x1152xf32>
// CHECK: %[[D:.+]] = kiln.sub %[[A]]
// CHECK: %[[E:.+]] = kiln.mul %[[D]]
// CHECK: %[[M:.+]] = kiln.matmul %[[E]], %{{.+}} : tensor<1x25x1152xf32>, tensor<1152x16xf32> -> tensor<1x25x16xf32>
// CHECK: %[[O:.+]] = kiln.reshape %[[M]] : tensor<1x25x16xf32> -> tensor<1x5x5x16xf32>
// CHECK: %[[Y:.+]] = kiln.transpose %[[O]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x5x5x16xf32> -> tensor<1x16x5x5xf32>
// CHECK: return %[[Y]]
// CHECK-NOT: kiln.conv
func.func @patches(%x: tensor<1x128x5x5xui8>) -> tensor<1x16x5x5xf32> {
  %xf = kiln.cast %x : tensor<1x128x5x5xui8> -> tensor<1x128x5x5xf32>
  %z = kiln.constant dense<3.0> : tensor<f32>
  %s = kiln.constant dense<0.25> : tensor<f32>
  %c = kiln.sub %xf, %z : tensor<1x128x5x5xf32>, tensor<f32> -> tensor<1x128x5x5xf32>
  %d = kiln.mul %c, %s : tensor<1x128x5x5xf32>, tensor<f32> -> tensor<1x128x5x5xf32>
  %p = kiln.pad %d {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = "constant", value = 0.0 : f64} : tensor<1x128x5x5xf32> -> tensor<1x128x7x7xf32>
  %w = kiln.constant dense<1.0> : tensor<16x128x3x3xf32>
  %y = kiln.conv %p, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x128x7x7xf32>, tensor<16x128x3x3xf32>) -> tensor<1x16x5x5xf32>
  return %y : tensor<1x16x5x5xf32>
}

// -----

// ConvInteger of dynamically quantized activations: X minus a zero point
// known at run time (DynamicQuantizeLinear's Z), padded, by uint8 weights
// minus their zero point: integers, no scale. Filter 0 spans -100..155
// and takes the offset 28 (its smallest plus 128), so that Q = W - 28 is
// int8 (-128 and 127 first); filter 1 (-3..3) is int8 already. X's
// bytes are padded with Z as (X - Z) padded with 0, plus Z (uint8 wraps
// around). The sums add each filter's offset times its window's sum of
// X's bytes (a convolution of Xq by one filter of ones), less Z times
// sum(W[f]) (284 and -3). Every partial sum stays below 2^24: float32.
// CHECK-LABEL: func.func @integer_run_time_zero_point
// CHECK-DAG: %[[SUMS:.+]] = kiln.constant dense<{{\[}}{{\[}}[2.840000e+02]], {{\[}}[-3.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-DAG: %[[OFFSETS:.+]] = kiln.constant dense<{{\[}}{{\[}}[2.800000e+01]], {{\[}}[0.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-DAG: %[[ONES:.+]] = kiln.constant dense<1> : tensor<1x1x3x12xi8>
// CHECK-DAG: %[[Q:.+]] = kiln.constant dense<{{\[}}{{\[}}{{\[}}[-128, -21, -12, -3, 127, {{.*}} : tensor<2x1x3x12xi8>
// CHECK: %[[D:.+]] = kiln.sub %arg0, %arg1 : tensor<1x4x3x3xui8>, tensor<ui8> -> tensor<1x4x3x3xui8>
// CHECK: %[[P:.+]] = kiln.pad %[[D]] {mode = "constant", pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0.000000e+00 : f64}
// CHECK: kiln.add %[[P]], %arg1 : tensor<1x4x5x5xui8>, tensor<ui8> -> tensor<1x4x5x5xui8>
// CHECK: %[[XQ:.+]] = kiln.reshape {{.*}} -> tensor<1x1x5x20xui8>
// CHECK: %[[C:.+]] = kiln.conv {{.*}} : (tensor<1x1x5x20xf32>, tensor<2x1x3x12xf32>) -> tensor<1x2x3x3xf32>
// CHECK: %[[WIN:.+]] = kiln.conv {{.*}} : (tensor<1x1x5x20xf32>, tensor<1x1x3x12xf32>) -> tensor<1x1x3x3xf32>
// CHECK: %[[SHARE:.+]] = kiln.mul %[[WIN]], %[[OFFSETS]]
// CHECK: %[[ADDED:.+]] = kiln.add %[[C]], %[[SHARE]]
// CHECK: %[[Z:.+]] = kiln.cast %arg1 : tensor<ui8> -> tensor<f32>
// CHECK: %[[ZSHARE:.+]] = kiln.mul %[[Z]], %[[SUMS]]
// CHECK: %[[Y:.+]] = kiln.sub %[[ADDED]], %[[ZSHARE]]
// CHECK: return %[[Y]]
func.func @integer_run_time_zero_point(%x: tensor<1x4x3x3xui8>, %z: tensor<ui8>) -> tensor<1x2x3x3xf32> {
  %xf = kiln.cast %x : tensor<1x4x3x3xui8> -> tensor<1x4x3x3xf32>
  %zf = kiln.cast %z : tensor<ui8> -> tensor<f32>
  %c = kiln.sub %xf, %zf : tensor<1x4x3x3xf32>, tensor<f32> -> tensor<1x4x3x3xf32>
  %p = kiln.pad %c {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, mode = "constant", value = 0.0 : f64} : tensor<1x4x3x3xf32> -> tensor<1x4x5x5xf32>
  %w = kiln.constant dense<[[[[-100.0, 155.0, 0.0], [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0], [13.0, 14.0, 15.0]], [[16.0, 17.0, 18.0], [19.0, 20.0, 21.0], [22.0, 23.0, 24.0]], [[25.0, 26.0, 27.0], [-10.0, -20.0, -30.0], [-40.0, -50.0, 1.0]]], [[[-3.0, -2.0, -1.0], [0.0, 1.0, 2.0], [3.0, -3.0, -2.0]], [[-1.0, 0.0, 1.0], [2.0, 3.0, -3.0], [-2.0, -1.0, 0.0]], [[1.0, 2.0, 3.0], [-3.0, -2.0, -1.0], [0.0, 1.0, 2.0]], [[3.0, -3.0, -2.0], [-1.0, 0.0, 1.0], [2.0, 3.0, -3.0]]]]> : tensor<2x4x3x3xf32>
  %y = kiln.conv %p, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x5x5xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// A float64 integer convolution (the importer sums in float64 where a
// partial sum may pass 2^24) of X minus a constant zero point 3: the
// quads' convolution sums in float64 too, exact; no window sums (the
// weights are int8).
// CHECK-LABEL: func.func @integer_float64
// CHECK: kiln.conv {{.*}} : (tensor<1x1x2x8xf64>, tensor<16x1x1x4xf64>) -> tensor<1x16x2x2xf64>
// CHECK-NOT: kiln.conv
// CHECK: kiln.sub {{.*}} : tensor<1x16x2x2xf64>, tensor<16x1x1xf64> -> tensor<1x16x2x2xf64>
func.func @integer_float64(%x: tensor<1x4x2x2xui8>) -> tensor<1x16x2x2xf64> {
  %xf = kiln.cast %x : tensor<1x4x2x2xui8> -> tensor<1x4x2x2xf64>
  %z = kiln.constant dense<3.0> : tensor<f64>
  %c = kiln.sub %xf, %z : tensor<1x4x2x2xf64>, tensor<f64> -> tensor<1x4x2x2xf64>
  %w = kiln.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[-1.0]], [[-2.0]], [[-3.0]], [[-4.0]]], [[[5.0]], [[6.0]], [[7.0]], [[8.0]]], [[[-5.0]], [[-6.0]], [[-7.0]], [[-8.0]]], [[[1.0]], [[0.0]], [[1.0]], [[0.0]]], [[[0.0]], [[1.0]], [[0.0]], [[1.0]]], [[[9.0]], [[9.0]], [[9.0]], [[9.0]]], [[[-9.0]], [[-9.0]], [[-9.0]], [[-9.0]]], [[[1.0]], [[2.0]], [[3.0]], [[5.0]]], [[[-1.0]], [[-2.0]], [[-3.0]], [[-5.0]]], [[[5.0]], [[6.0]], [[7.0]], [[9.0]]], [[[-5.0]], [[-6.0]], [[-7.0]], [[-9.0]]], [[[1.0]], [[0.0]], [[2.0]], [[0.0]]], [[[0.0]], [[2.0]], [[0.0]], [[1.0]]], [[[9.0]], [[8.0]], [[9.0]], [[9.0]]], [[[-9.0]], [[-8.0]], [[-9.0]], [[-9.0]]]]> : tensor<16x4x1x1xf64>
  %y = kiln.conv %c, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x2x2xf64>, tensor<16x4x1x1xf64>) -> tensor<1x16x2x2xf64>
  return %y : tensor<1x16x2x2xf64>
}
