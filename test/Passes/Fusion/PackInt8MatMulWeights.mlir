// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-pack-int8-matmul-weights))' | FileCheck %s

// uint8 activations minus their zero point by int8 weights B [4, 16]
// (B[k, n] = 16k + n - 32): the einsum over quads of both, B stored as
// Bq [1, 1, 16, 4] with Bq[0, 0, w, t] = B[t, w]; the zero point times
// B's column sums (4n - 32) subtracted after. The int32 round trip of
// MatMulInteger's result goes: the sums are integers.
// CHECK-LABEL: func.func @centered
// CHECK-DAG: %[[Q:.+]] = kiln.constant dense<{{\[}}{{\[}}{{\[}}[-32, -16, 0, 16], [-31, -15, 1, 17],
// CHECK-DAG: %[[S:.+]] = kiln.constant dense<[-3.200000e+01, -2.800000e+01, -2.400000e+01,
// CHECK: %[[R:.+]] = kiln.reshape %arg0 : tensor<3x4xui8> -> tensor<3x1x4xui8>
// CHECK: %[[A:.+]] = kiln.cast %[[R]] : tensor<3x1x4xui8> -> tensor<3x1x4xf32>
// CHECK: %[[B:.+]] = kiln.cast %[[Q]] : tensor<1x1x16x4xi8> -> tensor<1x1x16x4xf32>
// CHECK: %[[E:.+]] = kiln.einsum %[[A]], %[[B]] {equation = "mqt,bqwt->mbw"} : (tensor<3x1x4xf32>, tensor<1x1x16x4xf32>) -> tensor<3x1x16xf32>
// CHECK: %[[M:.+]] = kiln.reshape %[[E]] : tensor<3x1x16xf32> -> tensor<3x16xf32>
// CHECK: %[[Z:.+]] = kiln.mul %{{.+}}, %[[S]] : tensor<f32>, tensor<16xf32> -> tensor<16xf32>
// CHECK: %[[C:.+]] = kiln.sub %[[M]], %[[Z]]
// CHECK: return %[[C]]
// CHECK-NOT: kiln.matmul
func.func @centered(%x: tensor<3x4xui8>, %z: tensor<f32>) -> tensor<3x16xf32> {
  %xf = kiln.cast %x : tensor<3x4xui8> -> tensor<3x4xf32>
  %zc = kiln.cast %z : tensor<f32> -> tensor<ui8>
  %zf = kiln.cast %zc : tensor<ui8> -> tensor<f32>
  %a = kiln.sub %xf, %zf : tensor<3x4xf32>, tensor<f32> -> tensor<3x4xf32>
  %w = kiln.constant dense<[[-32.0, -31.0, -30.0, -29.0, -28.0, -27.0, -26.0, -25.0, -24.0, -23.0, -22.0, -21.0, -20.0, -19.0, -18.0, -17.0], [-16.0, -15.0, -14.0, -13.0, -12.0, -11.0, -10.0, -9.0, -8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0]]> : tensor<4x16xf32>
  %y = kiln.matmul %a, %w : tensor<3x4xf32>, tensor<4x16xf32> -> tensor<3x16xf32>
  %i = kiln.cast %y : tensor<3x16xf32> -> tensor<3x16xi32>
  %f = kiln.cast %i : tensor<3x16xi32> -> tensor<3x16xf32>
  return %f : tensor<3x16xf32>
}

// -----

// A Gemm whose B is stored [N, K] (kiln-transpose-weights), with a bias:
// the same quads, and the bias added after.
// CHECK-LABEL: func.func @gemm
// CHECK: %[[Q:.+]] = kiln.constant dense<{{\[}}{{\[}}{{\[}}[-32, -16, 0, 16], [-31, -15, 1, 17],
// CHECK: %[[E:.+]] = kiln.einsum
// CHECK-SAME: (tensor<1x1x4xf32>, tensor<1x1x16x4xf32>) -> tensor<1x1x16xf32>
// CHECK: %[[M:.+]] = kiln.reshape %[[E]] : tensor<1x1x16xf32> -> tensor<1x16xf32>
// CHECK: kiln.add %[[M]], %arg1
// CHECK-NOT: kiln.gemm
func.func @gemm(%x: tensor<1x4xui8>, %c: tensor<16xf32>) -> tensor<1x16xf32> {
  %xf = kiln.cast %x : tensor<1x4xui8> -> tensor<1x4xf32>
  %w = kiln.constant dense<[[-32.0, -16.0, 0.0, 16.0], [-31.0, -15.0, 1.0, 17.0], [-30.0, -14.0, 2.0, 18.0], [-29.0, -13.0, 3.0, 19.0], [-28.0, -12.0, 4.0, 20.0], [-27.0, -11.0, 5.0, 21.0], [-26.0, -10.0, 6.0, 22.0], [-25.0, -9.0, 7.0, 23.0], [-24.0, -8.0, 8.0, 24.0], [-23.0, -7.0, 9.0, 25.0], [-22.0, -6.0, 10.0, 26.0], [-21.0, -5.0, 11.0, 27.0], [-20.0, -4.0, 12.0, 28.0], [-19.0, -3.0, 13.0, 29.0], [-18.0, -2.0, 14.0, 30.0], [-17.0, -1.0, 15.0, 31.0]]> : tensor<16x4xf32>
  %y = kiln.gemm %xf, %w, %c {transB = true} : (tensor<1x4xf32>, tensor<16x4xf32>, tensor<16xf32>) -> tensor<1x16xf32>
  return %y : tensor<1x16xf32>
}

// -----

// Left alone: weights that are not integers, float32 activations, and K
// not a multiple of 4.
// CHECK-LABEL: func.func @others
// CHECK-COUNT-3: kiln.matmul
// CHECK-NOT: kiln.einsum
func.func @others(%x: tensor<1x4xui8>, %f: tensor<1x4xf32>, %x3: tensor<1x3xui8>) -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) {
  %xf = kiln.cast %x : tensor<1x4xui8> -> tensor<1x4xf32>
  %half = kiln.constant dense<[[-31.5, -30.5, -29.5, -28.5, -27.5, -26.5, -25.5, -24.5, -23.5, -22.5, -21.5, -20.5, -19.5, -18.5, -17.5, -16.5], [-15.5, -14.5, -13.5, -12.5, -11.5, -10.5, -9.5, -8.5, -7.5, -6.5, -5.5, -4.5, -3.5, -2.5, -1.5, -0.5], [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5], [16.5, 17.5, 18.5, 19.5, 20.5, 21.5, 22.5, 23.5, 24.5, 25.5, 26.5, 27.5, 28.5, 29.5, 30.5, 31.5]]> : tensor<4x16xf32>
  %a = kiln.matmul %xf, %half : tensor<1x4xf32>, tensor<4x16xf32> -> tensor<1x16xf32>
  %w = kiln.constant dense<[[-32.0, -31.0, -30.0, -29.0, -28.0, -27.0, -26.0, -25.0, -24.0, -23.0, -22.0, -21.0, -20.0, -19.0, -18.0, -17.0], [-16.0, -15.0, -14.0, -13.0, -12.0, -11.0, -10.0, -9.0, -8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0]]> : tensor<4x16xf32>
  %b = kiln.matmul %f, %w : tensor<1x4xf32>, tensor<4x16xf32> -> tensor<1x16xf32>
  %x3f = kiln.cast %x3 : tensor<1x3xui8> -> tensor<1x3xf32>
  %w3 = kiln.constant dense<[[-32.0, -31.0, -30.0, -29.0, -28.0, -27.0, -26.0, -25.0, -24.0, -23.0, -22.0, -21.0, -20.0, -19.0, -18.0, -17.0], [-16.0, -15.0, -14.0, -13.0, -12.0, -11.0, -10.0, -9.0, -8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0]]> : tensor<3x16xf32>
  %c = kiln.matmul %x3f, %w3 : tensor<1x3xf32>, tensor<3x16xf32> -> tensor<1x16xf32>
  return %a, %b, %c : tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>
}
