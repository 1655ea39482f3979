// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-fold-transposes-into-contractions))' | FileCheck %s

// Attention as PyTorch exports it (BERT: 12 heads of 64): queries, keys
// and values reshaped into heads and transposed, the context transposed
// back. Every transpose folds: the scores read q and k as [B, S, H, D]
// (k's D, the contraction's K, is contiguous), and the context is written
// as [B, S, H, D], which the last reshape aliases.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: kiln.transpose
// CHECK: %[[Q:.+]] = kiln.reshape %arg0 : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
// CHECK: %[[K:.+]] = kiln.reshape %arg1 : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
// CHECK: %[[V:.+]] = kiln.reshape %arg2 : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
// CHECK: %[[S:.+]] = kiln.einsum %[[Q]], %[[K]] {equation = "ambk,anbk->abmn"} : (tensor<1x128x12x64xf32>, tensor<1x128x12x64xf32>) -> tensor<1x12x128x128xf32>
// CHECK: %[[P:.+]] = kiln.softmax %[[S]]
// CHECK: %[[C:.+]] = kiln.einsum %[[P]], %[[V]] {equation = "abmk,akbn->ambn"} : (tensor<1x12x128x128xf32>, tensor<1x128x12x64xf32>) -> tensor<1x128x12x64xf32>
// CHECK-NOT: kiln.transpose
// CHECK: kiln.reshape %[[C]] : tensor<1x128x12x64xf32> -> tensor<1x128x768xf32>
func.func @attention(%q: tensor<1x128x768xf32>, %k: tensor<1x128x768xf32>, %v: tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  %q4 = kiln.reshape %q : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
  %qt = kiln.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x128x12x64xf32> -> tensor<1x12x128x64xf32>
  %k4 = kiln.reshape %k : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
  %kt = kiln.transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x128x12x64xf32> -> tensor<1x12x64x128xf32>
  %v4 = kiln.reshape %v : tensor<1x128x768xf32> -> tensor<1x128x12x64xf32>
  %vt = kiln.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x128x12x64xf32> -> tensor<1x12x128x64xf32>
  %s = kiln.matmul %qt, %kt : tensor<1x12x128x64xf32>, tensor<1x12x64x128xf32> -> tensor<1x12x128x128xf32>
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<1x12x128x128xf32>
  %c = kiln.matmul %p, %vt : tensor<1x12x128x128xf32>, tensor<1x12x128x64xf32> -> tensor<1x12x128x64xf32>
  %ct = kiln.transpose %c {perm = array<i64: 0, 2, 1, 3>} : tensor<1x12x128x64xf32> -> tensor<1x128x12x64xf32>
  %o = kiln.reshape %ct : tensor<1x128x12x64xf32> -> tensor<1x128x768xf32>
  return %o : tensor<1x128x768xf32>
}

// -----

// --precision=f16: the operands are widened after their transposes and
// the context rounded before its. Each cast moves to the other side of the
// fold: the einsum widens the untransposed 16-bit values and its result is
// rounded in the permuted order.
// CHECK-LABEL: func.func @widened
// CHECK: %[[QW:.+]] = kiln.cast %arg0 : tensor<1x128x12x64xf16> -> tensor<1x128x12x64xf32>
// CHECK: %[[S:.+]] = kiln.einsum %[[QW]], %arg1 {equation = "ambk,abkn->abmn"}
// CHECK: %[[C:.+]] = kiln.einsum %arg2, %arg3 {equation = "abmk,abkn->ambn"} : (tensor<1x12x128x128xf32>, tensor<1x12x128x64xf32>) -> tensor<1x128x12x64xf32>
// CHECK: %[[R:.+]] = kiln.cast %[[C]] : tensor<1x128x12x64xf32> -> tensor<1x128x12x64xf16>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[S]], %[[R]]
func.func @widened(%q: tensor<1x128x12x64xf16>, %kt: tensor<1x12x64x128xf32>, %p: tensor<1x12x128x128xf32>, %v: tensor<1x12x128x64xf32>) -> (tensor<1x12x128x128xf32>, tensor<1x128x12x64xf16>) {
  %qt = kiln.transpose %q {perm = array<i64: 0, 2, 1, 3>} : tensor<1x128x12x64xf16> -> tensor<1x12x128x64xf16>
  %qw = kiln.cast %qt : tensor<1x12x128x64xf16> -> tensor<1x12x128x64xf32>
  %s = kiln.matmul %qw, %kt : tensor<1x12x128x64xf32>, tensor<1x12x64x128xf32> -> tensor<1x12x128x128xf32>
  %c = kiln.matmul %p, %v : tensor<1x12x128x128xf32>, tensor<1x12x128x64xf32> -> tensor<1x12x128x64xf32>
  %cr = kiln.cast %c : tensor<1x12x128x64xf32> -> tensor<1x12x128x64xf16>
  %ct = kiln.transpose %cr {perm = array<i64: 0, 2, 1, 3>} : tensor<1x12x128x64xf16> -> tensor<1x128x12x64xf16>
  return %s, %ct : tensor<1x12x128x128xf32>, tensor<1x128x12x64xf16>
}

// -----

// Left alone: a transpose with another user (it is computed anyway); one
// that would leave a batch dim innermost in the operand (every load a
// gather); a matmul whose result has another user; a transpose of
// something that is not a contraction.
// CHECK-LABEL: func.func @unfolded
// CHECK-COUNT-4: kiln.transpose
// CHECK-NOT: kiln.einsum
func.func @unfolded(%a: tensor<8x4x16xf32>, %b: tensor<4x16x8xf32>, %c: tensor<8x16x4xf32>, %d: tensor<4x8x8xf32>, %e: tensor<4x8x16xf32>) -> (tensor<4x8x8xf32>, tensor<4x8x16xf32>, tensor<4x8x8xf32>, tensor<8x8x4xf32>, tensor<4x8x8xf32>, tensor<8x4x8xf32>) {
  %at = kiln.transpose %a {perm = array<i64: 1, 0, 2>} : tensor<8x4x16xf32> -> tensor<4x8x16xf32>
  %0 = kiln.matmul %at, %b : tensor<4x8x16xf32>, tensor<4x16x8xf32> -> tensor<4x8x8xf32>
  %ct = kiln.transpose %c {perm = array<i64: 2, 0, 1>} : tensor<8x16x4xf32> -> tensor<4x8x16xf32>
  %1 = kiln.matmul %ct, %b : tensor<4x8x16xf32>, tensor<4x16x8xf32> -> tensor<4x8x8xf32>
  %2 = kiln.matmul %e, %b : tensor<4x8x16xf32>, tensor<4x16x8xf32> -> tensor<4x8x8xf32>
  %t2 = kiln.transpose %2 {perm = array<i64: 1, 2, 0>} : tensor<4x8x8xf32> -> tensor<8x8x4xf32>
  %dt = kiln.transpose %d {perm = array<i64: 1, 0, 2>} : tensor<4x8x8xf32> -> tensor<8x4x8xf32>
  return %0, %at, %1, %t2, %2, %dt : tensor<4x8x8xf32>, tensor<4x8x16xf32>, tensor<4x8x8xf32>, tensor<8x8x4xf32>, tensor<4x8x8xf32>, tensor<8x4x8xf32>
}

// -----

// An einsum's broadcast dims (`...`) get upper-case letters when a
// transpose folds into it; a 2-D weight operand keeps its two letters.
// CHECK-LABEL: func.func @einsum_and_weight
// CHECK: kiln.einsum %arg0, %arg1 {equation = "ABkm,Bkn->ABmn"}
// CHECK: kiln.einsum %arg2, %arg3 {equation = "amk,nk->amn"}
func.func @einsum_and_weight(%x: tensor<2x3x5x4xf32>, %y: tensor<3x5x6xf32>, %a: tensor<2x4x8xf32>, %w: tensor<6x8xf32>) -> (tensor<2x3x4x6xf32>, tensor<2x4x6xf32>) {
  %xt = kiln.transpose %x {perm = array<i64: 0, 1, 3, 2>} : tensor<2x3x5x4xf32> -> tensor<2x3x4x5xf32>
  %0 = kiln.einsum %xt, %y {equation = "...mk,...kn->...mn"} : (tensor<2x3x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32>
  %wt = kiln.transpose %w {perm = array<i64: 1, 0>} : tensor<6x8xf32> -> tensor<8x6xf32>
  %1 = kiln.matmul %a, %wt : tensor<2x4x8xf32>, tensor<8x6xf32> -> tensor<2x4x6xf32>
  return %0, %1 : tensor<2x3x4x6xf32>, tensor<2x4x6xf32>
}
