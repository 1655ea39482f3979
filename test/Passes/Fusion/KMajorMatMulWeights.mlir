// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-k-major-matmul-weights))' | FileCheck %s

// A MatMul's float16 constant weight [K=16][N=2] (element (k, n) is
// 2k + n) behind its widening cast is stored [N][K] (0, 2, 4, ... then
// 1, 3, 5, ...) and read back through a transpose, in float16, ahead of
// the cast.
// CHECK-LABEL: func.func @projection
// CHECK: %[[STORED:.+]] = kiln.constant dense<{{\[\[}}0.000000e+00, 2.000000e+00, 4.000000e+00{{.*}}], [1.000000e+00, 3.000000e+00, 5.000000e+00{{.*}}]]> : tensor<2x16xf16>
// CHECK: %[[W:.+]] = kiln.transpose %[[STORED]] {perm = array<i64: 1, 0>} : tensor<2x16xf16> -> tensor<16x2xf16>
// CHECK: %[[WIDE:.+]] = kiln.cast %[[W]] : tensor<16x2xf16> -> tensor<16x2xf32>
// CHECK: kiln.matmul %arg0, %[[WIDE]]
func.func @projection(%x: tensor<4x16x16xf32>) -> tensor<4x16x2xf32> {
  %w16 = kiln.constant dense<[[0.0, 1.0],[2.0, 3.0],[4.0, 5.0],[6.0, 7.0],[8.0, 9.0],[10.0, 11.0],[12.0, 13.0],[14.0, 15.0],[16.0, 17.0],[18.0, 19.0],[20.0, 21.0],[22.0, 23.0],[24.0, 25.0],[26.0, 27.0],[28.0, 29.0],[30.0, 31.0]]> : tensor<16x2xf16>
  %w = kiln.cast %w16 : tensor<16x2xf16> -> tensor<16x2xf32>
  %0 = kiln.matmul %x, %w : tensor<4x16x16xf32>, tensor<16x2xf32> -> tensor<4x16x2xf32>
  return %0 : tensor<4x16x2xf32>
}

// -----

// Left alone: a float32 weight (thread tiles stage B from runs along N),
// a weight that is not a constant, a batched one, one whose K (8) 16 does
// not divide, and rows too few for matrix tiles once the matmul is an
// einsum over [4][8][...] (8 per sequence).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: kiln.transpose
// CHECK: return
func.func @left_alone(%x: tensor<8x2xf32>, %v: tensor<2x3xf16>, %b: tensor<4x2x3xf16>, %x8: tensor<32x8xf32>, %short: tensor<4x8x16xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>, tensor<4x8x3xf32>, tensor<32x3xf32>, tensor<4x8x3xf32>) {
  %w = kiln.constant dense<1.0> : tensor<2x3xf32>
  %0 = kiln.matmul %x, %w : tensor<8x2xf32>, tensor<2x3xf32> -> tensor<8x3xf32>
  %vw = kiln.cast %v : tensor<2x3xf16> -> tensor<2x3xf32>
  %1 = kiln.matmul %x, %vw : tensor<8x2xf32>, tensor<2x3xf32> -> tensor<8x3xf32>
  %bw16 = kiln.constant dense<1.0> : tensor<4x2x3xf16>
  %bw = kiln.cast %bw16 : tensor<4x2x3xf16> -> tensor<4x2x3xf32>
  %2 = kiln.matmul %x, %bw : tensor<8x2xf32>, tensor<4x2x3xf32> -> tensor<4x8x3xf32>
  %k8w16 = kiln.constant dense<1.0> : tensor<8x3xf16>
  %k8w = kiln.cast %k8w16 : tensor<8x3xf16> -> tensor<8x3xf32>
  %3 = kiln.matmul %x8, %k8w : tensor<32x8xf32>, tensor<8x3xf32> -> tensor<32x3xf32>
  %sw16 = kiln.constant dense<1.0> : tensor<16x3xf16>
  %sw = kiln.cast %sw16 : tensor<16x3xf16> -> tensor<16x3xf32>
  %4 = kiln.matmul %short, %sw : tensor<4x8x16xf32>, tensor<16x3xf32> -> tensor<4x8x3xf32>
  return %0, %1, %2, %3, %4 : tensor<8x3xf32>, tensor<8x3xf32>, tensor<4x8x3xf32>, tensor<32x3xf32>, tensor<4x8x3xf32>
}
