// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-pack-int8-matmul-weights{min-weight-elements=0}))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-pack-int8-matmul-weights))' | FileCheck %s --check-prefix=SMALL

// Weights under min-weight-elements (16384 by default) keep their matmul.
// SMALL-LABEL: func.func @centered
// SMALL: kiln.matmul

// uint8 activations minus their zero point by int8 weights B [4, 16]
// (B[k, n] = 16k + n - 32): the einsum over quads of both, B stored as
// Bq [1, 1, 16, 4] with Bq[0, 0, w, t] = B[t, w]; the zero point times
// B's column sums (4n - 32) subtracted after. The int32 round trip of
// MatMulInteger's result goes: the sums are integers.
// CHECK-LABEL: func.func @centered
// CHECK-DAG: %[[Q:.+]] = kiln.constant dense<{{\[}}{{\[}}{{\[}}[-32, -16, 0, 16], [-31, -15, 1, 17],
// CHECK: %[[R:.+]] = kiln.reshape %arg0 : tensor<3x4xui8> -> tensor<3x1x4xui8>
// CHECK: %[[A:.+]] = kiln.cast %[[R]] : tensor<3x1x4xui8> -> tensor<3x1x4xf32>
// CHECK: %[[B:.+]] = kiln.cast %[[Q]] : tensor<1x1x16x4xi8> -> tensor<1x1x16x4xf32>
// CHECK: %[[E:.+]] = kiln.einsum %[[A]], %[[B]] {equation = "mqt,bqwt->mbw"} : (tensor<3x1x4xf32>, tensor<1x1x16x4xf32>) -> tensor<3x1x16xf32>
// CHECK: %[[M:.+]] = kiln.reshape %[[E]] : tensor<3x1x16xf32> -> tensor<3x16xf32>
// CHECK: %[[S:.+]] = kiln.constant dense<[-3.200000e+01, -2.800000e+01, -2.400000e+01,
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

// -----

// A QDQ model's matmul: A = (X - 3) * 0.5 and weights the importer
// dequantized with one scale per column, Q[k, n] * s[n] with int8 Q (each
// column's largest magnitude 127). The einsum over Q, minus the zero
// point's share (a constant: 3 times Q's column sums), times 0.5 * s[n].
// CHECK-LABEL: func.func @dequantized
// CHECK: %[[Q:.+]] = kiln.constant dense<{{\[}}{{\[}}{{\[}}[127, -8, 0, 0], [-127, -7, 2, -1],
// CHECK: %[[E:.+]] = kiln.einsum
// CHECK: %[[M:.+]] = kiln.reshape %[[E]]
// CHECK: %[[Z:.+]] = kiln.constant dense<[3.570000e+02, -3.990000e+02,
// CHECK: %[[C:.+]] = kiln.sub %[[M]], %[[Z]]
// CHECK: %[[S:.+]] = kiln.constant dense<[5.000000e-03, 0.00999999977,
// CHECK: %[[Y:.+]] = kiln.mul %[[C]], %[[S]]
// CHECK: return %[[Y]]
func.func @dequantized(%x: tensor<2x4xui8>) -> tensor<2x16xf32> {
  %xf = kiln.cast %x : tensor<2x4xui8> -> tensor<2x4xf32>
  %z = kiln.constant dense<3.0> : tensor<f32>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %c = kiln.sub %xf, %z : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
  %a = kiln.mul %c, %s : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
  %w = kiln.constant dense<[[1.2699999809265137, -2.5399999618530273, 3.809999942779541, -5.079999923706055, 6.349999904632568, -7.619999885559082, 8.890000343322754, -10.15999984741211, 11.430000305175781, -12.699999809265137, 13.970000267028809, -15.239999771118164, 16.510000228881836, -17.780000686645508, 19.05000114440918, -20.31999969482422], [-0.07999999821186066, -0.14000000059604645, -0.17999999225139618, -0.19999998807907104, -0.20000000298023224, -0.17999999225139618, -0.14000000059604645, -0.07999999821186066, 0.0, 0.10000000149011612, 0.2199999988079071, 0.35999998450279236, 0.5199999809265137, 0.699999988079071, 0.9000000357627869, 1.1200000047683716], [0.0, 0.03999999910593033, 0.11999999731779099, 0.23999999463558197, 0.4000000059604645, 0.5999999642372131, 0.8400000333786011, 1.1200000047683716, 1.440000057220459, 1.8000000715255737, 2.200000047683716, 2.6399998664855957, 3.119999885559082, 3.640000104904175, 4.200000286102295, 4.799999713897705], [0.0, -0.019999999552965164, -0.05999999865889549, -0.11999999731779099, -0.20000000298023224, -0.29999998211860657, -0.42000001668930054, -0.5600000023841858, -0.7200000286102295, -0.9000000357627869, -1.100000023841858, -1.3199999332427979, -1.559999942779541, -1.8200000524520874, -2.1000001430511475, -2.3999998569488525]]> : tensor<4x16xf32>
  %y = kiln.matmul %a, %w : tensor<2x4xf32>, tensor<4x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

// One scale for all of B (0.02): every column's scale is the same. Weights
// on no int8 grid (a float32 model's) are left alone.
// CHECK-LABEL: func.func @per_tensor
// CHECK: kiln.einsum
// CHECK: %[[S:.+]] = kiln.constant dense<0.00999999977> : tensor<16xf32>
// CHECK: kiln.mul %{{.+}}, %[[S]]
// CHECK: kiln.matmul
func.func @per_tensor(%x: tensor<2x4xui8>) -> (tensor<2x16xf32>, tensor<2x16xf32>) {
  %xf = kiln.cast %x : tensor<2x4xui8> -> tensor<2x4xf32>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %a = kiln.mul %xf, %s : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
  %w = kiln.constant dense<[[2.5399999618530273, -2.5399999618530273, 2.5399999618530273, -2.5399999618530273, 2.5399999618530273, -2.5399999618530273, 2.5399999618530273, -2.5399999618530273, 2.5399999618530273, -2.5399999618530273, 2.5399999618530273, -2.5399999618530273, 2.5399999618530273, -2.5399999618530273, 2.5399999618530273, -2.5399999618530273], [-0.1599999964237213, -0.14000000059604645, -0.11999999731779099, -0.09999999403953552, -0.07999999821186066, -0.05999999865889549, -0.03999999910593033, -0.019999999552965164, 0.0, 0.019999999552965164, 0.03999999910593033, 0.05999999865889549, 0.07999999821186066, 0.09999999403953552, 0.11999999731779099, 0.14000000059604645], [0.0, 0.03999999910593033, 0.07999999821186066, 0.11999999731779099, 0.1599999964237213, 0.19999998807907104, 0.23999999463558197, 0.2800000011920929, 0.3199999928474426, 0.35999998450279236, 0.3999999761581421, 0.4399999976158142, 0.47999998927116394, 0.5199999809265137, 0.5600000023841858, 0.5999999642372131], [0.0, -0.019999999552965164, -0.03999999910593033, -0.05999999865889549, -0.07999999821186066, -0.09999999403953552, -0.11999999731779099, -0.14000000059604645, -0.1599999964237213, -0.17999999225139618, -0.19999998807907104, -0.2199999988079071, -0.23999999463558197, -0.25999999046325684, -0.2800000011920929, -0.29999998211860657]]> : tensor<4x16xf32>
  %y = kiln.matmul %a, %w : tensor<2x4xf32>, tensor<4x16xf32> -> tensor<2x16xf32>
  %f = kiln.constant dense<[[2.5409998893737793, -2.5390000343322754, 2.5409998893737793, -2.5390000343322754, 2.5409998893737793, -2.5390000343322754, 2.5409998893737793, -2.5390000343322754, 2.5409998893737793, -2.5390000343322754, 2.5409998893737793, -2.5390000343322754, 2.5409998893737793, -2.5390000343322754, 2.5409998893737793, -2.5390000343322754], [-0.1589999943971634, -0.13899999856948853, -0.11899999529123306, -0.0989999920129776, -0.07899999618530273, -0.05900000035762787, -0.039000000804662704, -0.01899999938905239, 0.0010000000474974513, 0.020999999716877937, 0.04099999740719795, 0.060999996960163116, 0.08100000023841858, 0.10099999606609344, 0.12099999934434891, 0.14100000262260437], [0.0010000000474974513, 0.04099999740719795, 0.08100000023841858, 0.12099999934434891, 0.16099999845027924, 0.20099999010562897, 0.2409999966621399, 0.2809999883174896, 0.32099997997283936, 0.3609999716281891, 0.4009999632835388, 0.44099998474121094, 0.48099997639656067, 0.5209999680519104, 0.5609999895095825, 0.6009999513626099], [0.0010000000474974513, -0.01899999938905239, -0.039000000804662704, -0.05900000035762787, -0.07899999618530273, -0.0989999920129776, -0.11899999529123306, -0.13899999856948853, -0.1589999943971634, -0.17899999022483826, -0.19899998605251312, -0.21899999678134918, -0.23899999260902405, -0.2590000033378601, -0.27900001406669617, -0.29899999499320984]]> : tensor<4x16xf32>
  %g = kiln.matmul %a, %f : tensor<2x4xf32>, tensor<4x16xf32> -> tensor<2x16xf32>
  return %y, %g : tensor<2x16xf32>, tensor<2x16xf32>
}

// -----

// Attention's heads joined after their dequantization (transpose, then
// reshape): the bytes are moved instead, and the einsum reads them. The
// weights are Q * 0.02 of constants the importer left to a kernel: Q
// itself is packed, 0.02 joins the product's scale.
// CHECK-LABEL: func.func @moved
// CHECK: %[[T:.+]] = kiln.transpose %arg0 {{.*}} : tensor<1x2x3x2xui8> -> tensor<1x3x2x2xui8>
// CHECK: %[[R:.+]] = kiln.reshape %[[T]] : tensor<1x3x2x2xui8> -> tensor<1x3x4xui8>
// CHECK: %[[Q:.+]] = kiln.reshape %[[R]] : tensor<1x3x4xui8> -> tensor<1x3x1x4xui8>
// CHECK: kiln.cast %[[Q]] : tensor<1x3x1x4xui8> -> tensor<1x3x1x4xf32>
// CHECK: kiln.einsum {{.*}} {equation = "amqt,bqwt->ambw"}
// CHECK: %[[S:.+]] = kiln.constant dense<0.00999999977> : tensor<16xf32>
// CHECK: kiln.mul %{{.+}}, %[[S]]
// CHECK-NOT: kiln.matmul
func.func @moved(%x: tensor<1x2x3x2xui8>) -> tensor<1x3x16xf32> {
  %xf = kiln.cast %x : tensor<1x2x3x2xui8> -> tensor<1x2x3x2xf32>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %d = kiln.mul %xf, %s : tensor<1x2x3x2xf32>, tensor<f32> -> tensor<1x2x3x2xf32>
  %t = kiln.transpose %d {perm = array<i64: 0, 2, 1, 3>} : tensor<1x2x3x2xf32> -> tensor<1x3x2x2xf32>
  %a = kiln.reshape %t : tensor<1x3x2x2xf32> -> tensor<1x3x4xf32>
  %q = kiln.constant dense<[[127.0, -127.0, 127.0, -127.0, 127.0, -127.0, 127.0, -127.0, 127.0, -127.0, 127.0, -127.0, 127.0, -127.0, 127.0, -127.0], [-8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0, 24.0, 26.0, 28.0, 30.0], [0.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -10.0, -11.0, -12.0, -13.0, -14.0, -15.0]]> : tensor<4x16xf32>
  %ws = kiln.constant dense<0.02> : tensor<f32>
  %w = kiln.mul %q, %ws : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  %y = kiln.matmul %a, %w : tensor<1x3x4xf32>, tensor<4x16xf32> -> tensor<1x3x16xf32>
  return %y : tensor<1x3x16xf32>
}

// -----

// N = 20, not a multiple of 16: the weights' second panel is padded with
// zeros (columns 20 to 31), and the einsum's padding columns are sliced
// off before the zero point's share is subtracted.
// CHECK-LABEL: func.func @padded_columns
// CHECK: %[[E:.+]] = kiln.einsum {{.*}} : (tensor<2x1x4xf32>, tensor<2x1x16x4xf32>) -> tensor<2x2x16xf32>
// CHECK: %[[R:.+]] = kiln.reshape %[[E]] : tensor<2x2x16xf32> -> tensor<2x32xf32>
// CHECK: %[[S:.+]] = kiln.slice %[[R]] {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<2x32xf32> -> tensor<2x20xf32>
// CHECK: kiln.sub %[[S]], %{{.+}} : tensor<2x20xf32>, tensor<20xf32> -> tensor<2x20xf32>
func.func @padded_columns(%x: tensor<2x4xui8>) -> tensor<2x20xf32> {
  %xf = kiln.cast %x : tensor<2x4xui8> -> tensor<2x4xf32>
  %z = kiln.constant dense<3.0> : tensor<f32>
  %a = kiln.sub %xf, %z : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
  %w = kiln.constant dense<[[-5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0], [-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, -5.0, -4.0], [3.0, 4.0, 5.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0], [-4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, -5.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0]]> : tensor<4x20xf32>
  %y = kiln.matmul %a, %w : tensor<2x4xf32>, tensor<4x20xf32> -> tensor<2x20xf32>
  return %y : tensor<2x20xf32>
}

// -----

// MatMulInteger of uint8 weights minus their zero point (9-bit integers),
// summed in float64 by the importer (as for a K whose partial sums may
// pass 2^24): column 0 spans -100..155 and takes the offset 28 (its
// smallest plus 128), so that Q = B - 28 is int8; the others are int8
// already. The einsum over Q, in float64, adds each row's sum of X's
// bytes times the columns' offsets, less z times B's column sums.
// CHECK-LABEL: func.func @uint8_weights
// CHECK: %[[Q:.+]] = kiln.constant dense<{{\[}}{{\[}}{{\[}}[-128, 127, -28, -28], [1, -1, 1, -1],
// CHECK: %[[E:.+]] = kiln.einsum {{.*}} : (tensor<2x1x4xf64>, tensor<1x1x16x4xf64>) -> tensor<2x1x16xf64>
// CHECK: %[[M:.+]] = kiln.reshape %[[E]] : tensor<2x1x16xf64> -> tensor<2x16xf64>
// CHECK: %[[ROWS:.+]] = kiln.reduce_sum {{.*}} {axes = array<i64: 1>, keepdims = true} : tensor<2x4xf32> -> tensor<2x1xf32>
// CHECK: %[[ROWS64:.+]] = kiln.cast %[[ROWS]] : tensor<2x1xf32> -> tensor<2x1xf64>
// CHECK: %[[OFFSETS:.+]] = kiln.constant dense<[2.800000e+01, 0.000000e+00, {{.*}}]> : tensor<16xf64>
// CHECK: %[[SHARE:.+]] = kiln.mul %[[ROWS64]], %[[OFFSETS]] : tensor<2x1xf64>, tensor<16xf64> -> tensor<2x16xf64>
// CHECK: %[[ADDED:.+]] = kiln.add %[[M]], %[[SHARE]]
// CHECK: %[[SUMS:.+]] = kiln.constant dense<[5.500000e+01, 0.000000e+00, {{.*}}]> : tensor<16xf64>
// CHECK: %[[ZS:.+]] = kiln.mul %{{.+}}, %[[SUMS]] : tensor<f64>, tensor<16xf64> -> tensor<16xf64>
// CHECK: %[[C:.+]] = kiln.sub %[[ADDED]], %[[ZS]] : tensor<2x16xf64>, tensor<16xf64> -> tensor<2x16xf64>
// CHECK: return %[[C]]
func.func @uint8_weights(%x: tensor<2x4xui8>, %z: tensor<ui8>) -> tensor<2x16xf64> {
  %xf = kiln.cast %x : tensor<2x4xui8> -> tensor<2x4xf64>
  %zf = kiln.cast %z : tensor<ui8> -> tensor<f64>
  %a = kiln.sub %xf, %zf : tensor<2x4xf64>, tensor<f64> -> tensor<2x4xf64>
  %w = kiln.constant dense<[[-100.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [155.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -10.0, -11.0, -12.0, -13.0, -14.0, -15.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [0.0, -1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -10.0, -11.0, -12.0, -13.0, -14.0, -15.0]]> : tensor<4x16xf64>
  %y = kiln.matmul %a, %w : tensor<2x4xf64>, tensor<4x16xf64> -> tensor<2x16xf64>
  return %y : tensor<2x16xf64>
}
