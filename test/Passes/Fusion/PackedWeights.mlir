// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-packed-weights))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-packed-weights{fold=true}))' | FileCheck %s --check-prefix=FOLD

// MatMulNBits' weights as the importer gives them: bytes of two 4-bit
// values (here 0x21 and 0xF0: low halves 1 and 0, high halves 2 and 15),
// [blocks=1, 1, block/2=2, N=1], unpacked to [1, 2, 2, 1], times the
// block's scale 0.5 plus its offset -4 (zero point 8), as [K=4, N=1].
// Read packed: an einsum of A as [.., 1, 2, 2] by the chain.
// CHECK-LABEL: func.func @nibbles
// CHECK: %[[W:.+]] = kiln.add
// CHECK: %[[A:.+]] = kiln.reshape %arg0 : tensor<3x4xf32> -> tensor<3x1x2x2xf32>
// CHECK: kiln.einsum %[[A]], %[[W]] {equation = "abjr,bjrn->an"} : (tensor<3x1x2x2xf32>, tensor<1x2x2x1xf32>) -> tensor<3x1xf32>
// CHECK-NOT: kiln.matmul
// Folded: rows k = 0, 1 are the low halves (1, 0), rows 2, 3 the high
// ones (2, 15): (q - 8) * 0.5.
// FOLD-LABEL: func.func @nibbles
// FOLD: %[[B:.+]] = kiln.constant dense<{{\[}}[-3.500000e+00], [-4.000000e+00], [-3.000000e+00], [3.500000e+00]]> : tensor<4x1xf32>
// FOLD: kiln.matmul %arg0, %[[B]]
// FOLD-NOT: kiln.shift_right
func.func @nibbles(%a: tensor<3x4xf32>) -> tensor<3x1xf32> {
  %bytes = kiln.constant dense<[[[[33], [-16]]]]> : tensor<1x1x2x1xi8>
  %shifts = kiln.constant dense<[[[[0]], [[4]]]]> : tensor<1x2x1x1xi8>
  %sixteen = kiln.constant dense<16> : tensor<i8>
  %scale = kiln.constant dense<0.5> : tensor<1x1x1x1xf32>
  %offset = kiln.constant dense<-4.0> : tensor<1x1x1x1xf32>
  %s = kiln.shift_right %bytes, %shifts : tensor<1x1x2x1xi8>, tensor<1x2x1x1xi8> -> tensor<1x2x2x1xi8>
  %q = kiln.mod %s, %sixteen : tensor<1x2x2x1xi8>, tensor<i8> -> tensor<1x2x2x1xi8>
  %f = kiln.cast %q : tensor<1x2x2x1xi8> -> tensor<1x2x2x1xf32>
  %m = kiln.mul %f, %scale : tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32> -> tensor<1x2x2x1xf32>
  %w = kiln.add %m, %offset : tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32> -> tensor<1x2x2x1xf32>
  %b = kiln.reshape %w : tensor<1x2x2x1xf32> -> tensor<4x1xf32>
  %y = kiln.matmul %a, %b : tensor<3x4xf32>, tensor<4x1xf32> -> tensor<3x1xf32>
  return %y : tensor<3x1xf32>
}

// -----

// A chain that reads a value known only at run time is not a weight: left
// alone either way.
// CHECK-LABEL: func.func @run_time_bytes
// CHECK: kiln.matmul
// CHECK-NOT: kiln.einsum
// FOLD-LABEL: func.func @run_time_bytes
// FOLD: kiln.shift_right
// FOLD: kiln.matmul
func.func @run_time_bytes(%a: tensor<3x4xf32>, %bytes: tensor<1x1x2x1xi8>) -> tensor<3x1xf32> {
  %shifts = kiln.constant dense<[[[[0]], [[4]]]]> : tensor<1x2x1x1xi8>
  %s = kiln.shift_right %bytes, %shifts : tensor<1x1x2x1xi8>, tensor<1x2x1x1xi8> -> tensor<1x2x2x1xi8>
  %f = kiln.cast %s : tensor<1x2x2x1xi8> -> tensor<1x2x2x1xf32>
  %b = kiln.reshape %f : tensor<1x2x2x1xf32> -> tensor<4x1xf32>
  %y = kiln.matmul %a, %b : tensor<3x4xf32>, tensor<4x1xf32> -> tensor<3x1xf32>
  return %y : tensor<3x1xf32>
}

// -----

// A reshaped float weight computed from float constants only (no bytes
// converted): not an unpacking, left alone.
// CHECK-LABEL: func.func @float_chain
// CHECK: kiln.matmul
// FOLD-LABEL: func.func @float_chain
// FOLD: kiln.mul
// FOLD: kiln.matmul
func.func @float_chain(%a: tensor<3x4xf32>) -> tensor<3x1xf32> {
  %w = kiln.constant dense<[[[[1.0], [2.0]], [[3.0], [4.0]]]]> : tensor<1x2x2x1xf32>
  %k = kiln.constant dense<2.0> : tensor<f32>
  %m = kiln.mul %w, %k : tensor<1x2x2x1xf32>, tensor<f32> -> tensor<1x2x2x1xf32>
  %b = kiln.reshape %m : tensor<1x2x2x1xf32> -> tensor<4x1xf32>
  %y = kiln.matmul %a, %b : tensor<3x4xf32>, tensor<4x1xf32> -> tensor<3x1xf32>
  return %y : tensor<3x1xf32>
}
