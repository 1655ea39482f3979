// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-pack-int8-conv-weights{min-weight-elements=0}))' | FileCheck %s

// The int8 grid of weights the importer dequantized (int8Scales,
// passes/Fusion/Int8Weights.h), read back by kiln-pack-int8-conv-weights.
// No one scale fits all three filters (0.25 does not divide filter 2's
// 12.7), so each filter gets its own: 0.25, 1 for the all-zero filter 1
// (any scale would do), and float32(0.1), whose multiples float32(q *
// 0.1) filter 2 holds. The quads hold Q; the sums are scaled by the
// activations' 0.5 times each filter's scale (computed in double, then
// rounded: 0.05).
// CHECK-LABEL: func.func @per_filter
// CHECK-DAG: kiln.constant dense<{{\[}}{{\[}}[1.250000e-01]], {{\[}}[5.000000e-01]], {{\[}}[5.000000e-02]]]> : tensor<3x1x1xf32>
// CHECK-DAG: kiln.constant dense<{{\[}}{{\[}}{{\[}}[127, -3, 5, 0]]], {{\[}}{{\[}}[0, 0, 0, 0]]], {{\[}}{{\[}}[127, -64, 3, -1]]]]> : tensor<3x1x1x4xi8>
// CHECK-DAG: kiln.conv {{.*}} strides = array<i64: 1, 4>
func.func @per_filter(%x: tensor<1x4x2x2xui8>) -> tensor<1x3x2x2xf32> {
  %xf = kiln.cast %x : tensor<1x4x2x2xui8> -> tensor<1x4x2x2xf32>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %d = kiln.mul %xf, %s : tensor<1x4x2x2xf32>, tensor<f32> -> tensor<1x4x2x2xf32>
  %w = kiln.constant dense<[[[[31.75]], [[-0.75]], [[1.25]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[0.0]]], [[[12.699999809265137]], [[-6.400000095367432]], [[0.30000001192092896]], [[-0.10000000149011612]]]]> : tensor<3x4x1x1xf32>
  %y = kiln.conv %d, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x2x2xf32>, tensor<3x4x1x1xf32>) -> tensor<1x3x2x2xf32>
  return %y : tensor<1x3x2x2xf32>
}

// -----

// Left alone: a filter whose largest magnitude is -128 * 0.25 (symmetric
// quantization maps the largest to 127, so the scale found, 32 / 127, puts
// the other values off the grid), and float32 weights on no grid.
// CHECK-LABEL: func.func @off_grid
// CHECK-COUNT-2: kiln.conv {{.*}} strides = array<i64: 1, 1>
// CHECK-NOT: strides = array<i64: 1, 4>
func.func @off_grid(%x: tensor<1x4x2x2xui8>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  %xf = kiln.cast %x : tensor<1x4x2x2xui8> -> tensor<1x4x2x2xf32>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %d = kiln.mul %xf, %s : tensor<1x4x2x2xf32>, tensor<f32> -> tensor<1x4x2x2xf32>
  %w = kiln.constant dense<[[[[-32.0]], [[0.75]], [[1.25]], [[0.5]]]]> : tensor<1x4x1x1xf32>
  %y = kiln.conv %d, %w {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>) -> tensor<1x1x2x2xf32>
  %f = kiln.constant dense<[[[[0.3]], [[0.7]], [[-1.1]], [[0.123]]]]> : tensor<1x4x1x1xf32>
  %g = kiln.conv %d, %f {pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x2x2xf32>, tensor<1x4x1x1xf32>) -> tensor<1x1x2x2xf32>
  return %y, %g : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}
